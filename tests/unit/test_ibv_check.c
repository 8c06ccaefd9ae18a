/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs core's device checks (modules/verbs/verbs_check.h) over the
 * attributes of devices this project has no hardware for: an iWARP RNIC
 * (and siw), an AWS EFA device, an InfiniBand HCA port, RoCE v1 and RoCE v2
 * ports.  Every refusal's message is checked for what it must name; the
 * agreement of RDMA read/atomic depths with a peer as well.  Pure: nothing
 * here calls libibverbs.
 */
#include <stdio.h>
#include <string.h>

#include "modules/verbs/verbs_check.h"

#include "../check.h"

/* Attributes as the devices report them (ibv_devinfo -v, kernel drivers). */
static const struct ng_ibv_facts iwarp = {.name = "iwp2s0",
                                          .transport = IBV_TRANSPORT_IWARP,
                                          .node = IBV_NODE_RNIC,
                                          .vendor_id = 0x8086,
                                          .link_layer = IBV_LINK_LAYER_ETHERNET};
static const struct ng_ibv_facts siw = {.name = "siw0",
                                        .transport = IBV_TRANSPORT_IWARP,
                                        .node = IBV_NODE_RNIC,
                                        .vendor_id = 0x626d74,
                                        .link_layer = IBV_LINK_LAYER_ETHERNET};
static const struct ng_ibv_facts efa = {.name = "efa_0",
                                        .transport = IBV_TRANSPORT_UNSPECIFIED,
                                        .node = IBV_NODE_UNSPECIFIED,
                                        .vendor_id = NG_IBV_VENDOR_AMAZON,
                                        .link_layer = IBV_LINK_LAYER_UNSPECIFIED,
                                        .port_flags = IBV_QPF_GRH_REQUIRED};
static const struct ng_ibv_facts ib = {.name = "mlx5_0",
                                       .transport = IBV_TRANSPORT_IB,
                                       .node = IBV_NODE_CA,
                                       .vendor_id = 0x02c9,
                                       .link_layer = IBV_LINK_LAYER_INFINIBAND};
static const struct ng_ibv_facts roce = {.name = "mlx5_1",
                                         .transport = IBV_TRANSPORT_IB,
                                         .node = IBV_NODE_CA,
                                         .vendor_id = 0x02c9,
                                         .link_layer = IBV_LINK_LAYER_ETHERNET};
static const struct ng_ibv_facts rxe = {.name = "rxe0",
                                        .transport = IBV_TRANSPORT_IB,
                                        .node = IBV_NODE_CA,
                                        .vendor_id = 0xffffff,
                                        .link_layer = IBV_LINK_LAYER_ETHERNET};
static const struct ng_ibv_facts usnic = {.name = "usnic_0",
                                          .transport = IBV_TRANSPORT_USNIC_UDP,
                                          .node = IBV_NODE_USNIC_UDP,
                                          .vendor_id = 0x1137,
                                          .link_layer = IBV_LINK_LAYER_ETHERNET};

static char err[512];

static ng_status dev(const struct ng_ibv_facts *f, enum ibv_qp_type t)
{
	err[0] = '\0';
	return ng_ibv_check_device(f, "ibrc", t, err, sizeof(err));
}

#define HAS(s) (strstr(err, (s)) != NULL)

static void test_device(void)
{
	static const enum ibv_qp_type all[] = {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD};

	for (size_t i = 0; i < 3; i++) {
		/* iWARP (a hardware RNIC and soft iWARP): every QP type refused, naming rdma_cm. */
		CHECK(dev(&iwarp, all[i]) == NG_ERR_UNSUPPORTED, "iWARP qpt %d taken", all[i]);
		CHECK(HAS("ibrc: iwp2s0 is an iWARP device") && HAS("rdma_cm") && HAS("--rdma-backend ofi"),
		      "iWARP message: %s", err);
		CHECK(dev(&siw, all[i]) == NG_ERR_UNSUPPORTED && HAS("siw0") && HAS("rdma_cm"), "siw: %s",
		      err);
		/* InfiniBand, RoCE, Soft-RoCE: all three. */
		CHECK(dev(&ib, all[i]) == NG_OK && !err[0], "IB qpt %d: %s", all[i], err);
		CHECK(dev(&roce, all[i]) == NG_OK, "RoCE qpt %d: %s", all[i], err);
		CHECK(dev(&rxe, all[i]) == NG_OK, "rxe qpt %d: %s", all[i], err);
		/* usNIC: another transport. */
		CHECK(dev(&usnic, all[i]) == NG_ERR_UNSUPPORTED && HAS("usnic_0") && HAS("usNIC UDP"),
		      "usNIC: %s", err);
	}
	/* EFA: RC and UC refused naming the ofi backend and the efa provider; UD taken. */
	CHECK(dev(&efa, IBV_QPT_RC) == NG_ERR_UNSUPPORTED, "EFA RC taken");
	CHECK(HAS("efa_0 is an AWS EFA device") && HAS("no RC queue pairs") &&
	          HAS("--rdma-backend ofi --ofi-provider efa"),
	      "EFA RC message: %s", err);
	CHECK(dev(&efa, IBV_QPT_UC) == NG_ERR_UNSUPPORTED && HAS("no UC queue pairs"), "EFA UC: %s", err);
	CHECK(dev(&efa, IBV_QPT_UD) == NG_OK, "EFA UD refused: %s", err);
	/* EFA by name where the vendor id is not Amazon's (an emulation). */
	{
		struct ng_ibv_facts e = efa;

		e.vendor_id = 0;
		CHECK(ng_ibv_is_efa(&e), "efa by name");
		CHECK(!ng_ibv_is_efa(&ib) && !ng_ibv_is_efa(&rxe), "IB or rxe taken for EFA");
	}
}

