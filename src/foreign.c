/*
 * foreign.c - dp_marginal over a table with partitions on other servers (postgres_fdw): each
 * foreign partition's exact counts are computed on its own server, and only they travel
 * (docs/DISTRIBUTED.md, "The release functions read counts through the aggregate").
 * dp_synthesize's adaptive method uses the same check and count, once per pair of columns
 * (synthesize.c, plan_foreign and count_foreign).
 *
 * For each foreign partition, one statement, run as the extension owner:
 *     SELECT dpsynth._partial_vector(s, $sizes) FROM (
 *         SELECT dpsynth._partial_counts(ARRAY[enc_1, ..., enc_k], $sizes) AS s
 *         FROM ONLY partition) q
 * where enc_j is column j's encoder as SQL (encoder.c, pinned to the C encoder by
 * sql/16_encoder.sql).  postgres_fdw ships the inner aggregate whole to the server when the
 * server lists dpsynth in its `extensions` option: the server encodes and counts its own rows and
 * sends one state.  The vectors are added to the local partitions' counts, and the noise is drawn
 * once, on the sum, as for a table on one server.
 *
 * Before the charge (nothing read, nothing charged if refused):
 *   - every column has a public domain (discovery would read rows) and a portable encoder that
 *     postgres_fdw ships (enums and categories matched through format() are not: when the
 *     statement does not ship, each column's encoder alone is EXPLAINed to name the one);
 *   - the partition's server is a postgres_fdw server;
 *   - the planner ships the aggregate whole: the statement's plan is one Foreign Scan with the
 *     aggregate pushed down (EXPLAIN, which does not connect), so rows never cross the wire;
 *   - on the server, over zero rows (WHERE $1 with $1 false in a generic plan: the server plans and
 *     executes the statement, which connects with the user mapping, and reads no row): first a
 *     count(*) whose conditions have no operator there unless each column has exactly its declared
 *     type (the remote table, its columns and their types), then the very statements that count
 *     after the charge, with the same conditions and dpsynth._shard_identity beside them: dpsynth
 *     must be installed there, in this version, and the statement must have run on another
 *     database than this one.  An error of the server is refused with dpsynth's own message (the
 *     server's text may carry values of its rows: it goes to the server log only).
 * After the charge, a server that fails fails the call (fail closed): the charge stays, nothing
 * is released, and the caller reads the generic error of release_guard.c, never the server's text.
 *
 * Privacy: the sensitivity is unchanged (one row lies in one partition and moves one count of
 * the sum by one), and the noise and the charge are those of dp_marginal (PRIVACY.md).  The
 * coordinator trusts its servers' counts (docs/DISTRIBUTED.md, trust model): a server can distort
 * the release, not learn from it.
 */
#include "dpsynth.h"

#include "access/table.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/int.h"
#include "executor/spi.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "dp_partial.h"
#include "release_guard.h"

/*
 * The remote table and its column types, before dpsynth's functions are needed there: a count(*)
 * over zero rows (WHERE $1, $1 false) with types_quals; for EXPLAIN, WHERE true instead.
 */
static char *
types_sql(Oid leaf, DpColumn *cols, const DpColumnSet *sets, int nsets, bool for_explain)
{
	return psprintf("SELECT pg_catalog.count(*) FROM ONLY %s WHERE %s%s", dpsynth_qualified_name(leaf),
					for_explain ? "true" : "$1", dpsynth_types_quals(cols, sets, 0, nsets));
}

/*
 * This server's identity as dpsynth._shard_identity gives it: the library's version, the system
 * identifier and the database's OID.
 */
static char *
shard_identity(void)
{
	return psprintf("%s " UINT64_FORMAT " %u", DPSYNTH_VERSION, GetSystemIdentifier(), MyDatabaseId);
}

/*
 * How a statement over a foreign partition ends: as counted after the charge, or as run before it
 * over zero rows (PROBE: dpsynth._shard_identity beside the aggregates, and WHERE $1 with $1 false
 * in a generic plan, so that the server plans and executes the very statement and reads no row,
 * and types_quals), or that same probe with WHERE true for EXPLAIN (a Param would be folded in
 * EXPLAIN's plan).
 */
