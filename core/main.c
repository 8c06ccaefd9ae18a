/* SPDX-License-Identifier: BSD-3-Clause */
#include "driver.h"

int main(int argc, char **argv)
{
	return ng_main(argc, argv);
}
