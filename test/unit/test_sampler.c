/*
 * test_sampler.c - unit and statistical tests of dp_random and dp_sampler.
 *
 * Build and run from the repository root:
 *   gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Isrc/core -o test/unit/test_sampler \
 *       test/unit/test_sampler.c src/core/dp_sampler.c src/core/dp_random.c -lsodium -lm \
 *     && ./test/unit/test_sampler
 * Each distribution is checked on 1,000,000 draws.
 *
 * Statistical design.  The samplers are compared with their EXACT probability mass functions,
 * computed in long double with the normalizing constant summed over the support until the terms
 * drop below 1e-40 of it.  Goodness of fit is Pearson's chi-square: adjacent integers are grouped
 * into cells of expected count >= 20 (each tail pooled into the outermost cell), and the statistic
 * is compared with the chi-square critical value at false-alarm rate ALPHA = 1e-8, computed from
 * the regularized upper incomplete gamma function Q(df/2, x/2) (series / Lentz continued fraction
 * in long double, solved for x by bisection; checked below against tabulated values).  Means and
 * second moments are checked against their exact values with a tolerance of Z_TOL = 6 standard
 * errors, the standard error being computed from the exact pmf (sqrt(Var/n) for the mean,
 * sqrt((E[X^4] - E[X^2]^2)/n) for the mean square); by the central limit theorem the false-alarm
 * rate of each such check is about 2e-9.  Bernoulli and uniform checks use the same two tools.
 * There are fewer than 60 randomized checks, each with false-alarm rate <= 1e-8, so by the union
 * bound a correct sampler fails this file with probability below 6e-7.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dp_random.h"
#include "dp_sampler.h"
#include "unit.h"

typedef unsigned __int128 u128;

#define ALPHA 1e-8				/* false-alarm rate of each chi-square test */
#define Z_TOL 6.0				/* standard errors for normal-approximation checks */
#define EMIN 20.0				/* minimum expected count per chi-square cell */

static const long n_draws = 1000000;	/* per distribution */

/* ---------- chi-square distribution ---------- */

#include "unit_stats.h"

/* Wilson-Hilferty approximation, only as a cross-check of chisq_crit for large df. */
static double
chisq_crit_wh(long df, double z)
{
	double		k = (double) df,
				c = 2.0 / (9.0 * k);

	return k * pow(1 - c + z * sqrt(c), 3);
}

/* ---------- exact pmfs ---------- */

/* A symmetric pmf on the integers, tabulated on [-L, L]; the mass beyond is < 1e-40. */
typedef struct pmf
{
	long		L;
	long double *p;				/* p[x + L] */
	long double var;			/* E[X^2] (the mean is 0 by symmetry) */
	long double m4;				/* E[X^4] */
} pmf;

typedef long double (*logw_fn) (long double ax, const void *ctx);

/* log of the unnormalized discrete Gaussian weight exp(-x^2 / (2 sigma^2)) */
static long double
logw_dgauss(long double ax, const void *ctx)
{
	long double s2 = *(const long double *) ctx;

	return -ax * ax / (2 * s2);
}

/* log of the unnormalized discrete Laplace weight exp(-|x| / b) */
static long double
logw_dlap(long double ax, const void *ctx)
{
	long double b = *(const long double *) ctx;

	return -ax / b;
}

static void
pmf_build(pmf *P, logw_fn logw, const void *ctx)
{
	long double z = 1;
	long		L,
				x;

	/* Sum to convergence: both weights decrease in |x|. */
	for (L = 1;; L++)
	{
		long double w = expl(logw((long double) L, ctx));

		z += 2 * w;
		if (w < 1e-40L * z)
			break;
	}
	P->L = L;
	P->p = malloc(sizeof(long double) * (2 * L + 1));
	if (P->p == NULL)
		abort();
	P->var = 0;
	P->m4 = 0;
	for (x = -L; x <= L; x++)
	{
		long double px = expl(logw((long double) labs(x), ctx)) / z;
		long double x2 = (long double) x * x;

		P->p[x + L] = px;
		P->var += x2 * px;
		P->m4 += x2 * x2 * px;
	}
}

