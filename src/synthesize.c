/*
 * synthesize.c - dp_synthesize(source, epsilon, ...): a differentially private synthetic copy of a
 * protected table, made inside the server by the adaptive method (src/core/dp_adaptive.c, the
 * default) or PrivSyn (src/core/dp_privsyn.c); and
 * dp_sample(model, ...): another synthetic table drawn from a stored model, at no privacy cost.
 *
 * Order of work (PRIVACY.md):
 *   1. validate every argument, check privileges, plan the columns, load their domains, check that
 *      the target can be created: all before anything is charged or read;
 *   2. charge the whole call once (discovery share + the method's rho), committed by the worker;
 *   3. learn undeclared domains if needed (discover.c), then one scan builds the encoded table
 *      (where the call learns quantile bins of integer columns, one scan does both:
 *      synth_onescan.c);
 *   4. the method: adaptive (noisy one-way marginals, rounds of exponential-mechanism selection and
 *      Gaussian measurement, consistency, GUM) or PrivSyn (noisy one-way marginals, InDif,
 *      DenseMarg, Combine, publication, consistency, GUM);
 *   5. create the target table as the caller, decode and insert the rows, record provenance;
 *   6. store the released model (model.c) for dp_sample and dp_model_json.
 * From step 3 on nothing fails or speaks in a way that depends on the data: the synthetic rows
 * and everything after them are post-processing of released values.
 *
 * Privacy arithmetic of one call: the call's privacy plan (src/core/dp_plan.h, dp_plan_make):
 *   charged = units_each * k + units_release, units_each = floor(10% * units / k) for the k
 *   columns that need discovery (discover.c), and the method's released quantities adding up to
 *   exactly dp_units_rho(units_release) (dp_privsyn.h, dp_adaptive.h): the call is rho-zCDP with
 *   rho <= charged * 1e-12, plus delta_each per text column discovered (approximate, see
 *   dp_discovery.h).  Every one of those releases, with its rho and mechanism, is the call's
 *   schedule (src/core/dp_schedule.h, dp_schedule_make, plan_schedule below), which the charge,
 *   the rows-per-unit histogram and the method's rho are taken from, and which the stored model
 *   lists beside what the call spent.
 */
#include "synthesize.h"
#include "release_guard.h"

#include "dp_counts.h"
#include "dp_sampler.h"
#include "dp_units.h"

#include "access/heapam.h"
#include "funcapi.h"
#include "tcop/tcopprot.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

/* one row of the encoded table (dp_code is the core's uint16 code) */
static void
append_row(const dp_code *codes, void *arg)
{
	if (dp_codes_append((dp_codes *) arg, codes) != 0)
		elog(ERROR, "out of memory");
}

/* one kept row of a table with a privacy unit (units.c): the unit's rows do not enter the marginals */
static void
append_unit_row(const dp_code *codes, bool first, void *arg)
{
	(void) first;
	append_row(codes, arg);
}

/*
 * The method argument: NULL is the default.  Validated before anything is charged or read.
 */
static const char *
check_method(FunctionCallInfo fcinfo, int argno)
{
	char	   *m;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))	/* an older SQL definition has no such argument */
		return DPSYNTH_DEFAULT_METHOD;
	m = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (pg_strcasecmp(m, "privsyn") == 0)
		return "privsyn";
	if (pg_strcasecmp(m, "adaptive") == 0)
		return "adaptive";
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown synthesis method \"%s\"", m),
			 errhint("The methods are 'adaptive' (the default) and 'privsyn'.")));
	return NULL;				/* not reached */
}

int64
synth_check_rows(FunctionCallInfo fcinfo, int argno)
{
	int64		rows = PG_GETARG_INT64(argno);

	if (rows < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rows must not be negative, not " INT64_FORMAT, rows)));
	if (rows > dpsynth_max_sample_rows)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("rows must be at most %d (dpsynth.max_sample_rows), not " INT64_FORMAT,
						dpsynth_max_sample_rows, rows),
				 errhint("A superuser may raise dpsynth.max_sample_rows; the table is built in memory.")));
	return rows;
}

static Datum
numeric_from_units(int64 units)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf(INT64_FORMAT "e-12", units)),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* One dp_synthesize call: its arguments, its plan (fixed before the charge) and its release. */
typedef struct SynthCall
{
	/* arguments */
	Oid			relid;
	double		epsilon;
	double		delta;
	int64		rows;			/* 0: the consistent noisy total */
	ArrayType  *only;			/* columns => ..., or NULL */
	bool		verbose;
	const char *method;
	bool		adaptive;
	ArrayType  *focus_arg;		/* focus => ..., or NULL */
	uint8	   *focus;			/* per synthesized column: in focus (NULL: no focus) */
	char	   *focus_json;		/* the focus columns for the ledger, as a JSON array */
	char	   *label;			/* "dp_synthesize(people)", for messages */
	/* the plan: public facts only */
	Relation	rel;
	int64		units;			/* the call's rho units */
	OutColumn  *out;
	int			nout;
	ArrayType  *synth_names;
	DpColumn   *cols;
	int			ncols;
	uint32	   *sizes;
	uint32	   *ordered;		/* per column: its ordered codes (bins), 0 for categories */
	/* the one-way cells this call's discovery released (discovery_prior), for the method */
	dp_oneway_prior prior;
	bool		has_prior;
	List	   *foreign;		/* partitions on other servers, counted there (foreign.c) */
	DpColumnSet *sets;			/* ... the marginals counted there: every pair (or the column) */
	int			nsets;
	dp_extra_counts extra;		/* ... their counts, for the adaptive method */
	dp_plan		plan;
	dp_schedule sched;			/* every release of the call (src/core/dp_schedule.h) */
	dp_spend	spend;			/* what it spent: the glue's releases, then the method's */
	List	   *checks;
	List	   *skipped_checks;
	char	   *target;
	Oid			nspid;
	/* the release */
	int64		ledger_id;
	dp_privsyn_result res;
	dp_adaptive_stats astats;
	/* a table with a privacy unit (units.c, docs/PRIVACY.md "Privacy per unit") */
	DpUnit		unit;
	int64		units_shape;	/* rho units of the rows-per-unit histogram (the schedule's) */
	double		discovery_sigma2;	/* noise of its discoveries' histograms of rows, sensitivity k */
	dp_dgauss	shape_noise;
	dp_dgauss	topup_noise;	/* k learned: the histogram's second release (DP_SCHEDULE_UNIT_SHAPE_TOPUP) */
	double	   *unit_hist;		/* released: noisy numbers of units keeping 1..k rows ([0] unused) */
	double		t_start;
	double		t_scan;
} SynthCall;

