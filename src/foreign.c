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
 *   - the server answers: the same statement with LIMIT 0 opens the foreign scan, which connects
 *     with the user mapping, and returns before any statement runs there (measured on 15: the
 *     server's log shows the session's settings and no cursor).  That the server has dpsynth
 *     is only known when the count runs, after the charge.
 * After the charge, a server that fails fails the call (fail closed): the charge stays, nothing
 * is released, and the error names the server's statement, never a value of the rows.
 *
 * Privacy: the sensitivity is unchanged (one row lies in one partition and moves one count of
 * the sum by one), and the noise and the charge are those of dp_marginal (PRIVACY.md).  The
 * coordinator trusts its servers' counts (docs/DISTRIBUTED.md, trust model): a server can distort
 * the release, not learn from it.
 */
#include "dpsynth.h"

#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "common/int.h"
#include "executor/spi.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "dp_partial.h"

static char *
leaf_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

static char *
sizes_literal(DpColumn *cols, const DpColumnSet *set)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "'{");
	for (int j = 0; j < set->n; j++)
		appendStringInfo(&b, "%s%u", j ? "," : "", dp_domain_ncodes(&cols[set->idx[j]].domain));
	appendStringInfoString(&b, "}'::pg_catalog.int4[]");
	return b.data;
}

/*
 * The aggregates over one foreign partition, sets [k0, k1) of cols, one state each (s0, s1, ...):
 * one scan of the partition on its server; limit "" or " LIMIT 0".
 */
static char *
aggregate_sql(Oid root, Oid leaf, DpColumn *cols, const DpColumnSet *sets, int k0, int k1, const char *limit)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "SELECT ");
	for (int k = k0; k < k1; k++)
	{
		appendStringInfo(&b, "%sdpsynth._partial_counts(ARRAY[", k > k0 ? ", " : "");
		for (int j = 0; j < sets[k].n; j++)
			appendStringInfo(&b, "%s%s", j ? ", " : "", dpsynth_encoder_sql(root, &cols[sets[k].idx[j]]));
		appendStringInfo(&b, "]::pg_catalog.int4[], %s) AS s%d", sizes_literal(cols, &sets[k]), k - k0);
	}
	appendStringInfo(&b, " FROM ONLY %s%s", leaf_name(leaf), limit);
	return b.data;
}

/* The statement that counts sets [k0, k1) on a foreign partition: the one checked before the charge and run after. */
static char *
count_sql(Oid root, Oid leaf, DpColumn *cols, const DpColumnSet *sets, int k0, int k1)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "SELECT ");
	for (int k = k0; k < k1; k++)
		appendStringInfo(&b, "%sdpsynth._partial_vector(q.s%d, %s)", k > k0 ? ", " : "", k - k0,
						 sizes_literal(cols, &sets[k]));
	appendStringInfo(&b, " FROM (%s) q", aggregate_sql(root, leaf, cols, sets, k0, k1, ""));
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

/* EXPLAIN (VERBOSE, FORMAT JSON) of a statement, as the extension owner; no connection is made. */
static char *
explain(const char *sql)
{
	return run_one(psprintf("EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) %s", sql));
}

/*
 * Whether an EXPLAIN (VERBOSE, FORMAT JSON) shows the aggregate shipped whole: a Foreign Scan,
 * no local Aggregate node, and the aggregate in the Remote SQL.
 */
static bool
aggregate_shipped(const char *plan)
{
	const char *remote;

	if (plan == NULL || strstr(plan, "\"Node Type\": \"Foreign Scan\"") == NULL ||
		strstr(plan, "\"Node Type\": \"Aggregate\"") != NULL)
		return false;
	remote = strstr(plan, "\"Remote SQL\"");
	return remote != NULL && strstr(remote, "dpsynth._partial_counts(") != NULL;
}

void
dpsynth_foreign_check_sets(Relation root, List *foreign, DpColumn *cols, int ncols, const DpColumnSet *sets,
						   int nsets)
{
	ListCell   *lc;

	if (nsets < 1)
		elog(ERROR, "dpsynth: no marginal to count on the foreign partitions");
	for (int j = 0; j < ncols; j++)
	{
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
	foreach(lc, foreign)
	{
		Oid			leaf = lfirst_oid(lc);
		ForeignServer *server = GetForeignServer(GetForeignServerIdByRelId(leaf));
		ForeignDataWrapper *fdw = GetForeignDataWrapper(server->fdwid);
		char	   *key = remote_key(leaf);
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
		 * Every statement that will count must ship as a whole (EXPLAIN does not connect); if one
		 * does not, each column's encoder alone is tried, to name the one postgres_fdw keeps.
		 */
		for (int k0 = 0; k0 < nsets; k0 += DP_FOREIGN_SETS_PER_SCAN)
		{
			int			k1 = Min(nsets, k0 + DP_FOREIGN_SETS_PER_SCAN);

			CHECK_FOR_INTERRUPTS();
			if (aggregate_shipped(explain(count_sql(RelationGetRelid(root), leaf, cols, sets, k0, k1))))
				continue;
			for (int j = 0; j < ncols; j++)
			{
				DpColumnSet one = {1, &j};

				if (!aggregate_shipped(explain(aggregate_sql(RelationGetRelid(root), leaf, cols, &one, 0, 1, ""))))
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
		/* the server answers (the scan connects; LIMIT 0 runs no statement there) */
		(void) run_one(aggregate_sql(RelationGetRelid(root), leaf, cols, sets, 0, Min(nsets, 1), " LIMIT 0"));
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
			rc = SPI_execute(count_sql(RelationGetRelid(root), leaf, cols, sets, k0, k1), true, 0);
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
