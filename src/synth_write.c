/*
 * synth_write.c - writing a synthetic table, as the caller: the target's name and schema
 * (checked before the charge), CREATE TABLE, the source's CHECK constraints and NOT NULLs on
 * the empty table, then the decoded rows (table_multi_insert, or on PostgreSQL 15 heap pages
 * written directly: synth_pagewrite.c), each held to those constraints as COPY does, rows a
 * CHECK rejects dropped.
 * Post-processing of released data only.
 */
#include "synthesize.h"

#include "access/heapam.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "nodes/makefuncs.h"
#include "parser/scansup.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"
#include "utils/relcache.h"

#include "dp_units.h"

/*
 * The target: the caller's creation schema (or the schema named), a new name, and the right to
 * create there; raises before any work.  Returns the relation name, its schema in *nspid.
 */
char *
synth_resolve_target(FunctionCallInfo fcinfo, int argno, const char *default_name, const char *function, Oid *nspid)
{
	RangeVar   *rv;
	AclResult	aclresult;
	char	   *target;

	if (PG_ARGISNULL(argno))
	{
		char	   *name = pstrdup(default_name);

		truncate_identifier(name, strlen(name), false);
		rv = makeRangeVar(NULL, name, -1);
	}
	else						/* a name, maybe schema-qualified and quoted */
		rv = makeRangeVarFromNameList(dpsynth_qualified_name_list(NameStr(*PG_GETARG_NAME(argno))));
	target = rv->relname;
	*nspid = RangeVarGetCreationNamespace(rv);
	aclresult = dpsynth_namespace_aclcheck(*nspid, GetUserId(), ACL_CREATE);
	if (aclresult != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to create table \"%s\" in schema \"%s\"", target, get_namespace_name(*nspid)),
				 errhint("%s creates its table in your current schema; choose one you may create in (SET search_path) or pass target => ...",
						 function)));
	if (OidIsValid(get_relname_relid(target, *nspid)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists in schema %s", target, get_namespace_name(*nspid)),
				 errhint("Pass another name with target => ..., or drop the old copy.")));
	return target;
}

/*
 * CREATE TABLE target (same names and types), as the caller.  Its constraints are added after the
 * rows are in (add_constraints), so that PostgreSQL itself validates them.  A column over a domain
 * gets the domain's base type, and the domain's NOT NULL and (built-in) CHECKs become the
 * column's own constraints; an enum or composite type gets a copy of its own
 * (synth_own_column_types): the copy must not depend on a type the source's owner controls,
 * who could otherwise add a CHECK calling their own function (run by whoever writes the copy) or
 * drop the type and the analyst's column with it.
 */
