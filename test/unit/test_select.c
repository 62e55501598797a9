/*
 * test_select.c - PrivSyn steps 4-7: InDif scores (exact and noisy), DenseMarg and the publication
 * budget split (dp_select).  Combine is test_select_combine.c's.
 *
 * Test data come from the seeded post-processing PRNG (dp_prng): they are synthetic tables, not
 * privacy noise, so reproducibility is wanted.  The privacy noise itself is always libsodium's.
 *
 * Statistical checks (noisy scores): the deviations score - q * round(InDif / q) over RUNS calls
 * of dp_indif_noisy on a 3-column table (m = 3 scores per call, N = 3 * RUNS draws) must have
 *   - mean within 5 standard errors of 0: |mean| <= 5 sqrt(var / N);
 *   - sample variance within 5 standard errors of the stated variance: for (near-)Gaussian draws
 *     the sample variance has relative standard error sqrt(2 / (N - 1)), so
 *     |s^2 / var - 1| <= 5 sqrt(2 / (N - 1))  (RUNS = 20000: 2.9%).
 * Each has a false-alarm rate of about 6e-7.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_accounting.h"
#include "dp_codes.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "dp_select.h"
#include "unit.h"
#include "unit_select.h"


static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A table of d columns from rows[n][d] (row-major). */
static void
make_table(dp_codes *t, uint32_t d, uint64_t n, const uint16_t *rows)
{
	if (dp_codes_init(t, d, n ? n : 1) != 0)
		abort();
	for (uint64_t i = 0; i < n; i++)
		if (dp_codes_append(t, rows + i * d) != 0)
			abort();
}

/* InDif of columns (a, b) of t through dp_marg + dp_indif_exact (an independent path). */
static double
marg_indif(const dp_codes *t, const uint32_t *sizes, uint32_t a, uint32_t b)
{
	dp_marg		ab,
				ma,
				mb;
	uint32_t	attrs[2] = {a, b};
	double		r;

	if (dp_marg_init(&ab, 2, attrs, sizes) || dp_marg_init(&ma, 1, &a, sizes) ||
		dp_marg_init(&mb, 1, &b, sizes))
		abort();
	dp_marg_count(&ab, t);
	dp_marg_count(&ma, t);
	dp_marg_count(&mb, t);
	r = dp_indif_exact(&ab, &ma, &mb, (double) t->nrows);
	dp_marg_free(&ab);
	dp_marg_free(&ma);
	dp_marg_free(&mb);
	return r;
}

/* ------------------------------------------------------------------------------------ */

