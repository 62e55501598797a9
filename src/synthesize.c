/*
 * synthesize.c - dp_synthesize(source, epsilon, ...): a differentially private synthetic copy of a
 * protected table, made inside the server with PrivSyn (src/core/dp_privsyn.c).
 *
 * Order of work (PRIVACY.md):
 *   1. validate every argument, check privileges, plan the columns, load their domains, check that
 *      the target can be created: all before anything is charged or read;
 *   2. charge the whole call once (discovery share + PrivSyn's rho), committed by the worker;
 *   3. learn undeclared domains if needed (discover.c), then one scan builds the encoded table;
 *   4. PrivSyn: noisy one-way marginals, InDif, DenseMarg, Combine, publication, consistency, GUM;
 *   5. create the target table as the caller, decode and insert the rows, record provenance.
 * From step 3 on nothing fails or speaks in a way that depends on the data: the synthetic rows
 * and everything after them are post-processing of released values.
 *
 * Privacy arithmetic of one call (rho units of 1e-12, see dpsynth_rho_units):
 *   charged = units_discovery * k + units_pipeline, with units_discovery = floor(10% * units / k)
 *   for the k columns that need discovery (discover.c), and PrivSyn's released quantities adding
 *   up to exactly dpsynth_units_rho(units_pipeline) (dp_privsyn.h): the call is rho-zCDP with rho
 *   <= charged * 1e-12, plus delta_each per text column discovered (approximate, see discover.c).
 */
#include "dpsynth.h"

#include <math.h>

#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "tcop/tcopprot.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "dp_codes.h"
#include "dp_decode.h"
#include "dp_privsyn.h"
#include "dp_prng.h"

/* Discovered text columns keep at most this many values in a synthesis (public constant). */
#define SYNTH_MAX_DISCOVERED_CATEGORIES 1000
/* The largest pair marginal PrivSyn may need (codes of one column times codes of another). */
#define SYNTH_MAX_PAIR_CELLS (INT64CONST(4) * 1024 * 1024)

typedef enum OutKind
{
	OUT_SYNTH,					/* synthesized from the model */
	OUT_NULL,					/* excluded: NULL */
	OUT_IDENTIFIER				/* fresh values */
} OutKind;

typedef struct OutColumn
{
	char	   *name;
	AttrNumber	attnum;
	Oid			typid;			/* declared type (may be a domain) */
	Oid			basetype;
	int32		typmod;
	bool		notnull;
	OutKind		kind;
	int			synth;			/* index into the synthesized columns */
	/* decoding */
	FmgrInfo	infunc;
	Oid			ioparam;
	Datum	   *category;		/* per code: the value, for category domains */
	/* what a NOT NULL column's NULL/"other" cell becomes: a category's value (fallback), or for
	 * bins a value drawn in the bin with the largest released one-way count (fallback_code) */
	Datum		fallback;
	dp_code		fallback_code;
	int			scale;			/* numeric scale, -1 if none */
} OutColumn;

typedef struct Progress
{
	const char *source;
	bool		verbose;
	int			last_percent;
	dp_privsyn_phase last_phase;
} Progress;

static const char *const phase_names[] = {"one-way marginals", "marginal selection", "publication",
"consistency", "GUM synthesis"};

static void
report(Progress *pr, const char *phase, int percent)
{
	char	   *msg = psprintf("dp_synthesize(%s): %s, %d%%", pr->source, phase, percent);

	pgstat_report_activity(STATE_RUNNING, msg);
	if (pr->verbose)
		ereport(NOTICE, (errmsg("%s", msg)));
	pfree(msg);
}

/* Called by the pipeline: reports progress, and lets cancel and statement_timeout in. */
static int
pipeline_progress(void *arg, dp_privsyn_phase phase, double done)
{
	Progress   *pr = arg;
	int			percent = (int) (done * 100);

	CHECK_FOR_INTERRUPTS();
	if (phase != pr->last_phase || percent >= pr->last_percent + 10)
	{
		pr->last_phase = phase;
		pr->last_percent = percent;
		report(pr, phase_names[phase], percent);
	}
	return 0;
}