static Oid
create_target(Oid nspid, const char *target, OutColumn *out, int nout, const char *comment)
{
	StringInfoData sql;
	char	   *qname = quote_qualified_identifier(get_namespace_name(nspid), target);
	Oid			result;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (", qname);
	for (int i = 0; i < nout; i++)
		appendStringInfo(&sql, "%s%s %s", i ? ", " : "", quote_identifier(out[i].name),
						 format_type_with_typemod(out[i].copy_type, out[i].copy_typmod));
	appendStringInfoChar(&sql, ')');
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the target table");
	if (SPI_execute(psprintf("COMMENT ON TABLE %s IS %s", qname, quote_literal_cstr(comment)), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not comment the target table");
	SPI_finish();
	CommandCounterIncrement();
	result = get_relname_relid(target, nspid);
	if (!OidIsValid(result))
		elog(ERROR, "target table vanished");
	return result;
}

/*
 * The source's CHECK constraints and NOT NULLs on the target, added while it is still empty (one
 * ALTER TABLE, with nothing to scan).  insert_rows then holds every row to them as COPY does
 * (ExecConstraints): a synthetic row that a CHECK constraint or a column's domain rejects
 * (possible for checks across columns, or narrower than the declared domain) is not written,
 * which is post-processing of released data.  This used to be a DELETE and a validating ALTER
 * TABLE after the rows were in: two more scans of the written table.
 * Runs with search_path pinned to pg_catalog, pg_temp (the expressions were deparsed and
 * validated under it).
 */
static void
add_constraints(Oid nspid, const char *target, OutColumn *out, int nout, List *checks, List *domain_exprs)
{
	char	   *qname = quote_qualified_identifier(get_namespace_name(nspid), target);
	ListCell   *lc;
	StringInfoData alter;
	int			nalter = 0;
	int			nestlevel = dpsynth_pin_search_path();

	initStringInfo(&alter);
	appendStringInfo(&alter, "ALTER TABLE %s", qname);
	foreach(lc, checks)
	{
		DpCheck    *c = lfirst(lc);

		appendStringInfo(&alter, "%s ADD CONSTRAINT %s CHECK (%s)", nalter++ ? "," : "", quote_identifier(c->name),
						 c->expr);
	}
	foreach(lc, domain_exprs)
		appendStringInfo(&alter, "%s ADD CHECK (%s)", nalter++ ? "," : "", (char *) lfirst(lc));
	for (int i = 0; i < nout; i++)
		if (out[i].notnull)
			appendStringInfo(&alter, "%s ALTER COLUMN %s SET NOT NULL", nalter++ ? "," : "",
							 quote_identifier(out[i].name));
	if (nalter > 0)
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute(alter.data, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not add the constraints");
		SPI_finish();
	}
	AtEOXact_GUC(false, nestlevel);
	CommandCounterIncrement();
}

/*
 * The target's CHECK constraints (the source's and its columns' domains', added by
 * add_constraints) as one expression, ready to run on a slot (ExecPrepareCheck: their implicit
 * AND, where NULL passes, as each CHECK's own NULL passes); NULL when there is none.
 */
static ExprState *
prepare_checks(TupleDesc tdesc, EState *estate)
{
	TupleConstr *constr = tdesc->constr;
	List	   *quals = NIL;

	for (int i = 0; constr && i < constr->num_check; i++)
		quals = lappend(quals, stringToNode(constr->check[i].ccbin));
	return quals == NIL ? NULL : ExecPrepareCheck(quals, estate);
}

/*
 * Decodes every synthetic row into the (new, index-free) target, which already has its
 * constraints.  Rows go in by table_multi_insert, WRITE_BATCH at a time (as COPY does: one WAL
 * record per page rather than per row), or, on PostgreSQL 15, into heap pages written a
 * megabyte at a time (synth_pagewrite.c); an index, trigger or rule that an event trigger
 * added is refused, since neither path maintains it.  As COPY does, each row is first held to the
 * target's constraints: a row a CHECK rejects (false; NULL passes) is dropped, and a NULL in a
 * NOT NULL column, which the decoder never gives (synth_decode.c), is an error.  Returns the
 * number of rows dropped.
 */
#define WRITE_BATCH 1000

/*
 * Where the rows go in: position p of npos writes synthetic row order[p] (p itself if order is
 * NULL) with unit id unit[p] (NULL: no unit).  With order, a unit's positions are consecutive and
 * the columns held constant within a unit (OutColumn.unit_constant) are decoded once per unit.
 */
typedef struct RowPlan
{
	uint64		npos;
	const uint64 *order;
	const int64 *unit;
} RowPlan;

/* The value of a column held constant within a unit (att: its target column): decoded at the
 * unit's first row (starts) and kept in unitcxt, reset per unit; the unit's other rows get copies
 * in the current (the batch's) context, which outlive the unit until their batch is written. */
static Datum
unit_constant_value(OutColumn *oc, Form_pg_attribute att, dp_code code, bool starts, Datum *kept,
					bool *kept_null, MemoryContext unitcxt, dp_prng *rng, bool *isnull)
{
	if (starts)
	{
		Datum		v = synth_decode_value(oc, code, rng, isnull);
		MemoryContext old = MemoryContextSwitchTo(unitcxt);

		*kept_null = *isnull;
		*kept = *isnull ? (Datum) 0 : datumCopy(v, att->attbyval, att->attlen);
		MemoryContextSwitchTo(old);
		return v;
	}
	*isnull = *kept_null;
	return *isnull ? (Datum) 0 : datumCopy(*kept, att->attbyval, att->attlen);
}

/* An insert of the synthetic rows under way: insert_begin, insert_range for its positions in order, insert_end. */
typedef struct Inserter
{
	Relation	trel;
	TupleDesc	tdesc;
	BulkInsertState bistate;
	CommandId	cid;
	MemoryContext batchcxt,
				unitcxt;
	TupleTableSlot **slots;
	int			nslots;
	EState	   *estate;
	ExprContext *econtext;
	ExprState  *checks;
	SynthPageWriter *pages;
	uint64		dropped;
	Datum	   *kept;
	bool	   *kept_null;
	OutColumn  *out;
	int			nout;
} Inserter;

static void
insert_begin(Inserter *ins, Oid target_relid, OutColumn *out, int nout)
{
	memset(ins, 0, sizeof(*ins));
	ins->trel = table_open(target_relid, RowExclusiveLock);
	ins->tdesc = RelationGetDescr(ins->trel);
	ins->bistate = GetBulkInsertState();
	ins->cid = GetCurrentCommandId(true);
	ins->batchcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth batch", ALLOCSET_DEFAULT_SIZES);
	ins->slots = palloc(sizeof(TupleTableSlot *) * WRITE_BATCH);
	ins->estate = CreateExecutorState();
	ins->econtext = GetPerTupleExprContext(ins->estate);
	ins->checks = prepare_checks(ins->tdesc, ins->estate);
	ins->unitcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth unit", ALLOCSET_SMALL_SIZES);
	ins->kept = palloc0(sizeof(Datum) * Max(nout, 1));
	ins->kept_null = palloc0(sizeof(bool) * Max(nout, 1));
	ins->out = out;
	ins->nout = nout;
	if (ins->tdesc->natts != nout)
		elog(ERROR, "the target table has %d columns, not %d", ins->tdesc->natts, nout);
	/* rows go in without index entries or triggers: the table must have none */
	if (RelationGetIndexList(ins->trel) != NIL || ins->trel->trigdesc != NULL || ins->trel->rd_rel->relhasrules)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the new synthetic table \"%s\" has an index, a trigger or a rule",
						RelationGetRelationName(ins->trel)),
				 errdetail("Something other than dpsynth added it after CREATE TABLE, such as an event trigger; dpsynth writes the rows without maintaining indexes or firing triggers."),
				 errhint("Let the event trigger skip dpsynth's tables, or add indexes after the call.")));
	ins->pages = synth_pagewrite_begin(ins->trel, ins->cid);
	for (int b = 0; b < WRITE_BATCH; b++)
		ins->slots[b] = table_slot_create(ins->trel, NULL);
}

