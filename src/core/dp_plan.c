/*
 * dp_plan.c - the privacy plan of one call (dp_plan.h): the split of rho and delta between
 * discovery and release, the worst-case sizes before discovery, and the refusals, all computed
 * from public facts before the charge.
 */
#include "dp_plan.h"

#include <math.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_binning.h"
#include "dp_discovery.h"
#include "dp_domain.h"
#include "dp_privsyn.h"
#include "dp_sampler.h"
#include "dp_schedule.h"

/*
 * Rounded down, with a relative margin of 1e-12 against floating-point error, so that
 * units * 1e-12 <= rho(epsilon, delta): charges and budgets are whole units, and a release is
 * calibrated to exactly the units it is charged.
 */
int64_t
dp_rho_units(double epsilon, double delta)
{
	double		rho = dp_zcdp_rho(epsilon, delta);
	double		units;

	if (!(rho > 0) || !isfinite(rho))
		return -1;
	units = floor(rho * 1e12 * (1 - 1e-12));
	if (!(units >= 1) || units > 9e18)
		return -1;
	return (int64_t) units;
}

bool
dp_delta_valid(double delta)
{
	return delta > 0 && delta < 1;	/* false for NaN too */
}

uint32_t
dp_plan_worst_codes(const dp_plan_column *col, int max_categories)
{
	switch (col->state)
	{
		case DP_PLAN_KNOWN:
			return col->ncodes;
		case DP_PLAN_CATEGORIES:
			return (uint32_t) max_categories + 1;
		case DP_PLAN_BOUNDS:
			return DP_PLAN_DISCOVERED_BINS + 1;
		case DP_PLAN_EDGES:
			return (uint32_t) (col->quantile_bins + 2 * col->quantile_points + 1);
	}
	return 0;
}

/* What the call may spend on discovery, and how many categories a text column may keep. */
static double
discovery_share(dp_plan_call call)
{
	return call == DP_CALL_DISCOVER ? 1.0 : DP_PLAN_DISCOVERY_SHARE;
}

static int
category_cap(dp_plan_call call)
{
	/* a marginal is capped by its cells alone; a synthesis pairs columns, so they stay small */
	return call == DP_CALL_MARGINAL ? DP_MAX_CODES - 2 : DP_PLAN_MAX_DISCOVERED_CATEGORIES;
}

static bool
valid_input(const dp_plan_input *in)
{
	if (in == NULL || in->units < 1 || in->ncols < 1 || in->cols == NULL)
		return false;
	for (int j = 0; j < in->ncols; j++)
		if ((int) in->cols[j].state < DP_PLAN_KNOWN || in->cols[j].state > DP_PLAN_EDGES)
			return false;
	return true;
}

/* Counts the columns to discover; returns the product of the others' worst-case sizes. */
static double
count_columns(const dp_plan_input *in, dp_plan *plan)
{
	double		known = 1;

	for (int j = 0; j < in->ncols; j++)
	{
		if (in->cols[j].state == DP_PLAN_CATEGORIES)
			plan->ntext++;
		else
			known *= dp_plan_worst_codes(&in->cols[j], 0);
		plan->ndiscover += in->cols[j].state != DP_PLAN_KNOWN;
	}
	return known;
}

/*
 * A marginal's size must be known before the charge: whatever discovery releases, the product
 * of the columns' codes stays under the cell limit, so text columns keep at most as many values
 * as leave room for every outcome.
 */
static dp_plan_refusal
cap_marginal_cells(double known, dp_plan *plan)
{
	double		limit = (double) DP_PLAN_MAX_MARGINAL_CELLS;

	if (known > limit)
		return DP_PLAN_TOO_MANY_CELLS;
	if (plan->ntext > 0)
	{
		double		room = pow(limit / known, 1.0 / plan->ntext);

		plan->max_categories = (int) fmin(floor(room) - 1, plan->max_categories);
		if (plan->max_categories < 1)
			return DP_PLAN_TOO_MANY_CELLS;
	}
	return DP_PLAN_OK;
}

/*
 * Each discovered column gets an equal part of the share, in whole units; it must buy noise the
 * sampler can draw and, for text, a threshold that meets the selection delta.
 */
static dp_plan_refusal
split_discovery(const dp_plan_input *in, dp_plan *plan)
{
	dp_dgauss	g;

	if (plan->ntext > 0)
		plan->delta_each = in->selection_delta;
	if (plan->ndiscover == 0)
		return DP_PLAN_OK;
	plan->units_each = (int64_t) floor(in->units * discovery_share(in->call) / plan->ndiscover);
	if (plan->units_each < 1 ||
		dp_dgauss_init(&g, dp_gaussian_sigma2(dp_units_rho(plan->units_each), 1.0)) != 0 ||
		(plan->ntext > 0 && dp_partition_threshold(&g, plan->delta_each) <= 0))
		return DP_PLAN_DISCOVERY_TOO_SMALL;
	return DP_PLAN_OK;
}