static int
gum_progress(void *arg, uint32_t iter, uint32_t iters, double err)
{
	(void) err;
	return pipeline_progress(arg, DP_PHASE_GUM, iters ? (double) iter / iters : 1);
}

/* Allocation hooks for the core: palloc in the current context, huge allocations allowed, so
 * that an error or a cancel (longjmp out of the core) leaks nothing. */
static void *
core_alloc(size_t n)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, n);
}

static void *
core_realloc(void *p, size_t n)
{
	return repalloc_huge(p, n);
}

static void
core_free(void *p)
{
	pfree(p);
}

static bool
is_identifier(OutColumn *oc, const char *treatment, bool serial)
{
	return (treatment && strcmp(treatment, "identifier") == 0) || serial || oc->basetype == UUIDOID;
}

/* Plans every column of the source, in order; returns the synthesized ones' names. */
static OutColumn *
plan_columns(Oid relid, ArrayType *only, int *noutp, ArrayType **synth_names)
{
	Relation	rel = RelationIdGetRelation(relid);
	TupleDesc	desc = RelationGetDescr(rel);
	OutColumn  *out = palloc0(sizeof(OutColumn) * desc->natts);
	int			nout = 0;
	Datum	   *names = palloc(sizeof(Datum) * Max(desc->natts, 1));
	int			nnames = 0;
	Datum	   *only_elems = NULL;
	bool	   *only_nulls = NULL;
	int			nonly = 0;
	DpOwnerSwitch sw;
	char	  **treatments;
	bool	   *serials;

	if (only)
	{
		deconstruct_array(only, TEXTOID, -1, false, TYPALIGN_INT, &only_elems, &only_nulls, &nonly);
		for (int i = 0; i < nonly; i++)
		{
			if (only_nulls[i])
				ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("column names must not be NULL")));
			if (get_attnum(relid, TextDatumGetCString(only_elems[i])) <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of table %s does not exist",
								TextDatumGetCString(only_elems[i]), get_rel_name(relid))));
		}
	}

	/* the catalog's policies and serial-ness of every column, copied out of SPI */
	{
		MemoryContext caller_cxt = CurrentMemoryContext;

		treatments = palloc0(sizeof(char *) * Max(desc->natts, 1));
		serials = palloc0(sizeof(bool) * Max(desc->natts, 1));
		dpsynth_become_owner(&sw);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			Oid			argtypes[3] = {OIDOID, INT2OID, TEXTOID};
			Datum		values[3];

			if (att->attisdropped)
				continue;
			values[0] = ObjectIdGetDatum(relid);
			values[1] = Int16GetDatum(att->attnum);
			values[2] = CStringGetTextDatum(NameStr(att->attname));
			if (SPI_execute_with_args("SELECT p.treatment, pg_catalog.pg_get_serial_sequence($1::regclass::text, $3) IS NOT NULL "
									  "FROM (SELECT 1) x LEFT JOIN dpsynth.column_policies p ON p.relid = $1 AND p.attnum = $2",
									  3, argtypes, values, NULL, false, 1) == SPI_OK_SELECT && SPI_processed == 1)
			{
				char	   *t = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
				bool		isnull;

				treatments[i] = t ? MemoryContextStrdup(caller_cxt, t) : NULL;
				serials[i] = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
			}
		}
		SPI_finish();
		dpsynth_restore_user(&sw);
	}

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		OutColumn  *oc;
		bool		listed = (only == NULL);

		if (att->attisdropped)
			continue;
		oc = &out[nout++];
		oc->name = pstrdup(NameStr(att->attname));
		oc->attnum = att->attnum;
		oc->typid = att->atttypid;
		oc->typmod = att->atttypmod;
		oc->basetype = getBaseTypeAndTypmod(att->atttypid, &oc->typmod);
		oc->typmod = att->atttypmod;	/* the declared type's own typmod, for input and DDL */
		oc->notnull = att->attnotnull;
		oc->scale = -1;
		for (int k = 0; k < nonly; k++)
			listed |= strcmp(TextDatumGetCString(only_elems[k]), oc->name) == 0;

		if (is_identifier(oc, treatments[i], serials[i]))
			oc->kind = OUT_IDENTIFIER;
		else if ((treatments[i] && strcmp(treatments[i], "exclude") == 0) || !listed)
			oc->kind = OUT_NULL;
		else
		{
			oc->kind = OUT_SYNTH;
			oc->synth = nnames;
			names[nnames++] = CStringGetTextDatum(oc->name);
		}
		if (oc->kind == OUT_NULL && oc->notnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("column \"%s\" of table %s is NOT NULL but would not be synthesized", oc->name,
							get_rel_name(relid)),
					 errhint(only ? "Include it in columns => ..." :
							 "The owner excluded it; a synthetic copy would leave it NULL.")));
		if (oc->kind == OUT_IDENTIFIER && oc->notnull &&
			!(oc->basetype == INT2OID || oc->basetype == INT4OID || oc->basetype == INT8OID ||
			  oc->basetype == NUMERICOID || oc->basetype == UUIDOID || oc->basetype == TEXTOID ||
			  oc->basetype == VARCHAROID))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("identifier column \"%s\" of type %s cannot be regenerated", oc->name,
							format_type_be(oc->typid))));
	}
	RelationClose(rel);
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table %s has no column to synthesize", get_rel_name(relid))));
	*synth_names = construct_array(names, nnames, TEXTOID, -1, false, TYPALIGN_INT);
	*noutp = nout;
	return out;
}

