/*
 * plan.c - executes the privacy plan of a call (src/core/dp_plan.c) in PostgreSQL: gathers its
 * public facts (the columns' states and sizes, the table's selection delta), and raises the
 * refusal the plan returns, before anything is charged.  The arithmetic itself is the core's,
 * unit-tested in test/unit/test_plan.c.
 */
#include "dpsynth.h"

#include "utils/float.h"

static dp_plan_state
plan_state(DpColumnState state)
{
	switch (state)
	{
		case DP_COLUMN_READY:
			return DP_PLAN_KNOWN;
		case DP_COLUMN_DISCOVER_CATEGORIES:
			return DP_PLAN_CATEGORIES;
		case DP_COLUMN_DISCOVER_BOUNDS:
			return DP_PLAN_BOUNDS;
		case DP_COLUMN_DISCOVER_EDGES:
			return DP_PLAN_EDGES;
	}
	elog(ERROR, "dpsynth: column state %d out of range", (int) state);
	return DP_PLAN_KNOWN;		/* not reached */
}

/* The public facts of the columns, as the core plans with them. */
static dp_plan_column *
plan_columns_of(const DpColumn *cols, int ncols, bool *any_text)
{
	dp_plan_column *pc = palloc0(sizeof(dp_plan_column) * ncols);

	*any_text = false;
	for (int j = 0; j < ncols; j++)
	{
		pc[j].state = plan_state(cols[j].state);
		if (pc[j].state == DP_PLAN_KNOWN)
			pc[j].ncodes = dp_domain_ncodes(&cols[j].domain);
		pc[j].quantile_bins = cols[j].quantile_bins;
		pc[j].quantile_points = cols[j].quantile_points;
		pc[j].quantile_wide = cols[j].quantile_wide;
		*any_text |= pc[j].state == DP_PLAN_CATEGORIES;
	}
	return pc;
}

void
dpsynth_too_many_cells(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the marginal of these columns has more than " INT64_FORMAT " cells",
					(int64) DP_PLAN_MAX_MARGINAL_CELLS),
			 errhint("Ask for fewer columns, or declare coarser domains (fewer categories or bins).")));
}

pg_noreturn static void raise_refusal(const dp_plan *plan, const DpColumn *cols, double epsilon);

static void
raise_refusal(const dp_plan *plan, const DpColumn *cols, double epsilon)
{
	switch (plan->refusal)
	{
		case DP_PLAN_TOO_MANY_CELLS:
			dpsynth_too_many_cells();
			break;
		case DP_PLAN_DISCOVERY_TOO_SMALL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg_plural("epsilon %s is too small to discover %d domain",
								   "epsilon %s is too small to discover %d domains",
								   plan->ndiscover, float8out_internal(epsilon), plan->ndiscover),
					 errhint("Ask for a larger epsilon, or let the owner declare the domains.")));
			break;
		case DP_PLAN_PAIR_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("columns \"%s\" and \"%s\" have too many codes together (%u x %u) to synthesize",
							cols[plan->pair_first].name, cols[plan->pair_second].name,
							plan->pair_first_codes, plan->pair_second_codes),
					 errhint("Declare coarser domains (fewer categories or bins) for them.")));
			break;
		case DP_PLAN_RELEASE_TOO_SMALL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %s is too small for the noise sampler", float8out_internal(epsilon))));
			break;
		case DP_PLAN_OK:
		case DP_PLAN_BAD_INPUT:
			break;
	}
	elog(ERROR, "dpsynth: invalid privacy plan (%d)", (int) plan->refusal);
}

void
dpsynth_plan_call(Oid relid, dp_plan_call call, int64 units, double epsilon,
				  const DpColumn *cols, int ncols, dp_plan *plan)
{
	dp_plan_input in;
	bool		any_text;

	in.call = call;
	in.units = units;
	in.ncols = ncols;
	in.cols = plan_columns_of(cols, ncols, &any_text);
	/* the selection delta is read only when a partition selection will spend it */
	in.selection_delta = any_text ? dpsynth_selection_share(relid) : 0;
	if (dp_plan_make(&in, plan) != DP_PLAN_OK)
		raise_refusal(plan, cols, epsilon);
	pfree((void *) in.cols);
}
