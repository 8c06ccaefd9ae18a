/* SPDX-License-Identifier: BSD-3-Clause */
/* LogGP / pLogP parameter estimation; the contract is in loggp.h. */
#include "loggp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The standard normal 97.5% quantile, for fits without residual degrees of
 * freedom (where the given standard errors are all there is). */
#define NG_Z975 1.959963984540054

double ng_se_from_ci95(double lo, double hi)
{
	double w = hi - lo;

	if (!isfinite(w) || w <= 0.0)
		return 0.0;
	return w / (2.0 * NG_Z975);
}

/* ---- parameters ------------------------------------------------------------ */

void ng_param_set(struct ng_param *p, const char *what, double value, double lo, double hi)
{
	memset(p, 0, sizeof(*p));
	if (isnan(lo))
		lo = -INFINITY;
	if (isnan(hi))
		hi = INFINITY;
	if (!isfinite(value)) {
		p->value = NAN;
		p->lo = p->hi = NAN;
		snprintf(p->flag, sizeof(p->flag), "%s cannot be estimated from these sizes", what);
		return;
	}
	if (value < 0.0) {
		if (hi >= 0.0) {
			snprintf(p->note, sizeof(p->note),
			         "%s estimate %.4g clamped to 0 (its interval reaches 0)", what, value);
			value = 0.0;
		} else {
			p->value = NAN;
			p->lo = p->hi = NAN;
			snprintf(p->flag, sizeof(p->flag),
			         "%s negative (%.4g, 95%% CI [%.4g, %.4g]): physically impossible", what,
			         value, lo, hi);
			return;
		}
	}
	p->value = value;
	p->lo = lo > 0.0 ? lo : 0.0;
	p->hi = hi;
	if (p->lo > value)
		p->lo = value;
	if (p->hi < value)
		p->hi = value;
	p->tlo = p->lo;
	p->thi = p->hi;
}

void ng_param_widen(struct ng_param *p, const char *name, double size)
{
	if (!ng_param_ok(p))
		return;
	ng_unc_add(&p->unc, name, size);
	ng_unc_widen(p->lo, p->hi, &p->unc, &p->tlo, &p->thi);
	if (p->tlo < 0.0)
		p->tlo = 0.0;
}

void ng_loggp_sys_apply(struct ng_param *p, const struct ng_loggp_sys *sys, double kt, double ke)
{
	ng_param_widen(p, "timer_resolution", kt * sys->res_us);
	ng_param_widen(p, "timer_overhead", kt * sys->read_us);
	ng_param_widen(p, "emu_overshoot", ke * sys->emu_us);
	if (ng_param_ok(p))
		ng_param_widen(p, "timer_drift", sys->drift_ppm * 1e-6 * fabs(p->value));
}

void ng_loggp_systematic(struct ng_loggp_model *m, const struct ng_loggp_sys *sys)
{
	double k = sys->n > 1 ? (double)(sys->n - 1) : 1.0;
	double kos = 1.0 + 2.0 / k, kor = 1.0 + 1.0 / k, kg = 2.0 / k;

	for (size_t i = 0; i < m->nseg; i++) {
		struct ng_loggp_seg *s = &m->seg[i];

		ng_loggp_sys_apply(&s->o_s, sys, kos, 1.0);
		ng_loggp_sys_apply(&s->o_r, sys, kor, 1.0);
		ng_loggp_sys_apply(&s->g, sys, kg, kg);
		ng_loggp_sys_apply(&s->L, sys, 0.5 + kos + kor, 2.0 + 1.0 + 1.0);
		ng_loggp_sys_apply(&s->G, sys, 0.0, 0.0);
		ng_loggp_sys_apply(&s->O_s, sys, 0.0, 0.0);
		ng_loggp_sys_apply(&s->O_r, sys, 0.0, 0.0);
	}
}

/* ---- LogGP ----------------------------------------------------------------- */