typedef enum CountForm
{
	COUNT_RUN,
	COUNT_PROBE,
	COUNT_PROBE_EXPLAIN
} CountForm;

/*
 * The aggregates over one foreign partition, sets [k0, k1) of cols, one state each (s0, s1, ...):
 * one scan of the partition on its server.
 */
static char *
aggregate_sql(Oid root, Oid leaf, DpColumn *cols, const DpColumnSet *sets, int k0, int k1, CountForm form)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "SELECT ");
	for (int k = k0; k < k1; k++)
	{
		appendStringInfo(&b, "%sdpsynth._partial_counts(ARRAY[", k > k0 ? ", " : "");
		for (int j = 0; j < sets[k].n; j++)
			appendStringInfo(&b, "%s%s", j ? ", " : "", dpsynth_encoder_sql(root, &cols[sets[k].idx[j]]));
		appendStringInfo(&b, "]::pg_catalog.int4[], %s) AS s%d", dpsynth_sizes_literal(cols, &sets[k]), k - k0);
	}
	if (form != COUNT_RUN)
		appendStringInfoString(&b, ", dpsynth._shard_identity(pg_catalog.count(*)) AS v");
	appendStringInfo(&b, " FROM ONLY %s%s%s", dpsynth_qualified_name(leaf),
					 form == COUNT_PROBE ? " WHERE $1" : form == COUNT_PROBE_EXPLAIN ? " WHERE true" : "",
					 form == COUNT_RUN ? "" : dpsynth_types_quals(cols, sets, k0, k1));
	return b.data;
}

/* The statement that counts sets [k0, k1) on a foreign partition: the one checked before the charge and run after. */
static char *
count_sql(Oid root, Oid leaf, DpColumn *cols, const DpColumnSet *sets, int k0, int k1, CountForm form)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "SELECT ");
	for (int k = k0; k < k1; k++)
		appendStringInfo(&b, "%sdpsynth._partial_vector(q.s%d, %s)", k > k0 ? ", " : "", k - k0,
						 dpsynth_sizes_literal(cols, &sets[k]));
	appendStringInfo(&b, "%s FROM (%s) q", form != COUNT_RUN ? ", q.v" : "",
					 aggregate_sql(root, leaf, cols, sets, k0, k1, form));
	return b.data;
}

/* The remote table a foreign partition reads: server, schema and table name (postgres_fdw's defaults). */
static char *
remote_key(Oid leaf)
{
	ForeignTable *ft = GetForeignTable(leaf);
	char	   *schema = get_namespace_name(get_rel_namespace(leaf));
	char	   *table = get_rel_name(leaf);
	ListCell   *lc;

	foreach(lc, ft->options)
	{
		DefElem    *o = lfirst(lc);

		if (strcmp(o->defname, "schema_name") == 0)
			schema = defGetString(o);
		else if (strcmp(o->defname, "table_name") == 0)
			table = defGetString(o);
	}
	return psprintf("%u/%s/%s", ft->serverid, schema, table);
}

/* Runs one statement that returns one value, as the extension owner; its text, or NULL. */
static char *
run_one(const char *sql)
{
	DpOwnerSwitch sw;
	MemoryContext caller = CurrentMemoryContext;
	char	   *out = NULL;
	int			rc;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	rc = SPI_execute(sql, false, 0);	/* not read-only: EXPLAIN is a utility statement */
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UTILITY)
		elog(ERROR, "dpsynth: a foreign partition's statement failed: %s", SPI_result_code_string(rc));
	if (SPI_processed >= 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v != NULL)
			out = MemoryContextStrdup(caller, v);
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	return out;
}

/*
 * Whether an EXPLAIN (VERBOSE, FORMAT JSON) shows the aggregate shipped whole: a Foreign Scan,
 * no local Aggregate node, and the aggregate in the Remote SQL.
 */
