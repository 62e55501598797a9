/*
 * citus.c - dp_marginal and dp_synthesize's adaptive method over a Citus table: counted on the
 * shards, released from the coordinator (docs/DISTRIBUTED.md, "Citus").
 *
 * A Citus hash-distributed or reference table is a shell on the coordinator: its rows are in
 * shards, which only a query that Citus plans reaches.  So the coordinator runs, as the extension
 * owner, one statement over the table (all the marginals of a stage, DP_FOREIGN_SETS_PER_SCAN at
 * a time):
 *     SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[enc_1, ..., enc_k], $sizes), $sizes), ...
 *     FROM table
 * (dp_synthesize's pairs: one dpsynth._shard_pairs over every column's code, which counts every
 * pair at once, each encoder evaluated once a row.)
 * The encoders (encoder.c) and the aggregate (citus_state.c, whose state type is not a pseudo-type)
 * are pushed down: each shard encodes and counts its own rows (worker_partial_agg), sends one state
 * as text, and the coordinator combines the states (coord_combine_agg) and reads the vector.  The
 * scan (scan.c) skips the shell, foreign.c lists the table among the relations counted elsewhere,
 * and the noise is drawn once, on the counts, as for a local table.
 *
 * Before the charge (nothing charged if refused):
 *   - the table is hash-distributed or a reference table, not partitioned (visibility.c);
 *   - every column has a public domain, and none is a category matched by the text of a type
 *     other than text (that text follows the worker session's DateStyle, TimeZone and
 *     extra_float_digits, which Citus does not set);
 *   - the count statement's plan (EXPLAIN VERBOSE) shows the aggregate computed on the shards
 *     (worker_partial_agg, or the whole aggregate in a one-shard task): rows never travel;
 *   - on every placement of every shard (run_command_on_placements), over zero rows (WHERE false):
 *     dpsynth's identity and extension version, which must be this server's, the column types
 *     (types_quals: no operator unless each column has its declared type) and the very encoders
 *     and aggregate, planned and executed there;
 *   - the count statement itself over zero rows (WHERE false: Citus sends it whole to one worker,
 *     over an empty relation), which must return one empty vector per marginal.
 * A worker's error or answer before the charge goes to the server log only; the caller reads
 * dpsynth's message.  After the charge, a failing or hostile worker fails the call closed
 * (release_guard.c: YD004, no remote text).
 *
 * Privacy: one row lies in one shard (hash distribution) or is counted from one placement (a
 * reference table's router query), so the sensitivity is unchanged; the noise and the charge are
 * those of a local table.  The trust model of foreign.c holds: a worker can distort the counts,
 * not learn from the release.
 */
#include "dpsynth.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "release_guard.h"

/*
 * d when sets are every pair of the columns 0 .. d-1 in order (the one column when d is 1), as
 * dp_synthesize's adaptive method counts them: one aggregate, _shard_pairs, counts them all, each
 * column's encoder evaluated once a row.  0 otherwise.
 */
static int
pairs_of(const DpColumnSet *sets, int nsets)
{
	int			d = 2,
				k = 0;

	if (nsets == 1 && sets[0].n == 1 && sets[0].idx[0] == 0)
		return 1;
	while (d * (d - 1) / 2 < nsets)
		d++;
	if (d * (d - 1) / 2 != nsets)
		return 0;
	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++, k++)
			if (sets[k].n != 2 || sets[k].idx[0] != a || sets[k].idx[1] != b)
				return 0;
	return d;
}

/* The statements a count takes: one in pairs mode, else one per DP_FOREIGN_SETS_PER_SCAN sets. */
static int
nscans_of(const DpColumnSet *sets, int nsets)
{
	return pairs_of(sets, nsets) > 0 ? 1 : (nsets + DP_FOREIGN_SETS_PER_SCAN - 1) / DP_FOREIGN_SETS_PER_SCAN;
}

/* The cells counted in pairs mode: every pair's, one after another. */
static int64
pairs_total(DpColumn *cols, int d)
{
	int64		total = 0;

	if (d == 1)
		return dp_domain_ncodes(&cols[0].domain);
	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++)
			total += (int64) dp_domain_ncodes(&cols[a].domain) * dp_domain_ncodes(&cols[b].domain);
	return total;
}