static void test_grh(void)
{
	/* RoCE always; EFA's port requires one (IBV_QPF_GRH_REQUIRED); IB only with --ib-gid. */
	CHECK(ng_ibv_need_grh(&roce, false) && ng_ibv_need_grh(&rxe, false), "RoCE without GRH");
	CHECK(ng_ibv_need_grh(&efa, false), "EFA without GRH");
	CHECK(!ng_ibv_need_grh(&ib, false), "IB with GRH by default");
	CHECK(ng_ibv_need_grh(&ib, true), "IB with --ib-gid without GRH");
}

/* A rank's address as the exchange carries it. */
static struct ng_ibv_peer_facts peer(uint8_t ll, bool global, uint8_t type, const char *v4, int index)
{
	struct ng_ibv_peer_facts p;

	memset(&p, 0, sizeof(p));
	p.link_layer = ll;
	p.global = global;
	p.gid_type = type;
	p.gid_index = index;
	if (v4) {
		unsigned a, b, c, d;

		p.gid[10] = p.gid[11] = 0xff;
		if (sscanf(v4, "%u.%u.%u.%u", &a, &b, &c, &d) == 4) {
			p.gid[12] = (uint8_t)a;
			p.gid[13] = (uint8_t)b;
			p.gid[14] = (uint8_t)c;
			p.gid[15] = (uint8_t)d;
		}
	} else {
		p.gid[0] = 0xfe;
		p.gid[1] = 0x80;
		p.gid[15] = (uint8_t)index;
	}
	return p;
}

static ng_status pair(const struct ng_ibv_peer_facts *a, const struct ng_ibv_peer_facts *b)
{
	err[0] = '\0';
	return ng_ibv_check_peer(a, 0, b, 3, "ibrc", err, sizeof(err));
}

static void test_peers(void)
{
	struct ng_ibv_peer_facts v2a =
	    peer(IBV_LINK_LAYER_ETHERNET, true, IBV_GID_TYPE_ROCE_V2, "198.18.0.1", 3);
	struct ng_ibv_peer_facts v2b =
	    peer(IBV_LINK_LAYER_ETHERNET, true, IBV_GID_TYPE_ROCE_V2, "198.19.1.7", 3);
	struct ng_ibv_peer_facts v2six = peer(IBV_LINK_LAYER_ETHERNET, true, IBV_GID_TYPE_ROCE_V2, NULL, 1);
	struct ng_ibv_peer_facts v1 =
	    peer(IBV_LINK_LAYER_ETHERNET, true, IBV_GID_TYPE_ROCE_V1, "198.18.0.2", 2);
	struct ng_ibv_peer_facts iba = peer(IBV_LINK_LAYER_INFINIBAND, false, IBV_GID_TYPE_IB, NULL, 0);
	struct ng_ibv_peer_facts ibb = iba, ibg = iba, ibold = iba, ibgrh;

	/* RoCE v2 to RoCE v2 (IPv4-mapped, routed between subnets): fine. */
	CHECK(pair(&v2a, &v2b) == NG_OK && !err[0], "v2/v2: %s", err);
	/* RoCE v1 against v2: refused, naming both types and indices and --ib-gid. */
	CHECK(pair(&v2a, &v1) == NG_ERR_UNSUPPORTED, "v1/v2 taken");
	CHECK(HAS("rank 3 uses a RoCE v1 GID (index 2)") && HAS("rank 0 a RoCE v2 GID (index 3)") &&
	          HAS("--ib-gid"),
	      "v1/v2 message: %s", err);
	/* RoCE v2 IPv4 against IPv6. */
	CHECK(pair(&v2a, &v2six) == NG_ERR_UNSUPPORTED && HAS("IPv6 address") && HAS("an IPv4 one") &&
	          HAS("--ib-gid"),
	      "v4/v6: %s", err);
	/* InfiniBand against RoCE. */
	CHECK(pair(&iba, &v2a) == NG_ERR_UNSUPPORTED && HAS("rank 3's port is Ethernet (RoCE)") &&
	          HAS("rank 0's InfiniBand") && HAS("cannot reach"),
	      "IB/RoCE: %s", err);
	/* InfiniBand in one subnet without GRH: fine; an old driver's unspecified link layer is IB. */
	ibb.gid[15] = 9;
	CHECK(pair(&iba, &ibb) == NG_OK, "IB/IB: %s", err);
	ibold.link_layer = IBV_LINK_LAYER_UNSPECIFIED;
	CHECK(pair(&iba, &ibold) == NG_OK, "IB/IB unspecified: %s", err);
	/* Another subnet prefix without GRH: refused, naming both prefixes and --ib-gid. */
	ibb.gid[7] = 0x42;
	CHECK(pair(&iba, &ibb) == NG_ERR_UNSUPPORTED && HAS("another InfiniBand subnet") &&
	          HAS("fe80:0000:0000:0042") && HAS("fe80:0000:0000:0000") && HAS("--ib-gid"),
	      "subnets: %s", err);
	/* ... fine with a GRH on both. */
	ibgrh = ibb;
	ibgrh.global = 1;
	ibg.global = 1;
	CHECK(pair(&ibg, &ibgrh) == NG_OK, "subnets with GRH: %s", err);
	/* GRH on one side only. */
	CHECK(pair(&iba, &ibg) == NG_ERR_UNSUPPORTED && HAS("rank 3 addresses with a GRH") &&
	          HAS("rank 0 without") && HAS("--ib-gid"),
	      "GRH one side: %s", err);
}