static void
test_exact_hand(void)
{
	dp_codes	t;
	int64_t		grid[3];
	int			r;

	/*
	 * Table 1 (2 x 2), rows (0,0),(0,0),(1,1),(1,0): n = 4, n_ab = [[2,0],[1,1]],
	 * n_a = [2,2], n_b = [3,1], P = n_a n_b / 4 = [[1.5,0.5],[1.5,0.5]];
	 * InDif = |2-1.5| + |0-0.5| + |1-1.5| + |1-0.5| = 2.  Grid: 2 / (1/16) = 32.
	 */
	{
		const uint16_t rows[] = {0, 0, 0, 0, 1, 1, 1, 0};
		const uint32_t sizes[] = {2, 2};

		make_table(&t, 2, 4, rows);
		unit_check(fabs(marg_indif(&t, sizes, 0, 1) - 2.0) < 1e-12,
				   "hand table 1 (2x2, n=4): InDif = 2 (got %.15g)", marg_indif(&t, sizes, 0, 1));
		r = dp_indif_exact_grid(&t, sizes, grid);
		unit_check(r == 0 && grid[0] == 32,
				   "hand table 1: grid value 32 (got %lld)", (long long) grid[0]);
		dp_codes_free(&t);
	}

	/*
	 * Table 2 (3 x 2), rows (0,0),(0,1),(1,1),(1,1),(2,0),(2,0): n = 6,
	 * n_ab = [[1,1],[0,2],[2,0]], n_a = [2,2,2], n_b = [3,3], P = 1 everywhere;
	 * InDif = 0 + 0 + 1 + 1 + 1 + 1 = 4.  Grid 64.
	 */
	{
		const uint16_t rows[] = {0, 0, 0, 1, 1, 1, 1, 1, 2, 0, 2, 0};
		const uint32_t sizes[] = {3, 2};

		make_table(&t, 2, 6, rows);
		unit_check(fabs(marg_indif(&t, sizes, 0, 1) - 4.0) < 1e-12,
				   "hand table 2 (3x2, n=6): InDif = 4 (got %.15g)", marg_indif(&t, sizes, 0, 1));
		r = dp_indif_exact_grid(&t, sizes, grid);
		unit_check(r == 0 && grid[0] == 64,
				   "hand table 2: grid value 64 (got %lld)", (long long) grid[0]);
		dp_codes_free(&t);
	}

	/*
	 * Table 3 (2 x 2, three columns), rows (0,0,1),(0,1,1),(1,1,0): pair (0,1): n = 3,
	 * n_ab = [[1,1],[0,1]], n_a = [2,1], n_b = [1,2], P = [[2/3,4/3],[1/3,2/3]];
	 * InDif = 1/3 + 1/3 + 1/3 + 1/3 = 4/3, grid round(21.33) = 21.
	 * Pair (0,2): column 2 = 1 - column 0 (a copy, relabelled): n_ac = [[0,2],[1,0]],
	 * n_a = [2,1], n_c = [1,2], P = [[2/3,4/3],[1/3,2/3]]: 2/3 + 2/3 + 2/3 + 2/3 = 8/3 = 2n(1 - (4+1)/9);
	 * grid round(42.67) = 43.  Pair (1,2): n_bc = [[0,1],[1,1]], n_b = [1,2], n_c = [1,2]:
	 * P = [[1/3,2/3],[2/3,4/3]], InDif = 4/3, grid 21.
	 */
	{
		const uint16_t rows[] = {0, 0, 1, 0, 1, 1, 1, 1, 0};
		const uint32_t sizes[] = {2, 2, 2};

		make_table(&t, 3, 3, rows);
		unit_check(fabs(marg_indif(&t, sizes, 0, 1) - 4.0 / 3) < 1e-12 &&
				   fabs(marg_indif(&t, sizes, 0, 2) - 8.0 / 3) < 1e-12 &&
				   fabs(marg_indif(&t, sizes, 1, 2) - 4.0 / 3) < 1e-12,
				   "hand table 3 (n=3): InDif = 4/3, 8/3, 4/3");
		r = dp_indif_exact_grid(&t, sizes, grid);
		unit_check(r == 0 && grid[0] == 21 && grid[1] == 43 &&
				   grid[2] == 21, "hand table 3: grid values 21, 43, 21 (got %lld %lld %lld)",
				   (long long) grid[0], (long long) grid[1], (long long) grid[2]);
		dp_codes_free(&t);
	}

	/* empty table: all scores 0 */
	{
		const uint32_t sizes[] = {3, 4, 5};

		make_table(&t, 3, 0, NULL);
		unit_check(dp_indif_exact_grid(&t, sizes, grid) == 0 && grid[0] == 0 && grid[1] == 0 &&
				   grid[2] == 0 && marg_indif(&t, sizes, 0, 1) == 0, "empty table: InDif 0");
		dp_codes_free(&t);
	}

	/* argument checks */
	{
		dp_marg		ab,
					ma,
					mb;
		uint32_t	sizes[] = {2, 3, 4},
					at[2] = {0, 1},
					a0 = 0,
					a2 = 2;

		dp_marg_init(&ab, 2, at, sizes);
		dp_marg_init(&ma, 1, &a0, sizes);
		dp_marg_init(&mb, 1, &a2, sizes);
		unit_check(isnan(dp_indif_exact(&ab, &ma, &mb, 10)), "dp_indif_exact: mismatched attributes give NaN");
		dp_marg_free(&mb);
		a2 = 1;
		dp_marg_init(&mb, 1, &a2, sizes);
		unit_check(dp_indif_exact(&ab, &mb, &ma, 10) == 0, "dp_indif_exact: one-way marginals in either order");
		dp_marg_free(&ab);
		dp_marg_free(&ma);
		dp_marg_free(&mb);
	}
}

/* ------------------------------------------------------------------------------------ */

static void
test_exact_large(void)
{
	dp_prng		p;
	const uint32_t n = 200000,
				d = 4;
	uint32_t	sizes[4] = {4, 5, 5, 5};
	uint16_t   *rows = malloc(sizeof(uint16_t) * n * d);
	dp_codes	t;
	int64_t		grid[6];
	double		in01,
				in02,
				in03,
				sump2 = 0,
				cnt[5] = {0};
	int			ok = 1;

	/* col 0 ~ U{0..3}, col 1 ~ U{0..4} independent, col 2 = a copy of col 1 (skewed), col 3 =
	 * col 1 with prob 0.5 else uniform */
	dp_prng_seed(&p, 12345);
	for (uint32_t i = 0; i < n; i++)
	{
		uint16_t	x1 = (uint16_t) (dp_prng_unit(&p) < 0.4 ? 0 : dp_prng_below(&p, 5));

		rows[i * d + 0] = (uint16_t) dp_prng_below(&p, 4);
		rows[i * d + 1] = x1;
		rows[i * d + 2] = x1;
		rows[i * d + 3] = (uint16_t) (dp_prng_unit(&p) < 0.5 ? x1 : dp_prng_below(&p, 5));
		cnt[x1]++;
	}
	make_table(&t, d, n, rows);
	in01 = marg_indif(&t, sizes, 0, 1);
	in02 = marg_indif(&t, sizes, 0, 2);
	in03 = marg_indif(&t, sizes, 0, 3);
	/* E InDif for independent columns ~ sum_cells sqrt(2/pi) sqrt(n p (1-p)) ~ 0.008 n */
	unit_check(in01 / n < 0.02 && in02 / n < 0.02 && in03 / n < 0.02,
			   "independent columns (n=200000): InDif/n small (%.4f %.4f %.4f)", in01 / n,
			   in02 / n, in03 / n);
	for (int i = 0; i < 5; i++)
		sump2 += (cnt[i] / n) * (cnt[i] / n);

	/* copied column: InDif = sum_i n_i (1 - p_i) + sum_{i != j} n_i n_j / n = 2 n (1 - sum p_i^2) */
	{
		double		in12 = marg_indif(&t, sizes, 1, 2);
		double		want = 2.0 * n * (1 - sump2);

		unit_check(fabs(in12 - want) < 1e-6 * n, "copied column: InDif = 2n(1 - sum p^2) = %.3f (got %.3f)",
				   want, in12);
		if (dp_indif_exact_grid(&t, sizes, grid) != 0)
			ok = 0;
		for (int k = 0; k < 6; k++)
			if (k != 3 && grid[k] >= grid[3])	/* pair (1,2) is index 3 for d = 4 */
				ok = 0;
		unit_check(ok, "copied column: its pair has the largest score (%lld vs %lld, %lld, %lld, %lld, %lld)",
				   (long long) grid[3], (long long) grid[0], (long long) grid[1],
				   (long long) grid[2], (long long) grid[4], (long long) grid[5]);
		/* grid agrees with the double computation for every pair */
		ok = 1;
		for (uint32_t a = 0, k = 0; a < d; a++)
			for (uint32_t b = a + 1; b < d; b++, k++)
				if (fabs(grid[k] * DP_INDIF_GRID - marg_indif(&t, sizes, a, b)) > DP_INDIF_GRID / 2 + 1e-9 * n)
					ok = 0;
		unit_check(ok, "exact grid values within q/2 of the double InDif (n=200000)");
	}
	dp_codes_free(&t);
	free(rows);
}