/*
 * Positions p0 .. p1 of the plan's npos written: position p's synthetic row is synth's row
 * (order ? order[p] : p) - first (synth: the rows from row `first` of the whole on).  The last
 * position (npos - 1) flushes the batch.
 */
static void
insert_range(Inserter *ins, const dp_codes *synth, uint64 first, const RowPlan *plan, uint64 p0, uint64 p1,
			 dp_prng *rng, SynthProgress *pr)
{
	OutColumn  *out = ins->out;
	int			nout = ins->nout;
	TupleDesc	tdesc = ins->tdesc;

	for (uint64 p = p0; p < p1; p++)
	{
		MemoryContext old = MemoryContextSwitchTo(ins->batchcxt);
		TupleTableSlot *slot = ins->slots[ins->nslots++];
		uint64		r = (plan->order ? plan->order[p] : p) - first;
		bool		starts = plan->order && (p == 0 || plan->unit[p] != plan->unit[p - 1]);

		CHECK_FOR_INTERRUPTS();
		if (starts)
			MemoryContextReset(ins->unitcxt);
		/* (the slot was cleared after the last multi-insert or a dropped row, or is fresh) */
		/* the target's columns are the model's, in order */
		for (int i = 0; i < nout; i++)
		{
			slot->tts_isnull[i] = false;
			if (out[i].kind == OUT_SYNTH && out[i].unit_constant && plan->order)
				slot->tts_values[i] = unit_constant_value(&out[i], TupleDescAttr(tdesc, i), synth->col[out[i].synth][r],
														  starts, &ins->kept[i], &ins->kept_null[i], ins->unitcxt, rng,
														  &slot->tts_isnull[i]);
			else if (out[i].kind == OUT_SYNTH)
				slot->tts_values[i] = synth_decode_value(&out[i], synth->col[out[i].synth][r], rng, &slot->tts_isnull[i]);
			else if (out[i].kind == OUT_IDENTIFIER)
				slot->tts_values[i] = synth_identifier_value(&out[i], out[i].unit && plan->unit ? plan->unit[p] :
															 (int64) p + 1, rng, &slot->tts_isnull[i]);
			else
			{
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
			}
			if (slot->tts_isnull[i] && TupleDescAttr(tdesc, i)->attnotnull)
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("a NULL was decoded for NOT NULL column \"%s\" of the synthetic table",
								NameStr(TupleDescAttr(tdesc, i)->attname))));
		}
		ExecStoreVirtualTuple(slot);
		MemoryContextSwitchTo(old);
		if (ins->checks)
		{
			ins->econtext->ecxt_scantuple = slot;
			if (!ExecCheck(ins->checks, ins->econtext))
			{
				ExecClearTuple(slot);
				ins->nslots--;
				ins->dropped++;
			}
			ResetExprContext(ins->econtext);
		}
		if (ins->nslots > 0 && (ins->nslots == WRITE_BATCH || p + 1 == plan->npos))
		{
			if (ins->pages)
				for (int b = 0; b < ins->nslots; b++)
					synth_pagewrite_row(ins->pages, ins->slots[b]->tts_values, ins->slots[b]->tts_isnull);
			else
				/* a new table has no free space to find: TABLE_INSERT_SKIP_FSM, as CREATE TABLE AS */
				table_multi_insert(ins->trel, ins->slots, ins->nslots, ins->cid, TABLE_INSERT_SKIP_FSM, ins->bistate);
			for (int b = 0; b < ins->nslots; b++)
				ExecClearTuple(ins->slots[b]);
			ins->nslots = 0;
			MemoryContextReset(ins->batchcxt);
		}
		if ((p + 1) % (64 * WRITE_BATCH) == 0)
			synth_report(pr, "writing the synthetic table", (int) (100.0 * p / plan->npos));
	}
}