static void
pmf_free(pmf *P)
{
	free(P->p);
}

/* ---------- goodness of fit ---------- */

typedef struct gof
{
	double		stat;
	long		df;
	double		crit;			/* critical value at ALPHA */
	double		lambda;			/* noncentrality if a "truth" pmf was given */
} gof;

/*
 * Pearson chi-square of the samples against pmf P, cells of expected count >= EMIN built
 * greedily from the left; samples outside [-L, L] go to the outermost cells.  If truth is
 * given, lambda = n sum_cells (truth_i - p_i)^2 / p_i is the noncentrality parameter the
 * statistic would have if the samples came from truth (used to compute power).
 */
static gof
chisq_gof(const int64_t *xs, long n, const pmf *P, const pmf *truth)
{
	long		L = P->L,
				i,
				ncell = 0;
	long	   *cnt = calloc(2 * L + 1, sizeof(long));
	long double *tail = malloc(sizeof(long double) * (2 * L + 1));
	long		below = 0,
				above = 0;
	long double stat = 0,
				lambda = 0;
	long double acc_e = 0,
				acc_t = 0;
	long		acc_o;
	gof			r;

	if (cnt == NULL || tail == NULL)
		abort();
	/* tail[i] = P(X > i - L) */
	tail[2 * L] = 0;
	for (i = 2 * L; i > 0; i--)
		tail[i - 1] = tail[i] + P->p[i];
	for (i = 0; i < n; i++)
	{
		if (xs[i] < -L)
			below++;
		else if (xs[i] > L)
			above++;
		else
			cnt[xs[i] + L]++;
	}
	acc_o = below;
	for (i = 0; i <= 2 * L; i++)
	{
		long		x = i - L;

		acc_e += n * P->p[i];
		acc_o += cnt[i];
		if (truth)
			acc_t += (x >= -truth->L && x <= truth->L) ? n * truth->p[x + truth->L] : 0;

		/* close the cell, unless what is left to the right could not fill one */
		if (acc_e >= EMIN)
		{
			if (n * tail[i] >= EMIN)
			{
				stat += (acc_o - acc_e) * (acc_o - acc_e) / acc_e;
				if (truth)
					lambda += (acc_t - acc_e) * (acc_t - acc_e) / acc_e;
				ncell++;
				acc_e = acc_t = 0;
				acc_o = 0;
			}
		}
	}
	acc_o += above;
	stat += (acc_o - acc_e) * (acc_o - acc_e) / acc_e;
	if (truth)
		lambda += (acc_t - acc_e) * (acc_t - acc_e) / acc_e;
	ncell++;
	free(cnt);
	free(tail);

	r.stat = (double) stat;
	r.df = ncell - 1;
	r.crit = chisq_crit(r.df, ALPHA);
	r.lambda = (double) lambda;
	return r;
}

/* Mean and mean square against the exact pmf, Z_TOL standard errors each. */
static void
check_moments(const char *name, const int64_t *xs, long n, const pmf *P)
{
	long double s1 = 0,
				s2 = 0,
				mean,
				msq,
				se_mean,
				se_msq;
	long		i;

	for (i = 0; i < n; i++)
	{
		s1 += xs[i];
		s2 += (long double) xs[i] * xs[i];
	}
	mean = s1 / n;
	msq = s2 / n;
	se_mean = sqrtl(P->var / n);
	se_msq = sqrtl((P->m4 - P->var * P->var) / n);
	unit_check(fabsl(mean) <= Z_TOL * se_mean,
			   "%s: mean %.5Lg within %.0f s.e. (%.4Lg) of 0 [CLT, alpha ~2e-9]",
			   name, mean, Z_TOL, se_mean);
	unit_check(fabsl(msq - P->var) <= Z_TOL * se_msq,
			   "%s: variance %.7Lg within %.0f s.e. (%.4Lg) of exact %.7Lg [CLT, alpha ~2e-9]",
			   name, msq, Z_TOL, se_msq, P->var);
}