/*
 * The aggregates of scan s, one state each, comma-separated (s0, s1, ... unless vector: then each
 * through _state_vector): the pairs' one aggregate, or sets [k0, k1) one aggregate each.
 */
static char *
aggregates_sql(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets, int s, bool vector)
{
	StringInfoData b;
	int			d = pairs_of(sets, nsets);
	int			k0 = s * DP_FOREIGN_SETS_PER_SCAN,
				k1 = Min(nsets, k0 + DP_FOREIGN_SETS_PER_SCAN);

	initStringInfo(&b);
	if (d > 0)
	{
		DpColumnSet all = {d, sets[0].idx};	/* only the sizes of columns 0 .. d-1 are read */
		int		   *idx = palloc(sizeof(int) * d);
		char	   *total = psprintf("'{" INT64_FORMAT "}'::pg_catalog.int4[]", pairs_total(cols, d));

		for (int j = 0; j < d; j++)
			idx[j] = j;
		all.idx = idx;
		appendStringInfo(&b, "%sdpsynth._shard_pairs(ARRAY[", vector ? "dpsynth._state_vector(" : "");
		for (int j = 0; j < d; j++)
			appendStringInfo(&b, "%s%s", j ? ", " : "", dpsynth_encoder_sql(relid, &cols[j]));
		appendStringInfo(&b, "]::pg_catalog.int4[], %s)", dpsynth_sizes_literal(cols, &all));
		appendStringInfo(&b, vector ? ", %s)" : " AS s0", total);
		return b.data;
	}
	for (int k = k0; k < k1; k++)
	{
		appendStringInfo(&b, "%s%sdpsynth._shard_counts(ARRAY[", k > k0 ? ", " : "", vector ? "dpsynth._state_vector(" : "");
		for (int j = 0; j < sets[k].n; j++)
			appendStringInfo(&b, "%s%s", j ? ", " : "", dpsynth_encoder_sql(relid, &cols[sets[k].idx[j]]));
		appendStringInfo(&b, "]::pg_catalog.int4[], %s)", dpsynth_sizes_literal(cols, &sets[k]));
		if (vector)
			appendStringInfo(&b, ", %s)", dpsynth_sizes_literal(cols, &sets[k]));
		else
			appendStringInfo(&b, " AS s%d", k - k0);
	}
	return b.data;
}

/* The number of states scan s returns. */
static int
states_of(const DpColumnSet *sets, int nsets, int s)
{
	return pairs_of(sets, nsets) > 0 ? 1 : Min(nsets, (s + 1) * DP_FOREIGN_SETS_PER_SCAN) - s * DP_FOREIGN_SETS_PER_SCAN;
}

/* The count statement of scan s with a condition ("" after the charge). */
static char *
count_sql(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets, int s, const char *where)
{
	return psprintf("SELECT %s FROM %s%s", aggregates_sql(relid, cols, sets, nsets, s, true), dpsynth_qualified_name(relid), where);
}

/* The version of the dpsynth extension installed in this database (pg_extension.extversion). */
static char *
extension_version(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *out = NULL;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ, CStringGetDatum("dpsynth"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);

		if (!isnull)
			out = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (out == NULL)
		elog(ERROR, "dpsynth: the dpsynth extension is not installed");
	return out;
}

/*
 * sql as run_command_on_placements takes it, which substitutes the shard's name for %s through
 * format(): \x01 marks where the name goes, every other % is doubled.
 */
static char *
placement_format(const char *sql)
{
	StringInfoData b;

	initStringInfo(&b);
	for (const char *c = sql; *c; c++)
	{
		if (*c == '\x01')
			appendStringInfoString(&b, "%s");
		else if (*c == '%')
			appendStringInfoString(&b, "%%");
		else
			appendStringInfoChar(&b, *c);
	}
	return b.data;
}