/* The insert finished; returns the rows dropped. */
static uint64
insert_end(Inserter *ins)
{
	if (ins->pages)
		synth_pagewrite_end(ins->pages);
	for (int b = 0; b < WRITE_BATCH; b++)
		ExecDropSingleTupleTableSlot(ins->slots[b]);
	FreeBulkInsertState(ins->bistate);
	FreeExecutorState(ins->estate);
	table_close(ins->trel, NoLock);
	MemoryContextDelete(ins->batchcxt);
	MemoryContextDelete(ins->unitcxt);
	return ins->dropped;
}

static uint64
insert_rows(Oid target_relid, OutColumn *out, int nout, const dp_codes *synth, const RowPlan *plan,
			dp_prng *rng, SynthProgress *pr)
{
	Inserter	ins;

	insert_begin(&ins, target_relid, out, nout);
	insert_range(&ins, synth, 0, plan, 0, plan->npos, rng, pr);
	return insert_end(&ins);
}

/* The codes of the synthesized columns held constant within a unit, in column order: false if none. */
static bool
unit_constant_columns(const DpModel *m, const dp_codes *synth, const uint16 ***gcols, int *ngcols)
{
	const uint16 **g = palloc(sizeof(uint16 *) * Max(m->nout, 1));
	int			n = 0;

	for (int i = 0; i < m->nout; i++)
		if (m->out[i].kind == OUT_SYNTH && m->out[i].unit_constant)
			g[n++] = synth->col[m->out[i].synth];
	*gcols = g;
	*ngcols = n;
	return n > 0;
}

/*
 * The grouped units may write up to k - 1 rows more per group than were drawn, while a NOT NULL
 * identifier column was checked (synth_check_identifiers, before the charge) for the rows drawn
 * only, and dpsynth.max_sample_rows bounds the rows a call writes: the units past the fewest fresh
 * values such a column holds, or past that bound, are left out, whole (they come in a random
 * order, so these are random units), so that no identifier is NULL.
 */