static void
check_fit(const char *name, const int64_t *xs, long n, const pmf *P)
{
	gof			r = chisq_gof(xs, n, P, NULL);

	unit_check(r.stat <= r.crit,
			   "%s: chi-square %.1f <= %.1f (df %ld, alpha %g, p = %.3Lg)",
			   name, r.stat, r.crit, r.df, ALPHA, chisq_sf(r.stat, r.df));
}

/* ---------- samplers as callbacks ---------- */

typedef int64_t (*draw_fn) (const void *ctx);

static int64_t
draw_dgauss(const void *ctx)
{
	return dp_dgauss_sample((const dp_dgauss *) ctx);
}

typedef struct lap_ctx
{
	uint64_t	s,
				t;
} lap_ctx;

static int64_t
draw_dlap(const void *ctx)
{
	const lap_ctx *c = ctx;

	return dp_dlaplace_sample(c->s, c->t);
}

static int64_t *
draw_many(draw_fn f, const void *ctx, long n, double *seconds)
{
	int64_t    *xs = malloc(sizeof(int64_t) * n);
	struct timespec a,
				b;
	long		i;

	if (xs == NULL)
		abort();
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		xs[i] = f(ctx);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*seconds = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
	return xs;
}

/* ---------- tests ---------- */

static void
test_chisq_machinery(void)
{
	/* tabulated critical values */
	unit_check(fabs(chisq_crit(1, 0.05) - 3.841459) < 1e-5, "chi2 crit(1, 0.05) = 3.841459");
	unit_check(fabs(chisq_crit(10, 0.001) - 29.588298) < 1e-5, "chi2 crit(10, 0.001) = 29.588298");
	unit_check(fabs(chisq_crit(100, 0.05) - 124.342113) < 1e-5, "chi2 crit(100, 0.05) = 124.342113");
	unit_check(fabs(chisq_crit(2, 1e-8) - (-2 * log(1e-8))) < 1e-6,
			   "chi2 crit(2, 1e-8) = -2 ln(1e-8) (closed form)");
	/* Wilson-Hilferty is accurate for large df; z(1e-8 upper) = 5.612001 */
	unit_check(fabs(chisq_crit(50000, 1e-8) / chisq_crit_wh(50000, 5.612001) - 1) < 1e-4,
			   "chi2 crit(50000, 1e-8) = %.2f agrees with Wilson-Hilferty %.2f",
			   chisq_crit(50000, 1e-8), chisq_crit_wh(50000, 5.612001));
}

static void
test_dgauss_init(void)
{
	static const double bad[] = {0.0, -0.0, -1.0, -1e-300, 1e-300, DBL_MIN, 1e-10,
	1.2e18, 1e300, INFINITY, -INFINITY};
	static const double good[] = {DP_DGAUSS_SIGMA2_MIN, 1e-4, 0.1, 0.25, 1.0 / 3, 1, 2, M_PI,
		9, 2500, 1e6 + 0.3, 4e8, 2147483647.0, 2147483648.5, 4294967297.0, 1e12,
		1e15 + 7, 123456789012345678.0, DP_DGAUSS_SIGMA2_MAX};
	dp_dgauss	g = {7, 7, 7};
	size_t		i;
	int			allbad = 1;

	unit_check(dp_dgauss_init(&g, NAN) == -1, "dp_dgauss_init rejects NaN");
	unit_check(dp_dgauss_init(&g, INFINITY) == -1, "dp_dgauss_init rejects +Inf");
	unit_check(dp_dgauss_init(&g, 0.0) == -1, "dp_dgauss_init rejects 0");
	unit_check(dp_dgauss_init(&g, -4.0) == -1, "dp_dgauss_init rejects negatives");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dp_dgauss_init(&g, bad[i]) != -1)
			allbad = 0;
	unit_check(allbad && g.num == 7 && g.den == 7 && g.t == 7,
			   "dp_dgauss_init rejects -0, tiny, huge and infinite sigma2 and leaves *g untouched");

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
	{
		double		s2 = good[i];
		int			rc = dp_dgauss_init(&g, s2);
		int			pow2 = g.den != 0 && (g.den & (g.den - 1)) == 0;

		/* den is a power of two, so s2 * den is exact in long double (64-bit mantissa) */
		long double want = (long double) s2 * g.den;
		long double relerr = ((long double) g.num - want) / want;
		u128		a = g.t - 1;
		int			t_ok = a * a * g.den <= g.num && (a + 1) * (a + 1) * g.den > g.num;

		unit_check(rc == 0 && pow2 && (long double) g.num >= want && relerr < 1e-8L && t_ok,
				   "dp_dgauss_init(%.17g): %llu/%llu, rounded up by %.3Lg relative, t = %llu = floor(sigma)+1",
				   s2, (unsigned long long) g.num, (unsigned long long) g.den, relerr,
				   (unsigned long long) g.t);
	}
	dp_dgauss_init(&g, 2.0);
	unit_check(dp_dgauss_sigma2(&g) == 2.0 && g.num == 2 && g.den == 1 && g.t == 2,
			   "dp_dgauss_init(2) is exactly 2/1 with t = 2");
}

