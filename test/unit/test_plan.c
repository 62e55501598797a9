/*
 * test_plan.c - unit tests for src/core/dp_plan.c: the privacy plan of a call (the split of rho
 * and delta between discovery and release, worst-case sizes before discovery, refusals).
 *
 * Build and run (from the repository root): make unit-build && test/unit/bin/test_plan
 *
 * The identities checked are those PRIVACY.md relies on: what a call uses never exceeds what it
 * is charged, and what it is charged never exceeds rho(epsilon, delta); a marginal's worst case
 * fits its cell limit; every refusal happens for the stated reason, in the stated order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_discovery.h"
#include "dp_domain.h"
#include "dp_binning.h"
#include "dp_plan.h"
#include "dp_privsyn.h"
#include "dp_sampler.h"
#include "unit.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static dp_plan_column
known(uint32_t ncodes)
{
	dp_plan_column c = {DP_PLAN_KNOWN, ncodes, 0, 0, false};

	return c;
}

static dp_plan_column
awaiting(dp_plan_state state)
{
	dp_plan_column c = {state, 0, 0, 0, false};

	return c;
}

static dp_plan_refusal
plan_of(dp_plan_call call, int64_t units, double selection_delta, const dp_plan_column *cols, int ncols,
		dp_plan *plan)
{
	dp_plan_input in = {call, units, selection_delta, ncols, cols};

	return dp_plan_make(&in, plan);
}

static void
test_units(void)
{
	static const double eps[] = {0.01, 0.1, 1, 3, 10, 100};
	static const double deltas[] = {1e-5, 1e-6, 1e-9};
	int			below = 1,
				positive = 1,
				used_below = 1;

	for (size_t i = 0; i < NELEM(eps); i++)
		for (size_t k = 0; k < NELEM(deltas); k++)
		{
			int64_t		u = dp_rho_units(eps[i], deltas[k]);

			positive &= u >= 1;
			below &= (double) u * 1e-12 <= dp_zcdp_rho(eps[i], deltas[k]);
			/* the margin of 1e-12 relative costs at most rho(eps, delta) units, plus one */
			below &= dp_zcdp_rho(eps[i], deltas[k]) * 1e12 - (double) u < 1.001 + dp_zcdp_rho(eps[i], deltas[k]);
			used_below &= dp_units_rho(u) < (double) u * 1e-12;
		}
	unit_check(positive, "dp_rho_units is at least one unit for epsilon 0.01..100");
	unit_check(below, "dp_rho_units rounds down, by less than 1 + rho units: units * 1e-12 <= rho(eps, delta)");
	unit_check(used_below, "dp_units_rho(u) < u * 1e-12: a release uses less than it is charged");
	unit_check(dp_rho_units(NAN, 1e-6) == -1 && dp_rho_units(1, 0) == -1 && dp_rho_units(1, 1) == -1 &&
			   dp_rho_units(-1, 1e-6) == -1 && dp_rho_units(1e-9, 1e-300) == -1,
			   "dp_rho_units refuses NaN, delta 0 or 1, negative epsilon and rho under one unit");
	unit_check(dp_rho_units(1, 1e-6) == 24355970359, "rho(1, 1e-6) = 24355970359 units (%lld)",
			   (long long) dp_rho_units(1, 1e-6));
	unit_check(dp_delta_valid(1e-6) && dp_delta_valid(0.5) && !dp_delta_valid(0) && !dp_delta_valid(1) &&
			   !dp_delta_valid(-1e-6) && !dp_delta_valid(NAN) && !dp_delta_valid(INFINITY),
			   "dp_delta_valid: the open interval (0, 1) only");
}

static void
test_worst_codes(void)
{
	dp_plan_column e = {DP_PLAN_EDGES, 0, 16, 3, false};
	dp_plan_column k = known(7);
	dp_plan_column t = awaiting(DP_PLAN_CATEGORIES);
	dp_plan_column b = awaiting(DP_PLAN_BOUNDS);

	unit_check(dp_plan_worst_codes(&k, 1000) == 7, "a known domain: its own codes");
	unit_check(dp_plan_worst_codes(&t, 1000) == 1001, "text to discover: the cap plus the NULL cell");
	unit_check(dp_plan_worst_codes(&b, 1000) == DP_PLAN_DISCOVERED_BINS + 1,
			   "bounds to discover: %d bins plus the NULL cell", DP_PLAN_DISCOVERED_BINS);
	unit_check(dp_plan_worst_codes(&e, 1000) == 16 + 2 * 3 + 1,
			   "quantile edges: bins, two cells per point mass, the NULL cell");
}