/*
 * The arguments dp_synthesize and dp_synthesize_plan share, at their positions: source and
 * epsilon (0, 1), rows (dp_synthesize only: rows_arg -1 otherwise), columns, method and focus
 * (absent in an older SQL definition: focus_arg beyond PG_NARGS()), validated in that order.
 */
static void
read_common_arguments(FunctionCallInfo fcinfo, SynthCall *c, int rows_arg, int columns_arg, int method_arg,
					  int focus_arg)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("source table must not be NULL")));
	c->relid = PG_GETARG_OID(0);
	c->epsilon = dpsynth_check_epsilon(fcinfo, 1);
	if (rows_arg >= 0 && !PG_ARGISNULL(rows_arg))
		c->rows = synth_check_rows(fcinfo, rows_arg);
	if (!PG_ARGISNULL(columns_arg))
	{
		c->only = PG_GETARG_ARRAYTYPE_P(columns_arg);
		if (ARR_NDIM(c->only) > 1)
			ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("columns must be a one-dimensional array")));
	}
	c->method = check_method(fcinfo, method_arg);
	c->adaptive = strcmp(c->method, "adaptive") == 0;
	if (PG_NARGS() > focus_arg && !PG_ARGISNULL(focus_arg))
	{
		c->focus_arg = PG_GETARG_ARRAYTYPE_P(focus_arg);
		if (ARR_NDIM(c->focus_arg) > 1)
			ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("focus must be a one-dimensional array")));
		if (!c->adaptive)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("focus is available with the adaptive method only"),
					 errdetail("The privsyn method measures the marginals its own selection picks."),
					 errhint("Call with method => 'adaptive' (the default), or without focus.")));
	}
}

/* Step 1a: the arguments, each validated; nothing is read yet. */
static void
read_arguments(FunctionCallInfo fcinfo, SynthCall *c)
{
	read_common_arguments(fcinfo, c, 4, 5, 7, 8);
	c->verbose = !PG_ARGISNULL(6) && PG_GETARG_BOOL(6);
}

/*
 * The focus => columns, as flags over the synthesized columns (public: the caller's choice).
 * Every name must be a column this call synthesizes.
 */
static void
plan_focus(SynthCall *c)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	StringInfoData js;

	if (!c->focus_arg)
		return;
	deconstruct_array(c->focus_arg, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	c->focus = palloc0(sizeof(uint8) * Max(c->ncols, 1));
	initStringInfo(&js);
	appendStringInfoChar(&js, '[');
	for (int i = 0; i < n; i++)
	{
		char	   *name;
		int			j;

		if (nulls[i])
			ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("focus column names must not be NULL")));
		name = TextDatumGetCString(elems[i]);
		for (j = 0; j < c->ncols; j++)
			if (strcmp(c->cols[j].name, name) == 0)
				break;
		if (j == c->ncols)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("focus column \"%s\" is not a column this call synthesizes", name),
					 errhint("Name columns of the table that columns => (or the column policies) leave in the synthesis.")));
		if (!c->focus[j])
		{
			if (js.len > 1)
				appendStringInfoString(&js, ", ");
			escape_json(&js, name);
		}
		c->focus[j] = 1;
	}
	appendStringInfoChar(&js, ']');
	c->focus_json = js.data;
}

/*
 * A table with partitions on other servers (docs/DISTRIBUTED.md): the adaptive method reads
 * only counts, so each foreign partition counts every pair of columns (the column itself when it
 * is the only one) on its own server, in one scan per DP_FOREIGN_SETS_PER_SCAN pairs (foreign.c,
 * the checks and statements of dp_marginal), and the core adds them to the local rows' counts
 * (dp_privsyn_params.extra).  Everything foreign.c refuses is checked here, before the charge.
 * The PrivSyn method reads every row: refused.
 */
