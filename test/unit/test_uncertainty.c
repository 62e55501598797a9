/*
 * test_uncertainty.c - the error bars of dp_uncertainty.h against the noise they describe.
 *
 * 1. The normal quantile and the half-width on known values.
 * 2. Exact coverage: for one discrete Gaussian draw (the noise of a cell measured once), the
 *    probability that the interval covers, computed exactly from the distribution as dp_dgauss_init
 *    sets it up, is >= the nominal level on a grid of 3,000 sigmas x 6 levels (deterministic).
 * 3. Simulated releases: a known table with a merged code, its one-way marginal measured once and
 *    its two-way marginal measured twice and averaged (the adaptive method's repeat), noise from
 *    the core's sampler (libsodium, unseeded), TRIALS times.  The empirical coverage of the count
 *    intervals (cells, projections, merged cells) and share intervals must not fall below the
 *    nominal level by more than 4.5 binomial standard errors (one-sided false alarm below 3.4e-6
 *    per check when the true coverage is exactly nominal), and
 *    the count intervals of cells far from 0 must not be loose: their coverage must be the normal
 *    one at z + 1 / (2 sigma) (what the continuity correction adds) within 4.5 standard errors
 *    either way (two-sided false alarm below 6.8e-6).  Cells near 0 are covered more often (the
 *    interval is clamped at 0): that is measured, not hidden.
 *    After dp_consist (post-processing the intervals do not claim to cover) the coverage is
 *    measured and printed, and checked against the same floor.  14 statistical checks in all:
 *    false alarm below 1e-4 for the binary.
 */
#include <math.h>
#include <string.h>

#include "dp_consist.h"
#include "dp_marg.h"
#include "dp_sampler.h"
#include "dp_uncertainty.h"
#include "unit.h"

#define TRIALS 4000

/* ---- 1 ---- */
static void
test_quantiles(void)
{
	unit_check(fabs(dp_unc_z(0.95) - 1.959963985) < 1e-8, "z(0.95) = 1.959964 (%.9f)", dp_unc_z(0.95));
	unit_check(fabs(dp_unc_z(0.99) - 2.575829304) < 1e-8, "z(0.99) = 2.575829 (%.9f)", dp_unc_z(0.99));
	unit_check(fabs(dp_unc_z(0.5) - 0.674489750) < 1e-8, "z(0.5) = 0.674490 (%.9f)", dp_unc_z(0.5));
	unit_check(isnan(dp_unc_z(0)) && isnan(dp_unc_z(1)) && isnan(dp_unc_z(NAN)) && isnan(dp_unc_z(-1)),
			   "z of a confidence outside (0, 1) is NaN");
	unit_check(fabs(dp_unc_halfwidth(4, 0.95) - (2 * 1.959963985 + 0.5)) < 1e-8 &&
			   isnan(dp_unc_halfwidth(-1, 0.95)) && isnan(dp_unc_halfwidth(INFINITY, 0.95)),
			   "half-width z sigma + 1/2; NaN for a negative or infinite variance");
}

/* ---- 2 ---- */
static void
test_exact_coverage(void)
{
	static const double levels[] = {0.5, 0.8, 0.9, 0.95, 0.99, 0.999};
	double		worst = INFINITY,
				worst_sigma = 0,
				worst_level = 0;
	int			bad = 0;

	for (int i = 1; i <= 3000; i++)
	{
		double		s = 0.05 * i;	/* sigma 0.05 .. 150 */
		double		rho = 1 / (2 * s * s);
		dp_marg		m = {.nattrs = 2, .ncells = 1, .rho = rho};
		double		var;
		dp_dgauss	g;
		double		s2,
					z = 0;

		if (dp_dgauss_init(&g, 1 / (2 * rho)) != 0 || dp_unc_cell_variance(&m, NULL, &var) != 0)
		{
			bad++;
			continue;
		}
		s2 = dp_dgauss_sigma2(&g);	/* the sampler's own sigma^2 */
		for (long x = -(long) (40 * s + 50); x <= (long) (40 * s + 50); x++)
			z += exp(-(double) x * x / (2 * s2));
		for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
		{
			long		k = (long) floor(dp_unc_halfwidth(var, levels[l]));
			double		in = 0;

			for (long x = -k; x <= k; x++)
				in += exp(-(double) x * x / (2 * s2));
			if (in / z - levels[l] < worst)
			{
				worst = in / z - levels[l];
				worst_sigma = s;
				worst_level = levels[l];
			}
		}
	}
	unit_diag("exact coverage minus nominal, smallest: %.3g (sigma %.2f, level %g)", worst, worst_sigma, worst_level);
	unit_check(bad == 0 && worst >= 0,
			   "one discrete Gaussian draw: exact coverage >= nominal for sigma 0.05..150 and 6 levels");
}