/*
 * The codes a column may have in a synthesis: as dp_plan_worst_codes, with a wide column's bins
 * as many as its released mass may afford (dp_binning_wide_bins), and every learned integer
 * column's spikes counted: each one-value cell heavy enough to get a bin of its own takes one of
 * the nbins and may split a quantile bin in three, so nbins requested can come out as up to
 * 2 nbins - 1 bins.
 */
static uint32_t
synthesis_worst_codes(const dp_plan_column *col, int max_categories)
{
	uint32_t	n = dp_plan_worst_codes(col, max_categories);
	uint32_t	bins;

	if (col->state == DP_PLAN_BOUNDS)
		return (uint32_t) (2 * DP_PLAN_DISCOVERED_BINS - 1 + 1);
	if (col->state != DP_PLAN_EDGES)
		return n;
	bins = (uint32_t) (col->quantile_wide ? DP_BINNING_WIDE_MAX_BINS : col->quantile_bins);
	if (bins < 1)
		bins = 1;
	bins = 2 * bins - 1 + 2 * (uint32_t) col->quantile_points + 1;
	return bins > n ? bins : n;
}

/* Every pair a synthesis method may measure must fit DP_PLAN_MAX_PAIR_CELLS, at worst. */
static dp_plan_refusal
check_pairs(const dp_plan_input *in, dp_plan *plan)
{
	for (int j = 1; j < in->ncols; j++)
	{
		uint32_t	sj = synthesis_worst_codes(&in->cols[j], plan->max_categories);

		for (int k = 0; k < j; k++)
		{
			uint32_t	sk = synthesis_worst_codes(&in->cols[k], plan->max_categories);

			if ((int64_t) sj * sk > DP_PLAN_MAX_PAIR_CELLS)
			{
				plan->pair_first = k;
				plan->pair_second = j;
				plan->pair_first_codes = sk;
				plan->pair_second_codes = sj;
				return DP_PLAN_PAIR_TOO_LARGE;
			}
		}
	}
	return DP_PLAN_OK;
}

/* 'auto' bins thick enough to survive the method's rare-value step (public: rho and d only). */
static double
min_bin_mass(dp_plan_call call, int64_t units_release, int ncols)
{
	double		rho = dp_units_rho(units_release);

	if (call == DP_CALL_ADAPTIVE)
		return DP_PLAN_AUTO_BIN_MARGIN * dp_adaptive_rare_threshold(rho, (uint32_t) ncols);
	if (call == DP_CALL_PRIVSYN)
		return DP_PLAN_AUTO_BIN_MARGIN * dp_privsyn_rare_threshold(rho, (uint32_t) ncols);
	return 0;
}

static dp_plan_refusal
refuse(dp_plan *plan, dp_plan_refusal why)
{
	plan->refusal = why;
	return why;
}

dp_plan_refusal
dp_plan_make(const dp_plan_input *in, dp_plan *plan)
{
	dp_plan_refusal why;
	double		known;

	memset(plan, 0, sizeof(*plan));
	if (!valid_input(in))
		return refuse(plan, DP_PLAN_BAD_INPUT);
	plan->max_categories = category_cap(in->call);
	known = count_columns(in, plan);
	if (in->call == DP_CALL_MARGINAL && (why = cap_marginal_cells(known, plan)) != DP_PLAN_OK)
		return refuse(plan, why);
	if ((why = split_discovery(in, plan)) != DP_PLAN_OK)
		return refuse(plan, why);
	if (in->call != DP_CALL_DISCOVER)
		plan->units_release = in->units - plan->units_each * plan->ndiscover;
	plan->units_charged = plan->units_release + plan->units_each * plan->ndiscover;
	plan->delta_charged = plan->delta_each * plan->ntext;
	if ((in->call == DP_CALL_PRIVSYN || in->call == DP_CALL_ADAPTIVE) &&
		(why = check_pairs(in, plan)) != DP_PLAN_OK)
		return refuse(plan, why);
	plan->min_bin_mass = min_bin_mass(in->call, plan->units_release, in->ncols);
	if (in->call == DP_CALL_MARGINAL)
	{
		dp_dgauss	noise;

		plan->release_sigma2 = dp_gaussian_sigma2(dp_units_rho(plan->units_release), 1.0);
		if (dp_dgauss_init(&noise, plan->release_sigma2) != 0)
			return refuse(plan, DP_PLAN_RELEASE_TOO_SMALL);
	}
	return DP_PLAN_OK;
}