static double ng_floor_se(double se, double v, const struct ng_loggp_opts *o)
{
	double f = o->se_floor_rel * fabs(v);

	if (f < o->se_floor_us)
		f = o->se_floor_us;
	return (isfinite(se) && se > f) ? se : f;
}

/*
 * Fits one quantity over one segment, robustly with residual scale @scale:
 * intercept at @x0 into @a, slope into @b (NULL: not wanted).  Points that
 * the fit rejected get @bit in @outl.
 */
static void ng_fit_params(const double *x, const double *y, const double *se, size_t n, double x0,
                          double scale, double *rw, unsigned *outl, unsigned bit, struct ng_param *a,
                          const char *aname, struct ng_param *b, const char *bname, struct ng_fit *fit_p)
{
	struct ng_fit f;

	if (n == 1) {
		ng_param_set(a, aname, y[0], y[0] - NG_Z975 * se[0], y[0] + NG_Z975 * se[0]);
		if (b)
			ng_param_set(b, bname, NAN, NAN, NAN);
		*fit_p = (struct ng_fit){.n = 1,
		                         .x0 = x0,
		                         .a = y[0],
		                         .a_lo = a->lo,
		                         .a_hi = a->hi,
		                         .b = NAN,
		                         .b_lo = NAN,
		                         .b_hi = NAN};
		return;
	}
	if (ng_fit_line_robust(x, y, se, n, x0, scale, rw, &f, NULL) && ng_fit_line(x, y, se, n, x0, &f)) {
		ng_param_set(a, aname, NAN, NAN, NAN);
		if (b)
			ng_param_set(b, bname, NAN, NAN, NAN);
		*fit_p = (struct ng_fit){.n = 0, .a = NAN, .b = NAN};
		return;
	}
	/* Outliers come alone: two neighbours off the line are a trend of the
	 * segment's sizes, which every size then counts in (least squares;
	 * the interval widens by the scatter). */
	for (size_t i = 1; i < n; i++) {
		if (rw[i] < 1e-9 && rw[i - 1] < 1e-9) {
			if (ng_fit_line(x, y, se, n, x0, &f))
				break;
			for (size_t k = 0; k < n; k++)
				rw[k] = 1.0;
			break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (rw[i] < 1e-9)
			outl[i] |= bit;
	}
	ng_param_set(a, aname, f.a, f.a_lo, f.a_hi);
	if (b)
		ng_param_set(b, bname, f.b, f.b_lo, f.b_hi);
	*fit_p = f;
}

/* Robust residual scale of one quantity over the segments of @m (least
 * squares per segment). */
static double ng_quantity_scale(const double *x, const double *y, const double *se,
                                const struct ng_loggp_model *m, double *u)
{
	size_t k, i, nu = 0;

	for (k = 0; k < m->nseg; k++) {
		const struct ng_loggp_seg *s = &m->seg[k];
		struct ng_fit f;

		if (s->count < 3 ||
		    ng_fit_line(x + s->first, y + s->first, se + s->first, s->count, s->from, &f))
			continue;
		for (i = s->first; i < s->first + s->count; i++)
			u[nu++] = (y[i] - f.a - f.b * (x[i] - s->from)) / se[i];
	}
	return ng_resid_scale(u, nu);
}

/*
 * A negative L (flagged by ng_param_set) says why, from the segment's
 * sizes: where most alone give h(s) - (s - 1) G < 0, the overheads and the
 * transfer add up to more than the one-way time, so they overlap in time
 * (loggp.h) and L cannot be separated; else the lines do not fit the sizes.
 */
static void ng_loggp_flag_L(struct ng_loggp_seg *s, const double *x, const double *h, double G, double v,
                            double lo, double hi)
{
	const struct ng_param *L = &s->L;
	size_t neg = 0;

	if (ng_param_ok(L) || !strstr(L->flag, "negative"))
		return;
	for (size_t i = 0; i < s->count; i++)
		neg += h[i] - (x[i] - 1.0) * G < 0.0;
	if (2 * neg > s->count)
		snprintf(s->L.flag, sizeof(s->L.flag),
		         "L negative (%.4g, 95%% CI [%.4g, %.4g]): o_s + o_r + (s - 1) G exceed "
		         "PRTT(1,0,s)/2 at %zu "
		         "of %zu sizes: the overheads overlap the transfer, L cannot be separated on this "
		         "transport",
		         v, lo, hi, neg, s->count);
	else
		snprintf(s->L.flag, sizeof(s->L.flag),
		         "L negative (%.4g, 95%% CI [%.4g, %.4g]) from the fitted lines, though %zu of %zu "
		         "sizes give "
		         "PRTT(1,0,s)/2 >= o_s + o_r + (s - 1) G: the segment's lines do not fit its sizes",
		         v, lo, hi, s->count - neg, s->count);
}

int ng_loggp_fit(const struct ng_loggp_point *pts, size_t n, const struct ng_loggp_opts *opts,
                 struct ng_loggp_model *model_p, unsigned *outliers)
{
	static const struct ng_loggp_opts defaults = NG_LOGGP_OPTS_DEFAULT;
	const struct ng_loggp_opts *o = opts ? opts : &defaults;
	struct ng_loggp_model m = {.npts = n};
	struct ng_segments sg;
	double *x, *T, *sT, *os, *sos, *orr, *sor, *h, *sh, *u, *rw;
	double sc_T = 1.0, sc_os, sc_or, sc_h;
	unsigned *outl;
	double *block;
	int rc = -1;

	for (size_t k = 0; k <= NG_SEG_MAX; k++)
		m.bic[k] = INFINITY;
	*model_p = m;
	if (n == 0)
		return -1;
	block = malloc(11 * n * sizeof(*block));
	outl = calloc(n, sizeof(*outl));
	if (!block || !outl)
		goto out_free;
	x = block;
	T = x + n;
	sT = T + n;
	os = sT + n;
	sos = os + n;
	orr = sos + n;
	sor = orr + n;
	h = sor + n;
	sh = h + n;
	u = sh + n;
	rw = u + n;
	for (size_t i = 0; i < n; i++) {
		const struct ng_loggp_point *p = &pts[i];
		double sp = ng_floor_se(p->se_prtt1, p->prtt1, o);

		x[i] = p->size;
		T[i] = p->T;
		sT[i] = ng_floor_se(p->se_T, p->T, o);
		os[i] = p->os;
		sos[i] = ng_floor_se(p->se_os, p->os, o);
		orr[i] = p->orr;
		sor[i] = ng_floor_se(p->se_or, p->orr, o);
		h[i] = p->prtt1 / 2.0 - p->os - p->orr;
		sh[i] = sqrt(sp * sp / 4.0 + sos[i] * sos[i] + sor[i] * sor[i]);
	}

	if (n >= o->min_pts) {
		if (ng_segments_fit(x, T, sT, n, o->max_seg, o->min_pts, &sg))
			goto out_free;
		memcpy(m.bic, sg.bic, sizeof(m.bic));
		sc_T = sg.scale;
	} else {
		/* Too few sizes to look for regimes: one segment. */
		sg.nseg = 1;
		sg.first[0] = 0;
		sg.count[0] = n;
	}
	m.nseg = sg.nseg;
	for (size_t k = 0; k < sg.nseg; k++) {
		m.seg[k].first = sg.first[k];
		m.seg[k].count = sg.count[k];
		m.seg[k].from = x[sg.first[k]];
		m.seg[k].to = x[sg.first[k] + sg.count[k] - 1];
	}
	sc_os = ng_quantity_scale(x, os, sos, &m, u);
	sc_or = ng_quantity_scale(x, orr, sor, &m, u);
	sc_h = ng_quantity_scale(x, h, sh, &m, u);

	for (size_t k = 0; k < m.nseg; k++) {
		struct ng_loggp_seg *s = &m.seg[k];
		size_t f = s->first, c = s->count;
		struct ng_fit fT, fos, for_, fh;
		double from = s->from, xm1 = from > 1.0 ? from - 1.0 : 0.0, Lv, Llo, Lhi;

		ng_fit_params(x + f, T + f, sT + f, c, from, sc_T, rw, outl + f, NG_LOGGP_OUT_T, &s->g, "g",
		              &s->G, "G", &fT);
		ng_fit_params(x + f, os + f, sos + f, c, from, sc_os, rw, outl + f, NG_LOGGP_OUT_OS, &s->o_s,
		              "o_s", &s->O_s, "O_s", &fos);
		ng_fit_params(x + f, orr + f, sor + f, c, from, sc_or, rw, outl + f, NG_LOGGP_OUT_OR, &s->o_r,
		              "o_r", &s->O_r, "O_r", &for_);
		ng_fit_params(x + f, h + f, sh + f, c, from, sc_h, rw, outl + f, NG_LOGGP_OUT_L, &s->L, "L",
		              NULL, NULL, &fh);

		/* L = h(from) - (from - 1) G, using G's raw estimate (even when it
		 * was clamped or flagged, h and G are what they are). */
		Lv = fh.a;
		Llo = fh.a_lo;
		Lhi = fh.a_hi;
		if (xm1 > 0.0) {
			if (isfinite(fT.b) && fh.n > 0) {
				Lv = fh.a - xm1 * fT.b;
				Llo = fh.a_lo - xm1 * fT.b_hi;
				Lhi = fh.a_hi - xm1 * fT.b_lo;
			} else {
				Lv = Llo = Lhi = NAN;
			}
			ng_param_set(&s->L, "L", Lv, Llo, Lhi);
		}
		ng_loggp_flag_L(s, x + f, h + f, isfinite(fT.b) ? fT.b : 0.0, Lv, Llo, Lhi);
	}
	m.scale_T = sc_T;
	*model_p = m;
	if (outliers)
		memcpy(outliers, outl, n * sizeof(*outl));
	rc = 0;

out_free:
	free(outl);
	free(block);
	return rc;
}

int ng_loggp_loggopsim(const struct ng_loggp_model *m, char *buf, size_t len, char *why, size_t whylen)
{
	const struct ng_loggp_seg *s;
	double L, o, g, G, O;
	size_t wl = 0;

	if (why && whylen)
		why[0] = '\0';
	if (!m->nseg)
		return -1;
	s = &m->seg[0];

#define NG_PICK(dst, p)                                                                                      \
	do {                                                                                                 \
		if (ng_param_ok(&(p))) {                                                                     \
			dst = (p).value;                                                                     \
		} else {                                                                                     \
			dst = 0.0;                                                                           \
			if (why && wl < whylen)                                                              \
				wl += (size_t)snprintf(why + wl, whylen - wl, "%s%s", wl ? "; " : "",        \
				                       (p).flag);                                            \
		}                                                                                            \
	} while (0)

	NG_PICK(L, s->L);
	NG_PICK(g, s->g);
	NG_PICK(G, s->G);
	{
		double os, orr, Os, Or;

		NG_PICK(os, s->o_s);
		NG_PICK(orr, s->o_r);
		NG_PICK(Os, s->O_s);
		NG_PICK(Or, s->O_r);
		o = (os + orr) / 2.0;
		O = (Os + Or) / 2.0;
	}
#undef NG_PICK

	return snprintf(buf, len, "-L %.0f -o %.0f -g %.0f -G %.4g -O %.4g -S %.0f", L * 1e3, o * 1e3,
	                g * 1e3, G * 1e3, O * 1e3, s->to);
}

/* ---- pLogP ----------------------------------------------------------------- */

void ng_plogp_latency(double rtt, double rtt_lo, double rtt_hi, double g, double g_lo, double g_hi,
                      struct ng_param *L_p)
{
	ng_param_set(L_p, "L", rtt / 2.0 - g, rtt_lo / 2.0 - g_hi, rtt_hi / 2.0 - g_lo);
}