static void
test_uniform(void)
{
	static const uint64_t ns[] = {2, 3, 7, 10, 256, 1000};
	size_t		k;
	long		i;
	int			ok;

	ok = 1;
	for (i = 0; i < 1000; i++)
		if (dp_random_uniform(1) != 0 || dp_random_uniform128(1) != 0)
			ok = 0;
	unit_check(ok, "dp_random_uniform(1) == 0");

	for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
	{
		uint64_t	n = ns[k];
		long	   *c = calloc(n, sizeof(long));
		long		draws = n_draws;
		double		e = (double) draws / n,
					stat = 0,
					crit;
		int			inrange = 1;

		if (c == NULL)
			abort();
		for (i = 0; i < draws; i++)
		{
			uint64_t	u = dp_random_uniform(n);

			if (u >= n)
				inrange = 0;
			else
				c[u]++;
		}
		for (i = 0; i < (long) n; i++)
			stat += (c[i] - e) * (c[i] - e) / e;
		crit = chisq_crit((long) n - 1, ALPHA);
		unit_check(inrange && stat <= crit,
				   "dp_random_uniform(%llu): in range, chi-square %.1f <= %.1f (df %llu, alpha %g)",
				   (unsigned long long) n, stat, crit, (unsigned long long) n - 1, ALPHA);
		free(c);
	}

	/*
	 * 128-bit: n = 3 * 2^125 rejects ~25% of draws, n = 2^64 + 1 about half (9-byte draws);
	 * cells are the top bits of the value.  n = 0 (2^64, full range) likewise.
	 */
	{
		struct
		{
			u128		n;
			int			shift;
			int			ncell;
			const char *name;
		}			cases[] = {
			{(u128) 3 << 125, 125, 3, "3*2^125"},
			{((u128) 1 << 64) + 1, 60, 17, "2^64+1"},
		};

		for (k = 0; k < 2; k++)
		{
			long		c[17] = {0};
			double		stat = 0,
						crit;
			int			inrange = 1,
						ncell = cases[k].ncell;

			for (i = 0; i < n_draws; i++)
			{
				u128		u = dp_random_uniform128(cases[k].n);

				if (u >= cases[k].n)
					inrange = 0;
				else
					c[(int) (u >> cases[k].shift)]++;
			}
			if (ncell == 17)
			{
				/* the single value 2^64 (probability 2^-64) joins the last cell */
				c[15] += c[16];
				ncell = 16;
			}
			for (i = 0; i < ncell; i++)
			{
				double		e = (double) n_draws / ncell;

				stat += (c[i] - e) * (c[i] - e) / e;
			}
			crit = chisq_crit(ncell - 1, ALPHA);
			unit_check(inrange && stat <= crit,
					   "dp_random_uniform128(%s): in range, top-bit chi-square %.1f <= %.1f (df %d, alpha %g)",
					   cases[k].name, stat, crit, ncell - 1, ALPHA);
		}
	}
	{
		long		c[16] = {0};
		double		stat = 0,
					e = (double) n_draws / 16,
					crit = chisq_crit(15, ALPHA);

		for (i = 0; i < n_draws; i++)
			c[dp_random_uniform(0) >> 60]++;
		for (i = 0; i < 16; i++)
			stat += (c[i] - e) * (c[i] - e) / e;
		unit_check(stat <= crit,
				   "dp_random_uniform(0) is a full 64-bit word: top-nibble chi-square %.1f <= %.1f (df 15, alpha %g)",
				   stat, crit, ALPHA);
	}
}

