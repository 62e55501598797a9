/*
 * test_discovery_bounds.c - tests of dp_discovery's released bounds and quantile edges: the
 * log-grid bounds of skewed columns (fnlwgt, capital_gain and others), the denoising, the two
 * stages as the glue runs them, their reconciliation, and the loading of discovered bounds and
 * edges as a stored domain over every type's extremes.  Partition selection is tested in
 * test_discovery.c, the grids in test_discovery_grid.c.
 *
 * Build and run from the repository root (or `make unit`):
 *   make -s test/unit/bin/test_discovery_bounds && ./test/unit/bin/test_discovery_bounds
 *
 * Randomness.  Privacy noise comes from the real sampler, whose bytes come from the test
 * library's fixed stream (dp_random_test_seed, set by unit.h): every run draws the same noise.
 * The synthetic DATA (log-normal fnlwgt, capital_gain) comes from unit_discovery.h's fixed-seed
 * generator.  Bounds and edges with noise: assertions are loose (factors of 2 or more in value);
 * the expected behaviour is far inside them (checked by many runs during development).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_accounting.h"
#include "dp_discovery.h"
#include "dp_domain.h"
#include "dp_plan.h"
#include "dp_random.h"
#include "dp_sampler.h"
#include "unit.h"
#include "unit_discovery.h"


/* ---------- bounds and quantile edges ---------- */

static int64_t
quantile_i64(const int64_t *sorted, size_t n, double q)
{
	size_t		k = (size_t) floor(q * (double) n);

	if (k >= n)
		k = n - 1;
	return sorted[k];
}

static double
cell_width_at(const dp_loggrid *g, int64_t v)
{
	int64_t		lo,
				hi;

	dp_loggrid_cell_range_int(g, dp_loggrid_cell_int(g, v), &lo, &hi);
	return (double) (hi - lo + 1);
}

static void
histogram(const dp_loggrid *g, const int64_t *v, size_t n, int64_t *hist)
{
	memset(hist, 0, sizeof(int64_t) * dp_loggrid_ncells(g));
	for (size_t i = 0; i < n; i++)
		hist[dp_loggrid_cell_int(g, v[i])]++;
}

static int
edges_increasing_int(const int64_t *e, uint32_t k)
{
	for (uint32_t i = 1; i < k; i++)
		if (e[i] <= e[i - 1])
			return 0;
	return 1;
}

static void
test_bounds_fnlwgt(void)
{
	const size_t n = 32561;
	const uint32_t nbins = 10;
	int64_t    *v = malloc(n * sizeof(int64_t));
	int64_t    *sorted = malloc(n * sizeof(int64_t));
	dp_loggrid	g;
	int64_t    *hist,
			   *noisy;
	int64_t		lower,
				upper,
				q001,
				q999,
				edges[11];
	uint32_t	ne;
	int			rc,
				edges_ok = 1;
	dp_dgauss	dg;
	double		sigma;
	double		dl,
				du,
				dedges[11];

	dp_loggrid_init_int(&g, 8);
	hist = malloc(sizeof(int64_t) * dp_loggrid_ncells(&g));
	noisy = malloc(sizeof(int64_t) * dp_loggrid_ncells(&g));
	for (size_t i = 0; i < n; i++)
		v[i] = (int64_t) llround(exp(log(178356.0) + 0.5 * rng_normal()));
	memcpy(sorted, v, n * sizeof(int64_t));
	qsort(sorted, n, sizeof(int64_t), cmp_i64);
	q001 = quantile_i64(sorted, n, 0.001);
	q999 = quantile_i64(sorted, n, 0.999);
	histogram(&g, v, n, hist);

	/* exact counts */
	rc = dp_loggrid_bounds_int(&g, hist, 0.0, 0.001, &lower, &upper);
	unit_check(rc == 0 && llabs(lower - q001) <= cell_width_at(&g, q001) &&
			   llabs(upper - q999) <= cell_width_at(&g, q999),
			   "fnlwgt exact: bounds [%lld, %lld] within a cell of the 0.1%%/99.9%% quantiles "
			   "[%lld, %lld]", (long long) lower, (long long) upper, (long long) q001,
			   (long long) q999);
	rc = dp_loggrid_bounds(&g, hist, 0.0, 0.001, &dl, &du);
	unit_check(rc == 0 && dl == (double) lower && du == (double) upper,
			   "fnlwgt exact: double bounds agree");
	rc = dp_loggrid_quantile_edges_int(&g, hist, lower, upper, nbins, edges, &ne);
	{
		/* true quantiles of the values inside [lower, upper] */
		size_t		a = 0,
					b = n;

		while (a < n && sorted[a] < lower)
			a++;
		while (b > 0 && sorted[b - 1] > upper)
			b--;
		if (rc != 0 || ne != nbins + 1 || edges[0] != lower || edges[ne - 1] != upper ||
			!edges_increasing_int(edges, ne))
			edges_ok = 0;
		for (uint32_t i = 1; edges_ok && i < nbins; i++)
		{
			int64_t		q = quantile_i64(sorted + a, b - a, (double) i / nbins);

			if (llabs(edges[i] - q) > cell_width_at(&g, q))
			{
				unit_diag("edge %u = %lld, true quantile %lld", i, (long long) edges[i],
						  (long long) q);
				edges_ok = 0;
			}
		}
		unit_check(edges_ok, "fnlwgt exact: %u deciles, each within a grid cell of the truth "
				   "(e.g. median edge %lld vs %lld)", ne, (long long) edges[5],
				   (long long) quantile_i64(sorted + a, b - a, 0.5));
	}
	rc = dp_loggrid_quantile_edges(&g, hist, (double) lower, (double) upper, nbins, dedges, &ne);
	edges_ok = rc == 0 && ne == nbins + 1;
	for (uint32_t i = 0; edges_ok && i < ne; i++)
		if (dedges[i] != (double) edges[i])
			edges_ok = 0;
	unit_check(edges_ok, "fnlwgt exact: double edges agree with int64 edges");

	/* noisy, rho = 0.01: sigma^2 = 50 */
	dp_dgauss_init(&dg, dp_gaussian_sigma2(0.01, 1.0));
	sigma = sqrt(dp_dgauss_sigma2(&dg));
	memcpy(noisy, hist, sizeof(int64_t) * dp_loggrid_ncells(&g));
	for (uint32_t c = 0; c < dp_loggrid_ncells(&g); c++)
		noisy[c] += dp_dgauss_sample(&dg);
	rc = dp_loggrid_bounds_int(&g, noisy, sigma, 0.001, &lower, &upper);
	unit_check(rc == 0 && lower >= q001 / 2 && lower <= quantile_i64(sorted, n, 0.02) &&
			   upper <= q999 * 2 && upper >= quantile_i64(sorted, n, 0.98),
			   "fnlwgt noisy (rho 0.01): bounds [%lld, %lld] vs true [%lld, %lld] (loose: within "
			   "[q/2, 2%% quantile] and [98%% quantile, 2q])", (long long) lower,
			   (long long) upper, (long long) q001, (long long) q999);
	rc = dp_loggrid_quantile_edges_int(&g, noisy, lower, upper, nbins, edges, &ne);
	edges_ok = rc == 0 && ne >= 8 && edges[0] == lower && edges[ne - 1] == upper &&
		edges_increasing_int(edges, ne);
	/* the median edge: within 10% of the true median */
	{
		int64_t		med = quantile_i64(sorted, n, 0.5);
		int64_t		best = edges[0];

		for (uint32_t i = 0; i < ne; i++)
			if (llabs(edges[i] - med) < llabs(best - med))
				best = edges[i];
		unit_check(edges_ok && llabs(best - med) <= med / 10,
				   "fnlwgt noisy: %u increasing edges, one within 10%% of the median (%lld vs %lld)",
				   ne, (long long) best, (long long) med);
	}
	free(v);
	free(sorted);
	free(hist);
	free(noisy);
}

