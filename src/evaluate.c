/*
 * evaluate.c - dp_evaluate(real, synthetic, holdout, target): the data owner's quality report of
 * a synthetic table, in SQL.
 *
 * NOT a differentially private release.  It reads every row of the real table (and of the
 * holdout) and returns exact statistics of them, so it is for roles that may read those rows
 * anyway: it runs with the caller's rights (SECURITY INVOKER), checks the SELECT privilege on
 * every table before reading a row (42501) and reads through SPI, so row-level security and
 * every other ordinary check apply as to a SELECT.  It charges nothing and says, in a NOTICE and
 * in its docs, that it is not DP.  A dpsynth analyst without SELECT on a protected table is
 * refused like any other role.  The definitions are in src/core/dp_eval.h.
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "evaluate.h"
#include "synthesize.h"

#define FETCH_ROWS 10000

static const char *const table_role[DP_EVAL_NTABLES] = {"real", "synthetic", "holdout"};

/*
 * ---- the core's hooks: interrupts between blocks.  Its memory comes from dp_env's handlers
 * (palloc in the current memory context): every call into dp_eval runs in eval_cxt. ----
 */

static MemoryContext eval_cxt;	/* the evaluation's memory, a child of the call's */

static int
eval_progress(void *arg, const dp_progress *p)
{
	(void) arg;
	(void) p;
	CHECK_FOR_INTERRUPTS();
	return 0;
}

/* A table as regclass prints it (qualified when not on the search path). */
static char *
rel_text(Oid relid)
{
	return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

/* ---- checks, all before the first row is read ---- */

/* The user columns of a relation, in attnum order. */
static List *
column_names(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *names = NIL;

	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
			names = lappend(names, pstrdup(NameStr(TupleDescAttr(desc, i)->attname)));
	relation_close(rel, NoLock);
	return names;
}

static bool
name_in(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp(lfirst(lc), name) == 0)
		return true;
	return false;
}

static void
check_same_columns(Oid real, List *real_cols, Oid other)
{
	List	   *cols = column_names(other);
	ListCell   *lc;

	foreach(lc, real_cols)
		if (!name_in(cols, lfirst(lc)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tables \"%s\" and \"%s\" do not have the same columns",
						get_rel_name(real), get_rel_name(other)),
				 errdetail("Column \"%s\" of table \"%s\" is not in table \"%s\".", (char *) lfirst(lc),
						   get_rel_name(real), get_rel_name(other)),
				 errhint("Compare tables with the same column names (their order may differ).")));
	foreach(lc, cols)
		if (!name_in(real_cols, lfirst(lc)))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("tables \"%s\" and \"%s\" do not have the same columns",
						get_rel_name(real), get_rel_name(other)),
				 errdetail("Column \"%s\" of table \"%s\" is not in table \"%s\".", (char *) lfirst(lc),
						   get_rel_name(other), get_rel_name(real)),
				 errhint("Compare tables with the same column names (their order may differ).")));
}

/* SELECT on the table, or on every column read: what a SELECT of them would need. */
static void
check_select(Oid relid, List *cols, const char *role)
{
	Oid			user = GetUserId();
	ListCell   *lc;

	if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK)
		return;
	foreach(lc, cols)
	{
		AttrNumber	att = get_attnum(relid, lfirst(lc));

		if (pg_attribute_aclcheck(relid, att, user, ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s", rel_text(relid)),
					 errdetail("dp_evaluate reads every row of its argument \"%s\" with your privileges; it is not a differentially private release.",
							   role),
					 errhint("Analysts judge a synthetic table from its DP outputs; the owner, or a role granted SELECT, runs dp_evaluate.")));
	}
}

static Oid
relation_arg(FunctionCallInfo fcinfo, int argno)
{
	Oid			relid;

	if (PG_ARGISNULL(argno))
	{
		if (argno == DP_EVAL_HOLDOUT)
			return InvalidOid;
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("argument \"%s\" of dp_evaluate must not be NULL", table_role[argno])));
	}
	relid = PG_GETARG_OID(argno);
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return relid;
}

/* ---- reading ---- */

static char *
select_list(List *cols)
{
	StringInfoData s;
	ListCell   *lc;

	initStringInfo(&s);
	foreach(lc, cols)
		appendStringInfo(&s, "%sCAST(%s AS pg_catalog.text)", s.len ? ", " : "",
						 quote_identifier(lfirst(lc)));
	return s.data;
}