/* Large domains: the chunked counting path (1500 x 1000 = 1.5M cells > 2^20) and clamping. */
static void
test_exact_chunked(void)
{
	dp_prng		p;
	const uint32_t n = 30000;
	uint32_t	sizes[3] = {1500, 1000, 7};
	uint16_t   *rows = malloc(sizeof(uint16_t) * n * 3);
	dp_codes	t,
				t2;
	int64_t		grid[3],
				grid2[3];
	int			ok = 1;

	dp_prng_seed(&p, 777);
	for (uint32_t i = 0; i < n; i++)
	{
		uint16_t	x = (uint16_t) dp_prng_below(&p, 1500);

		rows[i * 3 + 0] = x;
		rows[i * 3 + 1] = (uint16_t) (dp_prng_unit(&p) < 0.3 ? x % 1000 : dp_prng_below(&p, 1000));
		rows[i * 3 + 2] = (uint16_t) (x % 7);
	}
	make_table(&t, 3, n, rows);
	ok = dp_indif_exact_grid(&t, sizes, grid) == 0;
	for (uint32_t a = 0, k = 0; a < 3; a++)
		for (uint32_t b = a + 1; b < 3; b++, k++)
		{
			double		e = marg_indif(&t, sizes, a, b);

			if (fabs(grid[k] * DP_INDIF_GRID - e) > DP_INDIF_GRID / 2 + 1e-9 * n)
				ok = 0;
		}
	unit_check(ok, "chunked path (1500 x 1000 domains): grid within q/2 of dp_indif_exact (%lld %lld %lld)",
			   (long long) grid[0], (long long) grid[1], (long long) grid[2]);

	/* out-of-range codes are read as size - 1: same result as writing size - 1 */
	for (uint32_t i = 0; i < n; i += 10)
		rows[i * 3 + 2] = 6;
	make_table(&t2, 3, n, rows);
	for (uint32_t i = 0; i < n; i += 10)
		t.col[2][i] = (uint16_t) (i % 20 == 0 ? 6 : 40000);
	ok = dp_indif_exact_grid(&t, sizes, grid) == 0 && dp_indif_exact_grid(&t2, sizes, grid2) == 0 &&
		memcmp(grid, grid2, sizeof(grid)) == 0;
	unit_check(ok, "out-of-range codes are clamped to the last code");
	dp_codes_free(&t);
	dp_codes_free(&t2);
	free(rows);
}

/* ------------------------------------------------------------------------------------ */

/*
 * Brute force: random small tables (d = 3, sizes 1..4, n = 0..12); for every neighbour (each row
 * removed, each possible row added) every InDif moves by at most (4n+2)/(n+1) < 4 (n the smaller
 * row count) and every grid value by at most 65.
 */
