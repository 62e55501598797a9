/*
 * marginal.c - dp_marginal(table, columns, epsilon): noisy counts of every cell of the public
 * domain of some columns.
 *
 * Order of work (PRIVACY.md): validate every argument, check privileges, read the budget and
 * the domains, and size the result; charge the budget (committed by the charging worker); then,
 * and only then, scan the table once, count, add noise to every cell and return the cells.  After
 * the scan starts nothing can fail or speak in a way that depends on the rows.
 *
 * Privacy: one row adds 1 to exactly one cell (encoding is total, dp_domain.h), so the count
 * vector has L2 sensitivity 1 under add/remove-one; with sigma^2 = 1 / (2 rho) the release is
 * rho-zCDP, where rho = dpsynth_units_rho(units) is below the units * 1e-12 the ledger charges.
 * A table with a privacy unit (units.c) is read through dpsynth_scan_unit_codes: each unit keeps
 * at most k rows, at most c of them in one cell (count_unit_row), and sigma^2 is scaled by the
 * squared sensitivity of that bound, dpsynth_unit_sigma2 (docs/PRIVACY.md, "Privacy per unit").
 * Where k is learned (max_rows_per_unit NULL), the release's first scan (discovery's, where
 * quantile bins are learned, so that they are counted at the learned k; else the marginal's)
 * learns it first from a released histogram of the units' row counts (1 / DPSYNTH_UNIT_LEARN_PARTS
 * of the rho; where none of its cells stands above DP_UNIT_LEARN_TOPUP_Z sd, a second release
 * with DP_SCHEDULE_UNIT_SHAPE_TOPUP times that, from the marginal's share), and the noise is set
 * for the bounds learned (docs/PRIVACY.md, "Learning the rows-per-unit bound").
 */
#include "dpsynth.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/fmgroids.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "dp_accounting.h"
#include "dp_counts.h"
#include "dp_discovery.h"
#include "dp_sampler.h"
#include "dp_schedule.h"
#include "release_guard.h"
#include "synthesize.h"			/* marginal_read_once (synth_onescan.c) */

typedef struct CellCounter
{
	int			ncols;
	const int64 *strides;
	int64	   *counts;
} CellCounter;

/* counts[sum_j code_j * stride_j] += 1 per row */
static void
count_row(const dp_code *codes, void *arg)
{
	CellCounter *cc = arg;
	int64		idx = 0;

	for (int j = 0; j < cc->ncols; j++)
		idx += cc->strides[j] * codes[j];
	cc->counts[idx]++;
}

/*
 * A table with a privacy unit: the kept rows come a unit at a time (units.c), and each unit adds
 * at most max_cell of them to one cell; tally holds the current unit's cells and their counts.
 */
typedef struct UnitCellCounter
{
	CellCounter cc;
	const DpUnit *unit;			/* its max_cell: set by the scan where k is learned */
	int			ntally;
	int64	   *tally_cell;		/* max_rows entries */
	int		   *tally_count;
} UnitCellCounter;

static void
count_unit_row(const dp_code *codes, bool first, void *arg)
{
	UnitCellCounter *uc = arg;
	int64		idx = 0;
	int			t;

	if (first)
		uc->ntally = 0;
	for (int j = 0; j < uc->cc.ncols; j++)
		idx += uc->cc.strides[j] * codes[j];
	for (t = 0; t < uc->ntally; t++)
		if (uc->tally_cell[t] == idx)
			break;
	if (t == uc->ntally)
	{
		uc->tally_cell[t] = idx;
		uc->tally_count[t] = 0;
		uc->ntally++;
	}
	if (uc->tally_count[t] < uc->unit->max_cell)
	{
		uc->tally_count[t]++;
		uc->cc.counts[idx]++;
	}
}

/*
 * The domains a first call learns (discover.c): where it can, one scan counts discovery's rows and
 * keeps them, encoded once the bins are released (synth_onescan.c: SYNTH_READ_ONCE, the rows in
 * kept); else discovery's own scan, the marginal's to follow.  *colsp: the columns loaded again.
 */