/*
 * The probe run on every placement (run_command_on_placements, which substitutes the shard's name
 * for %s through format(), so every other % is doubled): dpsynth's identity and extension version
 * first, then the encoders and the aggregates, over zero rows, with the column types' conditions.
 */
static char *
placement_probe(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets)
{
	StringInfoData sql;
	int			k1 = states_of(sets, nsets, 0);

	/* one column (run_command_on_placements reads one): the identity, then whether every state is NULL */
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT q.v OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) (");
	for (int k = 0; k < k1; k++)
		appendStringInfo(&sql, "%sq.s%d IS NULL", k ? " AND " : "", k);
	appendStringInfo(&sql, ")::text FROM (SELECT dpsynth._shard_identity(pg_catalog.count(*)) OPERATOR(pg_catalog.||) ' ' "
					 "OPERATOR(pg_catalog.||) coalesce((SELECT e.extversion FROM pg_catalog.pg_extension e "
					 "WHERE e.extname OPERATOR(pg_catalog.=) 'dpsynth'), '-') AS v, %s FROM \x01 WHERE false%s) q",
					 aggregates_sql(relid, cols, sets, nsets, 0, false), dpsynth_types_quals(cols, sets, 0, nsets));
	return placement_format(sql.data);
}

typedef enum CitusStage
{
	CITUS_PLAN,
	CITUS_PLACEMENTS,
	CITUS_COUNT
} CitusStage;

static void
refuse(CitusStage stage, int code, const char *relname)
{
	if (dpsynth_errcode_is_public(code))
		ereport(ERROR,
				(errcode(code),
				 errmsg("the check of Citus table \"%s\" was interrupted", relname),
				 errdetail("Nothing was charged. The error is in the server log.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("Citus table \"%s\" cannot run dpsynth %s's count statement", relname, DPSYNTH_VERSION),
			 errdetail("%s failed before the charge: dpsynth must be installed on every node that holds a shard, in version %s, and the shards must have the table's column types. Nothing was charged. The error is in the server log.",
					   stage == CITUS_PLAN ? "Planning the statement" :
					   stage == CITUS_PLACEMENTS ? "The statement, run over zero rows on each shard," :
					   "The statement, run over zero rows through Citus,", DPSYNTH_VERSION)));
}

/* EXPLAIN (VERBOSE, COSTS OFF) of sql as the extension owner: its lines, each ended by a newline. */
static char *
explain_text(const char *sql)
{
	DpOwnerSwitch sw;
	MemoryContext caller = CurrentMemoryContext;
	StringInfoData b;

	initStringInfo(&b);
	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	if (SPI_execute(psprintf("EXPLAIN (VERBOSE, COSTS OFF) %s", sql), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "dpsynth: EXPLAIN of a Citus count failed");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *line = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		MemoryContext old = MemoryContextSwitchTo(caller);

		appendStringInfo(&b, "%s\n", line ? line : "");
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	return b.data;
}

/*
 * Whether an EXPLAIN VERBOSE shows dpsynth's aggregate computed on the shards: Citus's custom scan
 * with the partial aggregate sent to the workers, or (a one-shard table, a reference table) the
 * whole aggregate in the task's query.
 */
static bool
counted_on_shards(const char *plan)
{
	return strstr(plan, "Custom Scan (Citus") != NULL &&
		(strstr(plan, "worker_partial_agg(") != NULL ||
		 (strstr(plan, "coord_combine_agg(") == NULL && strstr(plan, "Task Count: 1\n") != NULL &&
		  (strstr(plan, "dpsynth._shard_counts(") != NULL || strstr(plan, "dpsynth._shard_pairs(") != NULL)));
}

/*
 * The count statement of scan s over zero rows (WHERE false, which Citus plans as one task over an
 * empty relation, sent to a worker whole): one empty vector a state.
 */
static bool
zero_rows_count(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets, int s)
{
	int			n = states_of(sets, nsets, s);
	DpOwnerSwitch sw;
	bool		ran;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	if (SPI_execute(count_sql(relid, cols, sets, nsets, s, " WHERE false"), true, 0) != SPI_OK_SELECT)
		elog(ERROR, "dpsynth: the count statement over zero rows failed");
	ran = SPI_processed == 1 && SPI_tuptable->tupdesc->natts == n;
	for (int k = 0; ran && k < n; k++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, k + 1, &isnull);
		ArrayType  *a = isnull ? NULL : DatumGetArrayTypeP(d);

		ran = a != NULL && ARR_NDIM(a) == 1 && !ARR_HASNULL(a) && ARR_ELEMTYPE(a) == INT8OID;
		for (int i = 0; ran && i < ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)); i++)
			ran = ((const int64 *) ARR_DATA_PTR(a))[i] == 0;
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	return ran;
}