static void
test_sensitivity(void)
{
	dp_prng		p;
	int			cases = 3000;
	double		max_d = 0,
				max_ratio = 0;
	int64_t		max_g = 0;
	long		neighbours = 0;
	int			ok = 1;

	dp_prng_seed(&p, 4242);
	for (int c = 0; c < cases; c++)
	{
		uint32_t	sizes[3],
					n = (uint32_t) dp_prng_below(&p, 13);
		uint16_t	rows[14 * 3],
					nrows[14 * 3];
		dp_codes	t;
		int64_t		g0[3];
		double		e0[3];
		uint32_t	combos;

		for (int j = 0; j < 3; j++)
			sizes[j] = 1 + (uint32_t) dp_prng_below(&p, 4);
		combos = sizes[0] * sizes[1] * sizes[2];
		/* skewed codes so that dependencies and empty cells are common */
		for (uint32_t i = 0; i < n; i++)
			for (int j = 0; j < 3; j++)
				rows[i * 3 + j] = (uint16_t) (j > 0 && dp_prng_unit(&p) < 0.5 ?
											  rows[i * 3] % sizes[j] : dp_prng_below(&p, sizes[j]));
		make_table(&t, 3, n, rows);
		if (dp_indif_exact_grid(&t, sizes, g0) != 0)
			ok = 0;
		e0[0] = marg_indif(&t, sizes, 0, 1);
		e0[1] = marg_indif(&t, sizes, 0, 2);
		e0[2] = marg_indif(&t, sizes, 1, 2);
		dp_codes_free(&t);

		for (uint32_t nb = 0; nb < n + combos; nb++)
		{
			uint32_t	nn = 0,
						nsmall;
			int64_t		g1[3];
			double		e1[3];

			if (nb < n)
			{					/* remove row nb */
				for (uint32_t i = 0; i < n; i++)
					if (i != nb)
					{
						memcpy(nrows + nn * 3, rows + i * 3, 3 * sizeof(uint16_t));
						nn++;
					}
				nsmall = nn;
			}
			else
			{					/* add row number nb - n of the code combinations */
				uint32_t	z = nb - n;

				memcpy(nrows, rows, n * 3 * sizeof(uint16_t));
				nrows[n * 3 + 0] = (uint16_t) (z % sizes[0]);
				nrows[n * 3 + 1] = (uint16_t) (z / sizes[0] % sizes[1]);
				nrows[n * 3 + 2] = (uint16_t) (z / sizes[0] / sizes[1]);
				nn = n + 1;
				nsmall = n;
			}
			make_table(&t, 3, nn, nrows);
			if (dp_indif_exact_grid(&t, sizes, g1) != 0)
				ok = 0;
			e1[0] = marg_indif(&t, sizes, 0, 1);
			e1[1] = marg_indif(&t, sizes, 0, 2);
			e1[2] = marg_indif(&t, sizes, 1, 2);
			dp_codes_free(&t);
			neighbours++;
			for (int k = 0; k < 3; k++)
			{
				double		dd = fabs(e1[k] - e0[k]);
				int64_t		dg = g1[k] > g0[k] ? g1[k] - g0[k] : g0[k] - g1[k];
				double		bound = nsmall ? (4.0 * nsmall + 2) / (nsmall + 1) : 0;

				if (dd > max_d)
					max_d = dd;
				if (dg > max_g)
					max_g = dg;
				if (dd > bound + 1e-9)
					ok = 0;
				if (bound > 0 && dd / bound > max_ratio)
					max_ratio = dd / bound;
			}
		}
	}
	unit_diag("sensitivity: %d tables, %ld neighbours, max |dInDif| = %.6f, max |dgrid| = %lld, "
			  "max |dInDif| / ((4n+2)/(n+1)) = %.4f", cases, neighbours, max_d, (long long) max_g,
			  max_ratio);
	unit_check(ok && max_d <= 4.0, "brute force: |InDif(D) - InDif(D')| <= (4n+2)/(n+1) < 4 (max %.6f)", max_d);
	unit_check(max_g <= DP_INDIF_GRID_SENS, "brute force: grid values move by <= %d (max %lld)",
			   DP_INDIF_GRID_SENS, (long long) max_g);
}

/* ------------------------------------------------------------------------------------ */