/* A fork()ed child must not consume the bytes its parent had buffered. */
static void
test_fork(void)
{
	unsigned char parent[32],
				child[32],
				prime[1];
	int			fd[2];
	pid_t		pid;
	int			status = 0;
	ssize_t		got = 0;

	dp_random_bytes(prime, 1);	/* the buffer now holds ~4 KiB unconsumed bytes */
	if (pipe(fd) != 0)
		abort();
	pid = fork();
	if (pid == 0)
	{
		dp_random_bytes(child, sizeof(child));
		if (write(fd[1], child, sizeof(child)) != (ssize_t) sizeof(child))
			_exit(1);
		_exit(0);
	}
	dp_random_bytes(parent, sizeof(parent));
	close(fd[1]);
	if (pid > 0)
	{
		got = read(fd[0], child, sizeof(child));
		waitpid(pid, &status, 0);
	}
	close(fd[0]);
	unit_check(pid > 0 && got == (ssize_t) sizeof(child) && WIFEXITED(status) &&
			   WEXITSTATUS(status) == 0 && memcmp(parent, child, sizeof(child)) != 0,
			   "parent and fork()ed child draw different bytes after the fork");
}

static void
check_bern_exp(uint64_t num, uint64_t den)
{
	long double p = expl(-(long double) num / den);
	long		i,
				ones = 0;
	long double sd = sqrtl(n_draws * p * (1 - p));

	for (i = 0; i < n_draws; i++)
		ones += dp_bernoulli_exp(num, den);
	unit_check(fabsl(ones - n_draws * p) <= Z_TOL * sd,
			   "Bernoulli(exp(-%llu/%llu)): %ld of %ld, expected %.1Lf +- %.0f s.e. of %.1Lf [alpha ~2e-9]",
			   (unsigned long long) num, (unsigned long long) den, ones, n_draws, n_draws * p,
			   Z_TOL, sd);
}

static void
test_bernoulli(void)
{
	long		i,
				ones;
	int			ok;

	ok = 1;
	for (i = 0; i < 10000; i++)
		if (dp_bernoulli_exp(0, 1) != 1 || dp_bernoulli_exp(0, 12345) != 1)
			ok = 0;
	unit_check(ok, "Bernoulli(exp(-0)) is always 1");
	check_bern_exp(1, 2);
	check_bern_exp(1, 1);
	check_bern_exp(5, 2);
	check_bern_exp(7, 3);
	check_bern_exp(999999, 1000000);

	/* exp(-50) ~ 2e-22 and exp(-2^64): a single 1 in 1e5 draws has probability < 1e-16 */
	ones = 0;
	for (i = 0; i < 100000; i++)
		ones += dp_bernoulli_exp(50, 1) + dp_bernoulli_exp(UINT64_MAX, 1);
	unit_check(ones == 0, "Bernoulli(exp(-50)) and Bernoulli(exp(-(2^64-1))) give 0");

	ok = 1;
	for (i = 0; i < 10000; i++)
		if (dp_bernoulli_rational(0, 5) != 0 || dp_bernoulli_rational(5, 5) != 1)
			ok = 0;
	unit_check(ok, "Bernoulli(0) = 0 and Bernoulli(1) = 1");
	{
		long double p = 1.0L / 3;
		long double sd = sqrtl(n_draws * p * (1 - p));

		ones = 0;
		for (i = 0; i < n_draws; i++)
			ones += dp_bernoulli_rational(1, 3);
		unit_check(fabsl(ones - n_draws * p) <= Z_TOL * sd,
				   "Bernoulli(1/3): %ld of %ld within %.0f s.e. [alpha ~2e-9]", ones, n_draws, Z_TOL);
	}
}