/*
 * The probe on every placement: the node of the first placement that failed or answered another
 * identity or extension version than this server's (expect NULL: placement_probe), or other than
 * expect (its answer to the server log only), "" if none, NULL if the table has no placement.
 */
static char *
bad_placement(Oid relid, const char *probe, const char *relname, const char *expect)
{
	DpOwnerSwitch sw;
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[2] = {REGCLASSOID, TEXTOID};
	Datum		args[2] = {ObjectIdGetDatum(relid), CStringGetTextDatum(probe)};
	char	   *extversion = extension_version();
	char	   *bad = NULL;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	if (SPI_execute_with_args("SELECT nodename OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) nodeport, success, result "
							  "FROM pg_catalog.run_command_on_placements($1, $2)", 2, argtypes, args, NULL,
							  false, 0) != SPI_OK_SELECT)
		elog(ERROR, "dpsynth: run_command_on_placements failed");
	for (uint64 i = 0; i < SPI_processed && bad == NULL; i++)
	{
		char	   *node = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *success = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		char	   *result = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3);
		char		version[64],
					ext[64],
					empty[8];

		if (success == NULL || strcmp(success, "t") != 0 || result == NULL ||
			(expect != NULL && strcmp(result, expect) != 0) ||
			(expect == NULL &&
			 (sscanf(result, "%63s %*s %*s %63s %7s", version, ext, empty) != 3 ||
			  strcmp(version, DPSYNTH_VERSION) != 0 || strcmp(ext, extversion) != 0 || strcmp(empty, "true") != 0)))
		{
			ereport(LOG_SERVER_ONLY,
					(errmsg_internal("dpsynth: a placement of Citus table \"%s\" on node %s answered the check before the charge with \"%s\"",
									 relname, node ? node : "?", result ? result : "(null)"),
					 errhidestmt(true)));
			bad = MemoryContextStrdup(caller, node ? node : "?");
		}
	}
	if (SPI_processed == 0)
		bad = NULL;
	else if (bad == NULL)
		bad = MemoryContextStrdup(caller, "");
	SPI_finish();
	dpsynth_restore_user(&sw);
	return bad;
}