static void
plan_foreign(SynthCall *c)
{
	int			d = c->ncols,
				k = 0;
	int64		cells = 0;
	int		   *idx;

	c->foreign = dpsynth_foreign_leaves(c->rel);
	if (c->foreign == NIL)
		return;
	if (!c->adaptive && dpsynth_citus_counted(c->relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" is a Citus table, and the privsyn method counts marginals chosen after the charge",
						get_rel_name(c->relid)),
				 errdetail("PrivSyn counts the marginals it selects from noisy scores, over the rows, after the charge; dpsynth counts a Citus table on its shards only in statements it checked before the charge, as the adaptive method's one count of every pair. Nothing was charged."),
				 errhint("Call with method => 'adaptive' (the default).")));
	if (!c->adaptive)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" has a partition on another server, and the privsyn method reads every row",
						get_rel_name(c->relid)),
				 errdetail("The adaptive method counts a foreign partition on its server. Nothing was charged."),
				 errhint("Call with method => 'adaptive' (the default).")));
	c->nsets = d == 1 ? 1 : d * (d - 1) / 2;
	c->sets = palloc(sizeof(DpColumnSet) * c->nsets);
	idx = palloc(sizeof(int) * 2 * c->nsets);
	if (d == 1)
	{
		idx[0] = 0;
		c->sets[0] = (DpColumnSet) {1, idx};
	}
	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++, k++)
		{
			idx[2 * k] = a;
			idx[2 * k + 1] = b;
			c->sets[k] = (DpColumnSet) {2, idx + 2 * k};
			cells += (int64) dp_domain_ncodes(&c->cols[a].domain) * dp_domain_ncodes(&c->cols[b].domain);
		}
	if (cells > DP_ADAPTIVE_MAX_TOTAL)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the pairs of columns of table \"%s\" have more than %u cells together, too many to count on its servers",
						get_rel_name(c->relid), (unsigned) DP_ADAPTIVE_MAX_TOTAL),
				 errdetail("Table \"%s\" has a foreign partition. Nothing was charged.", get_rel_name(c->relid)),
				 errhint("Synthesize fewer columns (columns => ...), or declare coarser domains.")));
	dpsynth_foreign_check_sets(c->rel, c->foreign, c->cols, d, c->sets, c->nsets);
}

/*
 * Step 3b: the foreign partitions' counts over the original codes, every set of plan_foreign at
 * once; the one-way counts are the margins of the pairs (column b's of (0, b), column 0's of
 * (0, 1)).  Exact counts: the core adds them to the local rows' before any noise.
 */
static void
count_foreign(SynthCall *c, SynthProgress *pr)
{
	int			d = c->ncols;
	uint64	  **one = palloc0(sizeof(uint64 *) * d);
	int64	  **sets = palloc(sizeof(int64 *) * c->nsets);

	synth_report(pr, "counting the partitions on other servers", 0);
	for (int j = 0; j < d; j++)
		one[j] = palloc0(sizeof(uint64) * c->sizes[j]);
	for (int k = 0; k < c->nsets; k++)
		sets[k] = d == 1 ? (int64 *) one[0] :
			palloc0(sizeof(int64) * c->sizes[c->sets[k].idx[0]] * c->sizes[c->sets[k].idx[1]]);
	dpsynth_foreign_count_sets(c->rel, c->foreign, c->cols, c->sets, c->nsets, sets);
	for (int b = 1; b < d; b++)
	{
		const int64 *x = sets[b - 1];	/* the pair (0, b) */

		for (uint32 ca = 0; ca < c->sizes[0]; ca++)
			for (uint32 cb = 0; cb < c->sizes[b]; cb++)
			{
				one[b][cb] += (uint64) x[(int64) ca * c->sizes[b] + cb];
				if (b == 1)
					one[0][ca] += (uint64) x[(int64) ca * c->sizes[b] + cb];
			}
	}
	c->extra.oneway = (const uint64_t *const *) one;
	c->extra.pair = d > 1 ? (const uint64_t *const *) sets : NULL;
	c->extra.nrows = 0;
	for (uint32 v = 0; v < c->sizes[0]; v++)
		c->extra.nrows += one[0][v];
}

/*
 * The call's privacy schedule (src/core/dp_schedule.h), from its plan and public facts: every
 * release it will make, summing to the charge.  A table with a privacy unit: the release's rho is
 * split between the rows-per-unit histogram (one unit is in one cell: sensitivity 1) and the
 * method, which runs on the bounded table at its rho / k^2 (run_method): a unit changes at most k
 * rows of the bounded table, and a rho'-zCDP mechanism is k^2 rho'-zCDP for groups of k rows.
 * Where k is learned, the histogram is of the row counts up to DP_UNIT_LEARN_MAX, k is learned
 * from it, and the method runs at rho / k^2 of that k (post-processing picks it).
 */
static bool
plan_schedule(SynthCall *c)
{
	dp_schedule_input in;
	const dp_release *shape;

	memset(&in, 0, sizeof(in));
	in.call = c->adaptive ? DP_CALL_ADAPTIVE : DP_CALL_PRIVSYN;
	in.plan = &c->plan;
	in.d = (uint32) c->ncols;
	in.focus = c->focus != NULL;
	/* the histogram's cells: the ceiling where k is learned */
	in.unit_rows = !c->unit.on ? 0 : c->unit.learn_k ? DP_UNIT_LEARN_MAX : (uint32) c->unit.max_rows;
	in.unit_sens2 = dpsynth_unit_sensitivity2(&c->unit, false);
	/* k learned with discovery: the histogram is released first, by discovery's scan */
	in.unit_rows_first = c->unit.learn_k && c->plan.ndiscover > 0;
	/* ... and released a second time, from the method's units, where the first had no cell above
	 * DP_UNIT_LEARN_TOPUP_Z sd (units.c's learn_k) */
	in.unit_rows_topup = c->unit.learn_k && c->unit.learn_topped_up;
	if (dp_schedule_make(&in, &c->sched) != 0)
		return false;
	if (c->sched.units_charged != c->plan.units_charged)
		elog(ERROR, "the privacy schedule of dp_synthesize does not add up to the plan's charge");
	shape = dp_schedule_find(&c->sched, DP_RELEASE_ROWS_PER_UNIT);
	c->units_shape = shape ? shape->units : 0;
	return true;
}