static void
test_dgauss_dist(double sigma, int power_test)
{
	dp_dgauss	g;
	long double s2;
	pmf			P;
	int64_t    *xs;
	double		secs;
	char		name[96];

	dp_dgauss_init(&g, sigma * sigma);
	s2 = (long double) g.num / g.den;
	pmf_build(&P, logw_dgauss, &s2);
	xs = draw_many(draw_dgauss, &g, n_draws, &secs);
	snprintf(name, sizeof(name), "discrete Gaussian sigma=%g (%ld draws)", sigma, n_draws);
	unit_diag("%s: %.0f samples/s", name, n_draws / secs);
	check_fit(name, xs, n_draws, &P);
	check_moments(name, xs, n_draws, &P);

	if (power_test)
	{
		/*
		 * Power: the same draws must be rejected as samples of sigma * 1.02.  lambda is the
		 * noncentrality of the statistic under the truth; the miss probability is estimated with
		 * the normal approximation of the noncentral chi-square (mean df + lambda, variance
		 * 2 (df + 2 lambda)).
		 */
		long double s2alt = s2 * 1.02L * 1.02L;
		pmf			A;
		gof			r;
		double		miss;

		pmf_build(&A, logw_dgauss, &s2alt);
		r = chisq_gof(xs, n_draws, &A, &P);
		miss = 0.5 * erfc(((r.df + r.lambda) - r.crit) / sqrt(2 * (r.df + 2 * r.lambda)) / M_SQRT2);
		unit_check(r.stat > r.crit,
				   "power: draws of sigma=%g are rejected as sigma*1.02: chi-square %.1f > %.1f "
				   "(df %ld; noncentrality %.0f, miss probability ~%.1g)",
				   sigma, r.stat, r.crit, r.df, r.lambda, miss);
		pmf_free(&A);
	}
	free(xs);
	pmf_free(&P);
}

/*
 * sigma^2 = 1 written as 2^62 / 2^62 (t = 2): the acceptance numerator (|Y| den t - num)^2
 * exceeds 128 bits for |Y| >= 3 (~2% of proposals), so this exercises the 256-bit product and
 * division against the exact N_Z(0, 1).
 */
static void
test_dgauss_wide(void)
{
	dp_dgauss	g = {(uint64_t) 1 << 62, (uint64_t) 1 << 62, 2};
	long double s2 = 1;
	pmf			P;
	int64_t    *xs;
	double		secs;
	char		name[96];

	pmf_build(&P, logw_dgauss, &s2);
	xs = draw_many(draw_dgauss, &g, n_draws, &secs);
	snprintf(name, sizeof(name), "discrete Gaussian 2^62/2^62 (256-bit path, %ld draws)", n_draws);
	check_fit(name, xs, n_draws, &P);
	check_moments(name, xs, n_draws, &P);
	free(xs);
	pmf_free(&P);
}

static void
test_dgauss_extremes(void)
{
	dp_dgauss	g;
	long		i,
				n;
	int			ok = 1;

	/* P(x != 0) = 2 exp(-5000) / Z */
	dp_dgauss_init(&g, 1e-4);
	for (i = 0; i < 10000; i++)
		if (dp_dgauss_sample(&g) != 0)
			ok = 0;
	unit_check(ok, "discrete Gaussian sigma^2=1e-4 returns 0");

	/* large sigma^2: moments only (variance = sigma^2 up to ~exp(-2 pi^2 sigma^2)) */
	{
		static const double s2s[] = {1e12, DP_DGAUSS_SIGMA2_MAX};

		for (i = 0; i < 2; i++)
		{
			long double s1 = 0,
						ss = 0,
						v;
			long		j;

			n = 100000;
			dp_dgauss_init(&g, s2s[i]);
			v = (long double) g.num / g.den;
			for (j = 0; j < n; j++)
			{
				long double x = (long double) dp_dgauss_sample(&g);

				s1 += x;
				ss += x * x;
			}
			/* Gaussian: sd of the mean sqrt(v/n), of the mean square sqrt(2/n) v */
			unit_check(fabsl(s1 / n) <= Z_TOL * sqrtl(v / n) &&
					   fabsl(ss / n - v) <= Z_TOL * sqrtl(2.0L / n) * v,
					   "discrete Gaussian sigma^2=%g: mean and variance within %.0f s.e. (%ld draws) [CLT, alpha ~4e-9]",
					   s2s[i], Z_TOL, n);
		}
	}
}