/* Every row of a table into the evaluation, through SPI (the caller's rights, RLS). */
static void
read_table(dp_eval *e, int t, Oid relid, List *cols)
{
	char	   *sql = psprintf("SELECT %s FROM %s", select_list(cols),
							   quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
														  get_rel_name(relid)));
	int			ncols = list_length(cols);
	const char **cells = palloc(ncols * sizeof(char *));
	MemoryContext batch = AllocSetContextCreate(CurrentMemoryContext, "dp_evaluate batch",
												ALLOCSET_DEFAULT_SIZES);
	SPIPlanPtr	plan;
	Portal		portal;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if ((plan = SPI_prepare(sql, 0, NULL)) == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			MemoryContext old = MemoryContextSwitchTo(batch);

			for (int c = 0; c < ncols; c++)
			{
				bool		isnull;
				Datum		d = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c + 1, &isnull);

				cells[c] = isnull ? NULL : text_to_cstring(DatumGetTextPP(d));
			}
			MemoryContextSwitchTo(eval_cxt);
			if (dp_eval_add_row(e, t, cells) != 0)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
			MemoryContextSwitchTo(old);
			MemoryContextReset(batch);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(batch);
}

static void
check_not_empty(const dp_eval *e, const Oid *relid)
{
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		if (OidIsValid(relid[t]) && dp_eval_rows(e, t) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("table \"%s\" has no rows", get_rel_name(relid[t])),
					 errdetail("It is dp_evaluate's argument \"%s\".", table_role[t]),
					 errhint("dp_evaluate compares the distributions of non-empty tables.")));
}