/*
 * Where k is learned, the noise it weighs against the rows it drops: the one-way marginals' (every
 * column's, the synthetic table's first measurements), expected L1 norm at sensitivity 1 per
 * column, sqrt(2 / pi) cells sd, averaged over the columns.  Public: the schedule's share and the
 * columns' cells (quantile bins still to learn counted as planned).
 */
static double
oneway_noise_l1(const SynthCall *c)
{
	double		rho = dp_schedule_rho(&c->sched, DP_RELEASE_ONEWAY) * (double) c->sched.unit_sens2,
				cells = 0;

	if (!(rho > 0) || c->ncols < 1)
		return 0;
	for (int j = 0; j < c->ncols; j++)
		cells += dpsynth_unit_column_cells(&c->cols[j]);
	return sqrt(2.0 / M_PI) * sqrt((double) c->ncols / (2.0 * rho)) * cells / c->ncols;
}

/*
 * A table with a privacy unit: what cannot be bounded is refused (foreign partitions), discovery's
 * noise checked, and the rows-per-unit histogram's share must buy noise the sampler can draw.
 */
static void
plan_unit(SynthCall *c)
{
	bool		planned = plan_schedule(c);

	if (!c->unit.on)
	{
		if (!planned)
			elog(ERROR, "could not plan the privacy schedule of dp_synthesize");
		return;
	}
	/* discovery per unit: its noise and threshold for one unit, checked before the charge */
	c->discovery_sigma2 = dpsynth_unit_discovery_sigma2(&c->unit, c->relid, c->cols, c->ncols, &c->plan,
														 c->epsilon);
	if (dpsynth_foreign_leaves(c->rel) != NIL)
		dpsynth_unit_refuse(&c->unit, c->relid, "counting partitions on other servers",
							"A foreign partition is counted on its server, where the rows of a unit cannot be bounded.");
	if (!planned ||
		dp_dgauss_init(&c->shape_noise, 1.0 / (2.0 * dpsynth_units_rho(c->units_shape))) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s is too small for a synthetic copy of table \"%s\" per unit",
						float8out_internal(c->epsilon), get_rel_name(c->relid)),
				 errdetail("The rows-per-unit histogram's share of it is beyond the sampler's range. Nothing was charged.")));
	/* k learned (units.c): the same released histogram, of the row counts up to the ceiling, learns it */
	if (c->unit.learn_k)
	{
		c->unit.learn_noise = &c->shape_noise;
		/* the second release, where the first has no cell above DP_UNIT_LEARN_TOPUP_Z sd: the schedule's units
		 * for it (0 where the method could not spare them), at a noise the sampler can draw */
		c->unit.learn_topup_noise = NULL;
		if (c->sched.units_topup > 0 &&
			dp_dgauss_init(&c->topup_noise, 1.0 / (2.0 * dpsynth_units_rho(c->sched.units_topup))) == 0)
			c->unit.learn_topup_noise = &c->topup_noise;
		c->unit.learn_noise_l1 = oneway_noise_l1(c);
		/* ... at sensitivity k: the method's noise ignores the cell bound (dpsynth_unit_sensitivity2
		 * per row, not per cell) */
		c->unit.learn_cell = 0;
	}
}

/*
 * Step 1b: the source, the caller's privilege, the call's rho (at the table's delta, or at the
 * delta => given, argument 2), the columns and their domains, the privacy plan and schedule.
 * Everything here that can refuse the call refuses before the charge.
 */
static void
plan_release(FunctionCallInfo fcinfo, SynthCall *c)
{
	c->rel = dpsynth_open_source(c->relid, true);
	dpsynth_check_release_privilege(c->relid, "dp_synthesize");
	c->units = dpsynth_rho_for_call(c->relid, c->epsilon, &c->delta);
	if (!PG_ARGISNULL(2))
	{
		c->delta = PG_GETARG_FLOAT8(2);
		dpsynth_check_delta(c->delta);
		c->units = dpsynth_rho_units(c->epsilon, c->delta);
		if (c->units < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %s cannot be converted to zCDP at delta %s", float8out_internal(c->epsilon),
							float8out_internal(c->delta)),
					 errhint("rho(epsilon, delta) must be at least 1e-12.")));
	}
	c->label = psprintf("dp_synthesize(%s)", get_rel_name(c->relid));
	dpsynth_unit_load(c->relid, &c->unit);
	/* once for the call: the policies, then the domains are read by name */
	dpsynth_domains_by_name(c->relid);
	c->out = synth_plan_columns(c->relid, c->only, c->label, &c->nout, &c->synth_names,
								c->unit.on ? c->unit.attnum : InvalidAttrNumber);
	if (c->unit.on)
		(void) synth_mark_unit_constant(c->out, c->nout, c->unit.constant, c->unit.nconstant);
	c->cols = dpsynth_load_columns(c->relid, c->synth_names, &c->ncols);
	plan_focus(c);
	dpsynth_plan_call(c->relid, c->adaptive ? DP_CALL_ADAPTIVE : DP_CALL_PRIVSYN, c->units, c->epsilon,
					  c->cols, c->ncols, &c->plan);
	c->sizes = palloc(sizeof(uint32) * c->ncols);
	c->ordered = palloc(sizeof(uint32) * c->ncols);
	synth_bind_columns(c->out, c->nout, c->cols, false);
	plan_unit(c);
}

/* Step 1c: the rest of what can refuse: foreign partitions, the constraints and the target. */
static void
plan_call(FunctionCallInfo fcinfo, SynthCall *c)
{
	plan_release(fcinfo, c);
	plan_foreign(c);
	c->checks = synth_read_checks(c->relid, c->label, &c->skipped_checks);
	synth_check_identifiers(c->out, c->nout, c->rows > 0 ? c->rows : dpsynth_max_sample_rows, c->rows > 0,
							c->label);
	c->target = synth_resolve_target(fcinfo, 3, psprintf("%s_synthetic", get_rel_name(c->relid)), "dp_synthesize",
									 &c->nspid);
}