/*
 * Denoising before quantile edges: the cells of pure noise lose their phantom mass, the cells
 * of real mass keep their noisy values, and diffuse mass no single cell shows is kept by a block.
 */
static void
test_denoise(void)
{
	dp_loggrid	g;
	uint32_t	nc;
	int64_t    *hist,
			   *noisy;
	uint8_t    *scratch;
	dp_dgauss	dg;
	double		sigma,
				before = 0,
				after = 0;
	int64_t		kept;
	uint32_t	c7298,
				cdiffuse0;
	int			all_real_kept = 1,
				diffuse_kept = 1;
	double		diffuse_sum = 0;

	dp_loggrid_init_int(&g, 8);
	nc = dp_loggrid_ncells(&g);
	hist = calloc(nc, sizeof(int64_t));
	noisy = malloc(sizeof(int64_t) * nc);
	scratch = malloc(nc);
	dp_dgauss_init(&dg, dp_gaussian_sigma2(1.0 / 1800.0, 1.0));	/* sigma 30 */
	sigma = sqrt(dp_dgauss_sigma2(&dg));

	/* pure noise: at most a few blocks survive */
	for (uint32_t c = 0; c < nc; c++)
	{
		noisy[c] = dp_dgauss_sample(&dg);
		before += noisy[c] > 0 ? (double) noisy[c] : 0;
	}
	kept = dp_loggrid_denoise(&g, noisy, sigma, 3.0, scratch);
	for (uint32_t c = 0; c < nc; c++)
		after += noisy[c] > 0 ? (double) noisy[c] : 0;
	unit_check(kept >= 0 && after < 0.15 * before,
			   "denoise, pure noise (sigma %.0f, %u cells): positive mass %.0f -> %.0f, %lld cells kept",
			   sigma, nc, before, after, (long long) kept);

	/* capital_gain-like: a spike at 0 and a heavy value keep their noisy counts */
	hist[dp_loggrid_cell_int(&g, 0)] = 29000;
	c7298 = dp_loggrid_cell_int(&g, 7298);
	hist[c7298] = 400;
	before = after = 0;
	for (uint32_t c = 0; c < nc; c++)
	{
		noisy[c] = hist[c] + dp_dgauss_sample(&dg);
		if (hist[c] == 0)
			before += noisy[c] > 0 ? (double) noisy[c] : 0;
	}
	{
		int64_t    *copy = malloc(sizeof(int64_t) * nc);

		memcpy(copy, noisy, sizeof(int64_t) * nc);
		kept = dp_loggrid_denoise(&g, noisy, sigma, 3.0, scratch);
		for (uint32_t c = 0; c < nc; c++)
		{
			if (hist[c] == 0)
				after += noisy[c] > 0 ? (double) noisy[c] : 0;
			if (hist[c] >= 10 * sigma && noisy[c] != copy[c])
				all_real_kept = 0;
		}
		free(copy);
	}
	unit_check(kept > 0 && all_real_kept && after < 0.15 * before,
			   "denoise, capital_gain-like: heavy cells keep their noisy counts, phantom mass in empty "
			   "cells %.0f -> %.0f", before, after);

	/*
	 * Thin spread mass no single cell shows (a fixed pattern, so exact): 16 aligned cells of 2
	 * sigma each are kept as 4-cell blocks (240 >= sqrt(9 + 2 ln 4) * 30 * 2 = 206; a pair's 120
	 * is under its 137).  A cell passing alone orphans the thin cells of its blocks (documented).
	 */
	memset(noisy, 0, sizeof(int64_t) * nc);
	cdiffuse0 = (nc / 2 + 64) & ~15u;
	for (uint32_t c = cdiffuse0; c < cdiffuse0 + 16; c++)
		noisy[c] = 60;
	noisy[cdiffuse0 + 32] = 100;
	noisy[cdiffuse0 + 33] = 60;
	kept = dp_loggrid_denoise(&g, noisy, 30.0, 3.0, scratch);
	for (uint32_t c = cdiffuse0; c < cdiffuse0 + 16; c++)
		diffuse_sum += (double) noisy[c];
	diffuse_kept = diffuse_sum == 16 * 60;
	unit_check(kept == 17 && diffuse_kept && noisy[cdiffuse0 + 32] == 100 && noisy[cdiffuse0 + 33] == 0,
			   "denoise, thin mass: 16 cells under 3 sigma kept as blocks (%.0f of 960), a lone cell "
			   "over it kept, %lld cells kept", diffuse_sum, (long long) kept);

	/* exact counts (sigma 0): positive cells kept, negative ones cleared */
	memset(noisy, 0, sizeof(int64_t) * nc);
	noisy[5] = 3;
	noisy[9] = -2;
	kept = dp_loggrid_denoise(&g, noisy, 0.0, 3.0, scratch);
	unit_check(kept >= 1 && noisy[5] == 3 && noisy[9] == 0, "denoise, sigma 0: counts of 1 or more kept");
	unit_check(dp_loggrid_denoise(&g, noisy, -1.0, 3.0, scratch) == -1 &&
			   dp_loggrid_denoise(&g, noisy, 1.0, NAN, scratch) == -1 &&
			   dp_loggrid_denoise(&g, noisy, 1.0, 3.0, NULL) == -1,
			   "denoise refuses a negative sigma, a NaN z and no scratch");
	free(hist);
	free(noisy);
	free(scratch);
}