/* A release: 10% of the units to discovery in equal whole parts, the rest to the release. */
static void
test_split(void)
{
	dp_plan_column cols[] = {known(10), awaiting(DP_PLAN_CATEGORIES), awaiting(DP_PLAN_BOUNDS),
	awaiting(DP_PLAN_CATEGORIES)};
	int64_t		units = dp_rho_units(1, 1e-6);
	dp_plan		p;
	dp_plan_refusal r = plan_of(DP_CALL_PRIVSYN, units, 1e-8, cols, 4, &p);

	unit_check(r == DP_PLAN_OK && p.refusal == DP_PLAN_OK, "a synthesis with three columns to discover is planned");
	unit_check(p.ndiscover == 3 && p.ntext == 2, "3 columns to discover, 2 of them text");
	unit_check(p.units_each == (int64_t) floor(units * 0.1 / 3), "units_each = floor(units * 0.1 / 3) = %lld",
			   (long long) p.units_each);
	unit_check(p.units_release == units - 3 * p.units_each, "the release gets the rest");
	unit_check(p.units_charged == units, "a release is charged all of its units");
	unit_check(p.delta_each == 1e-8 && p.delta_charged == 2e-8, "selection delta: 1e-8 per text column, 2e-8 charged");
	unit_check(p.max_categories == DP_PLAN_MAX_DISCOVERED_CATEGORIES, "a synthesis keeps at most %d categories",
			   DP_PLAN_MAX_DISCOVERED_CATEGORIES);
	unit_check(3 * dp_units_rho(p.units_each) + dp_units_rho(p.units_release) <= p.units_charged * 1e-12,
			   "the parts' rho add up to no more than the charge");
	unit_check(p.min_bin_mass == DP_PLAN_AUTO_BIN_MARGIN * dp_privsyn_rare_threshold(dp_units_rho(p.units_release), 4),
			   "privsyn: 'auto' bins hold 5/3 of PrivSyn's rare-value threshold at the release's rho");
	r = plan_of(DP_CALL_ADAPTIVE, units, 1e-8, cols, 4, &p);
	unit_check(r == DP_PLAN_OK &&
			   p.min_bin_mass == DP_PLAN_AUTO_BIN_MARGIN * dp_adaptive_rare_threshold(dp_units_rho(p.units_release), 4),
			   "adaptive: 'auto' bins follow the adaptive method's threshold (%g)", p.min_bin_mass);
	r = plan_of(DP_CALL_PRIVSYN, units, 0, cols, 1, &p);
	unit_check(r == DP_PLAN_OK && p.ndiscover == 0 && p.units_each == 0 && p.units_release == units &&
			   p.delta_charged == 0, "nothing to discover: everything to the release, no delta");
}

/* dp_discover: all the units to discovery, nothing released after; the remainder is not charged. */
static void
test_discover(void)
{
	dp_plan_column cols[] = {awaiting(DP_PLAN_CATEGORIES), awaiting(DP_PLAN_BOUNDS), awaiting(DP_PLAN_BOUNDS)};
	dp_plan		p;
	dp_plan_refusal r = plan_of(DP_CALL_DISCOVER, 1000000001, 1e-9, cols, 3, &p);

	unit_check(r == DP_PLAN_OK && p.units_each == 333333333 && p.units_release == 0,
			   "dp_discover: floor(units / 3) per column, no release");
	unit_check(p.units_charged == 999999999, "dp_discover is charged what its columns use (999999999 of 1000000001)");
	unit_check(p.min_bin_mass == 0 && p.release_sigma2 == 0, "dp_discover: no 'auto' minimum, no release noise");
}

