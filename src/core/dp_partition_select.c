/*
 * dp_partition_select.c - DP partition selection: which categories (and which point masses of a
 * numeric column) exist, by Gaussian thresholding of their counts, with a rigorous bound on the
 * discrete Gaussian's tail for the threshold.  See dp_discovery.h (item 1, and the accounting of
 * the additive delta).
 */
#include "dp_discovery.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_counts.h"

/* ============================================================================================
 * 1. Tail of the discrete Gaussian, threshold, partition selection
 * ============================================================================================
 *
 * Let f(x) = exp(-x^2 / (2 s2)), s2 = num/den, and Z = sum_{x in Z} f(x), so that
 * P(X = x) = f(x) / Z.  For an integer m >= 0 we bound P(X >= m) = S(m) / Z from above by an
 * upper bound on S(m) = sum_{x >= m} f(x) divided by a lower bound on Z.
 *
 * Upper bound on S(m).  f is decreasing on [0, inf), so for every integer y >= 0,
 *     sum_{x >= y+1} f(x) <= integral_y^inf f(t) dt = sqrt(pi s2 / 2) erfc(y / sqrt(2 s2)) =: I(y)
 * (each term f(x) is at most the integral of f over [x-1, x]).  With y = m + L (L >= 0 terms
 * summed explicitly):
 *     S(m) <= sum_{x=m}^{m+L} f(x) + I(m+L).
 * The relative slack of I(y) is about y / s2 per unit step, negligible for large sigma; for small
 * sigma the explicit terms make the sum essentially exact.
 *
 * Lower bound on Z.  By the Poisson summation formula,
 *     Z = sum_x exp(-x^2/(2 s2)) = sqrt(2 pi s2) * sum_k exp(-2 pi^2 s2 k^2) >= sqrt(2 pi s2)
 * (all terms of the right-hand sum are positive; CKS20 use the same identity for the discrete
 * Gaussian's normalizing constant and variance).  Also Z >= 1 + 2 sum_{x=1}^{L} f(x) (a partial
 * sum of positive terms), which is the better bound for small sigma.  We take the larger.
 *
 * So P(X >= m) <= [sum_{x=m}^{m+L} f(x) + I(m+L)] / max(sqrt(2 pi s2), 1 + 2 sum_{x=1}^{L} f(x)).
 * This is a rigorous bound (not an approximation such as "the continuous Gaussian's tail").
 *
 * Floating point.  Everything is computed in long double (64-bit mantissa on x86-64): s2 = num/den
 * is one rounding, each f(x) and erfc have relative error of a few ulps (exponents are at most
 * ~1e4 in the useful range, so the argument's rounding moves f by < 1e-15 relatively), and the sums
 * have at most 4097 positive terms (relative error < 4097 * 2^-64 ~ 2.2e-16).  The total relative
 * error is far below 1e-12; we multiply the result by (1 + 2^-30) ~ (1 + 9.3e-10) to cover it.
 * Underflow: a tail that underflows to 0 in long double is below 1e-4900, far below any delta we
 * accept (>= 1e-300), so treating it as 0 cannot make us accept a delta that the truth violates.
 */

#define TAIL_MARGIN (1.0L + 1.0L / 1073741824.0L)	/* 1 + 2^-30 */
#define TAIL_TERMS_MAX 4096

typedef struct tailctx
{
	long double s2;				/* sigma^2 = num/den */
	long double two_s2;
	long double zlo;			/* lower bound on the normalizing constant */
	int64_t		nterms;			/* L: explicit terms beyond the first */
} tailctx;

static bool
dgauss_valid(const dp_dgauss *g)
{
	double		s2;

	if (g == NULL || g->num == 0 || g->den == 0)
		return false;
	s2 = (double) g->num / (double) g->den;
	return s2 >= DP_DGAUSS_SIGMA2_MIN * 0.5 && s2 <= DP_DGAUSS_SIGMA2_MAX * 2.0;
}

static long double
f_term(const tailctx *c, long double x)
{
	return expl(-(x * x) / c->two_s2);
}

static void
tail_init(tailctx *c, const dp_dgauss *g)
{
	long double sigma;
	long double partial = 1.0L;
	long double poisson;

	c->s2 = (long double) g->num / (long double) g->den;
	c->two_s2 = 2.0L * c->s2;
	sigma = sqrtl(c->s2);
	/* enough terms to cover +/- 40 sigma when sigma is small; capped for speed */
	c->nterms = TAIL_TERMS_MAX;
	if (sigma * 40.0L + 1.0L < (long double) TAIL_TERMS_MAX)
		c->nterms = (int64_t) ceill(sigma * 40.0L) + 1;
	for (int64_t x = 1; x <= c->nterms; x++)
		partial += 2.0L * f_term(c, (long double) x);
	poisson = sqrtl(2.0L * (long double) M_PI * c->s2);
	c->zlo = partial > poisson ? partial : poisson;
}