static void test_rd_atom(void)
{
	uint8_t init, dest;

	/* ConnectX to ConnectX: 16 each way (the cap). */
	ng_ibv_rd_atom_agree(16, 16, 16, 16, &init, &dest);
	CHECK(init == 16 && dest == 16, "cx/cx %u %u", init, dest);
	/* A peer that answers 4: this side issues at most 4; answers its own 16. */
	ng_ibv_rd_atom_agree(16, 16, 4, 16, &init, &dest);
	CHECK(init == 4 && dest == 16, "peer 4: %u %u", init, dest);
	/* This device issues 8, answers 128: 8 out, 16 (the cap) in. */
	ng_ibv_rd_atom_agree(8, 128, 128, 16, &init, &dest);
	CHECK(init == 8 && dest == 16, "local 8: %u %u", init, dest);
	/* Soft-RoCE's 128 both ways, no cap above 255. */
	ng_ibv_rd_atom_agree(128, 128, 128, 1000, &init, &dest);
	CHECK(init == 128 && dest == 128, "rxe uncapped: %u %u", init, dest);
	/* Whatever the two sides' devices: one side issues no more than the other answers. */
	for (uint32_t a = 0; a < 20; a++)
		for (uint32_t b = 0; b < 20; b++) {
			uint8_t ia, da, ib_, db;

			ng_ibv_rd_atom_agree(a, a + 3, b, 16, &ia, &da);
			ng_ibv_rd_atom_agree(b / 2, b, a + 3, 16, &ib_, &db);
			CHECK(ia <= db && ib_ <= da, "a %u b %u: %u>%u or %u>%u", a, b, ia, db, ib_, da);
		}
}

/* A device whose largest inline size is limit; counts the attempts. */
struct dev_inline {
	uint32_t limit;
	int calls;
	bool zero_asked;
};

static bool fits(void *ctx, uint32_t n)
{
	struct dev_inline *d = ctx;

	d->calls++;
	if (n == 0)
		d->zero_asked = true;
	return n <= d->limit;
}

static void test_bisect(void)
{
	/* Limits of real devices (ConnectX 220/956, rxe 256, EFA 32, none) against the 256 ngauge asks. */
	static const uint32_t limits[] = {220, 956, 256, 32, 0, 1, 255, 128, 100};

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct dev_inline d = {.limit = limits[i]};
		uint32_t want = 256, got = ng_ibv_bisect(want, fits, &d);
		uint32_t exp = limits[i] < want ? limits[i] : want;

		/* The exact limit (halving from 256 found 128 for ConnectX's 220), in 9 attempts at most. */
		CHECK(got == exp, "limit %u: got %u", limits[i], got);
		CHECK(d.calls <= 9, "limit %u: %d attempts", limits[i], d.calls);
		CHECK(!d.zero_asked, "limit %u: 0 tried", limits[i]);
	}
	{
		struct dev_inline d = {.limit = 5};

		CHECK(ng_ibv_bisect(0, fits, &d) == 0 && d.calls == 0, "want 0: %d calls", d.calls);
	}
}

int main(void)
{
	test_bisect();
	test_device();
	test_grh();
	test_peers();
	test_rd_atom();
	CHECK(strcmp(ng_ibv_gid_type_str(IBV_GID_TYPE_ROCE_V1), "RoCE v1") == 0, "gid type text");
	return check_exit();
}
