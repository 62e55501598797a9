/*
 * test_discovery.c - tests of dp_discovery: DP partition selection (threshold, mechanism,
 * empirical delta) and the public log-scale grid with bounds / quantile edges.
 *
 * Build and run from the repository root (or `make unit`):
 *   gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Isrc/core -o test/unit/bin/test_discovery \
 *       test/unit/test_discovery.c src/core/[a-z]*.c -lsodium -lopenblas -lm
 *
 * Randomness.  Privacy noise comes from the real sampler, whose bytes come from the test
 * library's fixed stream (dp_random_test_seed, set by unit.h): every run draws the same noise.
 * The synthetic DATA (log-normal fnlwgt, capital_gain) comes from a fixed-seed splitmix64
 * generator.  The rates below are over the choice of that seed.
 *
 * False-alarm rates of the randomized checks (a correct implementation fails them with at most
 * this probability; fewer than 30 such checks, so the file fails spuriously with probability
 * below 1e-6):
 *   - selection: "<= 3 of 5000 count-1 values released" at p <= 1e-6 each: P(>= 4) <=
 *     C(5000,4) 1e-24 < 3e-11; "all five count-10000 values released": P(miss) < 1e-300.
 *   - frequencies and noise moments: 6 standard errors (normal approximation), about 2e-9 each.
 *   - bounds/edges with noise: assertions are loose (factors of 2 or more in value); the expected
 *     behaviour is far inside them (checked by many runs during development).
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


/* ---------- fixed-seed data generator (NOT for noise) ---------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng_next(void)
{
	uint64_t	z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
rng_unif(void)					/* (0, 1) */
{
	return ((double) (rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double
rng_normal(void)
{
	return sqrt(-2.0 * log(rng_unif())) * cos(2.0 * M_PI * rng_unif());
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static int
cmp_dbl(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/* ---------- exact discrete Gaussian pmf (long double) ---------- */

typedef struct exact_dg
{
	long double s2;
	int64_t		xmax;			/* support truncated at |x| <= xmax (terms < exp(-1800)) */
	long double z;
} exact_dg;

static void
exact_init(exact_dg *e, const dp_dgauss *g)
{
	e->s2 = (long double) g->num / (long double) g->den;
	e->xmax = (int64_t) ceill(60.0L * sqrtl(e->s2)) + 10;
	e->z = 1.0L;
	for (int64_t x = e->xmax; x >= 1; x--)	/* small terms first */
		e->z += 2.0L * expl(-(long double) x * x / (2.0L * e->s2));
}

/* P(X >= m) by direct summation of the pmf, smallest terms first */
static long double
exact_tail(const exact_dg *e, int64_t m)
{
	long double s = 0.0L;

	if (m < -e->xmax)
		return 1.0L;
	for (int64_t x = e->xmax; x >= m; x--)
		s += expl(-(long double) x * x / (2.0L * e->s2));
	return s / e->z;
}

static long double
exact_moment(const exact_dg *e, int p)
{
	long double s = 0.0L;

	for (int64_t x = e->xmax; x >= 1; x--)
		s += 2.0L * powl((long double) x, p) * expl(-(long double) x * x / (2.0L * e->s2));
	return s / e->z;
}

/* ============================================================================================ */

static void
test_threshold(void)
{
	const double sigmas[] = {0.5, 3.0, 50.0, 1000.0};
	const double deltas[] = {1e-6, 1e-9};
	dp_dgauss	g;

	for (size_t i = 0; i < sizeof(sigmas) / sizeof(sigmas[0]); i++)
		for (size_t j = 0; j < sizeof(deltas) / sizeof(deltas[0]); j++)
		{
			double		sigma = sigmas[i],
						delta = deltas[j];
			exact_dg	e;
			int64_t		t;
			long double p_at,
						p_below,
						u;
			double		chernoff;
			double		dbound;

			dp_dgauss_init(&g, sigma * sigma);
			exact_init(&e, &g);
			t = dp_partition_threshold(&g, delta);
			p_at = exact_tail(&e, t - 1);	/* P(1 + X >= T) */
			p_below = exact_tail(&e, t - 2);	/* P(1 + X >= T - 1) */
			unit_check(t >= 2 && p_at <= delta,
					   "threshold sigma=%g delta=%g: T=%lld, exact P(1+X>=T)=%.3Le <= delta",
					   sigma, delta, (long long) t, p_at);
			unit_check(p_below > delta,
					   "threshold sigma=%g delta=%g is tight: exact P(1+X>=T-1)=%.3Le > delta",
					   sigma, delta, p_below);
			/* the bound used is an upper bound, and close to the truth */
			u = dp_dgauss_tail_upper(&g, t - 1);
			unit_check(u >= p_at && u <= p_at * 1.05L + 1e-300L,
					   "tail bound at T-1 (sigma=%g delta=%g): exact %.6Le <= bound %.6Le "
					   "(slack %.2Lf%%)", sigma, delta, p_at, u, (u / p_at - 1.0L) * 100.0L);
			dbound = dp_partition_delta(&g, t);
			unit_check(dbound >= (double) u && dbound <= delta,
					   "dp_partition_delta (sigma=%g delta=%g) = %.4e in [bound, delta]",
					   sigma, delta, dbound);
			/* never looser than the Chernoff bound of a sub-Gaussian: m = sigma sqrt(2 ln 1/d) */
			chernoff = ceil(sqrt(dp_dgauss_sigma2(&g)) * sqrt(2.0 * log(1.0 / delta)));
			unit_check((double) (t - 1) <= chernoff,
					   "threshold sigma=%g delta=%g: T-1=%lld <= Chernoff %.0f",
					   sigma, delta, (long long) (t - 1), chernoff);
		}

	/* the bound holds at every m on a range (sigma = 3 and 0.5), including m = 0 */
	{
		const double ss[] = {0.5, 3.0, 7.3};
		int			ok = 1;
		long double worst = 0.0L;

		for (size_t i = 0; i < 3; i++)
		{
			exact_dg	e;

			dp_dgauss_init(&g, ss[i] * ss[i]);
			exact_init(&e, &g);
			for (int64_t m = 0; m <= (int64_t) (12 * ss[i]) + 3; m++)
			{
				long double ex = exact_tail(&e, m),
							u = dp_dgauss_tail_upper(&g, m);

				if (!(u >= ex))
					ok = 0;
				if (ex > 1e-4000L && u / ex > worst)
					worst = u / ex;
			}
		}
		unit_check(ok, "tail bound >= exact tail for m = 0..12 sigma (sigma 0.5, 3, 7.3); "
				   "worst ratio %.6Lf", worst);
	}

	/* huge sigma (2^60 = sigma^2): T - 1 close to sigma * z_delta, bound satisfied, fast */
	{
		int64_t		t;
		long double u,
					ub;

		dp_dgauss_init(&g, DP_DGAUSS_SIGMA2_MAX);
		t = dp_partition_threshold(&g, 1e-9);
		u = dp_dgauss_tail_upper(&g, t - 1);
		ub = dp_dgauss_tail_upper(&g, t - 2);
		/* z(1e-9) = 5.997807 for the continuous Gaussian */
		unit_check(t > 0 && u <= 1e-9L && ub > 1e-9L &&
				   fabs((double) (t - 1) / 1073741824.0 - 5.997807) < 1e-3,
				   "threshold for sigma = 2^30, delta = 1e-9: (T-1)/sigma = %.6f",
				   (double) (t - 1) / 1073741824.0);
		dp_dgauss_init(&g, DP_DGAUSS_SIGMA2_MIN);
		t = dp_partition_threshold(&g, 1e-300);
		unit_check(t == 2, "threshold for sigma^2 = 2^-30 (no noise to speak of) is 2: %lld",
				   (long long) t);
	}

	/* invalid input */
	{
		dp_dgauss	bad = {0, 1, 1};

		dp_dgauss_init(&g, 9.0);
		unit_check(dp_partition_threshold(&g, 0.0) < 0 && dp_partition_threshold(&g, 0.5) < 0 &&
				   dp_partition_threshold(&g, NAN) < 0 && dp_partition_threshold(&g, -1e-6) < 0 &&
				   dp_partition_threshold(&g, INFINITY) < 0 &&
				   dp_partition_threshold(&g, 1e-301) < 0 &&
				   dp_partition_threshold(NULL, 1e-6) < 0 &&
				   dp_partition_threshold(&bad, 1e-6) < 0 &&
				   isnan(dp_partition_delta(&g, 0)) && isnan((double) dp_dgauss_tail_upper(&g, -1)),
				   "threshold / delta reject invalid input");
		unit_check(dp_partition_threshold(&g, 0.4999) == 2,
				   "delta just below 1/2 gives T = 2 for sigma = 3 (P(X >= 1) < 1/2)");
	}
}

static void
test_selection(void)
{
	const size_t nbig = 5,
				nsmall = 5000,
				n = nbig + nsmall;
	int64_t    *counts = malloc(n * sizeof(int64_t));
	int64_t    *noisy = malloc(n * sizeof(int64_t));
	uint8_t    *sel = malloc(n);
	dp_dgauss	g;
	exact_dg	e;
	int64_t		t,
				nsel,
				big_sel = 0,
				small_sel = 0;
	long double s1 = 0,
				s2 = 0,
				var,
				m4;
	double		rho = 0.05;

	for (size_t i = 0; i < n; i++)
		counts[i] = i < nbig ? 10000 : 1;
	dp_dgauss_init(&g, dp_gaussian_sigma2(rho, 1.0));
	exact_init(&e, &g);
	t = dp_partition_threshold(&g, 1e-6);
	nsel = dp_partition_select(counts, n, &g, t, noisy, sel);
	for (size_t i = 0; i < n; i++)
	{
		long double r = (long double) (noisy[i] - counts[i]);

		s1 += r;
		s2 += r * r;
		if (sel[i] != (noisy[i] >= t))
			nsel = -2;
		if (i < nbig)
			big_sel += sel[i];
		else
			small_sel += sel[i];
	}
	unit_check(nsel == big_sel + small_sel,
			   "selection (rho 0.05, sigma^2 %.3f, T %lld): returns the number selected (%lld)",
			   dp_dgauss_sigma2(&g), (long long) t, (long long) nsel);
	unit_check(big_sel == 5, "all 5 values of count 10000 selected");
	unit_check(small_sel <= 3,
			   "at most 3 of 5000 count-1 values selected (%lld; expected <= 0.005)",
			   (long long) small_sel);
	/* the noise is the discrete Gaussian: mean 0, exact variance */
	var = exact_moment(&e, 2);
	m4 = exact_moment(&e, 4);
	unit_check(fabsl(s1 / n) <= 6.0L * sqrtl(var / n),
			   "selection noise mean %.4Lf within 6 SE of 0", s1 / n);
	unit_check(fabsl(s2 / n - var) <= 6.0L * sqrtl((m4 - var * var) / n),
			   "selection noise mean square %.4Lf within 6 SE of the exact variance %.4Lf",
			   s2 / n, var);

	/* invalid public parameters: nothing drawn, outputs untouched */
	memset(sel, 7, n);
	unit_check(dp_partition_select(counts, n, &g, 1, noisy, sel) == -1 &&
			   dp_partition_select(counts, n, NULL, t, noisy, sel) == -1 && sel[0] == 7,
			   "selection rejects threshold < 2 and a NULL sampler, leaving outputs untouched");
	unit_check(dp_partition_select(counts, 0, &g, t, noisy, sel) == 0, "empty input: 0 selected");

	free(counts);
	free(noisy);
	free(sel);
}

/* Release frequency of a count-1 value vs delta_add, and vs the exact probability. */
static void
test_empirical_delta(void)
{
	const double sigmas[] = {3.0, 0.5, 20.0};
	size_t		trials = 100000;
	int64_t    *counts = malloc(trials * sizeof(int64_t));
	int64_t    *noisy = malloc(trials * sizeof(int64_t));
	uint8_t    *sel = malloc(trials);

	for (size_t i = 0; i < trials; i++)
		counts[i] = 1;
	for (size_t k = 0; k < 3; k++)
	{
		const double delta = 0.01;
		dp_dgauss	g;
		exact_dg	e;
		int64_t		t,
					nsel;
		long double p;
		double		freq,
					se_delta,
					se_p;

		dp_dgauss_init(&g, sigmas[k] * sigmas[k]);
		exact_init(&e, &g);
		t = dp_partition_threshold(&g, delta);
		p = exact_tail(&e, t - 1);
		nsel = dp_partition_select(counts, trials, &g, t, noisy, sel);
		freq = (double) nsel / (double) trials;
		se_delta = sqrt(delta * (1 - delta) / (double) trials);
		se_p = sqrt((double) p * (1 - (double) p) / (double) trials);
		unit_check(freq <= delta + 6.0 * se_delta,
				   "count-1 value released in %.5f of %zu trials <= delta_add 0.01 + 6 SE "
				   "(sigma %g, T %lld)", freq, trials, sigmas[k], (long long) t);
		unit_check(fabs(freq - (double) p) <= 6.0 * se_p + 1.0 / (double) trials,
				   "release frequency %.5f matches the exact P(1+X>=T) = %.5Lf within 6 SE",
				   freq, p);
	}
	free(counts);
	free(noisy);
	free(sel);
}

static void
test_pointmass(void)
{
	/* capital_gain-like: 0 x 30000, 99999 x 160, 2000 other values with 1..3 rows */
	const size_t n = 2002;
	int64_t    *counts = malloc(n * sizeof(int64_t));
	int64_t    *noisy = malloc(n * sizeof(int64_t));
	uint8_t    *sel = malloc(n);
	int64_t		total = 0,
				noisy_total,
				t,
				r1,
				r2;
	dp_dgauss	g;
	int			others1 = 0,
				others2 = 0;

	counts[0] = 30000;
	counts[1] = 160;
	for (size_t i = 2; i < n; i++)
		counts[i] = 1 + (int64_t) (i % 3);
	for (size_t i = 0; i < n; i++)
		total += counts[i];
	dp_dgauss_init(&g, dp_gaussian_sigma2(0.05, 1.0));
	t = dp_partition_threshold(&g, 1e-6);
	noisy_total = total + dp_dgauss_sample(&g);

	r1 = dp_pointmass_select(counts, n, &g, t, noisy_total, 0.003, noisy, sel);
	for (size_t i = 2; i < n; i++)
		others1 += sel[i];
	unit_check(r1 == 2 && sel[0] && sel[1] && others1 == 0,
			   "point masses at frac 0.003 (cut ~%lld): 0 and 99999 found, nothing else (%lld)",
			   (long long) ceil(0.003 * noisy_total), (long long) r1);
	r2 = dp_pointmass_select(counts, n, &g, t, noisy_total, 0.05, noisy, sel);
	for (size_t i = 1; i < n; i++)
		others2 += sel[i];
	unit_check(r2 == 1 && sel[0] && others2 == 0,
			   "point masses at frac 0.05: only the spike at 0 (%lld)", (long long) r2);
	unit_check(dp_pointmass_select(counts, n, &g, t, noisy_total, NAN, noisy, sel) == -1 &&
			   dp_pointmass_select(counts, n, &g, t, noisy_total, 1.5, noisy, sel) == -1 &&
			   dp_pointmass_select(counts, n, &g, t, noisy_total, -0.1, noisy, sel) == -1,
			   "point-mass finder rejects frac outside [0, 1]");
	/* frac 0: the plain thresholding; a negative noisy total is treated as 0 */
	r1 = dp_pointmass_select(counts, n, &g, t, -5, 0.5, noisy, sel);
	unit_check(r1 >= 2, "frac cut with a negative noisy total falls back to T (%lld)",
			   (long long) r1);
	free(counts);
	free(noisy);
	free(sel);
}

/* ============================================================================================ */

static void
test_grid_int(int subdiv)
{
	dp_loggrid	g;
	uint32_t	n,
				mid;
	int			contiguous = 1,
				agree = 1,
				monotone = 1;
	int64_t		lo,
				hi,
				prev_hi = 0;
	int64_t		vals[4000];

	unit_check(dp_loggrid_init_int(&g, subdiv) == 0, "int grid subdiv %d", subdiv);
	n = dp_loggrid_ncells(&g);
	mid = n / 2;
	for (uint32_t c = 0; c < n; c++)
	{
		double		dlo,
					dhi;

		dp_loggrid_cell_range_int(&g, c, &lo, &hi);
		if (c == 0 ? lo != INT64_MIN : lo != prev_hi + 1)
			contiguous = 0;
		if (hi < lo)
			contiguous = 0;
		prev_hi = hi;
		if (dp_loggrid_cell_int(&g, lo) != c || dp_loggrid_cell_int(&g, hi) != c ||
			dp_loggrid_cell_int(&g, lo + (hi - lo) / 2) != c)
			agree = 0;
		dp_loggrid_cell_range(&g, c, &dlo, &dhi);
		if ((lo > -(1LL << 53) && hi < (1LL << 53)) &&
			(dlo != (double) lo || dhi != (double) hi + 1.0))
			agree = 0;
	}
	unit_check(contiguous && prev_hi == INT64_MAX,
			   "int grid subdiv %d: %u cells, contiguous, cover [INT64_MIN, INT64_MAX]",
			   subdiv, n);
	unit_check(agree, "int grid subdiv %d: cell_range agrees with cell_int (ends and middle)",
			   subdiv);
	for (size_t i = 0; i < 4000; i++)
	{
		int			sh = (int) (rng_next() % 64);
		int64_t		v = (int64_t) (rng_next() >> sh);

		vals[i] = (rng_next() & 1) ? v : -v;
	}
	vals[0] = INT64_MIN;
	vals[1] = INT64_MAX;
	qsort(vals, 4000, sizeof(int64_t), cmp_i64);
	for (size_t i = 1; i < 4000; i++)
		if (dp_loggrid_cell_int(&g, vals[i]) < dp_loggrid_cell_int(&g, vals[i - 1]))
			monotone = 0;
	unit_check(monotone, "int grid subdiv %d: cell_int is monotone in the value", subdiv);
	unit_check(dp_loggrid_cell_int(&g, 0) == mid && dp_loggrid_cell_int(&g, 1) == mid + 1 &&
			   dp_loggrid_cell_int(&g, -1) == mid - 1 &&
			   dp_loggrid_cell_int(&g, INT64_MAX) == n - 1 &&
			   dp_loggrid_cell_int(&g, INT64_MIN) == 0,
			   "int grid subdiv %d: 0, +/-1, INT64_MAX, INT64_MIN map to mid, mid+/-1, ends",
			   subdiv);
	dp_loggrid_cell_range_int(&g, mid, &lo, &hi);
	unit_check(lo == 0 && hi == 0, "int grid: the zero cell is {0}");
}

static void
test_grid_real(void)
{
	dp_loggrid	g;
	uint32_t	n,
				mid;
	int			contiguous = 1,
				agree = 1,
				monotone = 1;
	double		lo,
				hi,
				prev_hi = 0;
	double	   *vals = malloc(20000 * sizeof(double));

	unit_check(dp_loggrid_init_real(&g, 8) == 0 && dp_loggrid_init_real(&g, 3) == -1 &&
			   dp_loggrid_init_int(&g, 0) == -1 && dp_loggrid_init_int(&g, 512) == -1 &&
			   dp_loggrid_init_real(&g, 8) == 0, "grid init validates subdiv");
	n = dp_loggrid_ncells(&g);
	mid = n / 2;
	unit_check(n == 2 * 1054 * 8 + 1, "real grid subdiv 8: %u cells", n);
	for (uint32_t c = 0; c < n; c++)
	{
		dp_loggrid_cell_range(&g, c, &lo, &hi);
		if ((c == 0 ? lo != -INFINITY : lo != prev_hi) || !(hi > lo))
			contiguous = 0;
		prev_hi = hi;
		if (isfinite(lo) && dp_loggrid_cell_real(&g, lo) != c)
			agree = 0;
		if (dp_loggrid_cell_real(&g, nextafter(hi, -INFINITY)) != c)
			agree = 0;
		if (isfinite(lo) && isfinite(hi) && dp_loggrid_cell_real(&g, lo + (hi - lo) / 2) != c)
			agree = 0;
	}
	unit_check(contiguous && prev_hi == INFINITY,
			   "real grid: cells [lo, hi) contiguous from -Inf to +Inf");
	unit_check(agree, "real grid: cell_range agrees with cell_real (lo, just below hi, middle)");
	for (size_t i = 0; i < 20000; i++)
	{
		double		x = ldexp(rng_unif() + 0.5, (int) (rng_next() % 2100) - 1075);

		vals[i] = (rng_next() & 1) ? x : -x;
	}
	vals[0] = INFINITY;
	vals[1] = -INFINITY;
	vals[2] = 0.0;
	vals[3] = -0.0;
	vals[4] = DBL_MAX;
	vals[5] = -DBL_MAX;
	vals[6] = ldexp(1.0, -30);
	vals[7] = -ldexp(1.0, -30);
	qsort(vals, 20000, sizeof(double), cmp_dbl);
	for (size_t i = 1; i < 20000; i++)
		if (dp_loggrid_cell_real(&g, vals[i]) < dp_loggrid_cell_real(&g, vals[i - 1]))
			monotone = 0;
	unit_check(monotone, "real grid: cell_real is monotone in the value (incl. +/-Inf, +/-0)");
	free(vals);

	dp_loggrid_cell_range(&g, dp_loggrid_cell_real(&g, 1.0), &lo, &hi);
	unit_check(lo == 1.0 && hi == 1.125, "real grid: 1.0 is in [1, 1.125)");
	dp_loggrid_cell_range(&g, dp_loggrid_cell_real(&g, -1.0), &lo, &hi);
	unit_check(lo == -1.0 && hi == -1.0 + 0.0625, "real grid: -1.0 is in [-1, -0.9375)");
	unit_check(dp_loggrid_cell_real(&g, 0.0) == mid && dp_loggrid_cell_real(&g, -0.0) == mid &&
			   dp_loggrid_cell_real(&g, 1e-40) == mid && dp_loggrid_cell_real(&g, -1e-40) == mid &&
			   dp_loggrid_cell_real(&g, 1e-10) == mid &&
			   dp_loggrid_cell_real(&g, ldexp(1.0, -30)) == mid + 1 &&
			   dp_loggrid_cell_real(&g, -ldexp(1.0, -30)) == mid,
			   "real grid: 0, -0, +/-1e-40, 1e-10 in the zero cell [-2^-30, 2^-30)");
	unit_check(dp_loggrid_cell_real(&g, INFINITY) == n - 1 &&
			   dp_loggrid_cell_real(&g, DBL_MAX) == n - 1 &&
			   dp_loggrid_cell_real(&g, -INFINITY) == 0 &&
			   dp_loggrid_cell_real(&g, -DBL_MAX) == 0,
			   "real grid: +/-Inf and +/-DBL_MAX in the end cells");
	dp_loggrid_cell_range(&g, dp_loggrid_cell_real(&g, 1e300), &lo, &hi);
	unit_check(lo <= 1e300 && 1e300 < hi && hi / lo <= 1.125 + 1e-12,
			   "real grid: 1e300 in [%.6g, %.6g)", lo, hi);
	unit_check(dp_loggrid_cell_real(&g, NAN) == mid, "real grid: NaN (not expected) -> zero cell");
}

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

/* ---------- section 3: two-stage bounds ---------- */

/* The two stages never spend more than the column's rho, and waste almost nothing. */
static void
test_bounds_split(void)
{
	double		rhos[] = {1e-12, dp_units_rho(1), dp_units_rho(507500000), 0.02436 / 48, 0.1,
	1.0, 3.0e7, 0x1.fffffffffffffp-3, 0x1.0000000000001p0};
	int			bad = 0,
				wasteful = 0;
	double		c,
				f;

	for (size_t i = 0; i < sizeof(rhos) / sizeof(rhos[0]) + 10000; i++)
	{
		double		rho = i < sizeof(rhos) / sizeof(rhos[0]) ? rhos[i] :
			ldexp(1.0 + rng_unif(), (int) (rng_next() % 80) - 60);

		if (dp_bounds_split(rho, &c, &f) != 0 || !(c > 0) || !(f > 0) ||
			(long double) c + (long double) f > (long double) rho)
			bad++;
		else if ((long double) c + (long double) f < (long double) rho * (1.0L - 1e-15L))
			wasteful++;
	}
	unit_check(bad == 0, "split: rho_coarse + rho_fine <= rho, both > 0 (exact sum, %d bad)", bad);
	unit_check(wasteful == 0, "split: the two add up to rho within 1e-15 (%d short)", wasteful);
	dp_bounds_split(1.0, &c, &f);
	unit_check(c == DP_BOUNDS_COARSE_SHARE && f < 1.0 - DP_BOUNDS_COARSE_SHARE &&
			   f > 0.75 - 1e-15, "split of 1: %.17g + %.17g", c, f);
	unit_check(dp_bounds_split(0.0, &c, &f) == -1 && dp_bounds_split(-1.0, &c, &f) == -1 &&
			   dp_bounds_split(NAN, &c, &f) == -1 && dp_bounds_split(INFINITY, &c, &f) == -1,
			   "split rejects rho <= 0, NaN, Inf");
}

static void
test_span_widen(void)
{
	int64_t		lo = 1920,
				hi = 2047;
	double		dl = 10,
				dh = 20;

	unit_check(dp_span_widen_int(&lo, &hi) == 0 && lo == 1856 && hi == 2111,
			   "widen [1920, 2047]: [%lld, %lld]", (long long) lo, (long long) hi);
	lo = hi = 5;
	unit_check(dp_span_widen_int(&lo, &hi) == 0 && lo == 4 && hi == 6, "widen [5, 5]: [4, 6]");
	lo = INT64_MIN + 1;
	hi = INT64_MAX - 1;
	unit_check(dp_span_widen_int(&lo, &hi) == 0 && lo == INT64_MIN && hi == INT64_MAX,
			   "widen saturates at the int64 range");
	lo = 3;
	hi = 2;
	unit_check(dp_span_widen_int(&lo, &hi) == -1, "widen rejects lo > hi");
	unit_check(dp_span_widen_real(&dl, &dh) == 0 && dl == 5 && dh == 25, "widen [10, 20]: [5, 25]");
	dl = dh = 0;
	unit_check(dp_span_widen_real(&dl, &dh) == 0 && dl == -0.5 && dh == 0.5, "widen [0, 0]");
	dl = -DBL_MAX;
	dh = DBL_MAX;
	unit_check(dp_span_widen_real(&dl, &dh) == 0 && dl == -DBL_MAX && dh == DBL_MAX,
			   "widen stays finite");
	dh = NAN;
	unit_check(dp_span_widen_real(&dl, &dh) == -1, "widen rejects NaN");
}

/* Every value lands in the cell whose extent holds it; outside values in the end cells. */
static void
test_lingrid(void)
{
	dp_lingrid	g;
	struct
	{
		int64_t		lo,
					hi;
		uint64_t	width;
		uint32_t	ncells;
	}			cases[] = {
		{1856, 2111, 1, 256}, {0, 100000, 128, 782}, {-3, -3, 1, 1}, {0, 1023, 1, 1024},
		{0, 1024, 2, 513}, {INT64_MIN, INT64_MAX, (uint64_t) 1 << 54, 1024}
	};
	int			misplaced = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		unit_check(dp_lingrid_init_int(&g, cases[i].lo, cases[i].hi) == 0 &&
				   g.iwidth == cases[i].width && g.ncells == cases[i].ncells,
				   "lingrid [%lld, %lld]: width %llu, %u cells", (long long) cases[i].lo,
				   (long long) cases[i].hi, (unsigned long long) g.iwidth, g.ncells);
		for (int r = 0; r < 2000; r++)
		{
			__int128	span = (__int128) cases[i].hi - cases[i].lo + 1;
			int64_t		v = (int64_t) (cases[i].lo + (__int128) (rng_next() % (uint64_t) (span > 0 && span < ((__int128) 1 << 64) ? (uint64_t) span : UINT64_MAX)));
			uint32_t	c = dp_lingrid_cell_int(&g, v);
			__int128	l = (__int128) g.ilo + (__int128) c * g.iwidth;

			if (c >= g.ncells || v < l || v >= l + (__int128) g.iwidth)
				misplaced++;
		}
		if (cases[i].lo > INT64_MIN)
			misplaced += dp_lingrid_cell_int(&g, cases[i].lo - 1) != 0 ||
				dp_lingrid_cell_int(&g, INT64_MIN) != 0;
		misplaced += dp_lingrid_cell_int(&g, INT64_MAX) != g.ncells - 1;
	}
	unit_check(misplaced == 0, "lingrid int: every value in its cell, outside values clamped (%d)",
			   misplaced);
	unit_check(dp_lingrid_init_int(&g, 2, 1) == -1, "lingrid int rejects lo > hi");
	unit_check(dp_lingrid_init_real(&g, -5, 5) == 0 && g.ncells == DP_LINGRID_CELLS_MAX &&
			   dp_lingrid_cell_real(&g, -5) == 0 && dp_lingrid_cell_real(&g, 0) == 512 &&
			   dp_lingrid_cell_real(&g, 5) == 1023 && dp_lingrid_cell_real(&g, -INFINITY) == 0 &&
			   dp_lingrid_cell_real(&g, INFINITY) == 1023 && dp_lingrid_cell_real(&g, 1e300) == 1023,
			   "lingrid real [-5, 5]: cells and clamping");
	unit_check(dp_lingrid_init_real(&g, 1, 1) == -1 && dp_lingrid_init_real(&g, 0, INFINITY) == -1 &&
			   dp_lingrid_init_real(&g, -DBL_MAX, DBL_MAX) == -1,
			   "lingrid real rejects empty and infinite ranges");
}

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
				age_ok = 0;
	double		rho = dp_zcdp_rho(1.0, 1e-6) / 8;
	dp_lingrid	lg;
	int64_t		f[256] = {0};

	/* exact counts: the quantiles at 0.1% and 99.9% are the first and last year */
	dp_lingrid_init_int(&lg, 1856, 2111);
	for (int i = 0; i < 6; i++)
		f[dp_lingrid_cell_int(&lg, years[i])] = yc[i];
	unit_check(dp_lingrid_bounds_int(&lg, f, 0.0, 0.001, &lower, &upper) == 0 && lower == 1997 &&
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
	test_threshold();
	test_selection();
	test_empirical_delta();
	test_pointmass();
	test_grid_int(8);
	test_grid_int(1);
	test_grid_int(256);
	test_grid_real();
	test_bounds_fnlwgt();
	test_bounds_capital_gain();
	test_bounds_misc();
	test_denoise();
	test_bounds_split();
	test_span_widen();
	test_lingrid();
	test_two_stage_bounds();
	test_bounds_reconcile();
	test_two_stage_spread();
	test_discovered_bounds_extremes();
	test_discovered_cases();
	unit_diag("test_discovery: %.2f s CPU", (double) (clock() - t0) / CLOCKS_PER_SEC);
	return unit_done();
}
