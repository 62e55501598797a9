/*
 * foreign.c - dp_marginal over a table with partitions on other servers (postgres_fdw): each
 * foreign partition's exact counts are computed on its own server, and only they travel
 * (docs/DISTRIBUTED.md, "The release functions read counts through the aggregate").
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
 *   - every column has a public domain (discovery would read rows) and a portable encoder;
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
#include "executor/spi.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

static char *
leaf_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

static char *
sizes_literal(DpColumn *cols, int ncols)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "'{");
	for (int j = 0; j < ncols; j++)
		appendStringInfo(&b, "%s%u", j ? "," : "", dp_domain_ncodes(&cols[j].domain));
	appendStringInfoString(&b, "}'::pg_catalog.int4[]");
	return b.data;
}

/* The aggregate over one foreign partition, limit "" or " LIMIT 0". */
static char *
aggregate_sql(Oid leaf, DpColumn *cols, int ncols, const char *limit)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "SELECT dpsynth._partial_counts(ARRAY[");
	for (int j = 0; j < ncols; j++)
		appendStringInfo(&b, "%s%s", j ? ", " : "", dpsynth_encoder_sql(&cols[j]));
	appendStringInfo(&b, "]::pg_catalog.int4[], %s) AS s FROM ONLY %s%s",
					 sizes_literal(cols, ncols), leaf_name(leaf), limit);
	return b.data;
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
dpsynth_foreign_check(Relation root, List *foreign, DpColumn *cols, int ncols)
{
	ListCell   *lc;

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
	foreach(lc, foreign)
	{
		Oid			leaf = lfirst_oid(lc);
		ForeignServer *server = GetForeignServer(GetForeignServerIdByRelId(leaf));
		ForeignDataWrapper *fdw = GetForeignDataWrapper(server->fdwid);
		char	   *plan;

		if (strcmp(fdw->fdwname, "postgres_fdw") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partition \"%s\" of table \"%s\" is on server \"%s\" of foreign-data wrapper \"%s\"",
							get_rel_name(leaf), RelationGetRelationName(root), server->servername, fdw->fdwname),
					 errdetail("dpsynth counts a foreign partition on its server through postgres_fdw only. Nothing was charged.")));
		/* the planner must ship the whole aggregate (EXPLAIN does not connect) */
		plan = run_one(psprintf("EXPLAIN (VERBOSE, COSTS OFF, FORMAT JSON) %s", aggregate_sql(leaf, cols, ncols, "")));
		if (!aggregate_shipped(plan))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("server \"%s\" of partition \"%s\" would send rows, not counts",
							server->servername, get_rel_name(leaf)),
					 errdetail("postgres_fdw ships dpsynth's aggregate only to a server whose option extensions lists dpsynth, installed there in the same version. Nothing was charged."),
					 errhint("ALTER SERVER %s OPTIONS (ADD extensions 'dpsynth'), or SET if the option exists.",
							 quote_identifier(server->servername))));
		/* the server answers (the scan connects; LIMIT 0 runs no statement there) */
		(void) run_one(aggregate_sql(leaf, cols, ncols, " LIMIT 0"));
	}
}

void
dpsynth_foreign_count(List *foreign, DpColumn *cols, int ncols, int64 *counts, int64 ncells)
{
	ListCell   *lc;

	foreach(lc, foreign)
	{
		Oid			leaf = lfirst_oid(lc);
		DpOwnerSwitch sw;
		bool		isnull = true;
		int			rc;

		CHECK_FOR_INTERRUPTS();
		dpsynth_become_owner(&sw);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dpsynth: SPI_connect failed");
		rc = SPI_execute(psprintf("SELECT dpsynth._partial_vector(q.s, %s) FROM (%s) q",
								  sizes_literal(cols, ncols), aggregate_sql(leaf, cols, ncols, "")),
						 true, 0);
		if (rc == SPI_OK_SELECT && SPI_processed == 1)
		{
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
			{
				ArrayType  *a = DatumGetArrayTypeP(d);

				/* _partial_vector checked the shape; checked again, as it is added here */
				if (ARR_NDIM(a) != 1 || ARR_HASNULL(a) || ARR_ELEMTYPE(a) != INT8OID ||
					ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) != ncells)
					elog(ERROR, "dpsynth: partition \"%s\" sent counts of another shape", get_rel_name(leaf));
				for (int64 i = 0; i < ncells; i++)
					counts[i] += ((const int64 *) ARR_DATA_PTR(a))[i];
			}
		}
		if (isnull)
			elog(ERROR, "dpsynth: partition \"%s\" sent no counts", get_rel_name(leaf));
		SPI_finish();
		dpsynth_restore_user(&sw);
	}
}