/* ---- 3 ---- */

/* The known table over (a, b): a has 5 original codes, 3 and 4 merged (4 merged codes), b 6. */
static double truth_ab[4][6] = {
	{0, 1, 3, 12, 40, 400},
	{250, 0, 0, 2, 7, 90},
	{5, 5, 5, 5, 5, 5},
	{1000, 600, 30, 0, 1, 20},
};
/* how merged code 3 of a splits into original codes 3 and 4 */
static const double split3[6] = {700, 100, 10, 0, 1, 5};
static const uint32_t members_a[4] = {1, 1, 1, 2};

#define RHO_ONEWAY	0.002
#define RHO_PAIR_1	0.001
#define RHO_PAIR_2	0.003

typedef struct Tally
{
	long		in,
				n;
} Tally;

static void
tally(Tally *t, double lo, double hi, double truth)
{
	t->in += lo <= truth && truth <= hi;
	t->n++;
}

static void
check_floor(const Tally *t, double level, const char *what)
{
	double		cov = (double) t->in / t->n;
	double		se = sqrt(level * (1 - level) / t->n);

	unit_check(cov >= level - 4.5 * se, "%s: coverage %.4f over %ld intervals, nominal %g (floor %.4f)",
			   what, cov, t->n, level, level - 4.5 * se);
}

/* Draws one release: margs[0] the one-way marginal of a over merged codes (rho RHO_ONEWAY, built
 * from the 5 original codes' noisy counts), margs[1] the pair measured twice and averaged. */
static void
release(dp_marg *margs, const dp_dgauss *g1, const dp_dgauss *gp1, const dp_dgauss *gp2)
{
	double		orig[5];

	for (int a = 0; a < 5; a++)
		orig[a] = 0;
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 6; b++)
		{
			if (a < 3)
				orig[a] += truth_ab[a][b];
			else
			{
				orig[3] += split3[b];
				orig[4] += truth_ab[3][b] - split3[b];
			}
		}
	memset(margs[0].cells, 0, sizeof(double) * margs[0].ncells);
	for (int a = 0; a < 5; a++)
		margs[0].cells[a < 4 ? a : 3] += orig[a] + (double) dp_dgauss_sample(g1);
	margs[0].rho = RHO_ONEWAY;
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 6; b++)
		{
			double		x1 = truth_ab[a][b] + (double) dp_dgauss_sample(gp1);
			double		x2 = truth_ab[a][b] + (double) dp_dgauss_sample(gp2);

			margs[1].cells[a * 6 + b] = (x1 * RHO_PAIR_1 + x2 * RHO_PAIR_2) / (RHO_PAIR_1 + RHO_PAIR_2);
		}
	margs[1].rho = RHO_PAIR_1 + RHO_PAIR_2;
}