static void
test_bounds_capital_gain(void)
{
	const size_t n = 32561;
	int64_t    *v = malloc(n * sizeof(int64_t));
	int64_t    *sorted = malloc(n * sizeof(int64_t));
	dp_loggrid	g;
	int64_t    *hist,
			   *noisy;
	int64_t		lower,
				upper,
				q999,
				edges[11];
	uint32_t	ne;
	int			rc;
	dp_dgauss	dg;
	double		sigma;

	dp_loggrid_init_int(&g, 8);
	hist = malloc(sizeof(int64_t) * dp_loggrid_ncells(&g));
	noisy = malloc(sizeof(int64_t) * dp_loggrid_ncells(&g));
	for (size_t i = 0; i < n; i++)
	{
		double		u = rng_unif();

		if (u < 0.92)
			v[i] = 0;
		else if (u < 0.925)
			v[i] = 99999;
		else					/* log-uniform on [114, 41310] */
			v[i] = (int64_t) llround(exp(log(114.0) + rng_unif() * log(41310.0 / 114.0)));
	}
	memcpy(sorted, v, n * sizeof(int64_t));
	qsort(sorted, n, sizeof(int64_t), cmp_i64);
	q999 = quantile_i64(sorted, n, 0.999);
	histogram(&g, v, n, hist);

	rc = dp_loggrid_bounds_int(&g, hist, 0.0, 0.001, &lower, &upper);
	unit_check(rc == 0 && lower == 0 && llabs(upper - q999) <= cell_width_at(&g, q999),
			   "capital_gain exact: bounds [%lld, %lld], true 99.9%% quantile %lld",
			   (long long) lower, (long long) upper, (long long) q999);
	rc = dp_loggrid_quantile_edges_int(&g, hist, lower, upper, 10, edges, &ne);
	unit_check(rc == 0 && ne >= 3 && edges[0] == 0 && edges[1] == 1 && edges[ne - 1] == upper &&
			   edges_increasing_int(edges, ne),
			   "capital_gain exact: edges 0, 1, ... (the spike at 0 gets a bin of its own), %u "
			   "edges, last %lld", ne, (long long) edges[ne - 1]);

	dp_dgauss_init(&dg, dp_gaussian_sigma2(0.01, 1.0));
	sigma = sqrt(dp_dgauss_sigma2(&dg));
	memcpy(noisy, hist, sizeof(int64_t) * dp_loggrid_ncells(&g));
	for (uint32_t c = 0; c < dp_loggrid_ncells(&g); c++)
		noisy[c] += dp_dgauss_sample(&dg);
	rc = dp_loggrid_bounds_int(&g, noisy, sigma, 0.001, &lower, &upper);
	unit_check(rc == 0 && lower == 0 && upper >= 41310 / 2 && upper <= 2 * 99999,
			   "capital_gain noisy (rho 0.01): bounds [%lld, %lld] (want 0 and ~%lld)",
			   (long long) lower, (long long) upper, (long long) q999);
	rc = dp_loggrid_quantile_edges_int(&g, noisy, lower, upper, 10, edges, &ne);
	unit_check(rc == 0 && ne >= 3 && edges[0] == 0 && edges[1] == 1 &&
			   edges_increasing_int(edges, ne),
			   "capital_gain noisy: edges start 0, 1 (%u edges)", ne);
	free(v);
	free(sorted);
	free(hist);
	free(noisy);
}