void
dpsynth_citus_check_sets(Relation root, Oid relid, DpColumn *cols, int ncols, const DpColumnSet *sets, int nsets)
{
	MemoryContext mcxt = CurrentMemoryContext;
	const char *relname = get_rel_name(relid);	/* no catalog access in the catch */
	int			nscans = nscans_of(sets, nsets);
	char	  **plans = palloc0(sizeof(char *) * Max(nscans, 1));
	bool	   *ran = palloc0(sizeof(bool) * Max(nscans, 1));
	char	   *probe;
	char	   *volatile bad = NULL;
	volatile CitusStage stage = CITUS_PLAN;

	for (int j = 0; j < ncols; j++)
		if (cols[j].encoding == DP_ENC_OUTPUT)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the categories of column \"%s\" (type %s) are matched by a text that Citus workers may write otherwise",
							cols[j].name, format_type_be(cols[j].typid)),
					 errdetail("Table \"%s\" is a Citus table, and its workers' sessions keep their own DateStyle, TimeZone and extra_float_digits. Nothing was charged.",
							   RelationGetRelationName(root)),
					 errhint("Declare the column's domain in bins, or leave the column out.")));
	probe = placement_probe(relid, cols, sets, nsets);
	PG_TRY();
	{
		for (int s = 0; s < nscans; s++)
		{
			CHECK_FOR_INTERRUPTS();
			stage = CITUS_PLAN;
			plans[s] = explain_text(count_sql(relid, cols, sets, nsets, s, ""));
			stage = CITUS_COUNT;
			ran[s] = zero_rows_count(relid, cols, sets, nsets, s);
		}
		stage = CITUS_PLACEMENTS;
		bad = bad_placement(relid, probe, relname, NULL);
	}
	PG_CATCH();
	{
		int			code = dpsynth_error_to_log(mcxt, psprintf("the check of Citus table \"%s\" before the charge failed",
															   relname));

		refuse(stage, code, relname);
	}
	PG_END_TRY();

	for (int s = 0; s < nscans; s++)
	{
		if (!counted_on_shards(plans[s]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Citus would send the rows of table \"%s\" to the coordinator, not counts", relname),
					 errdetail("dpsynth's aggregate must be computed on the shards (worker_partial_agg in the plan). Nothing was charged.")));
		if (!ran[s])
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("Citus table \"%s\" sent counts of another shape, or counts for no row", relname),
					 errdetail("dpsynth's count statement, run over zero rows before the charge, must return one empty count vector per marginal. Nothing was charged.")));
	}
	if (bad == NULL || bad[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 bad == NULL ? errmsg("Citus table \"%s\" has no shard placement", relname) :
				 errmsg("a shard of Citus table \"%s\" on node %s cannot run dpsynth %s's count statement",
						relname, bad, DPSYNTH_VERSION),
				 errdetail("Every node that holds a shard must run dpsynth %s (extension version %s) and have the table's column types; the statement, run there over zero rows before the charge, failed or answered otherwise. Nothing was charged. Its answer is in the server log.",
						   DPSYNTH_VERSION, extension_version())));
}

/*
 * After the charge: the counts of sets [0, nsets), added to counts[k].  An error here (a worker
 * down, a hostile worker's RAISE or malformed state) fails the call closed (release_guard.c).
 */
/* Adds a vector of n counts (the shard's, checked) into into[]. */
static void
add_counts(Oid relid, ArrayType *a, int64 first, int64 n, int64 *into)
{
	for (int64 i = 0; i < n; i++)
	{
		int64		c = ((const int64 *) ARR_DATA_PTR(a))[first + i];

		if (c < 0 || pg_add_s64_overflow(into[i], c, &into[i]))
			elog(ERROR, "dpsynth: Citus table \"%s\" sent an invalid count", get_rel_name(relid));
	}
}

void
dpsynth_citus_count_sets(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets, int64 **counts)
{
	int			d = pairs_of(sets, nsets);

	for (int s = 0; s < nscans_of(sets, nsets); s++)
	{
		int			n = states_of(sets, nsets, s);
		int			k0 = d > 0 ? 0 : s * DP_FOREIGN_SETS_PER_SCAN;
		DpOwnerSwitch sw;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		dpsynth_become_owner(&sw);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dpsynth: SPI_connect failed");
		rc = SPI_execute(count_sql(relid, cols, sets, nsets, s, ""), true, 0);
		if (rc != SPI_OK_SELECT || SPI_processed != 1 || SPI_tuptable->tupdesc->natts != n)
			elog(ERROR, "dpsynth: Citus table \"%s\" sent no counts", get_rel_name(relid));
		for (int i = 0; i < n; i++)
		{
			bool		isnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);
			int64		ncells = 1;
			int64		first = 0;
			ArrayType  *a;

			if (isnull)
				elog(ERROR, "dpsynth: Citus table \"%s\" sent no counts", get_rel_name(relid));
			a = DatumGetArrayTypeP(v);
			ncells = d > 0 ? pairs_total(cols, d) : 1;
			if (d == 0)
				for (int j = 0; j < sets[k0 + i].n; j++)
					ncells *= dp_domain_ncodes(&cols[sets[k0 + i].idx[j]].domain);
			/* _state_vector checked the shape; checked again, as it is added here */
			if (ARR_NDIM(a) != 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != INT8OID ||
				ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) != ncells)
				elog(ERROR, "dpsynth: Citus table \"%s\" sent counts of another shape", get_rel_name(relid));
			if (d == 0)
				add_counts(relid, a, 0, ncells, counts[k0 + i]);
			else
				for (int k = 0; k < nsets; k++)
				{
					/* the pairs one after another, in the order of sets (pairs_of) */
					int64		cells = d == 1 ? ncells :
						(int64) dp_domain_ncodes(&cols[sets[k].idx[0]].domain) * dp_domain_ncodes(&cols[sets[k].idx[1]].domain);

					add_counts(relid, a, first, cells, counts[k]);
					first += cells;
				}
		}
		SPI_finish();
		dpsynth_restore_user(&sw);
	}
}