static void
test_noisy(void)
{
	dp_prng		p;
	const uint32_t n = 500;
	uint16_t	rows[500 * 4];
	uint32_t	sizes[4] = {3, 4, 2, 5};
	dp_codes	t;
	int64_t		grid[6];
	double		scores[6],
				exact[6];
	int			ok = 1;
	int			runs = 20000;

	dp_prng_seed(&p, 99);
	for (uint32_t i = 0; i < n; i++)
	{
		rows[i * 4] = (uint16_t) dp_prng_below(&p, 3);
		rows[i * 4 + 1] = (uint16_t) (dp_prng_unit(&p) < 0.6 ? rows[i * 4] : dp_prng_below(&p, 4));
		rows[i * 4 + 2] = (uint16_t) dp_prng_below(&p, 2);
		rows[i * 4 + 3] = (uint16_t) ((rows[i * 4 + 1] + rows[i * 4 + 2]) % 5);
	}
	make_table(&t, 4, n, rows);
	dp_indif_exact_grid(&t, sizes, grid);
	for (uint32_t a = 0, k = 0; a < 4; a++)
		for (uint32_t b = a + 1; b < 4; b++, k++)
			exact[k] = marg_indif(&t, sizes, a, b);

	/* invalid arguments: -1 and nothing written */
	for (int k = 0; k < 6; k++)
		scores[k] = -7;
	unit_check(dp_indif_noisy(&t, sizes, 0, scores) == -1 && dp_indif_noisy(&t, sizes, NAN, scores) == -1 &&
			   dp_indif_noisy(&t, sizes, INFINITY, scores) == -1 && dp_indif_noisy(&t, sizes, -1, scores) == -1,
			   "dp_indif_noisy refuses rho2 <= 0, NaN, infinity");
	sizes[2] = 0;
	unit_check(dp_indif_noisy(&t, sizes, 1, scores) == -1, "dp_indif_noisy refuses a size of 0");
	sizes[2] = 70000;
	unit_check(dp_indif_noisy(&t, sizes, 1, scores) == -1, "dp_indif_noisy refuses a size above 65536");
	sizes[2] = 2;
	unit_check(dp_indif_noisy(&t, sizes, 1e-300, scores) == -1,
			   "dp_indif_noisy refuses a noise scale beyond the sampler's range");
	ok = 1;
	for (int k = 0; k < 6; k++)
		ok &= scores[k] == -7;
	unit_check(ok, "refused calls leave scores untouched");

	/* huge rho2: noise variance ~1e-8 grid units, so the scores are the grid values */
	ok = dp_indif_noisy(&t, sizes, 1e12, scores) == 0;
	for (int k = 0; k < 6; k++)
		if (scores[k] != grid[k] * DP_INDIF_GRID || fabs(scores[k] - exact[k]) > DP_INDIF_GRID / 2 + 1e-9)
			ok = 0;
	unit_check(ok, "rho2 = 1e12: noisy scores equal the exact ones up to the grid (q/2 = %g)",
			   DP_INDIF_GRID / 2);
	dp_codes_free(&t);

	/* stated variance */
	{
		double		v4 = dp_indif_noise_variance(4, 1.0);
		double		want4 = 65.0 * 65.0 * 6 / 2 / 256;

		unit_check(fabs(v4 / want4 - 1) < 1e-8, "noise variance, d=4, rho2=1: (4+1/16)^2 m/(2 rho2) = %.6f (got %.6f)",
				   want4, v4);
		unit_check(fabs(dp_indif_noise_variance(15, 0.1 * dp_zcdp_rho(1.0, 1e-6)) /
						(8 * 105 / (0.1 * dp_zcdp_rho(1.0, 1e-6))) - (65.0 / 64) * (65.0 / 64)) < 1e-8,
				   "noise variance = (65/64)^2 * 8m/rho2 (the paper's value times the rounding margin)");
		unit_check(isnan(dp_indif_noise_variance(1, 1.0)) && isnan(dp_indif_noise_variance(4, 0)),
				   "noise variance: NaN for invalid input");
	}

	/* empirical variance over repeated releases (d = 3: m = 3) */
	{
		const uint32_t n3 = 200;
		uint16_t	r3[200 * 3];
		uint32_t	s3[3] = {3, 3, 4};
		int64_t		g3[3];
		double		sc[3],
					sum = 0,
					sum2 = 0,
					var = dp_indif_noise_variance(3, 1.0),
					N,
					mean,
					s2,
					tol;
		double		t0;

		for (uint32_t i = 0; i < n3; i++)
		{
			r3[i * 3] = (uint16_t) dp_prng_below(&p, 3);
			r3[i * 3 + 1] = (uint16_t) (dp_prng_unit(&p) < 0.5 ? r3[i * 3] : dp_prng_below(&p, 3));
			r3[i * 3 + 2] = (uint16_t) dp_prng_below(&p, 4);
		}
		make_table(&t, 3, n3, r3);
		dp_indif_exact_grid(&t, s3, g3);
		t0 = now_sec();
		for (int r = 0; r < runs; r++)
		{
			if (dp_indif_noisy(&t, s3, 1.0, sc) != 0)
				abort();
			for (int k = 0; k < 3; k++)
			{
				double		z = sc[k] - g3[k] * DP_INDIF_GRID;

				sum += z;
				sum2 += z * z;
			}
		}
		N = 3.0 * runs;
		mean = sum / N;
		s2 = (sum2 - N * mean * mean) / (N - 1);
		tol = 5 * sqrt(2 / (N - 1));
		unit_diag("noisy InDif, rho2 = 1, m = 3: stated variance %.4f (sd %.3f), empirical %.4f, mean %.4f; "
				  "%d releases in %.3f s", var, sqrt(var), s2, mean, runs, now_sec() - t0);
		unit_check(fabs(mean) <= 5 * sqrt(var / N), "noise mean 0 within 5 SE (%.4f, SE %.4f)", mean, sqrt(var / N));
		unit_check(fabs(s2 / var - 1) <= tol, "noise variance matches the stated %.4f within %.1f%% (got %.4f)",
				   var, 100 * tol, s2);
		dp_codes_free(&t);
	}
}

/* ------------------------------------------------------------------------------------ */

static int
count_sel(const uint8_t *sel, uint32_t m)
{
	int			c = 0;

	for (uint32_t k = 0; k < m; k++)
		c += sel[k];
	return c;
}