static void
fit_identifiers(OutColumn *out, int nout, RowPlan *plan)
{
	int64		limit = dpsynth_max_sample_rows;
	uint64		p;

	for (int i = 0; i < nout; i++)
		if (out[i].kind == OUT_IDENTIFIER && out[i].notnull)
		{
			/* the most a column holds: the plain format, which synth_identifier_format picks
			 * for many rows (the table's own format is set again for the rows written) */
			synth_identifier_format(&out[i], PG_INT64_MAX);
			limit = Min(limit, out[i].id_capacity);
		}
	if ((uint64) limit >= plan->npos)
		return;
	p = (uint64) limit;
	while (p > 0 && plan->unit[p] == plan->unit[p - 1])
		p--;
	plan->npos = p;
}

/*
 * The decoders prepared (identifiers formatted for npos rows), and the target created as the
 * caller with its constraints (provenance in its comment).  Returns the table.
 */
static Oid
prepare_target(DpModel *m, uint64 npos, Oid nspid, const char *target, const char *comment, SynthProgress *pr)
{
	OutColumn  *out = m->out;
	int			nout = m->nout;
	List	   *checks;
	StringInfoData full;
	ListCell   *lc;
	Oid			relid;

	for (int i = 0; i < nout; i++)
	{
		if (out[i].kind == OUT_SYNTH)
		{
			synth_prepare_fallback(&out[i], m->res.oneway_noisy[out[i].synth]);
			synth_prepare_shape(&out[i]);
			synth_prepare_heaps(&out[i], m->res.oneway_noisy[out[i].synth]);
		}
		else if (out[i].kind == OUT_IDENTIFIER)
			synth_identifier_format(&out[i], (int64) npos);
	}
	/* provenance: what of the source's schema is not carried over, and why */
	initStringInfo(&full);
	appendStringInfoString(&full, comment);
	foreach(lc, m->skipped_checks)
		appendStringInfo(&full, "; CHECK %s not copied (not built-in only)", quote_identifier(lfirst(lc)));
	for (int i = 0; i < nout; i++)
		if (OidIsValid(out[i].source_typid))
			appendStringInfo(&full, "; column %s has the base type of domain %s (not built-in only)",
							 quote_identifier(out[i].name), format_type_be(out[i].source_typid));
	synth_own_column_types(out, nout, nspid);
	relid = create_target(nspid, target, out, nout, full.data);
	checks = synth_validated_checks(relid, m->checks, pr->label);
	add_constraints(nspid, target, out, nout, checks, synth_domain_check_exprs(relid, out, nout));
	return relid;
}

/*
 * Creates the target table as the caller, decodes the synthetic codes of the model's columns
 * into it, and adds the source's constraints.  Returns the number of rows left in the table
 * (rows a CHECK rejects are dropped); *target_relid is the table.  Post-processing only: it
 * reads the model and the synthetic codes, and draws its randomness from rng.
 */