/* Rigorous upper bound on P(X >= m), m >= 0 (see above). */
static long double
tail_upper(const tailctx *c, int64_t m)
{
	long double s = 0.0L;
	long double y;
	long double u;

	for (int64_t i = 0; i <= c->nterms; i++)
		s += f_term(c, (long double) m + (long double) i);
	y = (long double) m + (long double) c->nterms;
	s += sqrtl((long double) M_PI * c->s2 / 2.0L) * erfcl(y / sqrtl(c->two_s2));
	u = s / c->zlo * TAIL_MARGIN;
	return u > 1.0L ? 1.0L : u;
}

long double
dp_dgauss_tail_upper(const dp_dgauss *g, int64_t m)
{
	tailctx		c;

	if (!dgauss_valid(g) || m < 0)
		return NAN;
	tail_init(&c, g);
	return tail_upper(&c, m);
}

/*
 * Threshold: the smallest T = m + 1 with tail_upper(m) <= delta_add, i.e. a value of count 1
 * (noisy count 1 + X) reaches T with probability <= tail_upper(T - 1) <= delta_add.
 * tail_upper is non-increasing in m (for a fixed number of explicit terms L, going from m to m+1
 * removes f(m) and adds f(m+L+1) - [I(m+L) - I(m+L+1)] <= f(m+L+1) <= f(m)), so doubling and
 * bisection find it; whatever rounding does, the returned T satisfies the bound, because only
 * values of m that were checked to satisfy it are ever returned.
 */
int64_t
dp_partition_threshold(const dp_dgauss *g, double delta_add)
{
	tailctx		c;
	long double d;
	int64_t		lo,
				hi;

	if (!dgauss_valid(g) || !isfinite(delta_add) || delta_add < 1e-300 || delta_add >= 0.5)
		return -1;
	tail_init(&c, g);
	d = (long double) delta_add;
	/* tail_upper(0) >= P(X >= 0) > 1/2 > d, so the answer m is >= 1 */
	lo = 0;
	hi = 1;
	while (tail_upper(&c, hi) > d)
	{
		if (hi > ((int64_t) 1 << 60))
			return -1;			/* cannot happen for valid g and delta_add >= 1e-300 */
		lo = hi;
		hi *= 2;
	}
	/* invariant: tail_upper(lo) > d (or lo == 0), tail_upper(hi) <= d */
	while (hi - lo > 1)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (tail_upper(&c, mid) <= d)
			hi = mid;
		else
			lo = mid;
	}
	return hi + 1;
}

double
dp_partition_delta(const dp_dgauss *g, int64_t threshold)
{
	long double u;
	double		r;

	if (!dgauss_valid(g) || threshold < 1)
		return NAN;
	u = dp_dgauss_tail_upper(g, threshold - 1);
	r = (double) u;
	if ((long double) r < u)
		r = nextafter(r, INFINITY);
	return r;
}

/*
 * Gaussian thresholding.  Privacy: dp_discovery.h, section 1.  Every value passed in gets exactly
 * one independent exact discrete Gaussian draw, whatever its count (skipping or reusing noise would
 * change the distribution the proof is about); the noise is dp_noise_counts' (dp_counts.h: its
 * saturation at the int64 range is post-processing, and it refuses negative counts).
 */
int64_t
dp_partition_select(const int64_t *counts, size_t n, const dp_dgauss *g, int64_t threshold,
					int64_t *noisy, uint8_t *selected)
{
	int64_t		nsel = 0;

	if (!dgauss_valid(g) || threshold < 2 || dp_noise_counts(g, counts, noisy, n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
	{
		selected[i] = noisy[i] >= threshold;
		nsel += selected[i];
	}
	return nsel;
}

/*
 * Point masses: dp_partition_select, then the cut max(threshold, ceil(frac * noisy_total)), which
 * depends only on the mechanism's output and on the separately released noisy_total and public
 * frac: post-processing, no extra privacy cost.
 */
int64_t
dp_pointmass_select(const int64_t *counts, size_t n, const dp_dgauss *g, int64_t threshold,
					int64_t noisy_total, double frac, int64_t *noisy, uint8_t *selected)
{
	int64_t		cut = threshold;
	int64_t		nsel = 0;
	double		c;

	if (!dgauss_valid(g) || threshold < 2 || !(frac >= 0.0 && frac <= 1.0))
		return -1;
	c = ceil(frac * (double) (noisy_total > 0 ? noisy_total : 0));
	if (c >= 9223372036854775808.0)
		cut = INT64_MAX;
	else if ((int64_t) c > cut)
		cut = (int64_t) c;
	if (dp_partition_select(counts, n, g, threshold, noisy, selected) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
	{
		selected[i] = selected[i] && noisy[i] >= cut;
		nsel += selected[i];
	}
	return nsel;
}