/* Prepares decoding of a synthesized column: category values through the type's input function
 * (with its typmod), so that a label that does not fit the type fails here, before the charge. */
static void
prepare_decoding(OutColumn *oc, DpColumn *col)
{
	Oid			infn;

	getTypeInputInfo(oc->typid, &infn, &oc->ioparam);
	fmgr_info(infn, &oc->infunc);
	if (oc->basetype == NUMERICOID && oc->typmod >= (int32) VARHDRSZ)
		oc->scale = (int) ((oc->typmod - VARHDRSZ) & 0xffff);
	if (col->domain.kind == DP_DOMAIN_CATEGORIES && col->state == DP_COLUMN_READY)
	{
		uint32		n = col->domain.nvalues;

		oc->category = palloc(sizeof(Datum) * Max(n, 1));
		for (uint32 c = 0; c < n; c++)
			oc->category[c] = InputFunctionCall(&oc->infunc, pstrdup(col->domain.map.labels[c]),
												oc->ioparam, oc->typmod);
	}
}

/* The value of a code, or NULL.  Never fails on released data: categories were converted
 * before the charge, bins decode inside their range. */
static Datum
decode_value(OutColumn *oc, DpColumn *col, dp_code code, dp_prng *rng, bool *isnull)
{
	dp_domain  *d = &col->domain;

	*isnull = false;
	if (code >= d->nvalues)
	{
		/* the NULL/"other" cell: NULL where allowed, else the column's fallback */
		if (!oc->notnull)
		{
			*isnull = true;
			return (Datum) 0;
		}
		if (d->kind == DP_DOMAIN_CATEGORIES)
			return oc->fallback;
		code = oc->fallback_code;	/* bins: a value in the most populous bin */
	}
	if (d->kind == DP_DOMAIN_CATEGORIES)
		return oc->category[code];
	if (d->kind == DP_DOMAIN_INT_BINS)
	{
		int64		lo,
					hi,
					v;

		dp_int_bin_range(d, code, &lo, &hi);
		v = dp_decode_int(rng, lo, hi);
		switch (oc->basetype)
		{
			case INT2OID:
				return Int16GetDatum((int16) Max(Min(v, PG_INT16_MAX), PG_INT16_MIN));
			case INT4OID:
				return Int32GetDatum((int32) Max(Min(v, PG_INT32_MAX), PG_INT32_MIN));
			case DATEOID:
				return DateADTGetDatum((DateADT) Max(Min(v, PG_INT32_MAX - 1), PG_INT32_MIN + 1));
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
			case INT8OID:
				return Int64GetDatum(v);
			default:
				/* numeric or float column declared with integral bins */
				return DirectFunctionCall1(int8_numeric, Int64GetDatum(v));
		}
	}
	{
		double		lo,
					hi,
					v;

		dp_real_bin_range(d, code, &lo, &hi);
		v = dp_decode_real(rng, lo, hi, (uint32) code + 1 == d->nvalues, oc->scale,
						   d->edges[0], d->edges[d->nvalues]);
		switch (oc->basetype)
		{
			case FLOAT4OID:
				return Float4GetDatum((float4) v);
			case FLOAT8OID:
				return Float8GetDatum(v);
			default:
				{
					Datum		num = DirectFunctionCall1(float8_numeric, Float8GetDatum(v));

					if (oc->scale >= 0)
						num = DirectFunctionCall2(numeric_round, num, Int32GetDatum(oc->scale));
					return num;
				}
		}
	}
}

