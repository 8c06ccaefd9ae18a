/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The LogGP cost of the coll algorithms: a recording instance and the play
 * of the ranks' programs (coll_model.h).
 */
#include "coll_model.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

/* What one prediction may take: the algorithm's three buffers (P blocks
 * each), and the calls of all ranks recorded (48 bytes each). */
#define NG_COLL_MODEL_BYTES ((size_t)768 << 20)
#define NG_COLL_MODEL_OPS   ((size_t)4 << 20)

/* ---- the parameters ---------------------------------------------------------- */

/* A parameter of a segment: {"value": x, ...} or a plain number; NAN when absent. */
static double seg_value(const json_t *seg, const char *key)
{
	const json_t *v = json_object_get(seg, key);

	if (json_is_object(v))
		v = json_object_get(v, "value");
	return json_is_number(v) ? json_number_value(v) : NAN;
}

ng_status ng_coll_model_load(const char *path, struct ng_coll_model *m, bool loud)
{
	json_error_t jerr;
	json_t *r = json_load_file(path, 0, &jerr), *segs;
	size_t i;
	const json_t *seg;

	memset(m, 0, sizeof(*m));
	if (!r) {
		if (loud)
			ng_error("coll: --coll-model %s: %s", path, jerr.text);
		return NG_ERR_USAGE;
	}
	segs = json_object_get(json_object_get(r, "loggp"), "segments");
	if (!json_is_array(segs) || json_array_size(segs) == 0) {
		if (loud)
			ng_error(
			    "coll: --coll-model %s: no LogGP fit in it (the result file of a -p loggp run)",
			    path);
		json_decref(r);
		return NG_ERR_USAGE;
	}
	json_array_foreach(segs, i, seg)
	{
		struct ng_coll_seg *s = &m->seg[m->nseg];

		if (m->nseg == NG_COLL_MODEL_SEGS)
			break;
		s->from = seg_value(seg, "from");
		s->to = seg_value(seg, "to");
		s->L = seg_value(seg, "L_us");
		s->os = seg_value(seg, "o_s_us");
		s->or_ = seg_value(seg, "o_r_us");
		s->g = seg_value(seg, "g_us");
		s->G = seg_value(seg, "G_us_per_byte");
		s->Os = seg_value(seg, "O_s_us_per_byte");
		s->Or = seg_value(seg, "O_r_us_per_byte");
		/* the per-byte overheads are optional (0: LogGP without them) */
		if (isnan(s->Os))
			s->Os = 0.0;
		if (isnan(s->Or))
			s->Or = 0.0;
		if (isnan(s->from) || isnan(s->to) || isnan(s->L) || isnan(s->os) || isnan(s->or_) ||
		    isnan(s->g) || isnan(s->G)) {
			if (loud)
				ng_error("coll: --coll-model %s: segment %zu of the LogGP fit lacks a "
				         "parameter (from, "
				         "to, L_us, o_s_us, o_r_us, g_us, G_us_per_byte)",
				         path, i + 1);
			json_decref(r);
			return NG_ERR_USAGE;
		}
		m->nseg++;
	}
	json_decref(r);
	return NG_OK;
}

static const struct ng_coll_seg *seg_of(const struct ng_coll_model *m, size_t s)
{
	for (size_t i = 0; i < m->nseg; i++)
		if ((double)s <= m->seg[i].to)
			return &m->seg[i];
	return &m->seg[m->nseg - 1];
}

/* ---- the recording instance -------------------------------------------------- */

enum { OP_SEND, OP_RECV };

struct rec_op {
	int rank, peer, kind;
	size_t len;
	size_t idx;    /* position in the whole recording (the ranks' programs in order) */
	size_t match;  /* a receive: the index of its send */
	double arrive; /* a send, once played: the delivery time */
	bool played;
};

struct rec {
	struct ng_comm base; /* first: the algorithms call through it */
	struct rec_op *ops;
	size_t n, cap;
	bool oom;
};

/* What a posted request remembers (struct ng_req.priv). */
struct rec_req {
	int peer;
	size_t len;
	bool recv;
};

static void rec_add(struct rec *r, int kind, int peer, size_t len)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct rec_op *o = realloc(r->ops, cap * sizeof(*o));

		if (!o) {
			r->oom = true;
			return;
		}
		r->ops = o;
		r->cap = cap;
	}
	r->ops[r->n] =
	    (struct rec_op){.rank = r->base.rank, .peer = peer, .kind = kind, .len = len, .idx = r->n};
	r->n++;
}

static ng_status rec_send(struct ng_comm *c, int peer, const void *buf, size_t len)
{
	(void)buf;
	rec_add((struct rec *)c, OP_SEND, peer, len);
	return NG_OK;
}

static ng_status rec_recv(struct ng_comm *c, int peer, void *buf, size_t len)
{
	(void)buf;
	rec_add((struct rec *)c, OP_RECV, peer, len);
	return NG_OK;
}

/* A send leaves at isend, as emu's; a receive is taken at its wait. */
static ng_status rec_isend(struct ng_comm *c, int peer, const void *buf, size_t len, struct ng_req *req)
{
	struct rec_req *q = (struct rec_req *)(void *)req->priv;

	*q = (struct rec_req){.peer = peer, .len = len, .recv = false};
	return rec_send(c, peer, buf, len);
}

static ng_status rec_irecv(struct ng_comm *c, int peer, void *buf, size_t len, struct ng_req *req)
{
	struct rec_req *q = (struct rec_req *)(void *)req->priv;

	(void)c;
	(void)buf;
	*q = (struct rec_req){.peer = peer, .len = len, .recv = true};
	return NG_OK;
}

