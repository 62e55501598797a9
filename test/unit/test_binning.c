/*
 * test_binning.c - tests of dp_binning: the two-stage release of an integer column declared with
 * bounds only over a small range (its split, the refinement rule, the estimate from both stages)
 * and the bins it affords (dp_binning.h).
 *
 * Build and run from the repository root (or `make unit`):
 *   make test/unit/bin/test_binning && ./test/unit/bin/test_binning
 *
 * Everything here is deterministic: the "noise" is a fixed pseudo-random pattern (splitmix64,
 * fixed seed) scaled by sigma, so that the rule is checked as the post-processing it is, on
 * given noisy counts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dp_binning.h"
#include "dp_discovery.h"
#include "unit.h"

#define NV 99					/* values 1..99, like hours per week */

static uint64_t rng_state;

static uint64_t
rng_next(void)
{
	uint64_t	z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A fixed standard-normal-like pattern (sum of 4 uniforms, centred, unit variance). */
static void
noise_pattern(double *z, int n)
{
	rng_state = 0x1234567;
	for (int i = 0; i < n; i++)
	{
		double		s = 0;

		for (int k = 0; k < 4; k++)
			s += (double) (rng_next() >> 11) / 9007199254740992.0;
		z[i] = (s - 2.0) * sqrt(3.0);
	}
}

/*
 * A heaped column's shape (weights summing to 1): a thin spread over 1..99, heaps at 40 (most),
 * 35, 45, 50, 60, 20, 30, 25, 55, and at both ends (1 and 99).
 */
static void
heaped_shape(double *p)
{
	double		sum = 0;

	for (int i = 0; i < NV; i++)
	{
		int			v = i + 1;

		p[i] = 0.002 + 0.004 * exp(-((v - 42) * (v - 42)) / 300.0);
		if (v % 5 == 0)
			p[i] += 0.01;
		if (v % 10 == 0)
			p[i] += 0.02;
	}
	p[40 - 1] += 0.45;
	p[35 - 1] += 0.04;
	p[45 - 1] += 0.05;
	p[50 - 1] += 0.08;
	p[60 - 1] += 0.04;
	p[20 - 1] += 0.03;
	p[1 - 1] += 0.01;
	p[99 - 1] += 0.005;
	for (int i = 0; i < NV; i++)
		sum += p[i];
	for (int i = 0; i < NV; i++)
		p[i] /= sum;
}

/* Noisy counts of n rows of the heaped shape, with the fixed pattern times sigma as noise. */
static void
noisy_counts(double n, double sigma, int64_t *c)
{
	double		p[NV],
				z[NV];

	heaped_shape(p);
	noise_pattern(z, NV);
	for (int i = 0; i < NV; i++)
		c[i] = (int64_t) llround(n * p[i] + sigma * z[i]);
}

static int
nbins_of(double n, double sigma, double min_mass)
{
	int64_t		c[NV],
				e[NV + 1];
	uint32_t	ne = 0;

	noisy_counts(n, sigma, c);
	if (dp_binning_int(c, NV, 1, sigma, min_mass, e, &ne) != 0)
		return -1;
	return (int) ne - 1;
}

/* edges: first = lower, last = lower + nvalues, strictly increasing */
static bool
edges_valid(const int64_t *e, uint32_t ne, int64_t lower, uint32_t nvalues)
{
	if (ne < 2 || ne > nvalues + 1 || e[0] != lower || e[ne - 1] != lower + (int64_t) nvalues)
		return false;
	for (uint32_t i = 1; i < ne; i++)
		if (e[i] <= e[i - 1])
			return false;
	return true;
}

static void
test_fine_range(void)
{
	unit_check(dp_binning_fine_range(0, 127), "[0, 127] (128 values) gets one cell per value");
	unit_check(!dp_binning_fine_range(0, 128), "[0, 128] (129 values) does not");
	unit_check(dp_binning_fine_range(5, 5), "a single value does");
	unit_check(!dp_binning_fine_range(3, 2), "lower > upper does not");
	unit_check(!dp_binning_fine_range(INT64_MIN, INT64_MAX), "the whole int64 range does not (no overflow)");
	unit_check(dp_binning_fine_range(INT64_MAX - 10, INT64_MAX), "11 values at the top of int64 do");
}

static void
test_resolved(void)
{
	int64_t		c[NV],
				e[NV + 1];
	uint32_t	ne = 0;
	double		sigma = 20;

	/* 200,000 rows, sigma 20: every value's count is far above 3 sigma: one bin per value */
	int			rc;

	noisy_counts(200000, sigma, c);
	rc = dp_binning_int(c, NV, 1, sigma, 0, e, &ne);
	unit_check(rc == 0 && ne == NV + 1 && edges_valid(e, ne, 1, NV),
			   "a resolved histogram gets one bin per value (%u bins of %d values)", ne - 1, NV);
	/* the same counts with a minimum bin mass above the thin values' counts merge those only */
	rc = dp_binning_int(c, NV, 1, sigma, 600, e, &ne);
	unit_check(rc == 0 && ne < NV + 1 && ne > 10 && edges_valid(e, ne, 1, NV),
			   "a minimum bin mass merges the thin values (%u bins)", ne - 1);
	{
		bool		own = false;

		for (uint32_t i = 0; i + 1 < ne; i++)
			own |= e[i] == 40 && e[i + 1] == 41;
		unit_check(own, "the heap at 40 keeps a bin of its own");
	}
	/* exact counts of a column with no empty value: one bin per value */
	for (int i = 0; i < NV; i++)
		c[i] = 1 + i % 3;
	unit_check(dp_binning_int(c, NV, -50, 0, 0, e, &ne) == 0 && ne == NV + 1 && edges_valid(e, ne, -50, NV),
			   "exact counts >= 1 everywhere: one bin per value");
}

static void
test_monotone(void)
{
	int			prev = 0;
	bool		mono = true,
				bounded = true;
	double		sigma = 40;

	/* more rows, same noise: never fewer bins */
	for (double n = 500; n <= 2e6; n *= 1.5)
	{
		int			nb = nbins_of(n, sigma, 3 * sigma);

		mono &= nb >= prev;
		bounded &= nb >= 1 && nb <= NV;
		prev = nb;
	}
	unit_check(mono && bounded, "bins never fewer with more rows (%d at 2e6 rows), at most one per value", prev);
	unit_check(prev == NV, "a big enough table gets one bin per value");
	/* more rho (smaller sigma and minimum mass), same rows: never fewer bins */
	prev = 0;
	mono = true;
	for (double s = 400; s >= 0.5; s /= 1.5)
	{
		int			nb = nbins_of(50000, s, 3 * s);

		mono &= nb >= prev;
		prev = nb;
	}
	unit_check(mono, "bins never fewer with more rho (%d at the smallest sigma)", prev);
	unit_check(nbins_of(2000, 400, 1200) < 10, "a small table at a small rho gets few bins (%d)",
			   nbins_of(2000, 400, 1200));
}

static void
test_merge_rules(void)
{
	int64_t		e[9];
	uint32_t	ne = 0;
	/* sigma 1: t(1) = 3, t(2) = 4.24, t(3) = 5.20 */
	int64_t		a[8] = {10, 1, 1, 50, 2, 2, 2, 10};
	int64_t		expect_a[5] = {0, 3, 4, 7, 8};
	/* sigma 0.5: t(1) = 1.5, t(2) = 2.12, t(3) = 2.60 */
	int64_t		b[7] = {1, 1, 1, 1, 1, 1, 1};
	int64_t		expect_b[3] = {7, 10, 14};
	int64_t		c[6] = {30, 1, 1, 5, 1, 1};
	int64_t		expect_c[3] = {0, 1, 6};
	int64_t		z[4] = {0, -2, 1, 0};

	unit_check(dp_binning_int(a, 8, 0, 1, 0, e, &ne) == 0 && ne == 5 &&
			   memcmp(e, expect_a, sizeof(expect_a)) == 0,
			   "the run {1, 1} joins 10, its lighter neighbour; {2, 2, 2} reaches t(3) and is a bin");
	unit_check(dp_binning_int(b, 7, 7, 0.5, 0, e, &ne) == 0 && ne == 3 &&
			   memcmp(e, expect_b, sizeof(expect_b)) == 0,
			   "a run is cut greedily into bins that reach t(w), the remainder joined to the last");
	unit_check(dp_binning_int(c, 6, 0, 1, 0, e, &ne) == 0 && ne == 3 &&
			   memcmp(e, expect_c, sizeof(expect_c)) == 0,
			   "a run joins the value after it when that one is lighter; a trailing run the bin before it");
	unit_check(dp_binning_int(z, 4, 0, 1, 0, e, &ne) == 0 && ne == 2 && e[0] == 0 && e[1] == 4,
			   "nothing resolved anywhere: one bin over the range");
}

static void
test_deterministic_and_invalid(void)
{
	int64_t		c[NV],
				e1[NV + 1],
				e2[NV + 1];
	uint32_t	n1 = 0,
				n2 = 0;

	noisy_counts(30000, 60, c);
	unit_check(dp_binning_int(c, NV, 1, 60, 150, e1, &n1) == 0 && dp_binning_int(c, NV, 1, 60, 150, e2, &n2) == 0 &&
			   n1 == n2 && memcmp(e1, e2, sizeof(int64_t) * n1) == 0, "deterministic given the released counts");
	unit_check(dp_binning_int(c, 0, 1, 1, 0, e1, &n1) == -1, "no values: invalid");
	unit_check(dp_binning_int(c, DP_BINNING_MAX_VALUES + 1, 1, 1, 0, e1, &n1) == -1, "too many values: invalid");
	unit_check(dp_binning_int(c, NV, 1, -1, 0, e1, &n1) == -1, "negative sigma: invalid");
	unit_check(dp_binning_int(c, NV, 1, NAN, 0, e1, &n1) == -1, "NaN sigma: invalid");
	unit_check(dp_binning_int(c, NV, 1, 1, -1, e1, &n1) == -1, "negative minimum mass: invalid");
	unit_check(dp_binning_int(c, NV, INT64_MAX - 5, 1, 0, e1, &n1) == -1, "a range past int64: invalid");
}

static void
test_split(void)
{
	bool		ok = true;
	double		r1,
				r2;

	for (int i = 0; i < 10000; i++)
	{
		double		rho = 1e-9 * pow(1.0037, i);

		/* long double holds both parts exactly: their exact sum never exceeds rho */
		ok &= dp_binning_split(rho, &r1, &r2) == 0 && r1 == rho / 4 && r2 > 0 &&
			(long double) r1 + (long double) r2 <= (long double) rho && r2 >= 0.75 * rho * (1 - 1e-15);
	}
	unit_check(ok, "rho_1 = rho / 4 and rho_1 + rho_2 <= rho exactly, over 10,000 rhos");
	unit_check(dp_binning_split(0, &r1, &r2) == -1 && dp_binning_split(NAN, &r1, &r2) == -1 &&
			   dp_binning_split(INFINITY, &r1, &r2) == -1, "rho 0, NaN, infinite: invalid");
}

static void
test_refine(void)
{
	/* sigma 10, w 4: threshold 3 * 10 * 2 = 60 */
	unit_check(dp_binning_refine(60, 4, 10) && !dp_binning_refine(59, 4, 10),
			   "a cell of 4 values is refined from a noisy count of 3 sigma sqrt(4) = 60 on");
	unit_check(dp_binning_refine(30, 1, 10) && !dp_binning_refine(29, 1, 10) && !dp_binning_refine(100, 0, 10),
			   "a cell of one value from 3 sigma on; an empty one never");
	unit_check(dp_binning_refine(0, 5, 0) && !dp_binning_refine(-1, 5, 0), "no noise: any non-negative count");
	unit_check(!dp_binning_refine(100, 4, NAN) && !dp_binning_refine(100, 4, -1), "an invalid sigma: never");
}

static void
test_combine(void)
{
	double		c2[4] = {10, 20, 30, 40},
				est[4],
				t = 0,
				one = 7;

	/* a cell kept whole: the inverse-variance mean, var 3 and 1 -> weights 1/4 and 3/4 */
	unit_check(dp_binning_combine(100, 3, &one, 1, 1, &t, NULL) == 0 && fabs(t - (25 + 5.25)) < 1e-12,
			   "a cell kept whole: the inverse-variance mean of its two counts");
	/* refined: sum 100 (variance 4 x 1), c1 40 (variance 4): total 70; each value moved by -7.5 */
	unit_check(dp_binning_combine(40, 4, c2, 4, 1, &t, est) == 0 && fabs(t - 70) < 1e-12 &&
			   fabs(est[0] - 2.5) < 1e-12 && fabs(est[3] - 32.5) < 1e-12 &&
			   fabs(est[0] + est[1] + est[2] + est[3] - t) < 1e-9,
			   "a refined cell: the values sum to the combined total, their differences kept");
	unit_check(dp_binning_combine(1, 0, c2, 4, 1, &t, est) == -1 && dp_binning_combine(1, 1, c2, 0, 1, &t, est) == -1 &&
			   dp_binning_combine(1, 1, c2, 4, 1, &t, NULL) == -1, "invalid variance, no part, no room: invalid");
}

/*
 * The whole rule on the heaped column over [1, 99] and its log-grid cells (exact cell counts plus
 * the fixed pattern times sigma): a small table at a big sigma refines no cell (so it keeps the log grid's quantile bins), a big one refines the
 * cells, and the heap at 40 then gets a bin of its own.
 */
static int
refined_cells(double n, double sigma, bool *heap_alone)
{
	dp_loggrid	g;
	double		p[NV],
				z[NV];
	int64_t		cells[2048];
	uint32_t	nc;
	int			nref = 0;

	*heap_alone = false;
	if (dp_loggrid_init_int(&g, 8) != 0 || (nc = dp_loggrid_ncells(&g)) > 2048)
		return -1;
	heaped_shape(p);
	noise_pattern(z, NV);
	memset(cells, 0, sizeof(cells));
	for (int i = 0; i < NV; i++)
		cells[dp_loggrid_cell_int(&g, i + 1)] += (int64_t) llround(n * p[i]);
	for (uint32_t c = 0; c < nc; c++)
	{
		int64_t		lo,
					hi,
					vals[NV],
					e[NV + 1];
		uint32_t	ne = 0;

		dp_loggrid_cell_range_int(&g, c, &lo, &hi);
		lo = lo < 1 ? 1 : lo;
		hi = hi > NV ? NV : hi;
		if (lo > hi || !dp_binning_refine(cells[c] + (int64_t) llround(sigma * z[c % NV]),
										  (uint32_t) (hi - lo + 1), sigma))
			continue;
		nref++;
		for (int64_t v = lo; v <= hi; v++)
			vals[v - lo] = (int64_t) llround(n * p[v - 1] + sigma * z[(v * 7) % NV]);
		if (dp_binning_int(vals, (uint32_t) (hi - lo + 1), lo, sigma, 0, e, &ne) != 0)
			return -1;
		for (uint32_t i = 0; i + 1 < ne; i++)
			*heap_alone |= e[i] == 40 && e[i + 1] == 41;
	}
	return nref;
}

static void
test_rule(void)
{
	bool		alone;
	int			small = refined_cells(2000, 400, &alone),
				big;

	unit_check(small == 0, "2,000 rows at sigma 400: no cell refined (%d)", small);
	big = refined_cells(200000, 20, &alone);
	unit_check(big >= 8 && alone, "200,000 rows at sigma 20: %d cells refined, the heap at 40 alone", big);
}

static void
test_merge(void)
{
	int64_t		coarse[3] = {0, 10, 20},
				coarse2[3] = {0, 7, 20},
				blo = 8,
				bhi = 11,
				be[3] = {8, 9, 12},
				out[21],
				want[5] = {0, 8, 9, 12, 20};
	uint32_t	bne = 3,
				n = 0;
	double		mass[20];

	for (int v = 0; v < 20; v++)
		mass[v] = 10;
	unit_check(dp_binning_merge(coarse, 3, 0, 20, 1, &blo, &bhi, be, &bne, mass, 5, out, &n) == 0 &&
			   n == 5 && memcmp(out, want, sizeof(want)) == 0,
			   "a block's edges replace the quantile edge inside it (10) and keep those outside");
	mass[7] = 0.5;
	unit_check(dp_binning_merge(coarse2, 3, 0, 20, 1, &blo, &bhi, be, &bne, mass, 5, out, &n) == 0 &&
			   n == 5 && memcmp(out, want, sizeof(want)) == 0,
			   "a thin piece [7, 8) cut off by the block joins its neighbour away from it");
	mass[7] = 10;
	{
		int64_t		want2[6] = {0, 7, 8, 9, 12, 20};

		unit_check(dp_binning_merge(coarse2, 3, 0, 20, 1, &blo, &bhi, be, &bne, mass, 5, out, &n) == 0 &&
				   n == 6 && memcmp(out, want2, sizeof(want2)) == 0, "a piece that reaches min_mass stays");
	}
	for (int v = 0; v < 20; v++)
		mass[v] = 0.01;
	unit_check(dp_binning_merge(coarse, 3, 0, 20, 0, NULL, NULL, NULL, NULL, mass, 5, out, &n) == 0 &&
			   n == 3 && memcmp(out, coarse, sizeof(coarse)) == 0,
			   "no block: the quantile edges unchanged, however thin their bins");
	be[0] = 7;
	unit_check(dp_binning_merge(coarse, 3, 0, 20, 1, &blo, &bhi, be, &bne, mass, 5, out, &n) == -1,
			   "a block whose edges do not start at its first value: invalid");
	be[0] = 8;
	coarse[1] = 0;
	unit_check(dp_binning_merge(coarse, 3, 0, 20, 1, &blo, &bhi, be, &bne, mass, 5, out, &n) == -1,
			   "quantile edges not increasing: invalid");
}

/* The bins of a wide range follow the released mass and the public minimum mass. */
static void
test_wide_bins(void)
{
	uint32_t	prev = 0;
	bool		monotone = true;

	unit_check(dp_binning_wide_bins(1000, 100, 16) == 10, "1,000 rows at a minimum mass of 100: 10 bins");
	unit_check(dp_binning_wide_bins(5000, 100, 16) == 16,
			   "5,000 rows at a minimum mass of 100: the declared 16 (a pair of 50-bin columns could not hold it)");
	unit_check(dp_binning_wide_bins(90000, 100, 16) == 30,
			   "90,000 rows at a minimum mass of 100: 30 bins, 900 cells a pair of 100 rows each");
	unit_check(dp_binning_wide_bins(1e7, 100, 16) == DP_BINNING_WIDE_MAX_BINS,
			   "10M rows: at most DP_BINNING_WIDE_MAX_BINS bins");
	unit_check(dp_binning_wide_bins(50, 100, 16) == 1 && dp_binning_wide_bins(-30, 100, 16) == 1,
			   "less mass than one bin's minimum (or a negative noisy total): one bin");
	unit_check(dp_binning_wide_bins(1e6, 0, 16) == 16 && dp_binning_wide_bins(1e6, -1, 16) == 16 &&
			   dp_binning_wide_bins(NAN, 100, 16) == 16 && dp_binning_wide_bins(1e6, INFINITY, 16) == 16,
			   "no minimum mass (nothing synthesized) or an invalid input: the declared bins");
	unit_check(dp_binning_wide_bins(1e6, 1e-300, 16) == DP_BINNING_WIDE_MAX_BINS,
			   "a tiny minimum mass: the most bins, no overflow");
	/* more rows: never fewer bins; a larger minimum mass (less rho): never more */
	for (double mass = 0; mass <= 2e6; mass += 997)
	{
		uint32_t	n = dp_binning_wide_bins(mass, 250, 16);

		monotone &= n >= prev && dp_binning_wide_bins(mass, 400, 16) <= n;
		prev = n;
	}
	unit_check(monotone && prev == DP_BINNING_WIDE_MAX_BINS, "bins grow with the mass and shrink with the minimum mass");
}

/*
 * The mass of a wide range on a small table at a small rho: 400 rows over [40, 60] of a real
 * column declared over [0, 100], on the log grid, noise of sigma 62.75 (a synthesis at epsilon
 * 0.3 over three columns, minimum bin mass 256): the denoised histogram's positive mass is mostly
 * noise that the denoising kept for being high, and afforded many bins; the lower bound from the
 * cells in the bounds affords no more than the 400 rows do (one bin), and a big table still gets
 * its bins.
 */
static int
wide_mass_bins(double rows, double sigma, double min_mass, uint32_t seed, double *denoised)
{
	dp_loggrid	g;
	static int64_t cells[32768],
				raw[32768];
	static uint8_t scratch[32768];
	uint32_t	nc,
				lo,
				hi;

	*denoised = 0;
	if (dp_loggrid_init_real(&g, 8) != 0 || (nc = dp_loggrid_ncells(&g)) > 32768)
		return -1;
	memset(cells, 0, sizeof(cells));
	for (int i = 0; i < (int) rows; i++)
		cells[dp_loggrid_cell_real(&g, 40 + 20.0 * (int) (((int64_t) i * 7919) % 1000) / 1000.0)]++;
	rng_state = 0x9e37 + seed;
	for (uint32_t c = 0; c < nc; c++)
	{
		double		s = 0;

		for (int k = 0; k < 12; k++)
			s += (double) (rng_next() >> 11) / 9007199254740992.0;
		cells[c] += (int64_t) llround((s - 6.0) * sigma);	/* about normal, variance sigma^2 */
	}
	memcpy(raw, cells, sizeof(int64_t) * nc);
	if (dp_loggrid_denoise(&g, cells, sigma, 3.0, scratch) < 0)
		return -1;
	for (uint32_t c = 0; c < nc; c++)
		*denoised += cells[c] > 0 ? (double) cells[c] : 0;
	lo = dp_loggrid_cell_real(&g, 0);
	hi = dp_loggrid_cell_real(&g, 100);
	return (int) dp_binning_wide_bins(dp_binning_wide_mass(raw + lo, hi - lo + 1, sigma, *denoised),
									  min_mass, 16);
}

static void
test_wide_mass(void)
{
	int64_t		r[4] = {100, -20, 30, 10};
	double		denoised;
	int			worst = 0,
				phantom = 0,
				big = 64;

	unit_check(fabs(dp_binning_wide_mass(r, 4, 2, 1000) - (120 - 3.0 * 2 * 2)) < 1e-9,
			   "the sum, negative counts included, less 3 sd of its noise");
	unit_check(dp_binning_wide_mass(r, 4, 2, 50) == 50 && dp_binning_wide_mass(r, 4, 100, 1e6) == 0,
			   "at most the denoised mass, at least 0");
	unit_check(dp_binning_wide_mass(NULL, 4, 2, 50) == -1 && dp_binning_wide_mass(r, 4, NAN, 50) == -1 &&
			   dp_binning_wide_mass(r, 4, -1, 50) == -1, "invalid input");
	for (uint32_t seed = 0; seed < 20; seed++)
	{
		int			b = wide_mass_bins(400, 62.75, 256, seed, &denoised);
		int			bb = wide_mass_bins(400000, 62.75, 256, seed, &denoised);

		worst = b > worst ? b : worst;
		phantom += dp_binning_wide_bins(denoised, 256, 16) > 1;
		big = bb < big ? bb : big;
	}
	unit_check(worst == 1, "400 rows at a minimum bin mass of 256: one bin, as the rows afford (was up to 16)");
	printf("# 400 rows: %d of 20 noise draws gave more than one bin by the denoised mass\n", phantom);
	unit_check(big == 39, "400,000 rows: the pair rule's floor(sqrt(396,800 / 256)) = 39 bins (the bound less 3 sd)");
}

/* every inner edge of e[0 .. n - 1] a multiple of 10^k (to a relative 1e-9) */
static bool
on_decimal(const double *e, int n, int k)
{
	double		p = pow(10, -k);

	for (int i = 1; i + 1 < n; i++)
		if (fabs(e[i] * p - round(e[i] * p)) > 1e-9 * fmax(1, fabs(e[i] * p)))
			return false;
	return true;
}

static bool
increasing(const double *e, int n)
{
	for (int i = 1; i < n; i++)
		if (!(e[i] > e[i - 1]))
			return false;
	return true;
}

/* Inner edges move onto round values within a quarter (integers) or a half of their narrower bin. */
static void
test_round_edges(void)
{
	double		e[6] = {40, 55.87, 56.93, 58.4, 61.3, 100},
				want[6] = {40, 56, 57, 58, 60, 100},	/* no halves: the bins are over a unit wide */
				c[5] = {0, 0.2931, 0.3147, 0.3418, 6},
				cwant[5] = {0, 0.3, 0.32, 0.35, 6},
				iv[4] = {0, 577, 698, 20001},
				iwant[4] = {0, 600, 700, 20001},
				tight[4] = {0, 1, 2, 3},
				bad[3] = {0, 2, 1};
	bool		ok = true;

	unit_check(dp_binning_round_edges(e, 6, false, DP_BINNING_ANY_EXP) == 6 && memcmp(e, want, sizeof(want)) == 0,
			   "a real column's edges on the round units near them (heaps start bins)");
	unit_check(dp_binning_round_edges(c, 5, false, DP_BINNING_ANY_EXP) == 5 && memcmp(c, cwant, sizeof(cwant)) == 0,
			   "narrow bins: finer round steps (%g %g %g)", c[1], c[2], c[3]);
	unit_check(dp_binning_round_edges(iv, 4, true, 0) == 4 && memcmp(iv, iwant, sizeof(iwant)) == 0,
			   "integer edges onto round integers");
	unit_check(dp_binning_round_edges(tight, 4, true, 0) == 4 && tight[1] == 1 && tight[2] == 2,
			   "integer bins of one value: no room to move");
	unit_check(dp_binning_round_edges(bad, 3, false, DP_BINNING_ANY_EXP) == -1 && bad[1] == 2,
			   "edges not increasing: invalid");
	/* a fixed pseudo-random set of integral edges: order kept, each moved by at most a quarter bin */
	rng_state = 99;
	for (int t = 0; t < 200; t++)
	{
		double		x[12],
					y[12];

		x[0] = -50 + (double) (rng_next() % 1000);
		for (int i = 1; i < 12; i++)
			x[i] = x[i - 1] + 1 + (double) (rng_next() % 100000);
		memcpy(y, x, sizeof(x));
		ok &= dp_binning_round_edges(y, 12, true, 0) == 12 && y[0] == x[0] && y[11] == x[11];
		for (int i = 1; i < 12; i++)
			ok &= y[i] > y[i - 1] && fabs(y[i] - x[i]) <= (x[i + (i < 11)] - x[i - 1]) / 4;
	}
	unit_check(ok, "random integral edges: ends kept, order kept, every move within a quarter of the bins");
}

/*
 * A real column recorded to a tenth, its bins inside one grid cell narrower than a tenth (the
 * learned edges of diamonds' depth, 179,800 rows, epsilon 3): at a quarter of the bin the edges
 * stayed at hundredths, and a value drawn uniformly in [61.65, 61.75) fell below 61.7 half the
 * time.  Edges keep no finer decimal than 1.5 times their narrower bin: tenths here, some merged.
 */
static void
test_round_edges_precision(void)
{
	double		depth[29] = {40, 56.6, 57.5, 58, 59, 59.6, 60.05, 60.12, 60.2, 60.3, 60.35, 60.45,
							 60.52, 60.6, 60.7, 60.78, 60.85, 60.95, 61, 61.1, 61.18, 61.25, 61.35,
							 61.42, 61.5, 61.6, 61.65, 61.75, 80},
				carat[9] = {0, 0.262, 0.27, 0.278, 0.286, 0.294, 0.302, 0.31, 6},
				scaled[5] = {0, 0.2931, 0.3147, 0.3418, 6},
				swant[3] = {0, 0.3, 6},
				x[40],
				y[40];
	int			n;
	bool		ok = true;

	{
		int			off = 0;

		n = dp_binning_round_edges(depth, 29, false, DP_BINNING_ANY_EXP);
		for (int i = 1; i + 1 < n; i++)
			off += !on_decimal((const double[]) {0, depth[i], 0}, 3, -1);
		/* 14 of the 27 were off tenths; those left lie between bins of 0.05 as learned */
		unit_check(n >= 20 && n < 29 && depth[0] == 40 && depth[n - 1] == 80 && increasing(depth, n) &&
				   off <= 3, "bins narrower than a tenth: edges on tenths, the narrowest merged (%d edges, %d off)", n, off);
	}
	n = dp_binning_round_edges(carat, 9, false, DP_BINNING_ANY_EXP);
	unit_check(n >= 6 && n < 9 && carat[n - 1] == 6 && increasing(carat, n) && on_decimal(carat, n, -2),
			   "bins under a hundredth: edges on hundredths (%d edges: %g %g %g)", n, carat[1], carat[2], carat[3]);
	n = dp_binning_round_edges(scaled, 5, false, -1);
	unit_check(n == 3 && memcmp(scaled, swant, sizeof(swant)) == 0,
			   "numeric(p, 1): no edge finer than a tenth (%d edges, %g)", n, scaled[1]);
	/* pseudo-random real edges: ends kept, order kept, each edge on its bins' decimal or coarser */
	rng_state = 7;
	for (int t = 0; t < 300; t++)
	{
		double		wmin = INFINITY;
		int			k;

		x[0] = -50 + (double) (rng_next() % 1000) / 7;
		for (int i = 1; i < 40; i++)
		{
			x[i] = x[i - 1] + 1e-3 + (double) (rng_next() % 100000) / (t % 2 ? 997 : 99991);
			wmin = fmin(wmin, x[i] - x[i - 1]);
		}
		memcpy(y, x, sizeof(x));
		n = dp_binning_round_edges(y, 40, false, DP_BINNING_ANY_EXP);
		k = (int) floor(log10(1.5 * wmin));
		ok &= n >= 2 && n <= 40 && y[0] == x[0] && y[n - 1] == x[39] && increasing(y, n) && on_decimal(y, n, k);
	}
	unit_check(ok, "random real edges: ends kept, order kept, no edge finer than its bins need");
}

/* cells of one value each at lo, lo + 1, ...: counts, one noise variance */
static void
value_cells(dp_shape_cell *c, int k, double lo, const double *count, double var)
{
	for (int i = 0; i < k; i++)
	{
		c[i].lo = lo + i;
		c[i].hi = lo + i + 1;
		c[i].width = 1;
		c[i].count = count[i];
		c[i].var = var;
	}
}

/* The shape inside a bin: the released counts where they stand out of the noise, else shrunk. */
static void
test_shape_weights(void)
{
	double		bumpy[4] = {10, 50, 5, 35},
				w[4];
	dp_shape_cell c[4];
	bool		ok = true;

	value_cells(c, 4, 0, bumpy, 0);
	ok = dp_binning_shape_weights(c, 4, w) == 0;
	for (int i = 0; i < 4; i++)
		ok &= fabs(w[i] - bumpy[i]) < 1e-9;
	unit_check(ok, "no noise: the counts as released");
	value_cells(c, 4, 0, bumpy, 1e6);
	ok = dp_binning_shape_weights(c, 4, w) == 0;
	for (int i = 0; i < 4; i++)
		ok &= fabs(w[i] - 25) < 1e-9;
	unit_check(ok, "bumps that the noise explains: the bin's mass spread evenly");
	value_cells(c, 4, 0, (const double[]) {-5, -1, 0, -2}, 1);
	unit_check(dp_binning_shape_weights(c, 4, w) == -1, "no positive mass: no shape");
}

/* The roundest value in an interval: the coarsest step {5, 2, 1} x 10^k with a single multiple. */
static void
test_roundest(void)
{
	double		x = -1;

	unit_check(dp_binning_roundest(57, 57.5, &x) && x == 57, "[57, 57.5): 57");
	unit_check(dp_binning_roundest(59.8, 60.2, &x) && x == 60, "[59.8, 60.2): 60, not the edge");
	unit_check(dp_binning_roundest(53, 55, &x) && x == 54, "[53, 55): 54 (55 is out, 54 the one even)");
	unit_check(dp_binning_roundest(0.7, 0.72, &x) && x == 0.7, "[0.7, 0.72): 0.7");
	unit_check(dp_binning_roundest(-0.3, 0.2, &x) && x == 0, "[-0.3, 0.2): 0");
	unit_check(dp_binning_roundest(61.5, 62, &x) && x == 61.5, "[61.5, 62): 61.5 (62 is out)");
	unit_check(!dp_binning_roundest(1, 5, &x), "[1, 5): 2 and 4 equally round: none");
	unit_check(!dp_binning_roundest(5, 5, &x) && !dp_binning_roundest(6, 5, &x) &&
			   !dp_binning_roundest(NAN, 5, &x) && !dp_binning_roundest(0, 1, NULL), "empty or invalid: none");
}

/* Lone heaps: a bin at least DP_BINNING_HEAP_RATIO (8) times as dense as both neighbours. */
static void
test_heap_points(void)
{
	/* diamonds' table at epsilon 1 (released counts of main's bins) */
	const double edges[] = {40, 54, 55, 56, 56.5, 56.8, 57, 57.5, 58, 58.5, 58.8, 59, 59.5, 60, 61, 62, 100},
				counts[] = {480, 1861, 4278, 6619, 17, 26, 6520, 53, 5576, -33, 58, 4360, -22, 2903, 1570, 1674};
	/* a smooth column (depth): quantile bins of even mass, no bin stands out */
	const double dedges[] = {40, 58, 60, 60.5, 60.8, 61, 61.2, 61.5, 62, 62.2, 62.5, 62.8, 63, 63.4, 63.6, 64, 80},
				dcounts[] = {368, 3110, 1884, 1560, 1302, 1576, 3067, 6625, 2862, 3860, 2918, 1558, 2043, 742, 1100, 1421};
	double		p[16];
	uint32_t	n;
	bool		ok;

	n = dp_binning_heap_points(edges, 16, counts, p);
	ok = n == 3 && p[6] == 57 && p[8] == 58 && p[11] == 59;
	for (int j = 0; j < 16; j++)
		if (j != 6 && j != 8 && j != 11)
			ok &= isnan(p[j]);
	unit_check(ok, "table: heaps at 57, 58, 59 (each between bins of next to nothing); 56 (3.1 times [55, 56)'s "
			   "density), 55 and 60 not lone");
	n = dp_binning_heap_points(dedges, 16, dcounts, p);
	ok = n == 0;
	for (int j = 0; j < 16; j++)
		ok &= isnan(p[j]);
	unit_check(ok, "depth: no heap");
	{
		const double e2[] = {0, 10, 20, 30},
					c2[] = {100, 799, 100},
					c3[] = {100, 800, 100},
					c4[] = {-5, 300, -7};

		unit_check(dp_binning_heap_points(e2, 3, c2, p) == 0, "just under the ratio: none");
		unit_check(dp_binning_heap_points(e2, 3, c3, p) == 1 && p[1] == 10 && isnan(p[0]) && isnan(p[2]),
				   "at the ratio: the roundest value of [10, 20), 10");
		unit_check(dp_binning_heap_points(e2, 3, c4, p) == 1 && p[1] == 10, "negative neighbours: no mass");
	}
}

/* n rows of the shape p over values 1..NV with the fixed pattern times sigma as noise, all known */
static void
noisy_values(const double *p, double n, double sigma, double *v, bool *known)
{
	double		z[NV];

	noise_pattern(z, NV);
	for (int i = 0; i < NV; i++)
	{
		v[i] = n * p[i] + sigma * z[i];
		known[i] = true;
	}
}

/* a whole cell of a heaped column: its weight spread over its values, multiples of ten weighing more */
static void
test_heap_spread(void)
{
	double		p[3 * 8],
				sum = 0;
	uint32_t	n = dp_binning_heap_spread(88, 96, 0.24, 12.0, p);
	bool		pieces = n == 8;

	for (uint32_t i = 0; i < n; i++)
	{
		sum += p[3 * i + 2];
		pieces = pieces && p[3 * i] == 88 + i && p[3 * i + 1] == 88 + i;
	}
	unit_check(pieces, "heap spread: one piece a value of [88, 96) (%u)", n);
	unit_check(fabs(sum - 0.24) < 1e-12, "heap spread: the weights add up to the cell's (%.15g)", sum);
	unit_check(fabs(p[3 * 2 + 2] - 12 * p[3 * 0 + 2]) < 1e-12 && fabs(p[3 * 2 + 2] - 0.24 * 12 / 19) < 1e-12,
			   "heap spread: 90 weighs 12 times 88 (%.6f against %.6f)", p[3 * 2 + 2], p[2]);
	n = dp_binning_heap_spread(91, 95, 1.0, 12.0, p);
	unit_check(n == 4 && fabs(p[2] - 0.25) < 1e-12 && fabs(p[3 * 3 + 2] - 0.25) < 1e-12,
			   "heap spread: a cell without a multiple of ten spreads evenly");
}

static void
test_heap_multiplier(void)
{
	double		p[NV],
				v[NV],
				m;
	bool		known[NV];
	double		sum = 0;

	/* the heaped column (hours per week) at the big heaped table's size, at epsilon 0.3's sigma */
	heaped_shape(p);
	noisy_values(p, 195366, 72.5, v, known);
	m = dp_binning_heap_multiplier(v, known, NV, 1, 72.5);
	unit_check(m > 2 && m <= DP_BINNING_HEAP_MAX_MULT, "heaped at multiples of ten: multiplier %.2f", m);
	/* the same with its values above 60 not released per value: the multiplier from the rest */
	for (int i = 60; i < NV; i++)
		known[i] = false;
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 72.5) > 2, "read from the known values only");
	/* hidden by the noise: a small table at a large sigma shows nothing */
	noisy_values(p, 2000, 300, v, known);
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 300) == 1, "heaps under the noise: 1");

	/* a smooth column (a bell around 42) with many rows and little noise: not heaped */
	for (int i = 0; i < NV; i++)
		sum += p[i] = exp(-((i + 1 - 42.0) * (i + 1 - 42.0)) / 300.0);
	for (int i = 0; i < NV; i++)
		p[i] /= sum;
	noisy_values(p, 1e6, 5, v, known);
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 5) == 1, "a smooth bell: 1");
	/* the same with one spike at 40 (a sentinel, a default): one heap is no heaping */
	noisy_values(p, 1e6, 5, v, known);
	v[40 - 1] += 2e5;
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 5) == 1, "one spike at 40: 1");
	/* a narrow smooth peak at 20 (concave there, round or not): not heaped */
	sum = 0;
	for (int i = 0; i < NV; i++)
		sum += p[i] = exp(-((i + 1 - 20.0) * (i + 1 - 20.0)) / 18.0);
	for (int i = 0; i < NV; i++)
		p[i] /= sum;
	noisy_values(p, 1e6, 5, v, known);
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 5) == 1, "a narrow smooth peak: 1");
	/* nothing released per value, invalid sigma or arrays: 1 */
	heaped_shape(p);
	noisy_values(p, 195366, 72.5, v, known);
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 0) == 1 &&
			   dp_binning_heap_multiplier(v, known, NV, 1, NAN) == 1 &&
			   dp_binning_heap_multiplier(NULL, known, NV, 1, 72.5) == 1 &&
			   dp_binning_heap_multiplier(v, NULL, NV, 1, 72.5) == 1, "invalid input: 1");
	memset(known, 0, sizeof(known));
	unit_check(dp_binning_heap_multiplier(v, known, NV, 1, 72.5) == 1, "no value known: 1");
}