/* A fresh identifier for row i (1-based). */
static Datum
identifier_value(OutColumn *oc, int64 i)
{
	switch (oc->basetype)
	{
		case INT2OID:
			return Int16GetDatum((int16) Min(i, PG_INT16_MAX));
		case INT4OID:
			return Int32GetDatum((int32) Min(i, PG_INT32_MAX));
		case INT8OID:
			return Int64GetDatum(i);
		case NUMERICOID:
			return DirectFunctionCall1(int8_numeric, Int64GetDatum(i));
		case UUIDOID:
			return OidFunctionCall0(F_GEN_RANDOM_UUID);
		default:
			return CStringGetTextDatum(psprintf("synthetic-" INT64_FORMAT, i));
	}
}

/*
 * CREATE TABLE target (same names and types), as the caller.  Its constraints are added after the
 * rows are in (add_constraints), so that PostgreSQL itself validates them.
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
						 format_type_with_typemod(out[i].typid, out[i].typmod == -1 ? -1 : out[i].typmod));
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
 * The source's CHECK constraints (public schema facts) and NOT NULLs on the target.  Synthetic rows
 * that a CHECK constraint rejects (possible for checks across columns, or narrower than the declared
 * domain) are deleted first: post-processing of released data.  Adding the constraints makes
 * PostgreSQL validate every row.  Returns the number of rows deleted.
 */
