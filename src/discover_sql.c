/*
 * discover_sql.c - dp_discover(table, epsilon, columns): the SQL function that learns undeclared
 * domains as a charged release of its own (the mechanisms are discover.c's), and the columns it
 * learns by default.
 */
#include "dpsynth.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "dp_sampler.h"
#include "release_guard.h"

/*
 * The columns dp_discover learns by default: synthesized (not excluded, not identifiers, not the
 * privacy unit), of a type whose domain can be discovered (text: categories; numbers, dates,
 * timestamps: bounds), and without a domain yet.  Schema facts and the catalog only.
 */
static ArrayType *
undiscovered_columns(Oid relid)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;
	Datum		d;
	ArrayType  *result;
	MemoryContext caller = CurrentMemoryContext;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(
							  "SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), '{}') "
							  "FROM pg_catalog.pg_attribute a "
							  "LEFT JOIN dpsynth.column_policies p ON p.relid = a.attrelid AND p.attnum = a.attnum "
							  "WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped "
							  "  AND coalesce(p.treatment, 'synthesize') = 'synthesize' "
							  "  AND NOT EXISTS (SELECT 1 FROM dpsynth.domains d WHERE d.relid = a.attrelid AND d.attnum = a.attnum) "
							  "  AND a.attidentity = '' "
							  "  AND NOT EXISTS (SELECT 1 FROM dpsynth.budgets b WHERE b.relid = a.attrelid AND b.privacy_unit = a.attnum) "
							  "  AND pg_catalog.pg_get_serial_sequence($1::regclass::text, a.attname) IS NULL "
							  "  AND dpsynth._base_type(a.atttypid) IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, "
							  "      'int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'float4'::regtype, 'float8'::regtype, "
							  "      'numeric'::regtype, 'date'::regtype, 'timestamp'::regtype, 'timestamptz'::regtype)",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not list the columns of relation %u", relid);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	d = SPI_datumTransfer(d, false, -1);
	SPI_finish();
	dpsynth_restore_user(&sw);
	MemoryContextSwitchTo(caller);
	result = DatumGetArrayTypeP(d);
	return result;
}

/*
 * dp_discover(table, epsilon, columns DEFAULT NULL): learns the domains of columns that have none
 * (text: categories by DP partition selection; numbers, dates, timestamps: bounds) as a charged
 * release of its own, with the whole call's rho split equally among them, and stores them for
 * every later call.  Columns whose declared bounds await quantile edges are left to the release
 * that bins them (its rare-value threshold shapes them).  Privacy: the mechanisms of discover.c
 * above, each column rho_each-zCDP (plus delta_each for partition selection); they compose to
 * ndiscover * rho_each <= the units charged (and ntext * delta_each of selection delta).
 */