static void
test_bounds_misc(void)
{
	dp_loggrid	g,
				gr;
	uint32_t	n;
	int64_t    *h;
	int64_t		lower = 7,
				upper = 7,
				e[5];
	double		dl = 7,
				du = 7,
				de[9];
	uint32_t	ne;
	int			rc,
				spurious = 0;
	dp_dgauss	dg;
	int			reps = 200;

	dp_loggrid_init_int(&g, 8);
	n = dp_loggrid_ncells(&g);
	h = calloc(n, sizeof(int64_t));

	/* pure noise: nothing significant, almost always */
	dp_dgauss_init(&dg, 50.0);
	for (int r = 0; r < reps; r++)
	{
		for (uint32_t c = 0; c < n; c++)
			h[c] = dp_dgauss_sample(&dg);
		if (dp_loggrid_bounds_int(&g, h, sqrt(50.0), 0.001, &lower, &upper) != 1)
			spurious++;
	}
	/*
	 * Design rate <= 0.001 per run (union bound); the actual rate is about 2000 blocks x
	 * Q(z = 5.38) = 2000 x 3.7e-8 = 7e-5, so P(>= 3 of 200 runs) is about 5e-7.
	 */
	unit_check(spurious <= 2, "pure noise: bounds found in %d of %d runs (design rate <= 0.001)",
			   spurious, reps);
	memset(h, 0, n * sizeof(int64_t));
	lower = upper = 7;
	unit_check(dp_loggrid_bounds_int(&g, h, 0.0, 0.001, &lower, &upper) == 1 && lower == 7 &&
			   upper == 7,
			   "empty histogram: no bounds, outputs untouched");
	h[dp_loggrid_cell_int(&g, 42)] = 1000;
	rc = dp_loggrid_bounds_int(&g, h, 0.0, 0.001, &lower, &upper);
	unit_check(rc == 0 && lower == 40 && upper == 43,
			   "one value 42: bounds are its cell [40, 43] (the grid cannot see further)");
	h[dp_loggrid_cell_int(&g, 5)] = 1000;	/* one-integer cells below subdiv */
	rc = dp_loggrid_bounds_int(&g, h, 0.0, 0.0, &lower, &upper);
	unit_check(rc == 0 && lower == 5 && upper == 43, "values 5 and 42: bounds [5, 43]");
	rc = dp_loggrid_quantile_edges_int(&g, h, 42, 42, 4, e, &ne);
	unit_check(rc == 0 && ne == 1 && e[0] == 42, "lower == upper: one edge");
	unit_check(dp_loggrid_bounds_int(&g, h, -1.0, 0.001, &lower, &upper) == -1 &&
			   dp_loggrid_bounds_int(&g, h, NAN, 0.001, &lower, &upper) == -1 &&
			   dp_loggrid_bounds_int(&g, h, 1.0, 0.5, &lower, &upper) == -1 &&
			   dp_loggrid_bounds_int(&g, h, 1.0, NAN, &lower, &upper) == -1 &&
			   dp_loggrid_quantile_edges_int(&g, h, 5, 4, 4, e, &ne) == -1 &&
			   dp_loggrid_quantile_edges_int(&g, h, 4, 5, 0, e, &ne) == -1 &&
			   dp_loggrid_quantile_edges(&g, h, 0.5, 5, 4, de, &ne) == -1 &&
			   dp_loggrid_quantile_edges(&g, h, 0, INFINITY, 4, de, &ne) == -1,
			   "bounds / edges reject invalid arguments");
	/* negative values and the int64 extremes */
	memset(h, 0, n * sizeof(int64_t));
	h[0] = 10;
	h[n - 1] = 10;
	rc = dp_loggrid_bounds_int(&g, h, 0.0, 0.0, &lower, &upper);
	unit_check(rc == 0 && lower == INT64_MIN && upper == INT64_MAX,
			   "mass in the end cells, tail 0: bounds are INT64_MIN, INT64_MAX");
	rc = dp_loggrid_bounds(&g, h, 0.0, 0.0, &dl, &du);
	unit_check(rc == 0 && dl == -9223372036854775808.0 && du == 9223372036854774784.0,
			   "double bounds round toward zero beyond 2^53 (stay within int64): %.17g, %.17g",
			   dl, du);
	rc = dp_loggrid_quantile_edges_int(&g, h, INT64_MIN, INT64_MAX, 4, e, &ne);
	unit_check(rc == 0 && ne >= 2 && e[0] == INT64_MIN && e[ne - 1] == INT64_MAX &&
			   edges_increasing_int(e, ne), "edges over the whole int64 range (%u)", ne);
	/* no mass inside [lower, upper]: log-spaced fallback */
	memset(h, 0, n * sizeof(int64_t));
	rc = dp_loggrid_quantile_edges_int(&g, h, 1, 1000000, 4, e, &ne);
	unit_check(rc == 0 && ne == 5 && e[0] == 1 && e[4] == 1000000 && edges_increasing_int(e, ne) &&
			   e[2] > 100 && e[2] < 10000,
			   "no mass: log-spaced edges %lld %lld %lld %lld %lld", (long long) e[0],
			   (long long) e[1], (long long) e[2], (long long) e[3], (long long) e[4]);

	/* a real column: log-normal around 1e-3 with negative values, and a spike at 0 */
	dp_loggrid_init_real(&gr, 8);
	{
		uint32_t	nr = dp_loggrid_ncells(&gr);
		int64_t    *hr = calloc(nr, sizeof(int64_t));
		double	   *xs = malloc(20000 * sizeof(double));
		int			ok;

		for (int i = 0; i < 20000; i++)
		{
			double		x = i < 4000 ? 0.0 : exp(log(1e-3) + rng_normal());

			xs[i] = (i % 7 == 0) ? -x : x;
			hr[dp_loggrid_cell_real(&gr, xs[i])]++;
		}
		qsort(xs, 20000, sizeof(double), cmp_dbl);
		rc = dp_loggrid_bounds(&gr, hr, 0.0, 0.001, &dl, &du);
		{
			double		q1 = xs[20],
						q9 = xs[19979];
			double		l1,
						h1,
						l9,
						h9;

			dp_loggrid_cell_range(&gr, dp_loggrid_cell_real(&gr, q1), &l1, &h1);
			dp_loggrid_cell_range(&gr, dp_loggrid_cell_real(&gr, q9), &l9, &h9);
			ok = rc == 0 && fabs(dl - q1) <= h1 - l1 && fabs(du - q9) <= h9 - l9;
			unit_check(ok, "real column exact: bounds [%.4g, %.4g] vs 0.1%%/99.9%% quantiles "
					   "[%.4g, %.4g]", dl, du, q1, q9);
		}
		rc = dp_loggrid_quantile_edges(&gr, hr, dl, du, 8, de, &ne);
		ok = rc == 0 && ne >= 3 && de[0] == dl && de[ne - 1] == du;
		for (uint32_t i = 1; i < ne; i++)
			if (!(de[i] > de[i - 1]))
				ok = 0;
		unit_check(ok, "real column: %u increasing edges, %.3g .. %.3g", ne, de[0], de[ne - 1]);
		free(hr);
		free(xs);
	}
	free(h);
}