static uint64
add_constraints(Oid relid, Oid nspid, const char *target, OutColumn *out, int nout)
{
	char	   *qname = quote_qualified_identifier(get_namespace_name(nspid), target);
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	uint64		deleted = 0;
	List	   *checks = NIL;
	ListCell   *lc;
	StringInfoData del;
	StringInfoData alter;
	int			nalter = 0;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT conname, pg_catalog.pg_get_expr(conbin, conrelid) FROM pg_catalog.pg_constraint "
							  "WHERE conrelid = $1 AND contype = 'c' ORDER BY oid",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of the source");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *expr = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);

		checks = lappend(checks, psprintf("%s\n%s", name, expr));
	}
	/* one DELETE for all checks, then one ALTER TABLE: PostgreSQL validates it all in one scan */
	initStringInfo(&del);
	initStringInfo(&alter);
	appendStringInfo(&del, "DELETE FROM %s WHERE false", qname);
	appendStringInfo(&alter, "ALTER TABLE %s", qname);
	foreach(lc, checks)
	{
		char	   *name = pstrdup(lfirst(lc));
		char	   *expr = strchr(name, '\n');

		*expr++ = '\0';
		/* a CHECK holds unless its expression is false */
		appendStringInfo(&del, " OR (%s) IS FALSE", expr);
		appendStringInfo(&alter, "%s ADD CONSTRAINT %s CHECK (%s)", nalter++ ? "," : "", quote_identifier(name), expr);
	}
	for (int i = 0; i < nout; i++)
		if (out[i].notnull)
			appendStringInfo(&alter, "%s ALTER COLUMN %s SET NOT NULL", nalter++ ? "," : "",
							 quote_identifier(out[i].name));
	if (checks != NIL)
	{
		if (SPI_execute(del.data, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not apply the CHECK constraints");
		deleted = SPI_processed;
	}
	if (nalter > 0 && SPI_execute(alter.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not add the constraints");
	SPI_finish();
	CommandCounterIncrement();
	return deleted;
}

/* one row of the encoded table (dp_code is the core's uint16 code) */
static void
append_row(const dp_code *codes, void *arg)
{
	if (dp_codes_append((dp_codes *) arg, codes) != 0)
		elog(ERROR, "out of memory");
}

PG_FUNCTION_INFO_V1(dpsynth_synthesize);
Datum
dpsynth_synthesize(PG_FUNCTION_ARGS)
{
	Oid			relid;
	double		epsilon;
	double		delta;
	char	   *target;
	char	   *target_json;
	uint64		deleted;
	int64		rows = 0;
	ArrayType  *only = NULL;
	bool		verbose;
	Relation	rel;
	OutColumn  *out;
	int			nout;
	ArrayType  *synth_names;
	DpColumn   *cols;
	int			ncols;
	int64		units;
	int64		units_pipeline;
	DpDiscoveryPlan plan;
	Oid			nspid;
	int64		ledger_id;
	uint32	   *sizes;
	dp_codes	codes;
	dp_privsyn_params params;
	dp_privsyn_result res;
	dp_prng		rng;
	Progress	pr;
	Oid			target_relid;
	double		t_start = (double) GetCurrentTimestamp() / 1e6;
	double		t_scan,
				t_write;
	TupleDesc	tupdesc;
	Datum		result[8];
	bool		result_nulls[8] = {0};
	int			rc;

	/* ---- 1. validate, plan, check: nothing charged or read yet ---- */
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("source table must not be NULL")));
	relid = PG_GETARG_OID(0);
	epsilon = dpsynth_check_epsilon(fcinfo, 1);
	if (!PG_ARGISNULL(4))
	{
		rows = PG_GETARG_INT64(4);
		if (rows < 0 || rows > INT64CONST(100000000))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("rows must be between 0 and 100000000, not " INT64_FORMAT, rows)));
	}
	if (!PG_ARGISNULL(5))
	{
		only = PG_GETARG_ARRAYTYPE_P(5);
		if (ARR_NDIM(only) > 1)
			ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("columns must be a one-dimensional array")));
	}
	verbose = !PG_ARGISNULL(6) && PG_GETARG_BOOL(6);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	rel = dpsynth_open_source(relid);
	dpsynth_check_release_privilege(relid, "dp_synthesize");
	units = dpsynth_rho_for_call(relid, epsilon, &delta);
	if (!PG_ARGISNULL(2))
	{
		double		d = PG_GETARG_FLOAT8(2);

		if (!(d > 0 && d < 1))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("delta must be in the open interval (0, 1), not %s", float8out_internal(d))));
		delta = d;
		units = dpsynth_rho_units(epsilon, delta);
		if (units < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %s cannot be converted to zCDP at delta %s", float8out_internal(epsilon),
							float8out_internal(delta))));
	}

	out = plan_columns(relid, only, &nout, &synth_names);
	cols = dpsynth_load_columns(relid, synth_names, &ncols);
	units_pipeline = dpsynth_plan_discovery(relid, cols, ncols, units, epsilon, 0,
											SYNTH_MAX_DISCOVERED_CATEGORIES, &plan);
	sizes = palloc(sizeof(uint32) * ncols);
	for (int j = 0; j < ncols; j++)
	{
		sizes[j] = cols[j].state == DP_COLUMN_READY ? dp_domain_ncodes(&cols[j].domain)
			: cols[j].state == DP_COLUMN_DISCOVER_CATEGORIES ? (uint32) plan.max_categories + 1
			: cols[j].state == DP_COLUMN_DISCOVER_BOUNDS ? DPSYNTH_DISCOVERED_BINS + 1
			: (uint32) (cols[j].quantile_bins + 2 * cols[j].quantile_points + 1);
		if (ncols > 1)
			for (int k = 0; k < j; k++)
				if ((int64) sizes[j] * sizes[k] > SYNTH_MAX_PAIR_CELLS)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("columns \"%s\" and \"%s\" have too many codes together (%u x %u) for PrivSyn",
									cols[k].name, cols[j].name, sizes[k], sizes[j]),
							 errhint("Declare coarser domains (fewer categories or bins) for them.")));
	}
	for (int i = 0; i < nout; i++)
		if (out[i].kind == OUT_SYNTH)
			prepare_decoding(&out[i], &cols[out[i].synth]);

	/* target: the caller's creation schema, a new name, and the right to create there */
	{
		RangeVar   *rv;
		AclResult	aclresult;

		if (PG_ARGISNULL(3))
			rv = makeRangeVar(NULL, psprintf("%s_synthetic", get_rel_name(relid)), -1);
		else					/* a name, maybe schema-qualified and quoted */
			rv = makeRangeVarFromNameList(stringToQualifiedNameList(NameStr(*PG_GETARG_NAME(3))));
		target = rv->relname;
		nspid = RangeVarGetCreationNamespace(rv);
		aclresult = pg_namespace_aclcheck(nspid, GetUserId(), ACL_CREATE);
		if (aclresult != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to create table %s in schema %s", target, get_namespace_name(nspid)),
					 errhint("dp_synthesize creates its table in your current schema; choose one you may create in (SET search_path) or pass target => ...")));
		if (OidIsValid(get_relname_relid(target, nspid)))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("relation \"%s\" already exists in schema %s", target, get_namespace_name(nspid)),
					 errhint("Pass another name with target => ..., or drop the old copy.")));
	}

	/* ---- 2. charge once for the whole call ---- */
	{
		StringInfoData tj;

		initStringInfo(&tj);
		escape_json(&tj, target);
		target_json = tj.data;
	}
	ledger_id = dpsynth_charge(relid, "dp_synthesize",
							   OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(synth_names)),
							   epsilon, delta, units, plan.delta_each * plan.ntext,
							   psprintf("{\"target\": %s, \"rows\": " INT64_FORMAT ", \"method\": \"PrivSyn\", "
										"\"discovered_columns\": %d, \"rho_units_per_discovery\": " INT64_FORMAT ", "
										"\"rho_units_pipeline\": " INT64_FORMAT "}",
										target_json, rows, plan.ndiscover, plan.units_each,
										units_pipeline));

	/* ---- 3. from here on, nothing may fail or speak depending on the data ---- */
	pr.source = get_rel_name(relid);
	pr.verbose = verbose;
	pr.last_percent = -100;
	pr.last_phase = DP_PHASE_COUNT;
	if (plan.ndiscover > 0)
	{
		report(&pr, "discovering domains", 0);
		cols = dpsynth_discover(rel, synth_names, cols, ncols, &plan, ledger_id);
		for (int i = 0; i < nout; i++)
			if (out[i].kind == OUT_SYNTH)
				prepare_decoding(&out[i], &cols[out[i].synth]);
	}
	for (int j = 0; j < ncols; j++)
		sizes[j] = dp_domain_ncodes(&cols[j].domain);

	report(&pr, "reading the table", 0);
	if (dp_codes_init(&codes, ncols, 1024, core_alloc, core_realloc, core_free) != 0)
		elog(ERROR, "out of memory");
	dpsynth_scan_codes(rel, cols, ncols, append_row, &codes);
	t_scan = (double) GetCurrentTimestamp() / 1e6;

	/* ---- 4. PrivSyn ---- */
	dp_privsyn_default_params(&params);
	params.rho = dpsynth_units_rho(units_pipeline);
	params.rows = (uint64) rows;
	params.progress = pipeline_progress;
	params.progress_arg = &pr;
	params.gum.progress = gum_progress;
	params.gum.progress_arg = &pr;
	dp_prng_seed_random(&rng);
	/* an empty table is fine: its exact counts are zeros and the release is noise */
	rc = dp_privsyn_run(&codes, sizes, &params, &rng, core_alloc, core_free, &res);
	if (rc != 0)
		elog(ERROR, "dpsynth: the synthesis pipeline failed (%d)", rc);
	dp_codes_free(&codes);

	/* ---- 5. write the synthetic table, as the caller ---- */
	report(&pr, "writing the synthetic table", 0);
	target_relid = create_target(nspid, target, out, nout,
								 psprintf("dpsynth synthetic copy of %s: PrivSyn (DenseMarg + GUM), epsilon %s, delta %s, "
										  "ledger row " INT64_FORMAT ", dpsynth 0.1.0, %s",
										  get_rel_name(relid), float8out_internal(epsilon), float8out_internal(delta),
										  ledger_id, timestamptz_to_str(GetCurrentTimestamp())));
	{
		Relation	trel = table_open(target_relid, RowExclusiveLock);
		TupleDesc	tdesc = RelationGetDescr(trel);
		BulkInsertState bistate = GetBulkInsertState();
		CommandId	cid = GetCurrentCommandId(true);
		MemoryContext batchcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth batch", ALLOCSET_DEFAULT_SIZES);
		Datum	   *values = palloc(sizeof(Datum) * tdesc->natts);
		bool	   *nulls = palloc(sizeof(bool) * tdesc->natts);

		/*
		 * A NOT NULL column's NULL/"other" cell: the owner's placeholder for categories, else the
		 * value (or bin) with the largest released one-way count.  Post-processing.
		 */
		for (int i = 0; i < nout; i++)
		{
			DpColumn   *col;
			const double *oneway;

			if (out[i].kind != OUT_SYNTH)
				continue;
			col = &cols[out[i].synth];
			oneway = res.oneway_noisy[out[i].synth];
			out[i].fallback_code = 0;
			for (uint32 c = 1; c < col->domain.nvalues; c++)
				if (oneway[c] > oneway[out[i].fallback_code])
					out[i].fallback_code = (dp_code) c;
			if (col->domain.kind != DP_DOMAIN_CATEGORIES)
				continue;
			if (col->other || col->domain.nvalues == 0)
				out[i].fallback = InputFunctionCall(&out[i].infunc, col->other ? col->other : "",
													out[i].ioparam, out[i].typmod);
			else
				out[i].fallback = out[i].category[out[i].fallback_code];
		}

		for (uint64 r = 0; r < res.synth.nrows; r++)
		{
			MemoryContext old = MemoryContextSwitchTo(batchcxt);
			HeapTuple	tup;

			CHECK_FOR_INTERRUPTS();
			for (int i = 0; i < nout; i++)
			{
				int			a = out[i].attnum - 1;

				nulls[a] = false;
				if (out[i].kind == OUT_SYNTH)
					values[a] = decode_value(&out[i], &cols[out[i].synth],
											 res.synth.col[out[i].synth][r], &rng, &nulls[a]);
				else if (out[i].kind == OUT_IDENTIFIER)
					values[a] = identifier_value(&out[i], (int64) r + 1);
				else
					nulls[a] = true;
			}
			tup = heap_form_tuple(tdesc, values, nulls);
			heap_insert(trel, tup, cid, 0, bistate);
			MemoryContextSwitchTo(old);
			if ((r & 1023) == 1023)
			{
				MemoryContextReset(batchcxt);
				if ((r & 65535) == 65535)
					report(&pr, "writing the synthetic table", (int) (100.0 * r / res.synth.nrows));
			}
		}
		FreeBulkInsertState(bistate);
		table_close(trel, NoLock);
		MemoryContextDelete(batchcxt);
	}
	deleted = add_constraints(relid, nspid, target, out, nout);
	t_write = (double) GetCurrentTimestamp() / 1e6;
	table_close(rel, NoLock);
	dpsynth_complete(ledger_id);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	result[0] = ObjectIdGetDatum(target_relid);
	result[1] = Int64GetDatum((int64) (res.synth.nrows - deleted));
	result[2] = Float8GetDatum(epsilon);
	result[3] = Float8GetDatum(delta);
	result[4] = DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf(INT64_FORMAT "e-12", units)),
									ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	result[5] = Int32GetDatum((int32) res.n_oneway);
	result[6] = Int32GetDatum((int32) res.n_kway);
	result[7] = DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
																	   "{\"read\": %.3f, \"one_way\": %.3f, \"select\": %.3f, \"publish\": %.3f, "
																	   "\"consistency\": %.3f, \"gum\": %.3f, \"write\": %.3f, \"total\": %.3f}",
																	   t_scan - t_start, res.seconds[DP_PHASE_ONEWAY], res.seconds[DP_PHASE_SELECT],
																	   res.seconds[DP_PHASE_PUBLISH], res.seconds[DP_PHASE_CONSIST], res.seconds[DP_PHASE_GUM],
																	   t_write - t_scan - res.seconds[DP_PHASE_ONEWAY] - res.seconds[DP_PHASE_SELECT] -
																	   res.seconds[DP_PHASE_PUBLISH] - res.seconds[DP_PHASE_CONSIST] - res.seconds[DP_PHASE_GUM],
																	   t_write - t_start)));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), result, result_nulls)));
}
