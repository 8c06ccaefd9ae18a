/* SPDX-License-Identifier: BSD-3-Clause */
/* The superpipeline's model and chunk schedules (spipe_model.h). */
#include <math.h>

#include "modules/spipe/spipe_model.h"

const char *ng_spipe_mode_name(enum ng_spipe_mode m)
{
	static const char *const names[NG_SPIPE_NMODES] = {"reg", "rcache", "copy", "pipeline", "super"};

	return (unsigned)m < NG_SPIPE_NMODES ? names[m] : "?";
}

double ng_spipe_bcopy(const struct ng_spipe_model *m, size_t len)
{
	double x = len ? (double)len : 1.0;
	size_t i;

	if (!m->ncopy)
		return INFINITY;
	if (x <= m->copy_size[0])
		return m->copy_MBps[0];
	for (i = 1; i < m->ncopy; i++) {
		if (x <= m->copy_size[i]) {
			double t = log(x / m->copy_size[i - 1]) / log(m->copy_size[i] / m->copy_size[i - 1]);

			return exp(log(m->copy_MBps[i - 1]) +
			           t * (log(m->copy_MBps[i]) - log(m->copy_MBps[i - 1])));
		}
	}
	return m->copy_MBps[m->ncopy - 1];
}

double ng_spipe_bnet(const struct ng_spipe_model *m)
{
	return m->net_us_per_byte > 0 ? 1.0 / m->net_us_per_byte : INFINITY;
}

static size_t round_up(double c, size_t unit)
{
	size_t u = unit ? unit : 1;
	double k = ceil(c / (double)u);

	return k < 1 ? u : (size_t)k * u;
}

void ng_spipe_plan_init(struct ng_spipe_plan *pl, const struct ng_spipe_model *m,
                        const struct ng_spipe_proto *p, size_t len)
{
	double bc = ng_spipe_bcopy(m, len), bn = ng_spipe_bnet(m);

	*pl = (struct ng_spipe_plan){.len = len, .unit = 8, .cmax = len, .q = 1.0};
	switch (p->mode) {
	case NG_SPIPE_PIPELINE:
		/* eq. 3: the optimal fixed chunk, at least a sub-block (a gap
		 * measured near 0 would cut messages into a flood of tiny chunks) */
		pl->c = fmax(sqrt((double)len * m->g_us * bc / 2.0), (double)p->block);
		pl->cmax = p->slot - 16;
		break;
	case NG_SPIPE_SUPER:
		pl->unit = ng_spipe_payload(p->block);
		/* C_0 = B_copy 2 lambda_net: its copy fits in the rendezvous round trip */
		pl->c = p->c0 ? (double)p->c0 : bc * 2.0 * m->lambda_net_us;
		/* eq. 5: q = B_copy(L) / B_net, a chunk's copy as long as the
		 * previous one's write; at least the paper's hardwired 1.5 (its
		 * section 4): where the copy is barely faster than the network
		 * (shm, where the write is a copy) eq. 5 leaves every chunk at C_0,
		 * and each chunk costs a hand-over between the ranks (its
		 * acknowledgement) that eq. 4's g does not count */
		if (p->q > 0)
			pl->q = p->q;
		else
			pl->q = fmax(isfinite(bn) ? bc / bn : 1.0, NG_SPIPE_QMIN);
		/* whole sub-blocks in a buffer */
		pl->cmax = p->slot / p->block * pl->unit;
		break;
	default:
		pl->c = (double)len;
		break;
	}
	if (!(pl->c > 0) || !isfinite(pl->c))
		pl->c = (double)pl->unit;
	if (pl->cmax < pl->unit)
		pl->cmax = pl->unit;
}

size_t ng_spipe_plan_next(struct ng_spipe_plan *pl)
{
	size_t left = pl->len - pl->done, c;

	if (!left)
		return 0;
	c = pl->c >= (double)pl->cmax ? pl->cmax : round_up(pl->c, pl->unit);
	if (c > pl->cmax)
		c = pl->cmax;
	if (c > left)
		c = left;
	pl->done += c;
	pl->c *= pl->q;
	return c;
}

void ng_spipe_plan_shape(const struct ng_spipe_model *m, const struct ng_spipe_proto *p, size_t len,
                         struct ng_spipe_shape *s)
{
	struct ng_spipe_plan pl;
	size_t c;

	ng_spipe_plan_init(&pl, m, p, len);
	*s = (struct ng_spipe_shape){.q = pl.q};
	while ((c = ng_spipe_plan_next(&pl)) != 0) {
		if (!s->n)
			s->c0 = c;
		s->n++;
		s->last = c;
		if (c > s->largest)
			s->largest = c;
	}
}

void ng_spipe_predict(const struct ng_spipe_model *m, const struct ng_spipe_proto *p, size_t len, bool fresh,
                      struct ng_spipe_pred *out)
{
	double L = (double)len, bc = ng_spipe_bcopy(m, len);
	double net = m->lambda_net_us + L * m->net_us_per_byte;
	double reg =
	    m->lambda_reg_us + L * m->reg_us_per_byte + m->lambda_dereg_us + L * m->dereg_us_per_byte;
	struct ng_spipe_proto q = *p;
	struct ng_spipe_shape s;

	out->mode[NG_SPIPE_REG] = reg + net;
	out->mode[NG_SPIPE_RCACHE] = fresh ? reg + net : net;
	out->mode[NG_SPIPE_COPY] = 2.0 * L / bc + net;
	q.mode = NG_SPIPE_PIPELINE;
	ng_spipe_plan_shape(m, &q, len, &s);
	out->mode[NG_SPIPE_PIPELINE] = 2.0 * (double)s.largest / bc + (double)s.n * m->g_us + net; /* eq. 1 */
	q.mode = NG_SPIPE_SUPER;
	ng_spipe_plan_shape(m, &q, len, &s);
	out->super_eq8 = (double)(s.c0 + s.largest) / bc + (double)s.n * m->g_us + net;
	out->super_eq9 = (double)p->block / bc + (double)s.n * m->g_us + net;
	out->mode[NG_SPIPE_SUPER] = p->subblocks ? out->super_eq9 + (double)s.c0 / bc : out->super_eq8;
	out->eager = net + L / bc;
}