static void
test_simulated(double level)
{
	uint32_t	sizes[2] = {4, 6};
	uint32_t	attr_a = 0,
				attr_b = 1,
				both[2] = {0, 1};
	const uint32_t *members[2] = {members_a, NULL};
	dp_marg		margs[2],
				consist[2],
				proj_a,
				proj_b,
				proj_ab;
	dp_dgauss	g1,
				gp1,
				gp2;
	double		var1[4],
				var2[24],
				scratch[24],
				truth_a[4] = {0},
				truth_b[6] = {0},
				total = 0;
	dp_unc_cell cells[24];
	Tally		t_cells = {0},
				t_large = {0},
				t_b = {0},
				t_a_pair = {0},
				t_a_one = {0},
				t_share = {0},
				t_cons = {0},
				t_cons_share = {0};
	char		what[128];
	int			rc = 0;

	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 6; b++)
		{
			truth_a[a] += truth_ab[a][b];
			truth_b[b] += truth_ab[a][b];
			total += truth_ab[a][b];
		}
	rc |= dp_marg_init(&margs[0], 1, &attr_a, sizes) | dp_marg_init(&margs[1], 2, both, sizes);
	rc |= dp_marg_init(&consist[0], 1, &attr_a, sizes) | dp_marg_init(&consist[1], 2, both, sizes);
	rc |= dp_marg_init(&proj_a, 1, &attr_a, sizes) | dp_marg_init(&proj_b, 1, &attr_b, sizes);
	rc |= dp_marg_init(&proj_ab, 2, both, sizes);
	rc |= dp_dgauss_init(&g1, 1 / (2 * RHO_ONEWAY)) | dp_dgauss_init(&gp1, 1 / (2 * RHO_PAIR_1)) |
		dp_dgauss_init(&gp2, 1 / (2 * RHO_PAIR_2));
	if (rc != 0)
	{
		unit_check(0, "set up the simulation");
		return;
	}
	margs[0].rho = RHO_ONEWAY;
	margs[1].rho = RHO_PAIR_1 + RHO_PAIR_2;
	/* summed variance bounds: pair 24 / (2 * .004) = 3,000, a's one-way 5 / (2 * .002) = 1,250 */
	unit_check(dp_unc_cover(margs, 2, 1, &attr_b, members) == 1 &&
			   dp_unc_cover(margs, 2, 2, both, members) == 1 &&
			   dp_unc_cover(margs, 2, 1, &attr_a, members) == 0,
			   "cover: b and (a, b) from the pair, a from its one-way marginal (less noise)");
	margs[1].rho = 0.1;
	unit_check(dp_unc_cover(margs, 2, 1, &attr_a, members) == 1, "cover: a from the pair when the pair is the less noisy");
	margs[1].spread = true;
	unit_check(dp_unc_cover(margs, 2, 1, &attr_a, members) == 0 && dp_unc_cover(margs, 2, 1, &attr_b, members) == -1 &&
			   dp_unc_cell_variance(&margs[1], NULL, var2) == -1,
			   "cover: never a spread marginal, however little its rho's noise (no variance bound for its cells)");
	margs[1].spread = false;
	margs[0].spread = true;
	unit_check(dp_unc_cover(margs, 2, 1, &attr_b, members) == -1 && dp_unc_cover(margs, 2, 2, both, members) == -1,
			   "cover: never a marginal holding every attribute of a spread one (consistency gave it its bias)");
	margs[0].spread = false;
	margs[1].rho = 0;
	unit_check(dp_unc_cover(margs, 2, 1, &attr_b, members) == -1, "cover: none when no measured marginal holds b");

	for (int trial = 0; trial < TRIALS; trial++)
	{
		release(margs, &g1, &gp1, &gp2);
		rc |= dp_unc_cell_variance(&margs[0], members_a, var1) | dp_unc_cell_variance(&margs[1], NULL, var2);

		/* the pair's cells, as measured */
		rc |= dp_unc_intervals(&margs[1], var2, &proj_ab, level, scratch, cells);
		for (int c = 0; c < 24; c++)
		{
			tally(&t_cells, cells[c].lower, cells[c].upper, truth_ab[c / 6][c % 6]);
			tally(&t_share, cells[c].share_lower, cells[c].share_upper, truth_ab[c / 6][c % 6] / total);
			if (truth_ab[c / 6][c % 6] >= 200)
				tally(&t_large, cells[c].lower, cells[c].upper, truth_ab[c / 6][c % 6]);
		}
		/* b: sums of 4 cells of the pair */
		rc |= dp_unc_intervals(&margs[1], var2, &proj_b, level, scratch, cells);
		for (int c = 0; c < 6; c++)
			tally(&t_b, cells[c].lower, cells[c].upper, truth_b[c]);
		/* a: from the pair (sums of 6), and from its one-way marginal (merged code 3: 2 draws) */
		rc |= dp_unc_intervals(&margs[1], var2, &proj_a, level, scratch, cells);
		for (int c = 0; c < 4; c++)
			tally(&t_a_pair, cells[c].lower, cells[c].upper, truth_a[c]);
		rc |= dp_unc_intervals(&margs[0], var1, &proj_a, level, scratch, cells);
		for (int c = 0; c < 4; c++)
			tally(&t_a_one, cells[c].lower, cells[c].upper, truth_a[c]);

		/* after consistency and Norm-Sub, centred on the consistent values */
		memcpy(consist[0].cells, margs[0].cells, sizeof(double) * 4);
		memcpy(consist[1].cells, margs[1].cells, sizeof(double) * 24);
		consist[0].rho = margs[0].rho;
		consist[1].rho = margs[1].rho;
		if (dp_consist(consist, 2, 100) < 0)
			rc = 1;
		rc |= dp_unc_intervals(&consist[1], var2, &proj_ab, level, scratch, cells);
		for (int c = 0; c < 24; c++)
		{
			tally(&t_cons, cells[c].lower, cells[c].upper, truth_ab[c / 6][c % 6]);
			tally(&t_cons_share, cells[c].share_lower, cells[c].share_upper, truth_ab[c / 6][c % 6] / total);
		}
	}
	unit_check(rc == 0, "level %g: %d simulated releases computed", level, TRIALS);
	snprintf(what, sizeof(what), "level %g: the pair's cells (measured twice, averaged)", level);
	check_floor(&t_cells, level, what);
	{
		/*
		 * Not vacuous: far from 0 (no clamping), the averaged noise is close to normal on a fine
		 * lattice, so the coverage should be the normal one at z + 1/(2 sigma), within 4.5
		 * standard errors either way.
		 */
		double		sigma = sqrt(1 / (2 * (RHO_PAIR_1 + RHO_PAIR_2)));
		double		expect = erf((dp_unc_z(level) + 0.5 / sigma) / sqrt(2.0));
		double		cov = (double) t_large.in / t_large.n;
		double		se = sqrt(expect * (1 - expect) / t_large.n);

		unit_check(fabs(cov - expect) <= 4.5 * se,
				   "level %g: cells of 200 or more are covered as the normal says, %.4f against %.4f +- %.4f",
				   level, cov, expect, 4.5 * se);
	}
	snprintf(what, sizeof(what), "level %g: b, projected from the pair", level);
	check_floor(&t_b, level, what);
	snprintf(what, sizeof(what), "level %g: a, projected from the pair", level);
	check_floor(&t_a_pair, level, what);
	snprintf(what, sizeof(what), "level %g: a's one-way marginal, a merged code included", level);
	check_floor(&t_a_one, level, what);
	snprintf(what, sizeof(what), "level %g: shares of the pair's cells", level);
	check_floor(&t_share, level, what);
	unit_diag("level %g: after dp_consist, counts %.4f, shares %.4f (nominal %g)", level,
			  (double) t_cons.in / t_cons.n, (double) t_cons_share.in / t_cons_share.n, level);
	snprintf(what, sizeof(what), "level %g: the pair's cells after dp_consist (measured, not promised)", level);
	check_floor(&t_cons, level, what);

	dp_marg_free(&margs[0]);
	dp_marg_free(&margs[1]);
	dp_marg_free(&consist[0]);
	dp_marg_free(&consist[1]);
	dp_marg_free(&proj_a);
	dp_marg_free(&proj_b);
	dp_marg_free(&proj_ab);
}