/* ---------- two-stage bounds ---------- */

/*
 * Both stages as the glue runs them, on a year column (1997-2002, 580 rows each, as Arrests):
 * the log grid alone cannot do better than its cell [1920, 2047]; the two stages find the
 * years exactly.  Noise of a column's share of rho(1) over 8 columns (sigma^2 = 1/(2 rho)).
 */
static int
two_stage_int(const int64_t *vals, const int64_t *counts, int nv, double rho, bool reconcile,
			  int64_t *lower, int64_t *upper)
{
	dp_loggrid	g;
	dp_lingrid	lg;
	dp_dgauss	coarse,
				fine;
	double		rc,
				rf;
	uint32_t	n;
	int64_t    *h,
			   *f,
				lo,
				hi;
	int			rcode;

	dp_bounds_split(rho, &rc, &rf);
	dp_dgauss_init(&coarse, dp_gaussian_sigma2(rc, 1.0));
	dp_dgauss_init(&fine, dp_gaussian_sigma2(rf, 1.0));
	dp_loggrid_init_int(&g, 8);
	n = dp_loggrid_ncells(&g);
	h = calloc(n, sizeof(int64_t));
	for (int i = 0; i < nv; i++)
		h[dp_loggrid_cell_int(&g, vals[i])] += counts[i];
	for (uint32_t c = 0; c < n; c++)
		h[c] += dp_dgauss_sample(&coarse);
	if (dp_loggrid_bounds_int(&g, h, sqrt(dp_dgauss_sigma2(&coarse)), DP_BOUNDS_SPAN_TAIL, &lo,
							  &hi) != 0 ||
		dp_span_widen_int(&lo, &hi) != 0 || dp_lingrid_init_int(&lg, lo, hi) != 0)
	{
		free(h);
		return 1;
	}
	f = calloc(lg.ncells, sizeof(int64_t));
	for (int i = 0; i < nv; i++)
		f[dp_lingrid_cell_int(&lg, vals[i])] += counts[i];
	for (uint32_t c = 0; c < lg.ncells; c++)
		f[c] += dp_dgauss_sample(&fine);
	rcode = dp_lingrid_bounds_int(&lg, f, sqrt(dp_dgauss_sigma2(&fine)), 0.001, lower, upper);
	/* as the glue: stage 2 refines stage 1's bounds (same tail) inside their coarse cells */
	if (rcode == 0 && reconcile &&
		dp_loggrid_bounds_int(&g, h, sqrt(dp_dgauss_sigma2(&coarse)), 0.001, &lo, &hi) == 0 &&
		dp_bounds_reconcile_int(&g, lo, hi, lower, upper) < 0)
		rcode = -1;
	free(h);
	free(f);
	return rcode;
}

static void
test_two_stage_bounds(void)
{
	int64_t		years[6] = {1997, 1998, 1999, 2000, 2001, 2002},
				yc[6] = {580, 580, 580, 580, 580, 580};
	int64_t		ages[55],
				ac[55];
	int64_t		lower,
				upper;
	int			reps = 200,
				exact = 0,
				age_ok = 0,
				rc;
	double		rho = dp_zcdp_rho(1.0, 1e-6) / 8;
	dp_lingrid	lg;
	int64_t		f[256] = {0};

	/* exact counts: the quantiles at 0.1% and 99.9% are the first and last year */
	dp_lingrid_init_int(&lg, 1856, 2111);
	for (int i = 0; i < 6; i++)
		f[dp_lingrid_cell_int(&lg, years[i])] = yc[i];
	/* (computed before the check: its arguments are evaluated in no set order) */
	rc = dp_lingrid_bounds_int(&lg, f, 0.0, 0.001, &lower, &upper);
	unit_check(rc == 0 && lower == 1997 &&
			   upper == 2002, "lingrid bounds, exact counts: [%lld, %lld]", (long long) lower,
			   (long long) upper);
	for (int r = 0; r < reps; r++)
		exact += two_stage_int(years, yc, 6, rho, true, &lower, &upper) == 0 && lower == 1997 &&
			upper == 2002;

	/*
	 * A spurious significant block (design rate <= 0.001 per stage) or a neighbour year's noise
	 * reaching the 0.1% tail are the only ways to miss.  Measured: 2 misses in 3,000 runs (15
	 * runs of this binary), and one CI run had 3 of 200, which the earlier bar of 2 refused (at
	 * a 2e-3 miss rate P(> 2 of 200) is 0.008, not the 1e-4 this comment once said).  At most
	 * 5 of 200: P(> 5 of 200) is 4e-6 at 2e-3 and 6e-4 at 5e-3; a broken stage misses most.
	 */
	unit_check(exact >= reps - 5, "two stages, years 1997-2002: exact in %d of %d runs", exact,
			   reps);

	/* ages 12-66, a decreasing profile (3484 rows): the two stages keep most of the range */
	for (int i = 0; i < 55; i++)
	{
		ages[i] = 12 + i;
		ac[i] = i < 10 ? 100 : (int64_t) (100 * exp(-(i - 10) / 15.0)) + 1;
	}
	for (int r = 0; r < reps; r++)
		age_ok += two_stage_int(ages, ac, 55, rho, true, &lower, &upper) == 0 && lower >= 12 &&
			lower <= 13 && upper >= 30 && upper <= 66;
	/*
	 * Measured: about 97% of runs (the misses: an upper bound near 33 where the noise hides the
	 * thin tail, and about 1.5% of runs where stage 1 keeps a spurious block far away, as the
	 * one-stage bounds did at their tail).  At a 97% rate, fewer than 90% of 200 runs has
	 * probability below 1e-5.
	 */
	unit_check(age_ok >= reps * 9 / 10, "two stages, ages 12-66: lower in [12, 13], upper in "
			   "[30, 66] in %d of %d runs", age_ok, reps);
}