/*
 * dp_discover on a Citus table: each discovered column's values counted on the shards, one
 * statement a column:
 *     SELECT col [COLLATE "C"], count(*) FROM table GROUP BY 1
 * which Citus pushes down (each shard groups its own rows and sends one row a value present
 * there, with its count; the coordinator adds the counts of a value sent by several shards).
 * What travels is each distinct value once per shard that holds it, with its count, never a
 * row; discover.c feeds the (value, count) pairs to the same counting as a scan of the rows, so
 * the mechanisms, the noise and the charge are those of a local table.  A text value is grouped
 * by its bytes (COLLATE "C"), as discover.c hashes them.  The values travel as text, which the
 * coordinator reads with the column type's input function: only types whose text does not depend
 * on the worker session's settings are discovered there (text, varchar, char, integers, numeric;
 * not floats, whose text follows extra_float_digits, nor dates and times, which follow DateStyle
 * and TimeZone).
 */
static char *
values_sql(Oid relid, const DpColumn *col, const char *where)
{
	bool		categories = col->state == DP_COLUMN_DISCOVER_CATEGORIES;

	return psprintf("SELECT %s%s, pg_catalog.count(*) FROM %s%s GROUP BY 1", quote_identifier(col->name),
					categories ? " COLLATE pg_catalog.\"C\"" : "", dpsynth_qualified_name(relid), where);
}

/* A type whose values travel from a worker as a text that no session setting changes. */
static bool
values_portable(Oid typid)
{
	switch (typid)
	{
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
			return true;
		default:
			return false;
	}
}

/*
 * Whether an EXPLAIN VERBOSE of values_sql shows the grouping done on the shards: Citus's custom
 * scan, and every task's query grouped and counted (a shard that sent rows would be asked for
 * the column without GROUP BY).
 */
static bool
grouped_on_shards(const char *plan)
{
	const char *q = plan;
	int			tasks = 0;

	if (strstr(plan, "Custom Scan (Citus") == NULL)
		return false;
	while ((q = strstr(q, "Query: SELECT ")) != NULL)
	{
		const char *eol = strchr(q, '\n');
		char	   *line = pnstrdup(q, eol ? (size_t) (eol - q) : strlen(q));

		if (strstr(line, " count(*) ") == NULL || strstr(line, " GROUP BY ") == NULL)
			return false;
		tasks++;
		q += strlen(line);
	}
	return tasks > 0;
}

