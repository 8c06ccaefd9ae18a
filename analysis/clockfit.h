/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The clock model's fit (core/clocksync.c, doc/clock.md): pure functions
 * over fit points, each the exchange of least round trip of a burst.
 */
#ifndef NG_CLOCKFIT_H
#define NG_CLOCKFIT_H

/* One fit point: rank 0's time (µs after the epoch), the offset estimate
 * (µs) and the round trip it came from (µs). */
struct ng_clockfit_pt {
	double x, y, rtt;
};

/*
 * Keeps the points whose round trip is within twice the least (and 1 µs)
 * of it, and at least a third of them (the least round trips).  Reorders
 * @p (@n > 0 points) by round trip, kept points first; returns their number.
 */
int ng_clockfit_keep(struct ng_clockfit_pt *p, int n);

/*
 * Least squares y = a + s x over @n points: the intercept to @a_p, the slope
 * to @s_p, the largest absolute residual to @res_p and the slope's standard
 * error (0 with fewer than 3 points) to @se_p.
 */
void ng_clockfit_line(const struct ng_clockfit_pt *p, int n, double *a_p, double *s_p, double *res_p,
                      double *se_p);

/*
 * The most the asymmetry of the points can tilt the fitted slope: a point's
 * offset estimate is off by up to half the difference between its round
 * trip and the least one (the part of a slower round trip that may lie all
 * in one direction), so the least-squares slope over @n points is off by at
 * most sum |x_i - mean x| (rtt_i - min rtt) / 2 / sum (x_i - mean x)^2.
 * 0 with fewer than 2 points or no spread in x.
 */
double ng_clockfit_slope_sys(const struct ng_clockfit_pt *p, int n);

#endif