/*
 * The reconciling rule alone, on the log grid (subdiv 8): [1920, 2047] and [320, 351] are cells,
 * [416, 447] lies inside [384, 447]... stage 2 inside stage 1's cells stays, inward across
 * them is replaced, outward stays.
 */
static void
test_bounds_reconcile(void)
{
	dp_loggrid	g,
				gr;
	int64_t		lo,
				hi;
	double		dlo,
				dhi;

	dp_loggrid_init_int(&g, 8);
	dp_loggrid_init_real(&gr, 8);
	lo = 1997, hi = 2002;
	unit_check(dp_bounds_reconcile_int(&g, 1925, 2040, &lo, &hi) == 0 && lo == 1997 && hi == 2002,
			   "reconcile: stage 2 inside stage 1's cells is kept (years)");
	lo = 416, hi = 447;
	unit_check(dp_bounds_reconcile_int(&g, 330, 640, &lo, &hi) == 2 && lo == 330 && hi == 640,
			   "reconcile: stage 2 cutting inward across stage 1's cells is replaced: [%lld, %lld]",
			   (long long) lo, (long long) hi);
	lo = 300, hi = 37;
	unit_check(dp_bounds_reconcile_int(&g, 12, 50, &lo, &hi) == -1, "reconcile: lower > upper");
	lo = 12, hi = 37;
	unit_check(dp_bounds_reconcile_int(&g, 12, 50, &lo, &hi) == 1 && lo == 12 && hi == 50,
			   "reconcile: one side (ages: upper 37 below stage 1's cell [48, 51])");
	lo = 5, hi = 70;
	unit_check(dp_bounds_reconcile_int(&g, 12, 50, &lo, &hi) == 0 && lo == 5 && hi == 70,
			   "reconcile: stage 2 wider than stage 1 is kept");
	lo = 60, hi = 70;
	unit_check(dp_bounds_reconcile_int(&g, 12, 50, &lo, &hi) == 1 && lo == 12 && hi == 70,
			   "reconcile: a lower bound past stage 1's upper cell falls back");
	dlo = 0.52, dhi = 0.53;
	unit_check(dp_bounds_reconcile(&gr, 0.26, 0.9, &dlo, &dhi) == 2 && dlo == 0.26 && dhi == 0.9,
			   "reconcile (real): inward across cells replaced");
	dlo = 0.27, dhi = 0.88;
	unit_check(dp_bounds_reconcile(&gr, 0.26, 0.9, &dlo, &dhi) == 0 && dlo == 0.27 && dhi == 0.88,
			   "reconcile (real): inside stage 1's cells kept");
	unit_check(dp_bounds_reconcile(&g, 0.26, 0.9, &dlo, &dhi) == -1 &&
			   dp_bounds_reconcile_int(&gr, 1, 2, &lo, &hi) == -1,
			   "reconcile: the grid's type is checked");
}

/* Share of the rows of (vals, counts) inside [lower, upper]. */
static double
held_share(const int64_t *vals, const int64_t *counts, int nv, int64_t lower, int64_t upper)
{
	double		in = 0,
				all = 0;

	for (int i = 0; i < nv; i++)
	{
		all += (double) counts[i];
		if (vals[i] >= lower && vals[i] <= upper)
			in += (double) counts[i];
	}
	return all > 0 ? in / all : 0.0;
}

/*
 * A spread-out column with a thin share of rho (a test score as STAR's readk: about 5,000
 * rows over 300-650, bell-shaped, rho(1) over 47 columns: sigma 62 in stage 1, 36 in stage 2
 * per cell): stage 2 alone keeps only the dense middle (no block of the thin tails is
 * significant: measured, under 75% of the rows in 83-88 of 100 runs); reconciled with stage 1
 * the bounds hold at least 75%.  Not more: stage 1's bound cell [384, 415] itself is still
 * refined by stage 2, which may cut up to that cell's mass (about 20% of the rows; measured,
 * 40% of the runs hold under 90%), and stage 1's own rule needs about 5.4 sigma in a
 * cell, so the cells next to the central 90% (about 290 rows each) are not seen.
 */
static void
test_two_stage_spread(void)
{
	int64_t		vals[351],
				counts[351];
	int64_t		lower,
				upper;
	int			reps = 100,
				kept = 0,
				kept_alone = 0,
				kept90 = 0;
	double		rho = dp_zcdp_rho(1.0, 1e-6) / 47,
				worst = 1.0;

	for (int i = 0; i < 351; i++)
	{
		double		z = (i - 137.0) / 35.0;	/* mean 437, sd 35 */

		vals[i] = 300 + i;
		counts[i] = (int64_t) floor(57.0 * exp(-z * z / 2.0));
	}
	for (int r = 0; r < reps; r++)
	{
		if (two_stage_int(vals, counts, 351, rho, true, &lower, &upper) == 0)
		{
			double		h = held_share(vals, counts, 351, lower, upper);

			kept += h >= 0.75;
			kept90 += h >= 0.9;
			worst = fmin(worst, h);
		}
		kept_alone += two_stage_int(vals, counts, 351, rho, false, &lower, &upper) == 0 &&
			held_share(vals, counts, 351, lower, upper) >= 0.75;
	}
	unit_diag("spread-out column: stage 2 alone holds 75%% of the rows in %d of %d runs; "
			  "reconciled, 90%% in %d, the fewest held: %.3f", kept_alone, reps, kept90, worst);
	unit_check(kept >= reps * 9 / 10, "two stages reconciled, spread-out column: bounds hold "
			   ">= 75%% of the rows in %d of %d runs", kept, reps);
}