/* dp_marginal: the worst case fits DP_PLAN_MAX_MARGINAL_CELLS whatever discovery finds. */
static void
test_marginal_cells(void)
{
	dp_plan_column big[] = {known(4096), known(4096), known(2)};
	dp_plan_column fits[] = {known(4096), known(4096)};
	dp_plan_column text[] = {known(1000), awaiting(DP_PLAN_CATEGORIES), awaiting(DP_PLAN_CATEGORIES)};
	dp_plan_column full[] = {known(4096), known(4095), awaiting(DP_PLAN_CATEGORIES)};
	dp_plan_column one_text[] = {awaiting(DP_PLAN_CATEGORIES)};
	int64_t		units = dp_rho_units(1, 1e-6);
	dp_plan		p;
	dp_plan_refusal r;
	double		worst;

	unit_check(plan_of(DP_CALL_MARGINAL, units, 0, big, 3, &p) == DP_PLAN_TOO_MANY_CELLS,
			   "4096 x 4096 x 2 cells: refused");
	unit_check(plan_of(DP_CALL_MARGINAL, units, 0, fits, 2, &p) == DP_PLAN_OK, "4096 x 4096 = the limit: planned");
	unit_check(plan_of(DP_CALL_PRIVSYN, units, 0, big, 3, &p) != DP_PLAN_TOO_MANY_CELLS,
			   "the marginal's cell limit is not a synthesis's");
	r = plan_of(DP_CALL_MARGINAL, units, 1e-8, text, 3, &p);
	unit_check(r == DP_PLAN_OK && p.max_categories == 128,
			   "1000 x two text columns: each keeps floor(sqrt(16777216 / 1000)) - 1 = 128 (%d)", p.max_categories);
	worst = 1000.0 * (p.max_categories + 1) * (p.max_categories + 1);
	unit_check(worst <= (double) DP_PLAN_MAX_MARGINAL_CELLS, "and the worst case, %.0f cells, fits", worst);
	unit_check(plan_of(DP_CALL_MARGINAL, units, 1e-8, full, 3, &p) == DP_PLAN_TOO_MANY_CELLS,
			   "no room left for one category (4096 x 4095 x 2 > the limit): refused");
	r = plan_of(DP_CALL_MARGINAL, units, 1e-8, one_text, 1, &p);
	unit_check(r == DP_PLAN_OK && p.max_categories == DP_MAX_CODES - 2, "a text column alone: capped by the codes, %d",
			   p.max_categories);
	unit_check(p.release_sigma2 == dp_gaussian_sigma2(dp_units_rho(p.units_release), 1.0),
			   "the marginal's sigma^2 is 1 / (2 rho_release)");
}

static void
test_too_small(void)
{
	dp_plan_column bounds[] = {awaiting(DP_PLAN_BOUNDS), awaiting(DP_PLAN_BOUNDS)};
	dp_plan_column text[] = {awaiting(DP_PLAN_CATEGORIES)};
	dp_plan_column k[] = {known(2)};
	dp_plan		p;

	unit_check(plan_of(DP_CALL_PRIVSYN, 19, 0, bounds, 2, &p) == DP_PLAN_DISCOVERY_TOO_SMALL && p.ndiscover == 2,
			   "19 units: 10%% over two columns is under one unit: refused");
	unit_check(plan_of(DP_CALL_DISCOVER, 1, 0, bounds, 2, &p) == DP_PLAN_DISCOVERY_TOO_SMALL,
			   "dp_discover of two columns with one unit: refused");
	unit_check(plan_of(DP_CALL_DISCOVER, 2, 0, bounds, 2, &p) == DP_PLAN_OK && p.units_each == 1,
			   "two units over two columns: one unit each (sigma^2 5e11, within the sampler's range)");
	unit_check(plan_of(DP_CALL_ADAPTIVE, dp_rho_units(1, 1e-6), 0, text, 1, &p) == DP_PLAN_DISCOVERY_TOO_SMALL,
			   "text to discover with no selection delta left: refused");
	unit_check(plan_of(DP_CALL_ADAPTIVE, dp_rho_units(1, 1e-6), 1e-9, text, 1, &p) == DP_PLAN_OK,
			   "the same with a selection delta of 1e-9: planned");
	unit_check(plan_of(DP_CALL_MARGINAL, 1, 0, k, 1, &p) == DP_PLAN_OK && p.release_sigma2 < DP_DGAUSS_SIGMA2_MAX,
			   "a marginal charged one unit: sigma^2 %g is within the sampler's range", p.release_sigma2);
	unit_check(DP_PLAN_BAD_INPUT < 0 && DP_PLAN_TOO_MANY_CELLS < 0 && DP_PLAN_DISCOVERY_TOO_SMALL < 0 &&
			   DP_PLAN_PAIR_TOO_LARGE < 0 && DP_PLAN_RELEASE_TOO_SMALL < 0 &&
			   plan_of(DP_CALL_MARGINAL, 0, 0, k, 1, &p) < 0,
			   "every refusal is negative (dp_env.h: rc < 0 means refused)");
	unit_check(plan_of(DP_CALL_MARGINAL, 0, 0, k, 1, &p) == DP_PLAN_BAD_INPUT &&
			   plan_of(DP_CALL_MARGINAL, 100, 0, k, 0, &p) == DP_PLAN_BAD_INPUT,
			   "no units or no column: bad input");
}