static void
test_densemarg(void)
{
	uint8_t		sel[64];
	uint32_t	order[64];
	double		rho3 = 0.8 * dp_zcdp_rho(1.0, 1e-6);

	/* noise error: S^(3/2) / sqrt(pi rho3) */
	unit_check(fabs(dp_densemarg_noise_error(4, 1 / M_PI) - 8) < 1e-12 &&
			   fabs(dp_densemarg_noise_error(9, 4 / M_PI) - 13.5) < 1e-12,
			   "noise_error(S=4, rho3=1/pi) = 8, noise_error(9, 4/pi) = 13.5");

	/* (a) all scores 0: total({}) = 0 and every addition costs noise, so nothing is selected */
	{
		double		sc[15] = {0};
		uint32_t	sz[6] = {2, 3, 4, 5, 6, 7};

		unit_check(dp_densemarg_greedy(6, sc, sz, rho3, sel, NULL) == 0 && count_sel(sel, 15) == 0,
				   "(a) all scores 0: greedy selects nothing");
		unit_check(dp_densemarg(6, sc, sz, rho3, sel) == 5 && count_sel(sel, 15) == 5,
				   "(a) then coverage adds d-1 = 5 pairs (first best pair, then one per column)");
	}

	/* (b) one pair with a huge score and cheap cells is selected first */
	{
		double		sc[15];
		uint32_t	sz[6] = {30, 40, 2, 35, 2, 25};
		uint32_t	k24 = dp_pair_index(6, 2, 4);
		uint32_t	r;

		for (int k = 0; k < 15; k++)
			sc[k] = 2000 + 100 * k;
		sc[k24] = 1e6;
		r = dp_densemarg_greedy(6, sc, sz, rho3, sel, order);
		unit_check(r != DP_SELECT_ERROR && r >= 1 && order[0] == k24 && sel[k24],
				   "(b) pair (2,4), score 1e6, 4 cells, is selected first (r=%u, first=%u)", r, order[0]);
	}

	/*
	 * (c) stopping rule, by hand.  d = 3, sizes 2,2,2 (c_j = 4, c_j^(2/3) = 4^(2/3)),
	 * rho3 = 1/pi, so noise_error(X) = (|X| 4^(2/3))^(3/2) = 4 |X|^(3/2): 0, 4, 11.3137, 20.7846.
	 * Marginal noise cost of the 1st, 2nd, 3rd pair: 4, 7.3137, 9.4709.
	 * Scores (10, 7.2, 7.4): total({}) = 24.6; round 1 best adds pair 0: 4 + 14.6 = 18.6;
	 * round 2 best adds pair 2: 11.3137 + 7.2 = 18.5137 < 18.6; round 3: 20.7846 > 18.5137: stop.
	 * Selected {0, 2}.  With scores (10, 9.5, 9.6) the third costs 9.4709 < 9.5: all three.
	 * With scores (10, 7.3, 7.3) the second costs 7.3137 > 7.3: only pair 0.
	 */
	{
		uint32_t	sz[3] = {2, 2, 2};
		double		s1[3] = {10, 7.2, 7.4},
					s2[3] = {10, 9.5, 9.6},
					s3[3] = {10, 7.3, 7.3};
		uint32_t	r;

		r = dp_densemarg_greedy(3, s1, sz, 1 / M_PI, sel, order);
		unit_check(r == 2 && sel[0] && !sel[1] && sel[2] && order[0] == 0 && order[1] == 2,
				   "(c) scores (10, 7.2, 7.4): selects pair 0 then pair 2 and stops (r=%u)", r);
		r = dp_densemarg_greedy(3, s2, sz, 1 / M_PI, sel, order);
		unit_check(r == 3 && order[0] == 0 && order[1] == 2 && order[2] == 1,
				   "(c) scores (10, 9.5, 9.6): third pair lowers the total (9.4709 < 9.5): all three");
		r = dp_densemarg_greedy(3, s3, sz, 1 / M_PI, sel, order);
		unit_check(r == 1 && sel[0] && !sel[1] && !sel[2],
				   "(c) scores (10, 7.3, 7.3): second pair would raise the total (7.3137 > 7.3): stops at 1");
	}

	/*
	 * (d) coverage.  d = 6, one strong pair (0,1); the rest small, with the best attachment of
	 * each column chosen: col 2 best with 1 (score 50), col 3 best with 2 (score 60, but only
	 * after 2 is covered; its pair with 0 has 40), col 4 with 0 (30), col 5 with 4 (70).
	 * Prim order: (2,1)=50 [covered 0,1]; then best among uncovered-to-covered:
	 * (3,2)=60 ... then (4,0)=30 vs (5,*): (5,4) needs 4 first; (5,0)=1 etc.
	 */
	{
		const uint32_t d = 6,
					m = 15;
		double		sc[15];
		uint32_t	sz[6] = {2, 2, 2, 2, 2, 2};
		uint32_t	r,
					c;
		int			covered_all = 1;

		for (uint32_t k = 0; k < m; k++)
			sc[k] = 1;
		sc[dp_pair_index(d, 0, 1)] = 1e6;
		sc[dp_pair_index(d, 1, 2)] = 50;
		sc[dp_pair_index(d, 2, 3)] = 60;
		sc[dp_pair_index(d, 0, 3)] = 40;
		sc[dp_pair_index(d, 0, 4)] = 30;
		sc[dp_pair_index(d, 4, 5)] = 70;
		r = dp_densemarg_greedy(d, sc, sz, 1e-6, sel, NULL);
		unit_check(r == 1 && sel[dp_pair_index(d, 0, 1)], "(d) greedy selects only (0,1) (r=%u)", r);
		c = dp_densemarg_cover(d, sc, sel);
		for (uint32_t j = 0; j < d; j++)
		{
			int			cov = 0;

			for (uint32_t a = 0; a < d; a++)
				if (a != j && sel[a < j ? dp_pair_index(d, a, j) : dp_pair_index(d, j, a)])
					cov = 1;
			covered_all &= cov;
		}
		unit_check(c == 4 && covered_all, "(d) coverage adds one pair per uncovered column (4) and covers all");
		unit_check(sel[dp_pair_index(d, 1, 2)] && sel[dp_pair_index(d, 2, 3)] &&
				   sel[dp_pair_index(d, 0, 4)] && sel[dp_pair_index(d, 4, 5)] &&
				   !sel[dp_pair_index(d, 0, 3)],
				   "(d) each column attached through its best pair to a covered column: (1,2),(2,3),(0,4),(4,5)");
	}

	/* errors */
	{
		double		sc[3] = {1, NAN, 2};
		uint32_t	sz[3] = {2, 2, 2};

		unit_check(dp_densemarg(3, sc, sz, 1, sel) == DP_SELECT_ERROR &&
				   dp_densemarg(1, sc, sz, 1, sel) == DP_SELECT_ERROR,
				   "dp_densemarg: NaN score or d < 2 is an error");
		sc[1] = 0;
		unit_check(dp_densemarg(3, sc, sz, 0, sel) == DP_SELECT_ERROR &&
				   dp_densemarg(3, sc, sz, NAN, sel) == DP_SELECT_ERROR,
				   "dp_densemarg: rho3 <= 0 or NaN is an error");
	}
}