static bool
aggregate_shipped(const char *plan, const char *also)
{
	const char *remote;

	if (plan == NULL || strstr(plan, "\"Node Type\": \"Foreign Scan\"") == NULL ||
		strstr(plan, "\"Node Type\": \"Aggregate\"") != NULL)
		return false;
	remote = strstr(plan, "\"Remote SQL\"");
	return remote != NULL && strstr(remote, "dpsynth._partial_counts(") != NULL &&
		(also == NULL || strstr(remote, also) != NULL);
}

/* What a probe of a foreign partition before the charge saw. */
typedef struct ProbeResult
{
	bool		ran;			/* one row of the expected width */
	bool		zeros;			/* every count 0 (there was no row) */
	char	   *identity;		/* dpsynth._shard_identity's text, or NULL */
} ProbeResult;

/*
 * Runs a probe over zero rows, as the extension owner: sql with $1 = false, in a generic plan, so
 * that postgres_fdw ships WHERE $1 and the server plans and executes the statement and reads no
 * row.  With nsets > 0, the result is nsets count vectors and the server's identity (count_sql's
 * PROBE form).
 */
static void
run_probe(const char *sql, int nsets, ProbeResult *out)
{
	DpOwnerSwitch sw;
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[1] = {BOOLOID};
	Datum		values[1] = {BoolGetDatum(false)};
	SPIPlanPtr	plan;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dpsynth: SPI_connect failed");
	plan = SPI_prepare_cursor(sql, 1, argtypes, CURSOR_OPT_GENERIC_PLAN);
	if (plan == NULL)
		elog(ERROR, "dpsynth: could not plan a foreign partition's probe: %s", SPI_result_code_string(SPI_result));
	if (SPI_execute_plan(plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "dpsynth: a foreign partition's probe failed");
	out->ran = nsets == 0 || (SPI_processed == 1 && SPI_tuptable->tupdesc->natts == nsets + 1);
	out->zeros = true;
	out->identity = NULL;
	for (int k = 0; out->ran && k < nsets; k++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, k + 1, &isnull);
		ArrayType  *a;

		if (isnull)
		{
			out->ran = false;
			break;
		}
		a = DatumGetArrayTypeP(d);
		if (ARR_NDIM(a) != 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != INT8OID)
			out->ran = false;
		else
			for (int i = 0; i < ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)); i++)
				out->zeros &= ((const int64 *) ARR_DATA_PTR(a))[i] == 0;
	}
	if (out->ran && nsets > 0)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, nsets + 1);

		out->identity = v ? MemoryContextStrdup(caller, v) : NULL;
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
}

typedef enum ProbeStage
{
	PROBE_TYPES,
	PROBE_COUNT
} ProbeStage;

/*
 * The refusal for an error of a foreign partition's server before the charge.  The server's text
 * went to the server log only (release_guard.c): it may carry values of its rows.  The SQLSTATE
 * says which check failed.
 */
static void
refuse_remote(ProbeStage stage, int code, const char *servername, const char *leaf)
{
	if (ERRCODE_TO_CATEGORY(code) == ERRCODE_CONNECTION_EXCEPTION)
		ereport(ERROR,
				(errcode(code),
				 errmsg("could not connect to server \"%s\" of partition \"%s\"", servername, leaf),
				 errdetail("Nothing was charged. The connection's error is in the server log.")));
	if (dpsynth_errcode_is_public(code))
		ereport(ERROR,
				(errcode(code),
				 errmsg("the check of partition \"%s\" on server \"%s\" was interrupted", leaf, servername),
				 errdetail("Nothing was charged. The error is in the server log.")));
	if (stage == PROBE_TYPES && (code == ERRCODE_UNDEFINED_TABLE || code == ERRCODE_UNDEFINED_SCHEMA))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
				 errmsg("the remote table of partition \"%s\" does not exist on server \"%s\"", leaf, servername),
				 errdetail("Nothing was charged. The server's error is in the server log.")));
	if (stage == PROBE_TYPES && code == ERRCODE_UNDEFINED_COLUMN)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
				 errmsg("a column of partition \"%s\" does not exist in its remote table on server \"%s\"", leaf,
						servername),
				 errdetail("Nothing was charged. The server's error is in the server log.")));
	if (stage == PROBE_TYPES)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the remote table of partition \"%s\" on server \"%s\" does not have the column types the foreign table declares",
						leaf, servername),
				 errdetail("Each column counted must have exactly its declared type on the server, or the server's encoders would read other values. Nothing was charged. The server's error is in the server log."),
				 errhint("Declare the foreign table's columns with the remote types (IMPORT FOREIGN SCHEMA does).")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("server \"%s\" of partition \"%s\" cannot run dpsynth %s's count statement",
					servername, leaf, DPSYNTH_VERSION),
			 errdetail("The statement, run over zero rows before the charge, failed there: dpsynth must be installed on the server in version %s, and the user mapping's role must be allowed to run it. Nothing was charged. The server's error is in the server log.",
					   DPSYNTH_VERSION)));
}