/* Step 2: one charge for the whole call, committed by the charging worker. */
static void
charge_call(SynthCall *c)
{
	StringInfoData tj;

	initStringInfo(&tj);
	escape_json(&tj, c->target);
	c->ledger_id = dpsynth_charge(c->relid, "dp_synthesize",
								  OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(c->synth_names)),
								  c->epsilon, c->delta, c->sched.units_charged, c->plan.delta_charged,
								  psprintf("{\"target\": %s, \"rows\": " INT64_FORMAT ", \"method\": \"%s\", "
										   "%s%s%s"
										   "\"discovered_columns\": %d, \"rho_units_per_discovery\": " INT64_FORMAT ", "
										   "\"rho_units_pipeline\": " INT64_FORMAT "%s}",
										   tj.data, c->rows, c->method,
										   c->focus_json ? "\"focus\": " : "", c->focus_json ? c->focus_json : "",
										   c->focus_json ? ", " : "",
										   c->plan.ndiscover, c->plan.units_each,
										   c->plan.units_release,
										   c->foreign != NIL ?
										   psprintf(", \"foreign_partitions\": %d", list_length(c->foreign)) :
										   c->unit.on ?
										   psprintf("%s, \"rho_units_rows_per_unit\": " INT64_FORMAT "%s",
													dpsynth_unit_json(&c->unit, false), c->units_shape,
													dpsynth_unit_discovery_json(&c->unit, c->discovery_sigma2)) : ""));
}

/*
 * The one-way cells that this call's discovery released, for the method to combine with its own
 * one-way marginals (dp_oneway_prior): each learned bin's released count and its variance, where
 * the bin is a union of the released histogram's atoms (bin_prior in discover_bins.c), on a table
 * without a privacy unit or foreign partitions.  The NULL cell, and a bin of a domain whose bins
 * are not the learned ones (declared points added), have none.  Post-processing of a release
 * this call charged (units_each a column), independent of the method's noise.
 */
static void
discovery_prior(SynthCall *c)
{
	double	  **est = palloc0(sizeof(double *) * c->ncols),
			  **var = palloc0(sizeof(double *) * c->ncols);

	c->has_prior = false;
	if (c->unit.on || c->foreign != NIL)
		return;
	for (int j = 0; j < c->ncols; j++)
	{
		const DpColumn *col = &c->cols[j];

		if (col->nprior <= 0 || (uint32) col->nprior != col->domain.nvalues ||
			(uint32) col->nprior > c->sizes[j])
			continue;
		est[j] = palloc0(sizeof(double) * c->sizes[j]);
		var[j] = palloc0(sizeof(double) * c->sizes[j]);
		memcpy(est[j], col->prior_est, sizeof(double) * col->nprior);
		memcpy(var[j], col->prior_var, sizeof(double) * col->nprior);
		c->has_prior = true;
	}
	c->prior.est = (const double *const *) est;
	c->prior.var = (const double *const *) var;
}

/*
 * Step 3: discovery as planned (discover.c), then one scan encodes the table; where the columns
 * learned allow it, the encoding scan counts discovery's rows too and encodes them once the bins
 * are released (synth_onescan.c), the same counts and rows in one read.
 */
static void
read_table(SynthCall *c, SynthProgress *pr, dp_codes *codes)
{
	SynthReadOnce once = SYNTH_READ_TWICE;

	if (c->plan.ndiscover > 0)
	{
		once = synth_read_once(c->rel, c->synth_names, &c->cols, c->ncols, &c->plan, c->ledger_id, &c->unit,
							   codes, pr);
		if (once == SYNTH_READ_TWICE)
		{
			synth_report(pr, "discovering domains", 0);
			c->cols = dpsynth_discover(c->rel, c->synth_names, c->cols, c->ncols, &c->plan, c->ledger_id, false,
									   &c->unit);
		}
		/* per unit: the noise discovery drew, at the k it bounded (learned there where k is learned) */
		if (c->unit.on)
			c->discovery_sigma2 = dpsynth_unit_rows_sigma2(&c->unit, &c->plan);
		/* discover.c spent units_each on each column it learned */
		dp_spend_record(&c->spend, DP_RELEASE_DISCOVERY, dpsynth_units_rho(c->plan.units_each) * c->plan.ndiscover,
						(uint32) c->plan.ndiscover);
		synth_bind_columns(c->out, c->nout, c->cols, true);
	}
	for (int j = 0; j < c->ncols; j++)
	{
		const dp_domain *dom = &c->cols[j].domain;

		c->sizes[j] = dp_domain_ncodes(dom);
		/* bins of a number, date or time are ordered (a public fact of the domain) */
		c->ordered[j] = dom->kind == DP_DOMAIN_CATEGORIES ? 0 : dom->nvalues;
	}
	if (c->plan.ndiscover > 0)
		discovery_prior(c);

	if (once == SYNTH_READ_ONCE)
	{
		/*
		 * Encoded by the one scan (c->unit is off there).  No foreign partition to count: a
		 * table with one refuses a column without a domain before the charge (foreign.c's
		 * dpsynth_foreign_check_sets), and the one scan runs only where a column is learned.
		 */
		Assert(c->foreign == NIL);
		c->t_scan = synth_now();
		return;
	}
	synth_report(pr, "reading the table", 0);
	if (dp_codes_init(codes, c->ncols, 1024) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("%s", dp_last_error())));
	if (c->unit.on)
	{
		int			k = c->unit.max_rows;	/* the ceiling where k is still to learn */
		int64	   *hist = palloc0(sizeof(int64) * (k + 1));

		dpsynth_scan_unit_codes(c->rel, c->cols, c->ncols, &c->unit, append_unit_row, codes, hist);
		/* the rows-per-unit histogram, released: one unit adds 1 to one cell (where k is learned,
		 * the release's first scan, discovery's or this one, released it and folded it at the k
		 * learned) */
		if (!c->unit.learn_k && dp_noise_counts(&c->shape_noise, hist + 1, hist + 1, k) != 0)
			dpsynth_noise_refused();
		/* its cells: the ceiling's where k is learned */
		dp_spend_record(&c->spend, DP_RELEASE_ROWS_PER_UNIT, dpsynth_units_rho(c->units_shape),
						(uint32) (c->unit.learn_k ? DP_UNIT_LEARN_MAX : k));
		if (c->unit.learn_topped_up)
			dp_spend_record(&c->spend, DP_RELEASE_ROWS_PER_UNIT, dpsynth_units_rho(c->sched.units_topup),
							(uint32) DP_UNIT_LEARN_MAX);
		k = c->unit.max_rows;
		/* k learned from the released histogram (post-processing): the schedule's units are the
		 * ones charged, and the method's rho is theirs per group of the learned k rows */
		if (c->unit.learn_k && !plan_schedule(c))
			elog(ERROR, "the privacy schedule of dp_synthesize could not be made for the learned bound");
		c->unit_hist = palloc0(sizeof(double) * (k + 1));
		for (int j = 1; j <= k; j++)
			c->unit_hist[j] = (double) hist[j];
		pfree(hist);
	}
	else
		dpsynth_scan_codes(c->rel, c->cols, c->ncols, append_row, codes);
	if (c->foreign != NIL)
		count_foreign(c, pr);
	c->t_scan = synth_now();
}

