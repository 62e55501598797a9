/*
 * test_binning.c - tests of dp_binning: the bins of an integer column declared with bounds
 * only, from a noisy histogram with one cell per value (dp_binning.h).
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
test_shape(void)
{
	int64_t		c[4] = {100, 0, 0, 0};
	int64_t		e[2] = {10, 14};
	int64_t		e1[5] = {10, 11, 12, 13, 14};
	double		p[12];
	int			n;

	n = dp_binning_shape(c, 4, 10, 0, e, 2, p);
	unit_check(n == 1 && p[0] == 10 && p[1] == 10 && fabs(p[2] - 100) < 1e-9,
			   "no noise: the shape is the counts (one piece, value 10)");
	n = dp_binning_shape(c, 4, 10, 1000, e, 2, p);
	unit_check(n == 4 && fabs(p[2] - 25) < 1e-9 && fabs(p[11] - 25) < 1e-9,
			   "noise far above the deviation: uniform over the bin");
	n = dp_binning_shape(c, 4, 10, 10, e, 2, p);
	unit_check(n == 4 && p[2] > 90 && p[2] < 100 && p[5] > 0 && p[5] < 5,
			   "in between: shrunk toward uniform (%.2f, %.2f)", n > 0 ? p[2] : -1, n > 1 ? p[5] : -1);
	unit_check(dp_binning_shape(c, 4, 10, 10, e1, 5, p) == 0, "bins of one value need no piece");
	unit_check(dp_binning_shape(c, 4, 11, 10, e, 2, p) == -1, "edges that do not cover the range: invalid");
}

int
main(void)
{
	test_fine_range();
	test_resolved();
	test_monotone();
	test_merge_rules();
	test_deterministic_and_invalid();
	test_shape();
	return unit_done();
}