static void
test_invalid(void)
{
	uint32_t	sizes[2] = {2, 3};
	uint32_t	a = 0,
				b = 1;
	dp_marg		m,
				out;
	double		var[3],
				scratch[3];
	dp_unc_cell cells[3];

	dp_marg_init(&m, 1, &a, sizes);
	dp_marg_init(&out, 1, &b, sizes);
	m.rho = 0;
	unit_check(dp_unc_cell_variance(&m, NULL, var) == -1, "no variance for a marginal without rho");
	m.rho = 1;
	dp_unc_cell_variance(&m, NULL, var);
	unit_check(dp_unc_intervals(&m, var, &out, 0.95, scratch, cells) == -1, "no projection onto a column the marginal lacks");
	dp_marg_free(&out);
	dp_marg_init(&out, 1, &a, sizes);
	unit_check(dp_unc_intervals(&m, var, &out, 1.0, scratch, cells) == -1 &&
			   dp_unc_intervals(&m, var, &out, NAN, scratch, cells) == -1, "confidence must lie in (0, 1)");
	dp_marg_free(&m);
	dp_marg_free(&out);
}

int
main(void)
{
	test_quantiles();
	test_exact_coverage();
	test_simulated(0.95);
	test_simulated(0.8);
	test_invalid();
	return unit_done();
}