/* ------------------------------------------------------------------------------------ */

static void
test_split(void)
{
	uint64_t	cells[6] = {4, 27, 1000, 64, 1, 12345};
	double		rho[6],
				rho3 = 0.8 * dp_zcdp_rho(1.0, 1e-6);
	long double sum = 0;
	int			ok = 1;

	dp_publication_split(cells, 6, rho3, rho);
	for (int j = 0; j < 6; j++)
		sum += rho[j];
	for (int j = 1; j < 6; j++)
		if (fabs(rho[j] / rho[0] / pow((double) cells[j] / cells[0], 2.0 / 3) - 1) > 1e-12)
			ok = 0;
	unit_check(ok, "publication split proportional to c^(2/3) (rho(27)/rho(4) = %.12f = 9/4^(2/3))",
			   rho[1] / rho[0]);
	unit_check(sum <= rho3 && sum >= rho3 * (1 - 1e-13),
			   "publication split sums to rho3 (never above; relative shortfall %.3g)",
			   (double) ((rho3 - sum) / rho3));
	dp_publication_split(cells, 1, 0.5, rho);
	unit_check(rho[0] <= 0.5 && rho[0] > 0.5 * (1 - 1e-14), "one marginal gets all of rho3");
	cells[2] = 0;
	dp_publication_split(cells, 6, rho3, rho);
	unit_check(isnan(rho[0]) && isnan(rho[5]), "a zero cell count gives NaN budgets");
	cells[2] = 5;
	dp_publication_split(cells, 6, -1, rho);
	unit_check(isnan(rho[0]), "rho3 <= 0 gives NaN budgets");
}

/* ------------------------------------------------------------------------------------ */

/* A correlated table: each column copies a transformed parent code with probability pr. */
static void
make_correlated(dp_prng *p, dp_codes *t, uint32_t d, uint64_t n, const uint32_t *sizes,
				const int *parent, const double *pr)
{
	uint16_t	row[64];

	if (dp_codes_init(t, d, n) != 0)
		abort();
	for (uint64_t i = 0; i < n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
		{
			if (parent[j] >= 0 && dp_prng_unit(p) < pr[j])
				row[j] = (uint16_t) ((row[parent[j]] * 7u + 3) % sizes[j]);
			else
				row[j] = (uint16_t) (dp_prng_unit(p) < 0.3 ? 0 : dp_prng_below(p, sizes[j]));
		}
		if (dp_codes_append(t, row) != 0)
			abort();
	}
}