static void
test_pairs(void)
{
	dp_plan_column ok[] = {known(2048), known(2), known(2048)};
	dp_plan_column over[] = {known(2), known(2049), known(3), known(2048)};
	dp_plan_column text[] = {known(4200), awaiting(DP_PLAN_CATEGORIES)};
	int64_t		units = dp_rho_units(1, 1e-6);
	dp_plan		p;

	unit_check(plan_of(DP_CALL_PRIVSYN, units, 0, ok, 3, &p) == DP_PLAN_OK, "2048 x 2048 = the pair limit: planned");
	unit_check(plan_of(DP_CALL_ADAPTIVE, units, 0, over, 4, &p) == DP_PLAN_PAIR_TOO_LARGE &&
			   p.pair_first == 1 && p.pair_second == 3 && p.pair_first_codes == 2049 && p.pair_second_codes == 2048,
			   "2049 x 2048: refused, naming columns 1 and 3 and their sizes");
	unit_check(plan_of(DP_CALL_PRIVSYN, units, 1e-8, text, 2, &p) == DP_PLAN_PAIR_TOO_LARGE &&
			   p.pair_second_codes == DP_PLAN_MAX_DISCOVERED_CATEGORIES + 1,
			   "a text column to discover counts as %d codes against a pair", DP_PLAN_MAX_DISCOVERED_CATEGORIES + 1);
	unit_check(plan_of(DP_CALL_MARGINAL, units, 0, over, 4, &p) != DP_PLAN_PAIR_TOO_LARGE,
			   "a marginal has no pair limit");
	{
		dp_plan_column wide[] = {known(65000), {DP_PLAN_EDGES, 0, 16, 0, true}};

		unit_check(plan_of(DP_CALL_ADAPTIVE, units, 0, wide, 2, &p) == DP_PLAN_PAIR_TOO_LARGE &&
				   p.pair_second_codes == 2 * DP_BINNING_WIDE_MAX_BINS,
				   "bounds only over a wide range count as %d codes against a pair (spikes included)",
				   2 * DP_BINNING_WIDE_MAX_BINS);
		wide[1].quantile_wide = false;
		unit_check(plan_of(DP_CALL_ADAPTIVE, units, 0, wide, 2, &p) == DP_PLAN_OK,
				   "declared with 16 bins: 32 codes with spikes, 65000 x 32 planned");
		wide[0] = known(131073);
		unit_check(plan_of(DP_CALL_ADAPTIVE, units, 0, wide, 2, &p) == DP_PLAN_PAIR_TOO_LARGE &&
				   p.pair_second_codes == 32,
				   "16 quantile bins can come out as 31 with spikes: 131073 x 32 refused");
	}
	unit_check(plan_of(DP_CALL_PRIVSYN, 9, 0, (dp_plan_column[]) {awaiting(DP_PLAN_BOUNDS), known(4096), known(4096)}, 3, &p)
			   == DP_PLAN_DISCOVERY_TOO_SMALL, "refusals come in order: the discovery share before the pairs");
}

/*
 * Every plan of many generated calls keeps the identities: the parts add up to the charge, the
 * charge to at most the call's units, the delta to ntext shares; a planned marginal's worst case
 * fits its limit.
 */
static void
test_properties(void)
{
	uint64_t	x = 0x9e3779b97f4a7c15ULL;
	int			planned = 0,
				bad = 0;

	for (int trial = 0; trial < 20000; trial++)
	{
		dp_plan_column cols[6];
		int			ncols = 1 + (int) ((x >> 7) % 6);
		dp_plan_call call = (dp_plan_call) ((x >> 13) % 4);
		int64_t		units = 1 + (int64_t) ((x >> 17) % 100000000000ULL);
		double		sel = ((x >> 3) % 3) ? 1e-8 : 0;
		dp_plan		p;
		double		worst = 1;

		for (int j = 0; j < ncols; j++)
		{
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			cols[j].state = (dp_plan_state) ((x >> 33) % 4);
			cols[j].ncodes = 2 + (uint32_t) ((x >> 40) % 5000);
			cols[j].quantile_bins = 1 + (int) ((x >> 20) % 32);
			cols[j].quantile_points = (int) ((x >> 50) % 4);
		}
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		if (plan_of(call, units, sel, cols, ncols, &p) != DP_PLAN_OK)
			continue;
		planned++;
		bad += p.units_charged != p.units_release + p.ndiscover * p.units_each;
		bad += p.units_charged > units || p.units_release < 0 || p.units_each < 0;
		bad += call == DP_CALL_DISCOVER ? p.units_release != 0 : p.units_charged != units;
		bad += p.delta_charged != p.ntext * p.delta_each;
		bad += p.ndiscover > 0 && p.units_each < 1;
		for (int j = 0; j < ncols; j++)
			worst *= dp_plan_worst_codes(&cols[j], p.max_categories);
		bad += call == DP_CALL_MARGINAL && worst > (double) DP_PLAN_MAX_MARGINAL_CELLS;
	}
	unit_check(planned > 1000 && bad == 0, "%d generated plans keep every identity (%d violations)", planned, bad);
}

int
main(void)
{
	test_units();
	test_worst_codes();
	test_split();
	test_discover();
	test_marginal_cells();
	test_too_small();
	test_pairs();
	test_properties();
	return unit_done();
}