/*
 * EXPLAIN (VERBOSE, FORMAT JSON) of a statement, as the extension owner.  Planning connects to the
 * server where the table or its server asks for remote estimates (use_remote_estimate), so an
 * error there is the server's: it is refused with dpsynth's own message, its text to the server
 * log only, as the probes' are.
 */
static char *
explain(const char *sql, const char *servername, const char *leafname)
{
	MemoryContext mcxt = CurrentMemoryContext;
	char	   *volatile plan = NULL;

	PG_TRY();
	{
		plan = run_one(psprintf("EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) %s", sql));
	}
	PG_CATCH();
	{
		int			code = dpsynth_error_to_log(mcxt, psprintf("planning a count of partition \"%s\" on server \"%s\" before the charge failed",
															   leafname, servername));

		refuse_remote(PROBE_TYPES, code, servername, leafname);
	}
	PG_END_TRY();
	return plan;
}

/*
 * Before the charge, on the partition's server, over zero rows: the remote table and its column
 * types (types_sql), then the very statements that count after the charge, with the column types
 * again and the server's identity beside them: its dpsynth version must be this server's, and it
 * must not be this database (which would mean that the statement did not run remotely, or that
 * the partition reads this database's rows back).  Any error of the server is refused with
 * dpsynth's own message.
 */
static void
remote_checks(Oid root, Oid leaf, const char *servername, DpColumn *cols, const DpColumnSet *sets, int nsets)
{
	MemoryContext mcxt = CurrentMemoryContext;
	const char *leafname = get_rel_name(leaf);	/* no catalog access in the catch */
	volatile ProbeStage stage = PROBE_TYPES;
	char	   *types = types_sql(leaf, cols, sets, nsets, false);
	ProbeResult *res = palloc0(sizeof(ProbeResult) * ((nsets + DP_FOREIGN_SETS_PER_SCAN - 1) / DP_FOREIGN_SETS_PER_SCAN));

	PG_TRY();
	{
		run_probe(types, 0, &res[0]);
		stage = PROBE_COUNT;
		for (int k0 = 0; k0 < nsets; k0 += DP_FOREIGN_SETS_PER_SCAN)
		{
			int			k1 = Min(nsets, k0 + DP_FOREIGN_SETS_PER_SCAN);

			CHECK_FOR_INTERRUPTS();
			run_probe(count_sql(root, leaf, cols, sets, k0, k1, COUNT_PROBE), k1 - k0,
					  &res[k0 / DP_FOREIGN_SETS_PER_SCAN]);
		}
	}
	PG_CATCH();
	{
		int			code = dpsynth_error_to_log(mcxt, psprintf("the check of partition \"%s\" on server \"%s\" before the charge failed",
															   leafname, servername));

		refuse_remote(stage, code, servername, leafname);
	}
	PG_END_TRY();

	for (int k0 = 0; k0 < nsets; k0 += DP_FOREIGN_SETS_PER_SCAN)
	{
		ProbeResult *r = &res[k0 / DP_FOREIGN_SETS_PER_SCAN];
		char		version[64];

		if (!r->ran || !r->zeros)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("server \"%s\" of partition \"%s\" sent counts of another shape, or counts for no row",
							servername, get_rel_name(leaf)),
					 errdetail("dpsynth's count statement, run over zero rows before the charge, must return one empty count vector per marginal. Nothing was charged.")));
		if (r->identity == NULL || sscanf(r->identity, "%63s %*s %*s", version) != 1 ||
			strcmp(version, DPSYNTH_VERSION) != 0)
		{
			ereport(LOG_SERVER_ONLY,
					(errmsg_internal("dpsynth: server \"%s\" of partition \"%s\" says its dpsynth is \"%s\"",
									 servername, get_rel_name(leaf), r->identity ? r->identity : "(null)"),
					 errhidestmt(true)));
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("server \"%s\" of partition \"%s\" runs another version of dpsynth than this server's %s",
							servername, get_rel_name(leaf), DPSYNTH_VERSION),
					 errdetail("Its counts might be encoded otherwise. Nothing was charged. The version it sent is in the server log.")));
		}
		if (strcmp(r->identity, shard_identity()) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partition \"%s\" of server \"%s\" was counted in this database, not on its server",
							get_rel_name(leaf), servername),
					 errdetail("postgres_fdw did not ship dpsynth's count statement, or the server is this database, whose rows the partition would count twice. Nothing was charged.")));
	}
}