static void model_of(SynthCall *c, DpModel *model);
static char *copy_comment(SynthCall *c, const DpModel *model);

/*
 * Step 5 while step 4 still draws: a big table's final rows come in chunks (dp_gum_run_chunked),
 * each written as soon as it and the chunks before it are drawn, while helper threads still draw
 * later ones (synth_write_chunk); the same steps, draws and rows as write_copy after the method.
 * The model, complete once the rows are drawn, is taken at the first chunk.
 */
typedef struct StreamCopy
{
	SynthStreamCopy x;
	DpModel		model;
	SynthCall  *c;
} StreamCopy;

static void
stream_ready(SynthStreamCopy *x)
{
	StreamCopy *sc = (StreamCopy *) x;

	model_of(sc->c, &sc->model);
	x->m = &sc->model;
	x->comment = copy_comment(sc->c, &sc->model);
}

/* Step 4: the method, with the release's rho (src/core/dp_adaptive.c or dp_privsyn.c). */
static void
run_method(SynthCall *c, dp_codes *codes, dp_prng *rng, SynthProgress *pr, StreamCopy *sc)
{
	dp_privsyn_params params;
	int			rc;
	volatile int vrc = 0;

	dp_privsyn_default_params(&params);
	/* the schedule's: the release's units less the rows-per-unit histogram's, per group of k rows */
	params.rho = c->sched.rho_method;
	params.rows = (uint64) c->rows;
	params.max_rows = (uint64) dpsynth_max_sample_rows;
	params.progress = synth_pipeline_progress;
	params.progress_arg = pr;
	params.gum.progress = synth_pipeline_progress;
	params.gum.progress_arg = pr;
	/* a privacy unit's synthetic units need every row first (synth_write_table) */
	memset(sc, 0, sizeof(*sc));
	if (c->unit_hist == NULL)
	{
		sc->c = c;
		sc->x.ready = stream_ready;
		sc->x.rng = rng;
		sc->x.pr = pr;
		sc->x.nspid = c->nspid;
		sc->x.target = c->target;
		params.gum.chunk_sink = synth_write_chunk;
		params.gum.chunk_sink_arg = &sc->x;
	}
	params.focus = c->focus;
	params.ordered = c->ordered;
	/* the encoded table is dead once recoded and counted: the method takes it over */
	params.consume = codes;
	params.extra = c->foreign != NIL ? &c->extra : NULL;
	params.prior = c->has_prior ? &c->prior : NULL;
	dp_prng_seed_random(rng);
	/* an empty table is fine: its exact counts are zeros and the release is noise */
	PG_TRY();
	{
		if (c->adaptive)
			vrc = dp_adaptive_run(codes, c->sizes, &params, rng, &c->res, &c->astats);
		else
			vrc = dp_privsyn_run(codes, c->sizes, &params, rng, &c->res);
	}
	PG_FINALLY();
	{
		/* a cancel let in after the helpers' join unwinds past the draw: its stream is gone */
		synth_write_chunk_forget();
	}
	PG_END_TRY();
	rc = vrc;
	if (c->foreign != NIL)
	{
		/* the foreign partitions' counts are in the model now: up to 128 MB, not kept for the write */
		for (int j = 0; j < c->ncols; j++)
			pfree((void *) c->extra.oneway[j]);
		for (int k = 0; c->ncols > 1 && k < c->nsets; k++)
			pfree((void *) c->extra.pair[k]);
	}
	/* the method's releases beside the glue's (dp_spend_record adds; the method's kinds are its own) */
	for (int k = 0; rc == 0 && k < DP_RELEASE_NKINDS; k++)
		if (k != DP_RELEASE_DISCOVERY && k != DP_RELEASE_ROWS_PER_UNIT)
			dp_spend_record(&c->spend, (dp_release_kind) k, c->res.spend.rho[k], c->res.spend.n[k]);
	if (rc != 0)
		ereport(ERROR,
				(errcode(dpsynth_core_errcode()),
				 errmsg("could not synthesize a copy of table \"%s\"", get_rel_name(c->relid)),
				 errdetail("The %s method failed: %s.", c->adaptive ? "adaptive" : "PrivSyn", dp_last_error())));
	if (c->verbose && c->adaptive)
		ereport(NOTICE,
				(c->astats.focus_pairs > 0 ?
				 errmsg("%u pairs measured for focus, then %u rounds (%u anneals) over %u candidates and %u triples added in the rounds, %u marginals measured besides the one-way ones (%u triples)",
						c->astats.focus_pairs, c->astats.rounds, c->astats.anneals, c->astats.candidates,
						c->astats.triples, c->res.n_kway, c->astats.triples_measured) :
				 errmsg("%u rounds (%u anneals) over %u candidates and %u triples added in the rounds, %u marginals measured besides the one-way ones (%u triples)",
						c->astats.rounds, c->astats.anneals, c->astats.candidates, c->astats.triples,
						c->res.n_kway, c->astats.triples_measured),
				 errdetail("The rounds' schedule had %.0f selections (%.1f per column), for at most %u distinct marginals besides the one-way ones; %u selections measured a marginal again; the synthetic rows were drawn %s%s.",
						   c->astats.selections, c->astats.selections / c->res.n_oneway, c->astats.max_kway,
						   c->astats.remeasured,
						   c->astats.final_maxent && c->astats.final_tree_cells > 0 ?
						   "from the maximum-entropy distribution of the measured marginals, on a junction tree of " :
						   c->astats.final_maxent ?
						   "from the maximum-entropy distribution of the measured marginals (a joint domain of at most 2^20 cells)" :
						   c->astats.final_warm ?
						   "starting from the last round's estimate" :
						   c->astats.final_sub_margs > 0 ?
						   "starting from the maximum-entropy distribution of a sub-model of the measured marginals, " :
						   "from an independent start",
						   c->astats.final_maxent && c->astats.final_tree_cells > 0 ?
						   psprintf("%llu cells", (unsigned long long) c->astats.final_tree_cells) :
						   c->astats.final_sub_margs > 0 ?
						   psprintf("%u of %u marginals on a junction tree of %llu cells", c->astats.final_sub_margs,
									c->res.nmargs, (unsigned long long) c->astats.final_sub_cells) : ""),
				 errcontext("%s", c->label)));
}