void
dpsynth_evaluate_tables(FunctionCallInfo fcinfo, dp_eval_result *res, DpEvalTables *tables)
{
	List	   *cols;
	int			target = -1,
				ncols,
				rc;
	const char **names;
	dp_eval_hooks hooks = {eval_progress, NULL};
	MemoryContext old;
	dp_eval    *e;
	ListCell   *lc;

	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		tables->relid[t] = relation_arg(fcinfo, t);
	tables->target = PG_ARGISNULL(3) ? NULL : pstrdup(NameStr(*PG_GETARG_NAME(3)));
	cols = column_names(tables->relid[DP_EVAL_REAL]);
	if (cols == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table \"%s\" has no columns", get_rel_name(tables->relid[DP_EVAL_REAL]))));
	for (int t = DP_EVAL_SYNTH; t < DP_EVAL_NTABLES; t++)
		if (OidIsValid(tables->relid[t]))
			check_same_columns(tables->relid[DP_EVAL_REAL], cols, tables->relid[t]);
	ncols = list_length(cols);
	names = palloc(ncols * sizeof(char *));
	foreach(lc, cols)
	{
		names[foreach_current_index(lc)] = lfirst(lc);
		if (tables->target && strcmp(tables->target, lfirst(lc)) == 0)
			target = foreach_current_index(lc);
	}
	if (tables->target && target < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist", tables->target,
						get_rel_name(tables->relid[DP_EVAL_REAL])),
				 errhint("The target is the column the model predicts: one of the real table's columns.")));
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		if (OidIsValid(tables->relid[t]))
			check_select(tables->relid[t], cols, table_role[t]);

	ereport(NOTICE,
			(errmsg("dp_evaluate reads the real table \"%s\" with your privileges: its figures are not differentially private",
					get_rel_name(tables->relid[DP_EVAL_REAL])),
			 errdetail("They are exact statistics of the rows compared; nothing is charged to a budget."),
			 errhint("Share them only with roles that may read the real table.")));

	eval_cxt = AllocSetContextCreate(CurrentMemoryContext, "dp_evaluate", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(eval_cxt);
	e = dp_eval_create(ncols, names, &hooks);
	MemoryContextSwitchTo(old);
	if (e == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		if (OidIsValid(tables->relid[t]))
			read_table(e, t, tables->relid[t], cols);
	check_not_empty(e, tables->relid);
	old = MemoryContextSwitchTo(eval_cxt);
	rc = dp_eval_run(e, target, res);
	MemoryContextSwitchTo(old);
	if (rc != 0)
		ereport(ERROR, (errcode(dpsynth_core_errcode()), errmsg("dp_evaluate failed"),
						errdetail("%s", dp_last_error())));
}

/* ---- dp_evaluate's rows ---- */

typedef struct RowSink
{
	ReturnSetInfo *rsinfo;
} RowSink;

static void
emit(RowSink *s, const char *scope, const char *column, const char *metric, double value,
	 double reference, const char *note)
{
	Datum		v[6];
	bool		n[6] = {false, column == NULL, false, isnan(value), isnan(reference), note == NULL};

	v[0] = CStringGetTextDatum(scope);
	v[1] = column ? CStringGetTextDatum(column) : (Datum) 0;
	v[2] = CStringGetTextDatum(metric);
	v[3] = Float8GetDatum(value);
	v[4] = Float8GetDatum(reference);
	v[5] = note ? CStringGetTextDatum(note) : (Datum) 0;
	tuplestore_putvalues(s->rsinfo->setResult, s->rsinfo->setDesc, v, n);
}

static void
emit_marginals(RowSink *s, const dp_eval_result *r)
{
	emit(s, "table", NULL, "rows", (double) r->rows[DP_EVAL_SYNTH], (double) r->rows[DP_EVAL_REAL],
		 "synthetic rows; reference: real rows");
	emit(s, "table", NULL, "tvd1", r->tvd1, NAN,
		 psprintf("mean total variation distance over %d 1-way marginals", r->ncols));
	emit(s, "table", NULL, "tvd2", r->tvd2, NAN,
		 psprintf("mean over " INT64_FORMAT " 2-way marginals", r->npairs));
	emit(s, "table", NULL, "tvd3", r->tvd3, NAN,
		 r->ntriples == (int64) r->ncols * (r->ncols - 1) * (r->ncols - 2) / 6
		 ? psprintf("mean over all " INT64_FORMAT " 3-way marginals", r->ntriples)
		 : psprintf("mean over " INT64_FORMAT " 3-way marginals drawn as evaluate.py draws them", r->ntriples));
	emit(s, "table", NULL, "range_error", r->range_error, NAN,
		 psprintf("mean |real - synthetic| fraction over " INT64_FORMAT " random range queries on 3 columns", r->nqueries));
	emit(s, "table", NULL, "corr_diff", r->corr_diff, NAN,
		 "mean |Cramer's V real - synthetic| over the pairs");
}

static void
emit_ml(RowSink *s, const dp_eval_result *r, const char *target)
{
	const char *note;

	if (!r->ml_ran)
	{
		note = psprintf("skipped: %s", r->ml_skipped);
		emit(s, "table", NULL, "tstr_accuracy", NAN, NAN, note);
		emit(s, "table", NULL, "tstr_auc", NAN, NAN, note);
		return;
	}
	note = psprintf("logistic regression predicting \"%s\" (%d labels), trained on the synthetic table, tested on the holdout; reference: trained on the real table",
					target, r->nlabels);
	emit(s, "table", NULL, "tstr_accuracy", r->tstr_acc, r->trtr_acc, note);
	emit(s, "table", NULL, "tstr_auc", r->tstr_auc, r->trtr_auc,
		 isnan(r->tstr_auc) ? "undefined: the holdout has one label" : note);
}

static void
emit_privacy(RowSink *s, const dp_eval_result *r, bool holdout)
{
	const char *ref = holdout ? "reference: the same for the holdout (real rows not used)"
		: "no holdout table given: no reference";

	emit(s, "table", NULL, "exact_copy_rate", r->copy_rate, r->copy_rate_holdout,
		 psprintf("fraction of rows equal to a real row; %s", ref));
	emit(s, "table", NULL, "dcr_p5", r->dcr_p5, r->dcr_p5_holdout,
		 psprintf("5th percentile of the distance to the closest real row (" INT64_FORMAT " rows%s against " INT64_FORMAT " real rows%s); %s",
				  r->dcr_queries, r->dcr_queries < r->rows[DP_EVAL_SYNTH] ? ", a fixed-seed sample," : "",
				  r->dcr_reference, r->dcr_reference < r->rows[DP_EVAL_REAL] ? " (a fixed-seed sample)" : "",
				  ref));
}

static void
emit_columns(RowSink *s, const dp_eval_result *r)
{
	for (int c = 0; c < r->ncols; c++)
	{
		const dp_eval_column *col = &r->cols[c];

		emit(s, "column", col->name, "tvd1", col->tvd1, NAN,
			 col->numeric ? psprintf("numeric: %d quantile bins of the real values, %d codes for non-numbers",
									 col->bins, col->size - col->bins)
			 : psprintf("categorical: %d codes (the real labels and \"other\")", col->size));
		if (r->ncols > 1)
		{
			emit(s, "column", col->name, "tvd2", col->tvd2, NAN, "mean over the pairs with this column");
			emit(s, "column", col->name, "corr_diff", col->corr_diff, NAN, "mean over the pairs with this column");
		}
	}
}

PG_FUNCTION_INFO_V1(dpsynth_evaluate);

Datum
dpsynth_evaluate(PG_FUNCTION_ARGS)
{
	dp_eval_result res;
	DpEvalTables tables;
	RowSink		sink;

	dpsynth_evaluate_tables(fcinfo, &res, &tables);
	InitMaterializedSRF(fcinfo, 0);
	sink.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	emit_marginals(&sink, &res);
	emit_ml(&sink, &res, tables.target);
	emit_privacy(&sink, &res, OidIsValid(tables.relid[DP_EVAL_HOLDOUT]));
	emit_columns(&sink, &res);
	return (Datum) 0;
}
