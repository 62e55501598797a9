/*
 * test_discovery_grid.c - tests of dp_discovery's public grids: the log-scale grid (integer and
 * real), the linear grid of the second stage, the split of a column's rho between the two stages
 * and the widening of a span.  Partition selection is tested in test_discovery.c, the released
 * bounds in test_discovery_bounds.c.
 *
 * Build and run from the repository root (or `make unit`):
 *   make -s test/unit/bin/test_discovery_grid && ./test/unit/bin/test_discovery_grid
 *
 * Randomness: no privacy noise; the values placed on the grids come from unit_discovery.h's
 * fixed-seed generator, so every run checks the same values.
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
		/* (initialised before the check: its arguments are evaluated in no set order) */
		int			rc = dp_lingrid_init_int(&g, cases[i].lo, cases[i].hi);

		unit_check(rc == 0 && g.iwidth == cases[i].width && g.ncells == cases[i].ncells,
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

int
main(void)
{
	clock_t		t0 = clock();

	if (dp_random_init() != 0)
	{
		printf("Bail out! libsodium unavailable\n");
		return 1;
	}
	test_grid_int(8);
	test_grid_int(1);
	test_grid_int(256);
	test_grid_real();
	test_bounds_split();
	test_span_widen();
	test_lingrid();
	unit_diag("test_discovery_grid: %.2f s CPU", (double) (clock() - t0) / CLOCKS_PER_SEC);
	return unit_done();
}