PG_FUNCTION_INFO_V1(dpsynth_discover_sql);
Datum
dpsynth_discover_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	double		epsilon;
	double		delta;
	int64		units;
	Relation	rel;
	ArrayType  *names;
	DpColumn   *cols;
	DpColumn   *todo;
	Datum	   *todo_names;
	int			ncols;
	int			ntodo = 0;
	dp_plan		plan;
	int64		ledger_id;
	bool		citus;
	DpUnit		unit;
	double		discovery_sigma2;
	int64		units_learn;
	dp_dgauss	learn_noise;
	dp_dgauss	topup_noise;
	int64		topup_each;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be NULL")));
	relid = PG_GETARG_OID(0);
	epsilon = dpsynth_check_epsilon(fcinfo, 1);
	/* a Citus table is counted on its shards (citus.c); every other foreign relation is refused */
	citus = dpsynth_citus_counted(relid);
	rel = dpsynth_open_source(relid, citus);
	dpsynth_check_release_privilege(relid, "dp_discover");
	units = dpsynth_rho_for_call(relid, epsilon, &delta);
	/* a table with a privacy unit: discovery from the rows each unit keeps (discover_unit.c) */
	dpsynth_unit_load(relid, &unit);
	if (unit.on && (citus || dpsynth_foreign_leaves(rel) != NIL))
		dpsynth_unit_refuse(&unit, relid, "counting partitions on other servers",
							"A foreign partition or a shard is counted on its server, where the rows of a unit cannot be bounded.");
	dpsynth_domains_by_name(relid);
	names = PG_ARGISNULL(2) ? undiscovered_columns(relid) : PG_GETARG_ARRAYTYPE_P(2);
	InitMaterializedSRF(fcinfo, 0);
	if (ArrayGetNItems(ARR_NDIM(names), ARR_DIMS(names)) == 0)
	{
		ereport(NOTICE,
				(errmsg("every column of table \"%s\" that can be discovered has a domain", get_rel_name(relid)),
				 errdetail("Nothing was charged.")));
		table_close(rel, NoLock);
		return (Datum) 0;
	}
	cols = dpsynth_load_columns(relid, names, &ncols);

	/* the columns still without a domain, in a state dp_discover learns */
	todo = palloc(sizeof(DpColumn) * ncols);
	todo_names = palloc(sizeof(Datum) * ncols);
	for (int j = 0; j < ncols; j++)
		if (cols[j].state == DP_COLUMN_DISCOVER_CATEGORIES || cols[j].state == DP_COLUMN_DISCOVER_BOUNDS)
		{
			todo_names[ntodo] = CStringGetTextDatum(cols[j].name);
			todo[ntodo++] = cols[j];
		}
	if (ntodo == 0)
	{
		ereport(NOTICE,
				(errmsg("the columns have domains already, or learn quantile bins in the release that uses them"),
				 errdetail("Nothing was charged.")));
		table_close(rel, NoLock);
		return (Datum) 0;
	}
	names = construct_array(todo_names, ntodo, TEXTOID, -1, false, TYPALIGN_INT);
	/* k learned: its histogram first, in discovery's scan (no release noise to weigh: the quantile) */
	units_learn = dpsynth_unit_learn_share(&unit, relid, units, epsilon, &learn_noise);
	dpsynth_plan_call(relid, DP_CALL_DISCOVER, units - units_learn, epsilon, todo, ntodo, &plan);
	if (citus)
		dpsynth_citus_check_discovery(rel, relid, todo, ntodo);
	discovery_sigma2 = dpsynth_unit_discovery_sigma2(&unit, relid, todo, ntodo, &plan, epsilon);
	/* ... and its second release, where the first has no cell above DP_UNIT_LEARN_TOPUP_Z sd, from the
	 * discovered columns' units where they can spare them (units.c) */
	topup_each = dpsynth_unit_discover_topup(&unit, &plan, units_learn, &topup_noise);

	ledger_id = dpsynth_charge(relid, "dp_discover", OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(names)),
							   epsilon, delta, plan.units_charged + units_learn, plan.delta_charged,
							   psprintf("{\"discovered_columns\": %d, \"rho_units_per_discovery\": " INT64_FORMAT
										", \"delta_per_selection\": %.17g%s%s%s}",
										plan.ndiscover, plan.units_each, plan.delta_each,
										dpsynth_unit_json(&unit, false),
										units_learn > 0 ?
										psprintf(", \"rho_units_rows_per_unit\": " INT64_FORMAT
												 ", \"rho_units_rows_per_unit_topup\": " INT64_FORMAT "%s",
												 units_learn, topup_each * plan.ndiscover,
												 topup_each > 0 ?
												 psprintf(", \"rho_units_per_discovery_topped_up\": " INT64_FORMAT,
														  plan.units_each - topup_each) : "") : "",
										dpsynth_unit_discovery_json(&unit, discovery_sigma2)));

	/* ---- from here on, nothing may fail or speak depending on the data ---- */
	/* an error still raised goes to the server log only (release_guard.h) */
	DPSYNTH_AFTER_CHARGE("dp_discover", ledger_id);
	cols = dpsynth_discover(rel, names, todo, ntodo, &plan, ledger_id, true, &unit);
	for (int j = 0; j < ntodo; j++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(cols[j].name);
		values[1] = CStringGetTextDatum(cols[j].domain.kind == DP_DOMAIN_CATEGORIES ? "categories" : "bins");
		values[2] = Int32GetDatum((int32) dp_domain_ncodes(&cols[j].domain));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	table_close(rel, NoLock);
	dpsynth_complete(ledger_id);
	DPSYNTH_AFTER_CHARGE_END();
	return (Datum) 0;
}