static ng_status rec_wait(struct ng_comm *c, struct ng_req *req)
{
	struct rec_req *q = (struct rec_req *)(void *)req->priv;

	if (q->recv)
		rec_add((struct rec *)c, OP_RECV, q->peer, q->len);
	q->recv = false;
	return NG_OK;
}

static ng_status rec_test(struct ng_comm *c, struct ng_req *req, bool *done_p)
{
	*done_p = true;
	return rec_wait(c, req);
}

/* ---- matching and play --------------------------------------------------------- */

/* Orders sends by (sender, receiver, position) and receives by (sender,
 * receiver, position): the k-th send of a pair meets the k-th receive. */
static int by_pair(const void *a, const void *b)
{
	const struct rec_op *x = *(struct rec_op *const *)a, *y = *(struct rec_op *const *)b;
	int xs = x->kind == OP_SEND ? x->rank : x->peer, ys = y->kind == OP_SEND ? y->rank : y->peer;
	int xd = x->kind == OP_SEND ? x->peer : x->rank, yd = y->kind == OP_SEND ? y->peer : y->rank;

	if (xs != ys)
		return xs < ys ? -1 : 1;
	if (xd != yd)
		return xd < yd ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Pairs every receive with its send; false when one has none. */
static bool match(struct rec *r)
{
	struct rec_op **s = malloc((r->n + 1) * sizeof(*s)), **v = malloc((r->n + 1) * sizeof(*v));
	size_t ns = 0, nv = 0;
	bool ok = s && v;

	for (size_t i = 0; ok && i < r->n; i++) {
		if (r->ops[i].kind == OP_SEND)
			s[ns++] = &r->ops[i];
		else
			v[nv++] = &r->ops[i];
	}
	if (ok && ns != nv)
		ok = false;
	if (ok) {
		qsort(s, ns, sizeof(*s), by_pair);
		qsort(v, nv, sizeof(*v), by_pair);
		for (size_t i = 0; ok && i < nv; i++) {
			ok = s[i]->rank == v[i]->peer && s[i]->peer == v[i]->rank && s[i]->len == v[i]->len;
			v[i]->match = s[i]->idx;
		}
	}
	free(s);
	free(v);
	return ok;
}

/* Plays the P programs (start[k]..start[k + 1] of r->ops) against each
 * other; the last rank's end, or -1 when they cannot all finish. */
static double play(const struct ng_coll_model *m, struct rec *r, const size_t *start, int P)
{
	double *t = calloc((size_t)P, sizeof(double)), *nxt = calloc((size_t)P, sizeof(double)), end = 0.0;
	size_t *pc = malloc((size_t)P * sizeof(size_t));
	bool progress = true;

	if (!t || !nxt || !pc) {
		free(t);
		free(nxt);
		free(pc);
		return -1.0;
	}
	for (int k = 0; k < P; k++)
		pc[k] = start[k];
	while (progress) {
		progress = false;
		for (int k = 0; k < P; k++) {
			for (; pc[k] < start[k + 1]; pc[k]++) {
				struct rec_op *o = &r->ops[pc[k]];
				const struct ng_coll_seg *g = seg_of(m, o->len);
				double w = o->len ? (double)(o->len - 1) * g->G : 0.0;

				if (o->kind == OP_SEND) {
					double inj = fmax(t[k] + g->os + (double)o->len * g->Os, nxt[k]);

					nxt[k] = inj + g->g + w;
					o->arrive = inj + g->L + w;
					t[k] = inj;
				} else {
					const struct rec_op *s = &r->ops[o->match];

					if (!s->played)
						break;
					t[k] = fmax(t[k], s->arrive) + g->or_ + (double)o->len * g->Or;
				}
				o->played = true;
				progress = true;
			}
		}
	}
	for (int k = 0; k < P; k++) {
		if (pc[k] != start[k + 1])
			end = -1.0;
		else if (end >= 0.0)
			end = fmax(end, t[k]);
	}
	free(t);
	free(nxt);
	free(pc);
	return end;
}

double ng_coll_model_us(const struct ng_coll_model *m, enum ng_coll_op op, int algo, int P, bool nb,
                        enum ng_coll_type type, size_t count)
{
	static const struct ng_msg_ops rec_ops = {.send = rec_send,
	                                          .recv = rec_recv,
	                                          .isend = rec_isend,
	                                          .irecv = rec_irecv,
	                                          .test = rec_test,
	                                          .wait = rec_wait};
	size_t len = (size_t)P * count * ng_coll_type_size[type], *start;
	struct rec r;
	double us = -1.0;
	unsigned char *buf;

	if (algo == NG_CA_NATIVE || m->nseg == 0 || P < 1 || len > NG_COLL_MODEL_BYTES / 3)
		return -1.0;
	len = len < 128 ? 128 : len;
	buf = calloc(3, len);
	start = calloc((size_t)P + 1, sizeof(*start));
	memset(&r, 0, sizeof(r));
	if (!buf || !start)
		goto out;
	r.base.msg = rec_ops;
	r.base.size = P;
	r.base.caps = nb ? NG_CAP_NONBLOCK : 0;
	for (int k = 0; k < P && !r.oom && r.n <= NG_COLL_MODEL_OPS; k++) {
		struct ng_coll_exec x;

		r.base.rank = k;
		start[k] = r.n;
		ng_coll_exec_init(&x, &r.base, type);
		x.sbuf = buf;
		x.rbuf = buf + len;
		x.tmp = buf + 2 * len;
		if (ng_coll_exec(&x, op, algo, op == NG_COLL_BARRIER ? 0 : count) != NG_OK)
			goto out;
	}
	start[P] = r.n;
	if (!r.oom && r.n <= NG_COLL_MODEL_OPS && match(&r))
		us = play(m, &r, start, P);
out:
	free(buf);
	free(start);
	free(r.ops);
	return us;
}