void
dpsynth_foreign_check_sets(Relation root, List *foreign, DpColumn *cols, int ncols, const DpColumnSet *sets,
						   int nsets)
{
	ListCell   *lc;
	bool		citus = list_length(foreign) == 1 && dpsynth_citus_counted(linitial_oid(foreign));

	if (nsets < 1)
		elog(ERROR, "dpsynth: no marginal to count on the foreign partitions");
	for (int j = 0; j < ncols; j++)
	{
		if (cols[j].state != DP_COLUMN_READY && citus)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of table \"%s\" has no public domain, and the table is a Citus table",
							cols[j].name, RelationGetRelationName(root)),
					 errdetail("The count statement sent to the shards encodes each column in its domain, and must be checked before the charge, when a domain discovered in the call is not known yet. Nothing was charged."),
					 errhint(cols[j].state == DP_COLUMN_DISCOVER_EDGES ?
							 "Declare the column's bins with dp_declare (quantile bins are learned from rows in the release)." :
							 "Run dp_discover on the table first (a release of its own, counted on the shards), or declare the column's domain with dp_declare.")));
		if (cols[j].state != DP_COLUMN_READY)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of table \"%s\" has no public domain, and the table has a foreign partition",
							cols[j].name, RelationGetRelationName(root)),
					 errdetail("Discovery reads rows, which stay on their server. Nothing was charged."),
					 errhint("Declare the column's domain with dp_declare.")));
		if (dpsynth_encoder_not_portable(&cols[j]))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the categories of column \"%s\" (type %s) are matched by a text that may differ between servers",
							cols[j].name, format_type_be(cols[j].typid)),
					 errdetail("Table \"%s\" has a foreign partition. Nothing was charged.",
							   RelationGetRelationName(root))));
	}
	for (int k = 0; k < nsets; k++)
	{
		int32		sizes[DP_PARTIAL_MAX_COLS] = {0};
		int64		cells;

		if (sets[k].n > DP_PARTIAL_MAX_COLS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a marginal of table \"%s\" over its foreign partitions has at most %d columns",
							RelationGetRelationName(root), DP_PARTIAL_MAX_COLS),
					 errdetail("Nothing was charged.")));
		for (int j = 0; j < sets[k].n; j++)
			sizes[j] = (int32) dp_domain_ncodes(&cols[sets[k].idx[j]].domain);
		if (dp_partial_shape(sizes, sets[k].n, &cells) != DP_PARTIAL_OK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a marginal of table \"%s\" over its foreign partitions has at most %lld cells",
							RelationGetRelationName(root), (long long) DP_PARTIAL_MAX_CELLS),
					 errdetail("Nothing was charged.")));
	}
	if (citus)
	{
		dpsynth_citus_check_sets(root, linitial_oid(foreign), cols, ncols, sets, nsets);
		return;
	}
	foreach(lc, foreign)
	{
		Oid			leaf = lfirst_oid(lc);
		ForeignServer *server = GetForeignServer(GetForeignServerIdByRelId(leaf));
		ForeignDataWrapper *fdw = GetForeignDataWrapper(server->fdwid);
		char	   *key = remote_key(leaf);
		const char *leafname = get_rel_name(leaf);	/* no catalog access in explain's catch */
		ListCell   *lc2;

		if (strcmp(fdw->fdwname, "postgres_fdw") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partition \"%s\" of table \"%s\" is on server \"%s\" of foreign-data wrapper \"%s\"",
							get_rel_name(leaf), RelationGetRelationName(root), server->servername, fdw->fdwname),
					 errdetail("dpsynth counts a foreign partition on its server through postgres_fdw only. Nothing was charged.")));
		/* two partitions reading one remote table would count its rows twice */
		foreach(lc2, foreign)
		{
			if (lfirst_oid(lc2) == leaf)
				break;
			if (strcmp(remote_key(lfirst_oid(lc2)), key) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("partitions \"%s\" and \"%s\" of table \"%s\" read the same table on server \"%s\"",
								get_rel_name(lfirst_oid(lc2)), get_rel_name(leaf), RelationGetRelationName(root),
								server->servername),
						 errdetail("Its rows would be counted twice. Nothing was charged.")));
		}
		/*
		 * Every statement that will count must ship as a whole (EXPLAIN connects only for remote
		 * estimates, and its errors are refused as the probes' are); if one
		 * does not, each column's encoder alone is tried, to name the one postgres_fdw keeps.  The
		 * probe form (with the server's version) is EXPLAINed: it ships only if the count does.
		 */
		for (int k0 = 0; k0 < nsets; k0 += DP_FOREIGN_SETS_PER_SCAN)
		{
			int			k1 = Min(nsets, k0 + DP_FOREIGN_SETS_PER_SCAN);

			CHECK_FOR_INTERRUPTS();
			if (aggregate_shipped(explain(count_sql(RelationGetRelid(root), leaf, cols, sets, k0, k1,
													COUNT_PROBE_EXPLAIN), server->servername, leafname),
								 "dpsynth._shard_identity("))
				continue;
			for (int j = 0; j < ncols; j++)
			{
				DpColumnSet one = {1, &j};

				if (!aggregate_shipped(explain(aggregate_sql(RelationGetRelid(root), leaf, cols, &one, 0, 1, COUNT_RUN),
											   server->servername, leafname), NULL))
					ereport(ERROR,
							(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
							 errmsg("server \"%s\" of partition \"%s\" would send rows, not counts",
									server->servername, get_rel_name(leaf)),
							 errdetail("postgres_fdw would not ship the encoder of column \"%s\" (type %s), or dpsynth's aggregate, to the server. Columns counted on their server: numbers, dates and timestamps in bins, booleans, text, varchar and char categories; the server's option extensions must list dpsynth. Nothing was charged.",
									   cols[j].name, format_type_be(cols[j].typid)),
							 errhint("Check ALTER SERVER %s OPTIONS (ADD extensions 'dpsynth'), or leave the column out.",
									 quote_identifier(server->servername))));
			}
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("server \"%s\" of partition \"%s\" would send rows, not counts",
							server->servername, get_rel_name(leaf)),
					 errdetail("postgres_fdw ships dpsynth's aggregate only to a server whose option extensions lists dpsynth, installed there in the same version. Nothing was charged."),
					 errhint("ALTER SERVER %s OPTIONS (ADD extensions 'dpsynth'), or SET if the option exists.",
							 quote_identifier(server->servername))));
		}
		/* the column types' statement must ship whole too, or the server would not compare them */
		{
			char	   *plan = explain(types_sql(leaf, cols, sets, nsets, true), server->servername, leafname);

			if (plan == NULL || strstr(plan, "\"Node Type\": \"Foreign Scan\"") == NULL ||
				strstr(plan, "\"Node Type\": \"Aggregate\"") != NULL || strstr(plan, "\"Filter\"") != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("the column types of partition \"%s\" cannot be compared on server \"%s\"",
								get_rel_name(leaf), server->servername),
						 errdetail("postgres_fdw would not ship the comparison. Nothing was charged.")));
		}
		/* on the server, over zero rows: the table, its column types, dpsynth and its version */
		remote_checks(RelationGetRelid(root), leaf, server->servername, cols, sets, nsets);
	}
}