uint64
synth_write_table(DpModel *m, const dp_codes *synth, dp_prng *rng, Oid nspid, const char *target,
				const char *comment, SynthProgress *pr, Oid *target_relid)
{
	OutColumn  *out = m->out;
	int			nout = m->nout;
	uint64		dropped;
	RowPlan		plan = {synth->nrows, NULL, NULL};
	int64	   *unit_of_row = NULL;
	uint64	   *order = NULL;
	const uint16 **gcols;
	int			ngcols;

	synth_report(pr, "writing the synthetic table", 0);
	/* a source with a privacy unit and columns constant within a unit: the synthetic units are
	 * formed within the rows of one combination of those columns (the rows written may then
	 * differ from the rows drawn by a few per combination, dp_unit_assign_grouped) */
	if (m->unit_hist != NULL && synth->nrows > 0 && unit_constant_columns(m, synth, &gcols, &ngcols))
	{
		if (dp_unit_assign_grouped(m->unit_hist, (uint32) m->unit_k, synth->nrows, gcols, (uint32) ngcols, rng,
								   &order, &unit_of_row, &plan.npos) < 0)
			ereport(ERROR,
					(errcode(dpsynth_core_errcode()),
					 errmsg("%s: the synthetic rows cannot be formed into units", pr->label),
					 errdetail("%s", dp_last_error())));
		plan.order = order;
		plan.unit = unit_of_row;
		fit_identifiers(out, nout, &plan);
	}
	*target_relid = prepare_target(m, plan.npos, nspid, target, comment, pr);
	/* a source with a privacy unit: rows to synthetic units, sizes drawn from the released histogram */
	if (m->unit_hist != NULL && synth->nrows > 0 && order == NULL)
	{
		unit_of_row = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * synth->nrows);
		(void) dp_unit_assign(m->unit_hist, (uint32) m->unit_k, synth->nrows, rng, unit_of_row);
		plan.unit = unit_of_row;
	}
	dropped = insert_rows(*target_relid, out, nout, synth, &plan, rng, pr);
	if (order)
	{
		dp_free(order);
		dp_free(unit_of_row);
	}
	else if (unit_of_row)
		pfree(unit_of_row);
	return plan.npos - dropped;
}

/*
 * The synthetic table written chunk by chunk as the rows are drawn (dp_gum_params.chunk_sink):
 * the same steps, draws and rows as synth_write_table for a model with no privacy unit (whose
 * units need every row first), begun at the first chunk, ended after the last.
 */
struct SynthStreamWriter
{
	RowPlan		plan;
	Inserter	ins;
	Oid			relid;
};

/*
 * dp_gum_params.chunk_sink: chunk [first, first + rows->nrows) of total rows written (the table
 * created at the first).  It runs on the backend while helper threads may still draw later
 * chunks: before any error unwinds from here, they are stopped and joined.
 */
/*
 * The chunked draw whose helper threads may run while the backend writes (NULL: none).  A FATAL
 * inside the write (a terminate request that CHECK_FOR_INTERRUPTS acts on) exits the process
 * without unwinding through synth_write_chunk's PG_CATCH: the exit callback stops and joins
 * them first, before the transaction's memory, which they use, is released.  Set by every
 * chunk's call, forgotten at the stream's end (the core's last call, rows NULL), on an error
 * in the write, and by synth_write_chunk_forget when the draw unwinds from elsewhere.
 */
static dp_gum_stream *live_stream = NULL;
static bool live_stream_hook = false;

static void
stream_at_exit(int code, Datum arg)
{
	(void) code;
	(void) arg;
	if (live_stream)
		dp_gum_stream_abort(live_stream);
	live_stream = NULL;
}

void
synth_write_chunk_forget(void)
{
	live_stream = NULL;
}

int
synth_write_chunk(void *arg, const dp_codes *rows, uint64_t first, uint64_t total, dp_gum_stream *stream)
{
	SynthStreamCopy *x = arg;

	if (rows == NULL)
	{
		/* the stream ends, its helpers joined */
		live_stream = NULL;
		return 0;
	}
	if (!live_stream_hook)
	{
		before_shmem_exit(stream_at_exit, (Datum) 0);
		live_stream_hook = true;
	}
	live_stream = stream;
	PG_TRY();
	{
		SynthStreamWriter *w = x->w;

		if (first == 0)
		{
			if (x->ready)
				x->ready(x);
			Assert(x->m->unit_hist == NULL);
			w = x->w = palloc0(sizeof(SynthStreamWriter));
			synth_report(x->pr, "writing the synthetic table", 0);
			w->plan.npos = total;
			w->relid = prepare_target(x->m, total, x->nspid, x->target, x->comment, x->pr);
			insert_begin(&w->ins, w->relid, x->m->out, x->m->nout);
		}
		insert_range(&w->ins, rows, first, &w->plan, first, first + rows->nrows, x->rng, x->pr);
		if (first + rows->nrows == total)
		{
			x->written = w->plan.npos - insert_end(&w->ins);
			x->relid = w->relid;
			x->done = true;
		}
	}
	PG_CATCH();
	{
		dp_gum_stream_abort(stream);
		live_stream = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	return 0;
}