/* The released model: public facts, domains and the method's released output. */
static void
model_of(SynthCall *c, DpModel *model)
{
	memset(model, 0, sizeof(*model));
	model->relname = get_rel_name(c->relid);
	model->method = c->adaptive ? DPSYNTH_METHOD_ADAPTIVE_LABEL : DPSYNTH_METHOD_PRIVSYN_LABEL;
	model->nout = c->nout;
	model->out = c->out;
	model->ncols = c->ncols;
	model->sizes = c->sizes;
	model->res = c->res;
	memset(&model->res.synth, 0, sizeof(model->res.synth));
	model->checks = c->checks;
	model->skipped_checks = c->skipped_checks;
	model->unit_hist = c->unit_hist;
	model->unit_k = c->unit.on ? c->unit.max_rows : 0;
	model->unit_discovery_sigma2 = c->unit.on && c->unit.discover_rows ? c->discovery_sigma2 : 0;
	model->unit_selection_sigma2 = c->unit.on && c->unit.discover_units && c->discovery_sigma2 > 0 ?
		dpsynth_unit_selection_sigma2(&c->unit, &c->plan) : 0;
	model->sched = &c->sched;
	model->spend = &c->spend;
}

/* The synthetic table's comment: its provenance. */
static char *
copy_comment(SynthCall *c, const DpModel *model)
{
	return psprintf("dpsynth synthetic copy of %s: %s, epsilon %s, delta %s, "
					"ledger row " INT64_FORMAT ", dpsynth " DPSYNTH_VERSION ", %s",
					get_rel_name(c->relid), model->method, float8out_internal(c->epsilon),
					float8out_internal(c->delta), c->ledger_id,
					timestamptz_to_str(GetCurrentTimestamp()));
}

/* Step 5: the synthetic table, written as the caller; returns the rows kept. */
static uint64
write_copy(SynthCall *c, DpModel *model, dp_prng *rng, SynthProgress *pr, Oid *target_relid)
{
	uint64		written = synth_write_table(model, &c->res.synth, rng, c->nspid, c->target,
											copy_comment(c, model), pr, target_relid);

	dp_codes_free(&c->res.synth);	/* written; the model needs the marginals only */
	return written;
}

/* Step 6: the released model, stored for dp_sample unless too large for one jsonb value; its id or 0. */
static int64
store_model(SynthCall *c, DpModel *model)
{
	uint64		cells = 0;

	for (uint32 k = 0; k < c->res.nmargs; k++)
		cells += c->res.margs[k].ncells;
	if (cells <= (uint64) dpsynth_max_model_cells)
		return dpsynth_model_store(c->relid, c->ledger_id, c->epsilon, c->delta, c->units, model, cells,
								   dpsynth_model_json(model));
	/* which marginals were published is released: this says nothing more */
	ereport(WARNING,
			(errmsg("the released model has " UINT64_FORMAT " cells, more than %d: it is not stored",
					cells, dpsynth_max_model_cells),
			 errdetail("The synthetic table is complete; dp_sample and dp_model_json cannot use this release.")));
	return 0;
}