static void
test_heap_mates(void)
{
	/* diamonds' table at epsilon 1 (as test_heap_points): lone heaps at 57, 58 and 59 */
	const double edges[] = {40, 54, 55, 56, 56.5, 56.8, 57, 57.5, 58, 58.5, 58.8, 59, 59.5, 60, 61, 62, 100},
				counts[] = {480, 1861, 4278, 6619, 17, 26, 6520, 53, 5576, -33, 58, 4360, -22, 2903, 1570, 1674};
	double		p[16];
	uint32_t	n;
	bool		ok;

	dp_binning_heap_points(edges, 16, counts, p);
	n = dp_binning_heap_mates(edges, 16, counts, p);
	ok = n == 5 && p[1] == 54 && p[2] == 55 && p[3] == 56 && p[13] == 60 && p[14] == 61 &&
		p[6] == 57 && p[8] == 58 && p[11] == 59;
	for (int j = 0; j < 16; j++)
		if (j != 1 && j != 2 && j != 3 && j != 6 && j != 8 && j != 11 && j != 13 && j != 14)
			ok &= isnan(p[j]);
	unit_check(ok, "table: the bins of width at most 1 starting at an integer (54, 55, 56, 60, 61) join the "
			   "lone heaps at 57, 58, 59; [56.5, 56.8), [59.5, 60) and the wide bins do not");
	{
		const double e2[] = {0, 10, 20, 30, 40, 45, 50, 60},
					c2[] = {10, 900, 10, 500, 400, 10, 10},
					c3[] = {10, 900, 10, 500, 400, 10, 900};
		double		q[7];

		/* one lone heap (at 10): no step to read */
		dp_binning_heap_points(e2, 7, c2, q);
		unit_check(dp_binning_heap_mates(e2, 7, c2, q) == 0 && isnan(q[3]) && isnan(q[4]),
				   "one lone heap: no mates");
		/*
		 * lone heaps at 10 and 50 (step 10), the background [45, 50) at 2 a unit: [30, 40) and
		 * [40, 45) (at least 8 times it) join, [0, 10) and [20, 30) (1 a unit) do not, nor [45, 50)
		 */
		dp_binning_heap_points(e2, 7, c3, q);
		n = dp_binning_heap_mates(e2, 7, c3, q);
		unit_check(n == 2 && q[1] == 10 && q[6] == 50 && q[3] == 30 && q[4] == 40 && isnan(q[0]) &&
				   isnan(q[2]) && isnan(q[5]), "heaps at 10 and 50: [30, 40) at 30, [40, 45) at 40 (%u added)", n);
		/* a column spread over its bins with lone heaps at 40 and 50: the spread bins stay spread */
		{
			const double e4[] = {0, 10, 20, 30, 35, 40, 41, 45, 50, 51, 60, 70, 80},
						c4[] = {300, 310, 290, 150, 160, 5000, 120, 150, 4000, 280, 300, 290};
			double		r[12];

			unit_check(dp_binning_heap_points(e4, 12, c4, r) == 2 && r[5] == 40 && r[8] == 50 &&
					   dp_binning_heap_mates(e4, 12, c4, r) == 0, "a spread column's bins on the step stay spread");
		}
	}
}

int
main(void)
{
	test_fine_range();
	test_resolved();
	test_monotone();
	test_merge_rules();
	test_deterministic_and_invalid();
	test_split();
	test_refine();
	test_combine();
	test_rule();
	test_merge();
	test_wide_bins();
	test_wide_mass();
	test_round_edges();
	test_round_edges_precision();
	test_shape_weights();
	test_roundest();
	test_heap_points();
	test_heap_multiplier();
	test_heap_spread();
	test_heap_mates();
	return unit_done();
}