static SynthReadOnce
learn_domains(Relation rel, ArrayType *names, DpColumn **colsp, int ncols, const dp_plan *plan,
			  int64 ledger_id, DpUnit *unit, dp_codes *kept)
{
	SynthReadOnce once = marginal_read_once(rel, names, colsp, ncols, plan, ledger_id, unit, kept);

	if (once == SYNTH_READ_TWICE)
		*colsp = dpsynth_discover(rel, names, *colsp, ncols, plan, ledger_id, false, unit);
	return once;
}

/*
 * The cells of the rows the one scan kept, encoded under the learned bins (no privacy unit, no
 * foreign partition there: refused before the charge where a column is learned); kept is freed.
 */
static void
count_kept(dp_codes *kept, const DpColumn *cols, int ncols, int64 *counts)
{
	uint32	   *sel = palloc(sizeof(uint32) * Max(ncols, 1)),
			   *ncodes = palloc(sizeof(uint32) * Max(ncols, 1));

	for (int j = 0; j < ncols; j++)
	{
		sel[j] = (uint32) j;
		ncodes[j] = dp_domain_ncodes(&cols[j].domain);
	}
	dp_codes_count(kept, sel, (uint32) ncols, ncodes, counts);
	dp_codes_free(kept);
}

/* The released cells as rows (labels, noisy count): labels[j][c] is column j's label of code c. */
static void
put_cells(ReturnSetInfo *rsinfo, const DpColumn *cols, int ncols, const int64 *strides, int64 ncells,
		  const Datum *const *labels, const bool *const *label_nulls, const int64 *counts)
{
	Datum	   *elems = palloc(sizeof(Datum) * ncols);
	bool	   *enulls = palloc(sizeof(bool) * ncols);
	int			dims[1] = {ncols};
	int			lbs[1] = {1};

	for (int64 i = 0; i < ncells; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < ncols; j++)
		{
			dp_code		c = (dp_code) ((i / strides[j]) % dp_domain_ncodes(&cols[j].domain));

			elems[j] = labels[j][c];
			enulls[j] = label_nulls[j][c];
		}
		values[0] = PointerGetDatum(construct_md_array(elems, enulls, 1, dims, lbs,
													   TEXTOID, -1, false, TYPALIGN_INT));
		values[1] = Int64GetDatum(counts[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

PG_FUNCTION_INFO_V1(dpsynth_marginal);
Datum
dpsynth_marginal(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	ArrayType  *names;
	double		epsilon;
	int64		rho_units;
	double		delta;
	Relation	rel;
	DpColumn   *cols;
	int			ncols;
	int64	   *strides;
	volatile int64 ncells = 1;	/* assigned in the guarded region (release_guard.h) */
	int64	   *counts;
	dp_dgauss	noise;
	int64		ledger_id;
	dp_plan		plan;
	Datum	  **labels;
	bool	  **label_nulls;
	char	   *columns_literal;
	List	   *foreign;
	DpUnit		unit;
	volatile SynthReadOnce once = SYNTH_READ_TWICE;	/* assigned in the guarded region */
	dp_codes	kept;
	double		discovery_sigma2;
	dp_dgauss	learn_noise;
	dp_dgauss	topup_noise;
	int64		units_learn = 0;
	int64		units_topup = 0;
	double		unit_sigma2;
	volatile double topup_sigma2 = 0;	/* read after the guard's setjmp (release_guard.h) */

	/* ---- validate arguments ---- */
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be NULL")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("columns must not be NULL")));
	relid = PG_GETARG_OID(0);
	names = PG_GETARG_ARRAYTYPE_P(1);
	epsilon = dpsynth_check_epsilon(fcinfo, 2);

	rel = dpsynth_open_source(relid, true);
	dpsynth_check_release_privilege(relid, "dp_marginal");
	rho_units = dpsynth_rho_for_call(relid, epsilon, &delta);
	dpsynth_domains_by_name(relid);
	cols = dpsynth_load_columns(relid, names, &ncols);

	/*
	 * The plan (dp_plan.h): columns without a public domain are learned first, with
	 * DP_PLAN_DISCOVERY_SHARE of the call's rho; the marginal's size must be known before the
	 * charge, so discovered text columns keep at most as many values as keep any outcome under
	 * the cell limit.
	 */
	dpsynth_plan_call(relid, DP_CALL_MARGINAL, rho_units, epsilon, cols, ncols, &plan);
	unit_sigma2 = plan.release_sigma2;
	/* a table with a privacy unit (units.c): the noise for the bounded unit; what cannot be bounded is refused */
	dpsynth_unit_load(relid, &unit);
	/* discovery per unit: its noise and threshold for one unit, checked before the charge */
	discovery_sigma2 = dpsynth_unit_discovery_sigma2(&unit, relid, cols, ncols, &plan, epsilon);
	/*
	 * k learned (units.c): 1 / DPSYNTH_UNIT_LEARN_PARTS of the release's rho releases the units'
	 * row counts, and the marginal's noise, per unit of squared sensitivity, comes from the rest;
	 * checked here at the ceiling, the largest sensitivity k can take (the smallest, 1, gives
	 * release_sigma2 or more, which the plan checked).
	 */
	units_learn = dpsynth_unit_learn_share(&unit, relid, plan.units_release, epsilon, &learn_noise);
	if (unit.learn_k)
	{
		unit_sigma2 = dp_gaussian_sigma2(dpsynth_units_rho(plan.units_release - units_learn), 1.0);
		/* k weighs the rows it drops against the marginal's noise: every cell's sd at sensitivity 1 */
		unit.learn_noise_l1 = sqrt(2.0 / M_PI) * sqrt(unit_sigma2);
		for (int j = 0; j < ncols; j++)
			unit.learn_noise_l1 *= dpsynth_unit_column_cells(&cols[j]);
		/* ... at the marginal's sensitivity, which the cell bound lowers */
		unit.learn_cell = unit.declared_cell;

		/*
		 * The histogram's second release, where its first has no cell above DP_UNIT_LEARN_TOPUP_Z sd
		 * (units.c's learn_k): DP_SCHEDULE_UNIT_SHAPE_TOPUP times its units, from the marginal's
		 * (dp_schedule_unit_topup), offered only where the marginal keeps a unit after it and both
		 * noises are drawable at the ceiling (public numbers), so taking it cannot fail after the
		 * charge.  The weighing above reads the marginal's noise without it, as dp_synthesize's.
		 */
		units_topup = dp_schedule_unit_topup(plan.units_release - units_learn, units_learn);
		if (units_topup > 0)
		{
			topup_sigma2 = dp_gaussian_sigma2(dpsynth_units_rho(plan.units_release - units_learn - units_topup), 1.0);
			if (dp_dgauss_init(&topup_noise, 1.0 / (2.0 * dpsynth_units_rho(units_topup))) == 0 &&
				dp_dgauss_init(&noise, dpsynth_unit_sigma2(&unit, topup_sigma2, true)) == 0)
				unit.learn_topup_noise = &topup_noise;
			else
				units_topup = 0;
		}
	}
	if (dp_dgauss_init(&noise, dpsynth_unit_sigma2(&unit, unit_sigma2, true)) != 0)
	{
		if (unit.on)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %s is too small for the bounds of the privacy unit of table \"%s\"",
							float8out_internal(epsilon), get_rel_name(relid)),
					 errdetail("The noise it needs is beyond the sampler's range. Nothing was charged.")));
		elog(ERROR, "dpsynth: the planned noise is out of range");	/* the plan checked it */
	}
	/* partitions on other servers: counted there (foreign.c), checked now */
	foreign = dpsynth_foreign_leaves(rel);
	if (foreign != NIL)
		dpsynth_unit_refuse(&unit, relid, "counting partitions on other servers",
							"A foreign partition is counted on its server, where the rows of a unit cannot be bounded.");
	if (foreign != NIL)
		dpsynth_foreign_check(rel, foreign, cols, ncols);

	/* ---- charge: committed before any row is read or any noise drawn ---- */
	columns_literal = OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(names));
	ledger_id = dpsynth_charge(relid, "dp_marginal", columns_literal, epsilon, delta,
							   plan.units_charged, plan.delta_charged,
							   psprintf("{\"sigma2\": %s, \"discovered_columns\": %d, "
										"\"rho_units_per_discovery\": " INT64_FORMAT ", \"delta_per_selection\": %.17g%s}",
										unit.learn_k ?
										psprintf("null, \"sigma2_per_sensitivity2\": %.17g, \"rho_units_rows_per_unit\": " INT64_FORMAT
												 ", \"rho_units_rows_per_unit_topup\": " INT64_FORMAT "%s",
												 unit_sigma2, units_learn, units_topup,
												 units_topup > 0 ?
												 psprintf(", \"sigma2_per_sensitivity2_topped_up\": %.17g", topup_sigma2) : "") :
										psprintf("%.17g", dp_dgauss_sigma2(&noise)), plan.ndiscover, plan.units_each, plan.delta_each,
										foreign != NIL ? psprintf(", \"foreign_partitions\": %d", list_length(foreign)) :
										psprintf("%s%s", dpsynth_unit_json(&unit, true),
												 dpsynth_unit_discovery_json(&unit, discovery_sigma2))));

	/* ---- from here on, nothing may fail or speak depending on the data ---- */
	/* an error still raised goes to the server log only (release_guard.h) */
	DPSYNTH_AFTER_CHARGE("dp_marginal", ledger_id);
	if (plan.ndiscover > 0)
		once = learn_domains(rel, names, &cols, ncols, &plan, ledger_id, &unit, &kept);

	strides = palloc(sizeof(int64) * ncols);
	for (int j = ncols - 1; j >= 0; j--)
	{
		strides[j] = ncells;
		ncells *= dp_domain_ncodes(&cols[j].domain);
	}
	Assert(ncells <= DP_PLAN_MAX_MARGINAL_CELLS);

	InitMaterializedSRF(fcinfo, 0);
	counts = palloc0(sizeof(int64) * ncells);

	/* Labels are public: they come from the domains. */
	labels = palloc(sizeof(Datum *) * ncols);
	label_nulls = palloc(sizeof(bool *) * ncols);
	for (int j = 0; j < ncols; j++)
	{
		uint32		n = dp_domain_ncodes(&cols[j].domain);

		labels[j] = palloc(sizeof(Datum) * n);
		label_nulls[j] = palloc(sizeof(bool) * n);
		for (uint32 c = 0; c < n; c++)
			labels[j][c] = dpsynth_code_label(&cols[j], (dp_code) c, &label_nulls[j][c]);
	}

	if (once == SYNTH_READ_ONCE)
		count_kept(&kept, cols, ncols, counts);
	else if (unit.on)
	{
		UnitCellCounter uc = {{ncols, strides, counts}, &unit, 0,
			palloc(sizeof(int64) * unit.max_rows), palloc(sizeof(int) * unit.max_rows)};

		dpsynth_scan_unit_codes(rel, cols, ncols, &unit, count_unit_row, &uc, NULL);
		/* k learned by the scan: the noise for its bounds, from what the histogram's second
		 * release left where it was drawn, in range (both checked before the charge) */
		if (unit.learn_k && unit.learn_topped_up)
			unit_sigma2 = topup_sigma2;
		if (unit.learn_k && dp_dgauss_init(&noise, dpsynth_unit_sigma2(&unit, unit_sigma2, true)) != 0)
			dpsynth_noise_refused();
	}
	else
	{
		CellCounter cc = {ncols, strides, counts};

		dpsynth_scan_codes(rel, cols, ncols, count_row, &cc);
	}
	dpsynth_foreign_count(rel, foreign, cols, ncols, counts);
	if (dp_noise_counts(&noise, counts, counts, ncells) != 0)
		dpsynth_noise_refused();

	put_cells(rsinfo, cols, ncols, strides, ncells, (const Datum *const *) labels,
			  (const bool *const *) label_nulls, counts);

	table_close(rel, NoLock);	/* keep the lock until the end of the transaction */
	dpsynth_complete(ledger_id);
	DPSYNTH_AFTER_CHARGE_END();
	return (Datum) 0;
}