/* The one set of dp_marginal: all of cols, in order. */
static DpColumnSet
all_columns(int ncols)
{
	int		   *idx = palloc(sizeof(int) * Max(ncols, 1));

	for (int j = 0; j < ncols; j++)
		idx[j] = j;
	return (DpColumnSet) {ncols, idx};
}

void
dpsynth_foreign_check(Relation root, List *foreign, DpColumn *cols, int ncols)
{
	DpColumnSet all = all_columns(ncols);

	dpsynth_foreign_check_sets(root, foreign, cols, ncols, &all, 1);
}

void
dpsynth_foreign_count_sets(Relation root, List *foreign, DpColumn *cols, const DpColumnSet *sets, int nsets,
						   int64 **counts)
{
	ListCell   *lc;

	if (list_length(foreign) == 1 && dpsynth_citus_counted(linitial_oid(foreign)))
	{
		dpsynth_citus_count_sets(linitial_oid(foreign), cols, sets, nsets, counts);
		return;
	}
	foreach(lc, foreign)
	{
		Oid			leaf = lfirst_oid(lc);

		for (int k0 = 0; k0 < nsets; k0 += DP_FOREIGN_SETS_PER_SCAN)
		{
			int			k1 = Min(nsets, k0 + DP_FOREIGN_SETS_PER_SCAN);
			DpOwnerSwitch sw;
			int			rc;

			CHECK_FOR_INTERRUPTS();
			dpsynth_become_owner(&sw);
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "dpsynth: SPI_connect failed");
			rc = SPI_execute(count_sql(RelationGetRelid(root), leaf, cols, sets, k0, k1, COUNT_RUN), true, 0);
			if (rc != SPI_OK_SELECT || SPI_processed != 1 || SPI_tuptable->tupdesc->natts != k1 - k0)
				elog(ERROR, "dpsynth: partition \"%s\" sent no counts", get_rel_name(leaf));
			for (int k = k0; k < k1; k++)
			{
				bool		isnull;
				Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, k - k0 + 1, &isnull);
				int64		ncells = 1;
				ArrayType  *a;

				if (isnull)
					elog(ERROR, "dpsynth: partition \"%s\" sent no counts", get_rel_name(leaf));
				for (int j = 0; j < sets[k].n; j++)
					ncells *= dp_domain_ncodes(&cols[sets[k].idx[j]].domain);
				a = DatumGetArrayTypeP(d);
				/* _partial_vector checked the shape; checked again, as it is added here */
				if (ARR_NDIM(a) != 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != INT8OID ||
					ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) != ncells)
					elog(ERROR, "dpsynth: partition \"%s\" sent counts of another shape", get_rel_name(leaf));
				for (int64 i = 0; i < ncells; i++)
				{
					int64		c = ((const int64 *) ARR_DATA_PTR(a))[i];

					if (c < 0 || pg_add_s64_overflow(counts[k][i], c, &counts[k][i]))
						elog(ERROR, "dpsynth: partition \"%s\" sent an invalid count", get_rel_name(leaf));
				}
			}
			SPI_finish();
			dpsynth_restore_user(&sw);
		}
	}
}

void
dpsynth_foreign_count(Relation root, List *foreign, DpColumn *cols, int ncols, int64 *counts)
{
	DpColumnSet all = all_columns(ncols);

	dpsynth_foreign_count_sets(root, foreign, cols, &all, 1, &counts);
}

/*
 * dpsynth._shard_identity(count): "version system-identifier database-oid" of this server, for a
 * coordinator's check before its charge (remote_checks).
 */
PG_FUNCTION_INFO_V1(dpsynth_shard_identity);
Datum
dpsynth_shard_identity(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(shard_identity()));
}