/* ---------- from released bounds to a stored domain: total over every type's extremes ---------- */

/*
 * Whether a 'bins' row loads as src/domain.c's init_numeric loads it, and passes the catalog's
 * CHECK (lower < upper, bins in 1..65535), within the type's values [tl, th].
 */
static bool
bins_load(bool integral, double lower, double upper, uint32_t bins, double tl, double th)
{
	dp_domain	d;
	bool		ok;

	if (!isfinite(lower) || !isfinite(upper) || !(lower < upper) || bins < 1 || bins > 65535 ||
		lower < tl || upper > th)
		return false;
	if (integral)
	{
		int64_t    *e;

		if (lower != floor(lower) || upper != floor(upper) || fabs(lower) > 9007199254740992.0 ||
			fabs(upper) > 9007199254740992.0)
			return false;
		e = malloc(sizeof(int64_t) * (bins + 1));
		ok = dp_int_equal_edges((int64_t) lower, (int64_t) upper, bins, e) == 0 &&
			dp_domain_init_int_edges(&d, e, bins, true) == 0 && (double) e[bins] == upper + 1;
		free(e);
		return ok;
	}
	{
		double	   *e = malloc(sizeof(double) * (bins + 1));

		ok = dp_real_equal_edges(lower, upper, bins, e) == 0 && dp_domain_init_real_edges(&d, e, bins, true) == 0;
		free(e);
	}
	return ok;
}

/* Whether learned edges (float8) load as init_numeric loads them. */
static bool
edges_load(bool integral, const double *edges, uint32_t n)
{
	dp_domain	d;
	bool		ok = n >= 2 && n <= 65536;

	if (ok && integral)
	{
		int64_t    *e = malloc(sizeof(int64_t) * n);

		for (uint32_t i = 0; i < n; i++)
		{
			ok = ok && isfinite(edges[i]) && fabs(edges[i]) <= 4611686018427387904.0 && edges[i] == floor(edges[i]);
			e[i] = ok ? (int64_t) edges[i] : 0;
		}
		ok = ok && dp_domain_init_int_edges(&d, e, n - 1, true) == 0;
		free(e);
		return ok;
	}
	return ok && dp_domain_init_real_edges(&d, edges, n - 1, true) == 0;
}

/*
 * dp_discovered_bounds over the public ranges of every type discovery learns (as
 * dpsynth_value_range gives them) and released bounds at every extreme: NaN, infinities,
 * DBL_MAX, +/-2^63, around 2^53, denormals, -0, lower > upper, collapsed ranges.  Each result
 * must load and pass the catalog's CHECK; the case (lower noisy above 2^53 on a bigint)
 * among them.
 */
static void
test_discovered_bounds_extremes(void)
{
	static const struct
	{
		const char *name;
		bool		integral;
		double		lo,
					hi;
	}			types[] = {
		{"int2", true, -32768.0, 32767.0},
		{"int4", true, -2147483648.0, 2147483647.0},
		{"int8", true, -9223372036854775808.0, 9223372036854775808.0},
		{"date", true, -2451545.0, 2145031948.0},
		{"timestamp", true, -211813488000000000.0, 9223371331199999999.0},
		{"float4", false, -FLT_MAX, FLT_MAX},
		{"float8/numeric", false, -DBL_MAX, DBL_MAX},
	};
	const double v[] = {
		NAN, -INFINITY, INFINITY, -DBL_MAX, DBL_MAX, -9223372036854775808.0, 9223372036854775808.0,
		-4611686018427387904.0, 4611686018427387904.0, -9007199254740994.0, 9007199254740994.0,
		-9007199254740992.0, 9007199254740992.0, 9007199254740991.0, 1.5854111840224904e+18,
		1.7e18, -1e300, 1e300, -1e-300, 1e-300, -5e-324, 5e-324, -0.0, 0.0, 1.0, -1.0, 0.5, 32767.0,
		32768.0, -32769.0, 2145031949.0, -2451546.0, (double) FLT_MAX, -(double) FLT_MAX, 1e39,
		9223371331200000000.0, 0x1p1022, -0x1p1022, 0x1.fffffffffffffp1021,
	};
	const uint32_t maxb[] = {1, 2, 32, 1000};
	int			nv = (int) (sizeof(v) / sizeof(v[0]));

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
	{
		long		cases = 0,
					bad = 0;
		double		first_lo = 0,
					first_hi = 0;

		for (int i = 0; i < nv; i++)
			for (int j = 0; j < nv; j++)
				for (int f = 0; f < 2; f++)
					for (size_t b = 0; b < sizeof(maxb) / sizeof(maxb[0]); b++)
					{
						double		lower = NAN,
									upper = NAN;
						uint32_t	bins = 0;
						bool		ok;

						ok = dp_discovered_bounds(types[t].integral, f == 1, v[i], v[j], types[t].lo,
												  types[t].hi, maxb[b], &lower, &upper, &bins) == 0 &&
							bins <= maxb[b] &&
							bins_load(types[t].integral, lower, upper, bins, types[t].lo, types[t].hi);
						cases++;
						if (!ok && bad++ == 0)
						{
							first_lo = v[i];
							first_hi = v[j];
						}
					}
		unit_check(bad == 0, "discovered bounds of %s: %ld extreme cases load and pass the CHECK "
				   "(%ld fail; first [%.17g, %.17g])", types[t].name, cases, bad, first_lo, first_hi);
	}
}

