/*
 * test_discovery.c - tests of dp_discovery's DP partition selection: the threshold, the
 * mechanism, the empirical delta and the point mass.  The public grids are tested in
 * test_discovery_grid.c, the released bounds and quantile edges in test_discovery_bounds.c.
 *
 * Build and run from the repository root (or `make unit`):
 *   make -s test/unit/bin/test_discovery && ./test/unit/bin/test_discovery
 *
 * Randomness.  Privacy noise comes from the real sampler, whose bytes come from the test
 * library's fixed stream (dp_random_test_seed, set by unit.h): every run draws the same noise.
 *
 * False-alarm rates of the randomized checks (a correct implementation fails them with at most
 * this probability; fewer than 30 such checks, so the file fails spuriously with probability
 * below 1e-6):
 *   - selection: "<= 3 of 5000 count-1 values released" at p <= 1e-6 each: P(>= 4) <=
 *     C(5000,4) 1e-24 < 3e-11; "all five count-10000 values released": P(miss) < 1e-300.
 *   - frequencies and noise moments: 6 standard errors (normal approximation), about 2e-9 each.
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
	unit_diag("test_discovery: %.2f s CPU", (double) (clock() - t0) / CLOCKS_PER_SEC);
	return unit_done();
}