static void
test_realistic(void)
{
	dp_prng		p;
	const uint32_t d = 15,
				m = 105;
	uint32_t	sizes[15];
	int			parent[15] = {-1, 0, 0, 1, -1, 4, 3, 2, -1, 8, 5, 9, 0, -1, 13};
	double		pr[15] = {0, 0.8, 0.5, 0.6, 0, 0.7, 0.3, 0.6, 0, 0.9, 0.4, 0.5, 0.2, 0, 0.6};
	dp_codes	t;
	double		scores[105],
				rho = dp_zcdp_rho(1.0, 1e-6),
				t0,
				t1,
				t2,
				t3;
	uint8_t		sel[105];
	set_t		sets[105];
	uint32_t	ns[105],
				nsel,
				nsets;
	uint64_t	cells[105];
	double		rhoj[105];
	char		buf[4096];
	size_t		len = 0;
	int			covered = 1;

	dp_prng_seed(&p, 31337);
	for (uint32_t j = 0; j < d; j++)
		sizes[j] = 2 + (uint32_t) dp_prng_below(&p, 39);
	make_correlated(&p, &t, d, 48842, sizes, parent, pr);

	t0 = now_sec();
	unit_check(dp_indif_noisy(&t, sizes, 0.1 * rho, scores) == 0, "realistic (48842 x 15, eps 1): InDif released");
	t1 = now_sec();
	nsel = dp_densemarg(d, scores, sizes, 0.8 * rho, sel);
	t2 = now_sec();
	nsets = dp_combine(d, sel, scores, sizes, DP_COMBINE_GAMMA, sets, ns, m);
	t3 = now_sec();
	unit_check(nsel != DP_SELECT_ERROR && nsets != DP_SELECT_ERROR, "realistic: DenseMarg and Combine succeed");
	for (uint32_t j = 0; j < d; j++)
	{
		int			c = 0;

		for (uint32_t i = 0; i < nsets && nsets != DP_SELECT_ERROR; i++)
			for (uint32_t k = 0; k < ns[i]; k++)
				c |= sets[i][k] == j;
		covered &= c;
	}
	unit_check(covered, "realistic: every column is in some published set");

	len = 0;
	for (uint32_t j = 0; j < d; j++)
		len += (size_t) snprintf(buf + len, sizeof(buf) - len, " %u(p%d)", sizes[j], parent[j]);
	unit_diag("realistic: sizes (parent):%s", buf);
	unit_diag("  InDif noise sd %.1f; %u pairs selected; times: InDif %.1f ms, DenseMarg %.2f ms, Combine %.2f ms",
			  sqrt(dp_indif_noise_variance(d, 0.1 * rho)), nsel, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
			  (t3 - t2) * 1e3);
	len = 0;
	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			if (sel[k])
				len += (size_t) snprintf(buf + len, sizeof(buf) - len, " (%u,%u):%.0f", a, b, scores[k]);
	unit_diag("  selected:%s", buf);
	len = 0;
	for (uint32_t i = 0; i < nsets && nsets != DP_SELECT_ERROR; i++)
	{
		uint64_t	c = 1;

		len += (size_t) snprintf(buf + len, sizeof(buf) - len, " {");
		for (uint32_t k = 0; k < ns[i]; k++)
		{
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, k ? ",%u" : "%u", sets[i][k]);
			c *= sizes[sets[i][k]];
		}
		len += (size_t) snprintf(buf + len, sizeof(buf) - len, "}");
		cells[i] = c;
	}
	unit_diag("  published sets (%u):%s", nsets, buf);
	if (nsets != DP_SELECT_ERROR)
	{
		dp_publication_split(cells, nsets, 0.8 * rho, rhoj);
		len = 0;
		for (uint32_t i = 0; i < nsets; i++)
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, " %.2g", rhoj[i] / (0.8 * rho));
		unit_diag("  rho_j / rho3:%s", buf);
	}

	/* with a much larger budget (eps 10): the true parent links should dominate */
	{
		double		rho10 = dp_zcdp_rho(10.0, 1e-6);

		dp_indif_noisy(&t, sizes, 0.1 * rho10, scores);
		nsel = dp_densemarg(d, scores, sizes, 0.8 * rho10, sel);
		nsets = dp_combine(d, sel, scores, sizes, DP_COMBINE_GAMMA, sets, ns, m);
		len = 0;
		for (uint32_t i = 0; i < nsets && nsets != DP_SELECT_ERROR; i++)
		{
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, " {");
			for (uint32_t k = 0; k < ns[i]; k++)
				len += (size_t) snprintf(buf + len, sizeof(buf) - len, k ? ",%u" : "%u", sets[i][k]);
			len += (size_t) snprintf(buf + len, sizeof(buf) - len, "}");
		}
		unit_diag("  eps 10: %u pairs selected, published sets (%u):%s", nsel, nsets, buf);
	}
	dp_codes_free(&t);

	{
		double		best = 1e9;

		make_correlated(&p, &t, d, 1000000, sizes, parent, pr);
		for (int r = 0; r < 3; r++)
		{
			t0 = now_sec();
			if (dp_indif_noisy(&t, sizes, 0.1 * rho, scores) != 0)
				abort();
			t1 = now_sec();
			if (t1 - t0 < best)
				best = t1 - t0;
		}
		unit_diag("dp_indif_noisy on 1,000,000 x 15 (sizes 2..40): best of 3 = %.3f s (a time, not a bar)", best);
		dp_codes_free(&t);
	}
}

int
main(void)
{
	test_exact_hand();
	test_exact_large();
	test_exact_chunked();
	test_sensitivity();
	test_noisy();
	test_densemarg();
	test_split();
	test_realistic();
	return unit_done();
}