/* Particular cases of dp_discovered_bounds, dp_discovered_edges and dp_double_to_int64_sat. */
static void
test_discovered_cases(void)
{
	double		lower = 0,
				upper = 0,
				e[4];
	uint32_t	bins = 0;

	/* the case: noisy lower above 2^53 on a bigint (once stored as lower > upper) */
	int			rc = dp_discovered_bounds(true, true, 1.5854111840224904e+18, 9007199254740992.0,
										  -9223372036854775808.0, 9223372036854775808.0, 32,
										  &lower, &upper, &bins);

	unit_check(rc == 0 && lower == 9007199254740990.0 && upper == 9007199254740991.0 && bins == 2,
			   "bigint bounds beyond 2^53: the last two exact integers, 2 bins ([%.17g, %.17g] %u)",
			   lower, upper, bins);
	unit_check(dp_discovered_bounds(true, true, 5, 5, -32768, 32767, 32, &lower, &upper, &bins) == 0 &&
			   lower == 5 && upper == 6 && bins == 2, "a constant column: [5, 6] in 2 bins");
	unit_check(dp_discovered_bounds(true, true, 18, 67, -32768, 32767, 32, &lower, &upper, &bins) == 0 &&
			   lower == 18 && upper == 67 && bins == 32, "ordinary integer bounds are kept");
	unit_check(dp_discovered_bounds(true, false, 7, 9, -32768, 32767, 32, &lower, &upper, &bins) == 0 &&
			   lower == 0 && upper == 1 && bins == 2, "nothing released: the public fallback [0, 1]");
	unit_check(dp_discovered_bounds(true, true, 30000, 1e9, -32768, 32767, 32, &lower, &upper, &bins) == 0 &&
			   lower == 30000 && upper == 32767 && bins == 32, "int2: upper clamped to 32767");
	unit_check(dp_discovered_bounds(true, true, -1e12, 1e12, -2451545.0, 2145031948.0, 32, &lower, &upper,
									&bins) == 0 && lower == -2451545.0 && upper == 2145031948.0,
			   "date: clamped to the type's finite days");
	unit_check(dp_discovered_bounds(false, true, 1e300, 2e300, -DBL_MAX, DBL_MAX, 32, &lower, &upper, &bins) == 0 &&
			   lower == 1e300 && upper == 2e300 && bins == 32, "reals near 1e300 are kept (no 2^53 limit)");
	unit_check(dp_discovered_bounds(false, true, -INFINITY, INFINITY, -DBL_MAX, DBL_MAX, 32, &lower, &upper,
									&bins) == 0 && lower == -0x1p1022 && upper == 0x1p1022 && bins == 32,
			   "infinite real bounds: +/-2^1022, whose width is finite");
	unit_check(dp_discovered_bounds(false, true, 0, 5e-324, -DBL_MAX, DBL_MAX, 32, &lower, &upper, &bins) == 0 &&
			   lower == 0 && upper == 5e-324 && bins == 1, "a denormal range gets one bin");
	unit_check(dp_discovered_bounds(false, true, 1, 1, -DBL_MAX, DBL_MAX, 32, &lower, &upper, &bins) == 0 &&
			   lower == 1 && upper == nextafter(1, 2) && bins == 1, "a collapsed real range: the next double");
	unit_check(dp_discovered_bounds(true, true, 0, 1, 3, 3, 32, &lower, &upper, &bins) == -1 &&
			   dp_discovered_bounds(true, true, 0, 1, -5, 5, 0, &lower, &upper, &bins) == -1 &&
			   dp_discovered_bounds(false, true, 0, 1, NAN, 5, 32, &lower, &upper, &bins) == -1,
			   "invalid public arguments are refused");

	e[0] = 1, e[1] = 2, e[2] = 3;
	unit_check(dp_discovered_edges(true, e, 3, 1, 2) == 3 && e[2] == 3, "valid edges are kept");
	e[0] = 1, e[1] = NAN, e[2] = 3;
	unit_check(dp_discovered_edges(false, e, 3, 1, 3) == 2 && e[0] == 1 && e[1] == 3, "NaN edges: one bin");
	e[0] = 9007199254740990.0, e[1] = 9007199254740992.0, e[2] = 9007199254740992.0;
	unit_check(dp_discovered_edges(true, e, 3, 9007199254740990.0, 9007199254740991.0) == 2 &&
			   e[1] == 9007199254740992.0 && edges_load(true, e, 2), "merged edges beyond 2^53: one bin");
	e[0] = 1, e[1] = 1.5, e[2] = 3;
	unit_check(dp_discovered_edges(true, e, 3, 1, 2) == 2 && e[1] == 3, "non-integer integral edges: one bin");
	e[0] = 1;
	unit_check(dp_discovered_edges(false, e, 1, 1, 2) == 2 && e[1] == 2 && edges_load(false, e, 2),
			   "a single edge: one bin");
	unit_check(dp_double_to_int64_sat(NAN) == 0 && dp_double_to_int64_sat(9223372036854775808.0) == INT64_MAX &&
			   dp_double_to_int64_sat(-INFINITY) == INT64_MIN && dp_double_to_int64_sat(-9223372036854775808.0) == INT64_MIN &&
			   dp_double_to_int64_sat(-3.7) == -3, "double to int64 saturates");
}

int
main(void)
{
	clock_t		t0 = clock();

	if (dp_random_init() != 0)
	{
		printf("Bail out! libsodium unavailable\n");
		return 1;
	}
	test_bounds_fnlwgt();
	test_bounds_capital_gain();
	test_bounds_misc();
	test_denoise();
	test_two_stage_bounds();
	test_bounds_reconcile();
	test_two_stage_spread();
	test_discovered_bounds_extremes();
	test_discovered_cases();
	unit_diag("test_discovery_bounds: %.2f s CPU", (double) (clock() - t0) / CLOCKS_PER_SEC);
	return unit_done();
}