/* Seconds per phase, as the result's jsonb. */
static Datum
timings(const SynthCall *c, double t_write)
{
	const double *sec = c->res.seconds;
	double		method = sec[DP_PHASE_ONEWAY] + sec[DP_PHASE_SELECT] + sec[DP_PHASE_PUBLISH] +
		sec[DP_PHASE_CONSIST] + sec[DP_PHASE_GUM];

	return DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
		"{\"read\": %.3f, \"one_way\": %.3f, \"select\": %.3f, \"publish\": %.3f, "
		"\"consistency\": %.3f, \"gum\": %.3f, \"write\": %.3f, \"total\": %.3f}",
		c->t_scan - c->t_start, sec[DP_PHASE_ONEWAY], sec[DP_PHASE_SELECT], sec[DP_PHASE_PUBLISH],
		sec[DP_PHASE_CONSIST], sec[DP_PHASE_GUM], t_write - c->t_scan - method, t_write - c->t_start)));
}

/*
 * dp_synthesize(source, epsilon, delta, target, rows, columns, verbose, method): the stages of
 * the file's header comment, one step each.
 */
PG_FUNCTION_INFO_V1(dpsynth_synthesize);
Datum
dpsynth_synthesize(PG_FUNCTION_ARGS)
{
	SynthCall	c;
	SynthProgress pr;
	dp_codes	codes;
	dp_prng		rng;
	DpModel		model;
	StreamCopy	sc;
	Oid			target_relid;
	uint64		written;
	int64		model_id;
	TupleDesc	tupdesc;
	Datum		result[9];
	bool		result_nulls[9] = {0};

	memset(&c, 0, sizeof(c));
	c.t_start = synth_now();
	read_arguments(fcinfo, &c);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	plan_call(fcinfo, &c);
	charge_call(&c);

	/* ---- from here on, nothing may fail or speak depending on the data ---- */
	/* an error still raised goes to the server log only (release_guard.h) */
	DPSYNTH_AFTER_CHARGE("dp_synthesize", c.ledger_id);
	synth_progress_init(&pr, c.label, c.verbose);
	read_table(&c, &pr, &codes);
	run_method(&c, &codes, &rng, &pr, &sc);
	dp_codes_free(&codes);
	model_of(&c, &model);
	if (sc.x.done)
	{
		/* written while the rows were drawn (synth_write_chunk) */
		written = sc.x.written;
		target_relid = sc.x.relid;
		dp_codes_free(&c.res.synth);
	}
	else
		written = write_copy(&c, &model, &rng, &pr, &target_relid);
	synth_report(&pr, "storing the model", 0);
	model_id = store_model(&c, &model);
	result_nulls[8] = model_id == 0;
	result[7] = timings(&c, synth_now());
	table_close(c.rel, NoLock);
	dpsynth_complete(c.ledger_id);
	DPSYNTH_AFTER_CHARGE_END();
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	result[0] = ObjectIdGetDatum(target_relid);
	result[1] = Int64GetDatum((int64) written);
	result[2] = Float8GetDatum(c.epsilon);
	result[3] = Float8GetDatum(c.delta);
	result[4] = numeric_from_units(c.units);
	result[5] = Int32GetDatum((int32) c.res.n_oneway);
	result[6] = Int32GetDatum((int32) c.res.n_kway);
	result[8] = Int64GetDatum(model_id);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), result, result_nulls)));
}

/*
 * dp_synthesize_plan(source, epsilon, delta, columns, method, focus): the privacy schedule a
 * dp_synthesize call with these arguments would follow, one row per release (the method's
 * releases, which share its units, after a row 'method' with them), charged nothing and reading
 * no row: the plan is a function of the arguments, the declarations and the catalog, checked as
 * dp_synthesize checks them before its charge (the same refusals, foreign partitions, the
 * constraints and the target aside).  The sum of rho_units is the charge dp_synthesize would make.
 */
static void
plan_row(ReturnSetInfo *rsinfo, const char *release, const char *mechanism, int64 units, bool has_units,
		 uint32 count, double rho, double rho_min, double rho_max)
{
	Datum		values[7];
	bool		nulls[7] = {false, mechanism == NULL, !has_units, false, false, false, false};

	values[0] = CStringGetTextDatum(release);
	values[1] = mechanism ? CStringGetTextDatum(mechanism) : (Datum) 0;
	values[2] = Int64GetDatum(units);
	values[3] = Int32GetDatum((int32) count);
	values[4] = Float8GetDatum(rho);
	values[5] = Float8GetDatum(rho_min);
	values[6] = Float8GetDatum(rho_max);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(dpsynth_synthesize_plan);
Datum
dpsynth_synthesize_plan(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SynthCall	c;
	const dp_schedule *s = &c.sched;

	memset(&c, 0, sizeof(c));
	read_common_arguments(fcinfo, &c, -1, 3, 4, 5);
	plan_release(fcinfo, &c);
	table_close(c.rel, NoLock);
	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < s->nrel; k++)
	{
		const dp_release *r = &s->rel[k];

		if (r->units == 0 && (k == 0 || s->rel[k - 1].units > 0))
			plan_row(rsinfo, "method", NULL, s->units_method, true, s->d, s->rho_method, s->rho_method,
					 s->rho_method);
		plan_row(rsinfo, dp_release_name(r->kind), dp_mechanism_name(r->mech), r->units, r->units > 0, r->count,
				 r->rho, r->rho_min, r->rho_max);
	}
	if (s->rho_unspent > 0)		/* PrivSyn on one column: no pair to score or publish */
		plan_row(rsinfo, "unspent", NULL, 0, false, 0, s->rho_unspent, s->rho_unspent, s->rho_unspent);
	return (Datum) 0;
}