static void
test_dlap_dist(uint64_t s, uint64_t t)
{
	lap_ctx		c = {s, t};
	long double b = (long double) t / s;
	long double q = expl(-1 / b);
	pmf			P;
	int64_t    *xs;
	double		secs;
	char		name[96];

	pmf_build(&P, logw_dlap, &b);
	unit_check(fabsl(P.p[P.L] - (1 - q) / (1 + q)) < 1e-12L * P.p[P.L],
			   "reference pmf of DLap(%llu/%llu) matches the closed form (1-q)/(1+q)",
			   (unsigned long long) t, (unsigned long long) s);
	xs = draw_many(draw_dlap, &c, n_draws, &secs);
	snprintf(name, sizeof(name), "discrete Laplace scale %llu/%llu (%ld draws)",
			 (unsigned long long) t, (unsigned long long) s, n_draws);
	unit_diag("%s: %.0f samples/s", name, n_draws / secs);
	check_fit(name, xs, n_draws, &P);
	check_moments(name, xs, n_draws, &P);
	free(xs);
	pmf_free(&P);
}

/*
 * Scale 2^62: X = U + tV needs 128 bits and |Y| > INT64_MAX (probability ~0.14) must be
 * rejected.  The result is DLap conditioned on |x| <= 2^63 - 1; cells are |x| in
 * [j 2^60, (j+1) 2^60), j = 0..7, per sign, with P proportional to q^a - q^b, q = exp(-2^-62).
 */
static void
test_dlap_huge(void)
{
	const uint64_t t = (uint64_t) 1 << 62;
	long		c[16] = {0};
	long double e[16],
				tot = 0;
	double		stat = 0,
				crit;
	long		i,
				n = n_draws / 10;
	int			j;

	for (j = 0; j < 8; j++)
	{
		/* P(|Y| in [a, b)) ~ exp(-a/t) - exp(-b/t); the point 0 is shared by both signs */
		long double a = (long double) j / 4,
					bb = (long double) (j + 1) / 4;
		long double m = expl(-a) - expl(-bb);

		if (j == 7)
			m = expl(-a) - expl(-(long double) INT64_MAX / t) * expl(-1.0L / t);
		e[8 + j] = e[7 - j] = m;
	}
	for (j = 0; j < 16; j++)
		tot += e[j];
	for (i = 0; i < n; i++)
	{
		int64_t		x = dp_dlaplace_sample(1, t);
		int			cell = (int) ((x < 0 ? -(uint64_t) x : (uint64_t) x) >> 60);

		c[x < 0 ? 7 - cell : 8 + cell]++;
	}
	for (j = 0; j < 16; j++)
	{
		double		ex = (double) (n * e[j] / tot);

		stat += (c[j] - ex) * (c[j] - ex) / ex;
	}
	crit = chisq_crit(15, ALPHA);
	unit_check(stat <= crit,
			   "discrete Laplace scale 2^62 (truncated to int64): chi-square %.1f <= %.1f (df 15, alpha %g)",
			   stat, crit, ALPHA);
}

int
main(void)
{
	struct timespec a,
				b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	unit_check(dp_random_init() == 0, "dp_random_init");
	unit_check(dp_sampler_selftest() == 0,
			   "dp_sampler_selftest: exact acceptance exponent (128- and 256-bit) matches known answers");

	test_chisq_machinery();
	test_dgauss_init();
	test_uniform();
	test_fork();
	test_bernoulli();
	test_dgauss_dist(0.5, 0);
	test_dgauss_dist(3, 1);
	test_dgauss_dist(50, 0);
	test_dgauss_dist(2e4, 0);
	test_dgauss_wide();
	test_dgauss_extremes();
	test_dlap_dist(3, 2);		/* scale 2/3 */
	test_dlap_dist(1, 1000);	/* scale 1000 */
	test_dlap_dist(7, 10000);	/* scale 10000/7, s > 1 */
	test_dlap_huge();

	clock_gettime(CLOCK_MONOTONIC, &b);
	unit_diag("total %.1f s", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
	return unit_done();
}
