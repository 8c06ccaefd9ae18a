/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * png_margins FILE.png...: for each file, one line "WIDTH HEIGHT LEFT TOP
 * RIGHT BOTTOM": the image's size and the blank margins around what is drawn
 * on it, in pixels (the distance from each edge to the nearest pixel that is
 * not the white background; -1 for all four on a blank image).  A margin of
 * 0 is ink on the edge: text or lines cut by the border of the figure.
 * Exit status 0, or 1 (a file that is not a readable PNG: one line on
 * stderr).  For the gallery test of tests/plots (test_gallery.py).
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pixel lighter than this in every channel is background (anti-aliasing
 * fades to white). */
#define INK_BELOW 250

static int margins(const char *path)
{
	png_image image;
	png_bytep pixels;
	long left, top, right, bottom;
	png_uint_32 x, y, w, h;

	memset(&image, 0, sizeof(image));
	image.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_file(&image, path)) {
		fprintf(stderr, "png_margins: %s: %s\n", path, image.message);
		return 1;
	}
	image.format = PNG_FORMAT_RGB;
	pixels = malloc(PNG_IMAGE_SIZE(image));
	if (!pixels || !png_image_finish_read(&image, NULL, pixels, 0, NULL)) {
		fprintf(stderr, "png_margins: %s: %s\n", path, pixels ? image.message : "out of memory");
		free(pixels);
		png_image_free(&image);
		return 1;
	}
	w = image.width;
	h = image.height;
	left = top = right = bottom = -1;
	for (y = 0; y < h; y++) {
		for (x = 0; x < w; x++) {
			const png_byte *p = pixels + ((size_t)y * w + x) * 3;

			if (p[0] >= INK_BELOW && p[1] >= INK_BELOW && p[2] >= INK_BELOW)
				continue;
			if (left < 0 || (long)x < left)
				left = x;
			if (right < 0 || (long)(w - 1 - x) < right)
				right = w - 1 - x;
			if (top < 0)
				top = y;
			bottom = h - 1 - y;
		}
	}
	printf("%lu %lu %ld %ld %ld %ld\n", (unsigned long)w, (unsigned long)h, left, top, right, bottom);
	free(pixels);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	for (int i = 1; i < argc; i++)
		rc |= margins(argv[i]);
	return rc;
}