void
dpsynth_citus_check_discovery(Relation root, Oid relid, DpColumn *cols, int ncols)
{
	MemoryContext mcxt = CurrentMemoryContext;
	const char *relname = get_rel_name(relid);	/* no catalog access in the catch */
	char	  **plans = palloc0(sizeof(char *) * Max(ncols, 1));
	int		   *idx = palloc(sizeof(int) * Max(ncols, 1));
	DpColumnSet all = {0, idx};
	char	   *volatile bad = NULL;

	if (dpsynth_source_leaves(root) != NIL || list_length(dpsynth_foreign_leaves(root)) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("Citus table \"%s\" has children", relname),
				 errdetail("dp_discover counts on the shards a Citus table without children only. Nothing was charged.")));
	for (int j = 0; j < ncols; j++)
	{
		if (cols[j].state == DP_COLUMN_READY)
			continue;
		if (cols[j].state == DP_COLUMN_DISCOVER_EDGES || !values_portable(cols[j].typid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" (type %s) of Citus table \"%s\" cannot be discovered on its shards",
							cols[j].name, format_type_be(cols[j].typid), RelationGetRelationName(root)),
					 errdetail("dp_discover counts the values of text, varchar, char, integer and numeric columns on the shards; the text of other values follows the workers' session settings (extra_float_digits, DateStyle, TimeZone). Nothing was charged."),
					 errhint("Declare the column's domain with dp_declare, or leave the column out.")));
		idx[all.n++] = j;
	}
	PG_TRY();
	{
		for (int k = 0; k < all.n; k++)
		{
			CHECK_FOR_INTERRUPTS();
			plans[k] = explain_text(values_sql(relid, &cols[idx[k]], ""));
		}
		/* on every placement, over zero rows: the table and its column types */
		bad = bad_placement(relid, placement_format(psprintf("SELECT pg_catalog.count(*)::text FROM \x01 WHERE false%s",
															 dpsynth_types_quals(cols, &all, 0, 1))),
							relname, "0");
	}
	PG_CATCH();
	{
		int			code = dpsynth_error_to_log(mcxt, psprintf("the check of Citus table \"%s\" before the charge failed",
															   relname));

		if (dpsynth_errcode_is_public(code))
			refuse(CITUS_PLAN, code, relname);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("Citus table \"%s\" cannot count the values of its columns on its shards", relname),
				 errdetail("Planning dp_discover's statement, or running it over zero rows on each shard, failed before the charge. Nothing was charged. The error is in the server log.")));
	}
	PG_END_TRY();
	for (int k = 0; k < all.n; k++)
		if (!grouped_on_shards(plans[k]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("Citus would send the rows of table \"%s\" to the coordinator, not the counts of column \"%s\"",
							relname, cols[idx[k]].name),
					 errdetail("dp_discover's statement must be grouped and counted on the shards. Nothing was charged.")));
	if (bad == NULL || bad[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 bad == NULL ? errmsg("Citus table \"%s\" has no shard placement", relname) :
				 errmsg("a shard of Citus table \"%s\" on node %s cannot count the values of its columns", relname, bad),
				 errdetail("Every shard must have the table's column types; a statement run there over zero rows before the charge failed or answered otherwise. Nothing was charged. Its answer is in the server log.")));
}

/*
 * After the charge: the values of col present on the shards, each given to add with its count
 * (a NULL value is not counted, as discover.c's scan skips it).  The coordinator read each value
 * with the column type's input function; a count below 1 or a text that is not of the database's
 * encoding is a hostile worker's, and fails the call closed (release_guard.c).  Fetched in
 * batches, so that a column of many values is not held at once.
 */
void
dpsynth_citus_count_values(Oid relid, DpColumn *col, void (*add) (void *arg, Datum value, int64 n), void *arg)
{
	DpOwnerSwitch sw;
	SPIPlanPtr	plan;
	Portal		portal;
	bool		categories = col->state == DP_COLUMN_DISCOVER_CATEGORIES;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	plan = SPI_prepare(values_sql(relid, col, ""), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "dpsynth: could not plan the count of column \"%s\" on Citus table \"%s\"", col->name,
			 get_rel_name(relid));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(portal, true, 10000);
		if (SPI_processed == 0)
			break;
		if (SPI_tuptable->tupdesc->natts != 2 || TupleDescAttr(SPI_tuptable->tupdesc, 1)->atttypid != INT8OID)
			elog(ERROR, "dpsynth: Citus table \"%s\" sent counts of another shape", get_rel_name(relid));
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull,
						nnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			int64		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &nnull));

			if (nnull || n < 1)
				elog(ERROR, "dpsynth: Citus table \"%s\" sent an invalid count", get_rel_name(relid));
			if (isnull)
				continue;
			if (categories)
			{
				text	   *t = DatumGetTextPP(v);

				if (!pg_verifymbstr(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), true))
					elog(ERROR, "dpsynth: Citus table \"%s\" sent a value that is not of the database's encoding",
						 get_rel_name(relid));
			}
			add(arg, v, n);
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	dpsynth_restore_user(&sw);
}
