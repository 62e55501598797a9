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
 *   3. learn undeclared domains if needed (discover.c), then one scan builds the encoded table;
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
 *   dp_discovery.h).
 */
#include "synthesize.h"

#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_range.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "parser/parse_type.h"
#include "parser/parser.h"
#include "parser/scansup.h"
#include "tcop/tcopprot.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/regproc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

#include "dp_codes.h"
#include "dp_decode.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "dp_random.h"

typedef struct Progress
{
	const char *label;			/* "dp_synthesize(people)", "dp_sample(model 3)" */
	bool		verbose;
	int			last_percent;
	dp_privsyn_phase last_phase;
} Progress;

static const char *const phase_names[] = {"one-way marginals", "marginal selection", "publication",
"consistency", "GUM synthesis"};

static void
report(Progress *pr, const char *phase, int percent)
{
	char	   *msg = psprintf("%s: %s, %d%%", pr->label, phase, percent);

	pgstat_report_activity(STATE_RUNNING, msg);
	if (pr->verbose)
		ereport(NOTICE, (errmsg("%s", msg)));
	pfree(msg);
}

static void
progress_init(Progress *pr, const char *label, bool verbose)
{
	pr->label = label;
	pr->verbose = verbose;
	pr->last_percent = -100;
	pr->last_phase = DP_PHASE_COUNT;
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
void *
dpsynth_core_alloc(Size n)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, n);
}

static void *
core_realloc(void *p, size_t n)
{
	return repalloc_huge(p, n);
}

void
dpsynth_core_free(void *p)
{
	pfree(p);
}

static void secure_column_type(OutColumn *oc, const char *label);

static bool
is_identifier(OutColumn *oc, const char *treatment, bool serial)
{
	return (treatment && strcmp(treatment, "identifier") == 0) || serial || oc->basetype == UUIDOID;
}

/* Plans every column of the source, in order; returns the synthesized ones' names. */
/* Whether a domain on the type's chain is NOT NULL (pg_type.typnotnull, not a pg_constraint row). */
static bool
domain_notnull(Oid typid)
{
	while (get_typtype(typid) == TYPTYPE_DOMAIN)
	{
		HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
		bool		notnull;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for type %u", typid);
		notnull = ((Form_pg_type) GETSTRUCT(tup))->typnotnull;
		typid = ((Form_pg_type) GETSTRUCT(tup))->typbasetype;
		ReleaseSysCache(tup);
		if (notnull)
			return true;
	}
	return false;
}

static OutColumn *
plan_columns(Oid relid, ArrayType *only, const char *label, int *noutp, ArrayType **synth_names)
{
	Relation	rel = RelationIdGetRelation(relid);
	TupleDesc	desc = RelationGetDescr(rel);
	OutColumn  *out = palloc0(sizeof(OutColumn) * Max(desc->natts, 1));
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
		bool		excluded;

		if (att->attisdropped)
			continue;
		oc = &out[nout++];
		oc->name = pstrdup(NameStr(att->attname));
		oc->typid = att->atttypid;
		oc->basetypmod = att->atttypmod;
		oc->basetype = getBaseTypeAndTypmod(att->atttypid, &oc->basetypmod);
		oc->typmod = att->atttypmod;	/* the declared type's own typmod, for input and DDL */
		/* a NOT NULL domain counts: rows are inserted without domain checks (table_multi_insert) */
		oc->notnull = att->attnotnull || domain_notnull(att->atttypid);
		oc->scale = -1;
		for (int k = 0; k < nonly; k++)
			listed |= strcmp(TextDatumGetCString(only_elems[k]), oc->name) == 0;
		excluded = treatments[i] && strcmp(treatments[i], "exclude") == 0;

		if (is_identifier(oc, treatments[i], serials[i]))
		{
			oc->kind = OUT_IDENTIFIER;
			oc->treatment = "identifier";
		}
		else if (excluded || !listed)
		{
			oc->kind = OUT_NULL;
			oc->treatment = excluded ? "excluded" : "not_selected";
		}
		else
		{
			oc->kind = OUT_SYNTH;
			oc->treatment = "synthesized";
			oc->synth = nnames;
			names[nnames++] = CStringGetTextDatum(oc->name);
		}
		secure_column_type(oc, label);
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

/* the scale of a numeric typmod (PostgreSQL 15: 11 bits, signed) */
static int
numeric_typmod_scale(int32 typmod)
{
	return (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
}

/*
 * numeric(p,s) columns, also under a domain, synthesized or identifiers: values rounded to s
 * digits and clamped to what p digits hold (fit_numeric); scale -1 and no bound otherwise.
 */
static void
prepare_numeric(OutColumn *oc)
{
	int			p;
	char	   *nines;

	oc->scale = -1;
	oc->numeric_max = oc->numeric_min = (Datum) 0;
	if (oc->basetype != NUMERICOID || oc->basetypmod < (int32) VARHDRSZ)
		return;
	/* a declaration or bins wider than the type are clamped */
	p = ((oc->basetypmod - VARHDRSZ) >> 16) & 0xffff;
	nines = palloc(p + 1);
	oc->scale = numeric_typmod_scale(oc->basetypmod);
	memset(nines, '9', p);
	nines[p] = '\0';
	/* (10^p - 1) * 10^-s */
	oc->numeric_max = DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf("%se%d", nines, -oc->scale)),
										  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	oc->numeric_min = DirectFunctionCall1(numeric_uminus, oc->numeric_max);
}

/*
 * The owner's placeholder for the NULL/"other" cell of a NOT NULL column with categories (declared
 * or still to be discovered), through the type's input function (with its typmod): run before
 * the charge for every such column, so that a placeholder that does not fit the type fails
 * before any work.
 */
static void
prepare_other(OutColumn *oc)
{
	Oid			infn,
				ioparam;

	oc->has_other_value = false;
	if (!oc->notnull || !oc->other)
		return;
	getTypeInputInfo(oc->typid, &infn, &ioparam);
	oc->other_value = OidInputFunctionCall(infn, pstrdup(oc->other), ioparam, oc->typmod);
	oc->has_other_value = true;
}

/*
 * Prepares decoding of a synthesized column (oc->domain set, prepare_other run): category values
 * through the type's input function (with its typmod), so that a declared label that does not
 * fit the type fails here, before the charge or any work (discovered labels are the column's own
 * values).  A NOT NULL column left with no category and no placeholder writes '' through its
 * base type (text-like: discovery releases categories of text columns only), so that nothing
 * here can fail on what discovery released; a domain's checks then drop such rows as any.
 */
static void
prepare_decoding(OutColumn *oc)
{
	Oid			infn;
	const dp_domain *d = oc->domain;

	getTypeInputInfo(oc->typid, &infn, &oc->ioparam);
	fmgr_info(infn, &oc->infunc);
	prepare_numeric(oc);
	oc->category = NULL;
	if (d->kind == DP_DOMAIN_CATEGORIES)
	{
		uint32		n = d->nvalues;

		oc->category = palloc(sizeof(Datum) * Max(n, 1));
		for (uint32 c = 0; c < n; c++)
			oc->category[c] = InputFunctionCall(&oc->infunc, pnstrdup(d->map.labels[c], d->map.lens[c]),
												oc->ioparam, oc->typmod);
		if (oc->notnull && !oc->has_other_value && n == 0)
		{
			Oid			basein,
						baseioparam;

			getTypeInputInfo(oc->basetype, &basein, &baseioparam);
			oc->other_value = OidInputFunctionCall(basein, pstrdup(""), baseioparam, oc->basetypmod);
			oc->has_other_value = true;
		}
	}
	oc->decoding_ready = true;
}

/*
 * Points the synthesized output columns at their columns' domains and placeholders, and prepares
 * the decoding of those whose domain is known.  Before the charge (discovered = false) also the
 * placeholders of every categories column, discovered or not; after discovery (true), the
 * decoding of the columns that only now have a domain.
 */
static void
bind_columns(OutColumn *out, int nout, DpColumn *cols, bool discovered)
{
	for (int i = 0; i < nout; i++)
	{
		DpColumn   *col;

		if (out[i].kind != OUT_SYNTH)
			continue;
		col = &cols[out[i].synth];
		out[i].domain = &col->domain;
		out[i].other = col->other;
		if (!discovered && (col->state == DP_COLUMN_DISCOVER_CATEGORIES ||
							(col->state == DP_COLUMN_READY && col->domain.kind == DP_DOMAIN_CATEGORIES)))
			prepare_other(&out[i]);
		if (col->state == DP_COLUMN_READY && !out[i].decoding_ready)
			prepare_decoding(&out[i]);
	}
}

/* numeric(p,s): a value rounded to s digits, clamped into [-max, max] */
static Datum
fit_numeric(const OutColumn *oc, Datum num)
{
	if (oc->scale < 0 && oc->numeric_max == (Datum) 0)
		return num;
	num = DirectFunctionCall2(numeric_round, num, Int32GetDatum(oc->scale));
	if (DatumGetBool(DirectFunctionCall2(numeric_gt, num, oc->numeric_max)))
		return oc->numeric_max;
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, num, oc->numeric_min)))
		return oc->numeric_min;
	return num;
}

/*
 * A NOT NULL column's NULL/"other" cell: the owner's placeholder for categories, else the value
 * (or bin) with the largest released one-way count.  Post-processing of the model.
 */
static void
prepare_fallback(OutColumn *oc, const double *oneway)
{
	const dp_domain *d = oc->domain;

	oc->fallback_code = 0;
	for (uint32 c = 1; c < d->nvalues; c++)
		if (oneway[c] > oneway[oc->fallback_code])
			oc->fallback_code = (dp_code) c;
	if (d->kind != DP_DOMAIN_CATEGORIES)
		return;
	if (oc->has_other_value)
		oc->fallback = oc->other_value;
	else if (d->nvalues > 0)
		oc->fallback = oc->category[oc->fallback_code];
}

/* The value of a code, or NULL.  Never fails on released data: categories were converted
 * before any work, bins decode inside their range. */
static Datum
decode_value(OutColumn *oc, dp_code code, dp_prng *rng, bool *isnull)
{
	const dp_domain *d = oc->domain;

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
			case FLOAT4OID:
				return Float4GetDatum((float4) v);
			case FLOAT8OID:
				return Float8GetDatum((float8) v);
			default:
				/* numeric column declared with integral bins */
				return fit_numeric(oc, DirectFunctionCall1(int8_numeric, Int64GetDatum(v)));
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
				return fit_numeric(oc, DirectFunctionCall1(float8_numeric, Float8GetDatum(v)));
		}
	}
}

/* A fresh identifier for row i (1-based); uuids are random (version 4) from the post-processing
 * generator, so that a seeded dp_sample is reproducible. */
static Datum
identifier_value(OutColumn *oc, int64 i, dp_prng *rng, bool *isnull)
{
	*isnull = false;
	if (i > oc->id_capacity)
	{
		/* beyond what the type holds (a nullable column; NOT NULL ones were refused) */
		*isnull = true;
		return (Datum) 0;
	}
	switch (oc->basetype)
	{
		case INT2OID:
			return Int16GetDatum((int16) i);
		case INT4OID:
			return Int32GetDatum((int32) i);
		case INT8OID:
			return Int64GetDatum(i);
		case NUMERICOID:
			return fit_numeric(oc, DirectFunctionCall1(int8_numeric, Int64GetDatum(i)));
		case UUIDOID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				for (int k = 0; k < UUID_LEN; k += 8)
				{
					uint64		w = dp_prng_next(rng);

					for (int b = 0; b < 8; b++)
						u->data[k + b] = (unsigned char) (w >> (8 * b));
				}
				u->data[6] = (u->data[6] & 0x0f) | 0x40;	/* version 4 */
				u->data[8] = (u->data[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
				return UUIDPGetDatum(u);
			}
		case TEXTOID:
		case VARCHAROID:
			return CStringGetTextDatum(psprintf(oc->id_long_format ? "synthetic-" INT64_FORMAT : INT64_FORMAT, i));
		default:
			*isnull = true;
			return (Datum) 0;
	}
}

static int64
pow10_minus_1(int digits)
{
	int64		x = 1;

	if (digits <= 0)
		return 0;
	if (digits >= 18)
		return PG_INT64_MAX;
	while (digits-- > 0)
		x *= 10;
	return x - 1;
}

/*
 * How many fresh identifiers (1..capacity) a column's type holds, for nrows rows: smallint and
 * integer their range, numeric(p,s) 10^(p-s) - 1, varchar(n) "synthetic-N" when it fits nrows,
 * else a plain "N" (10^n - 1).  Sets oc->id_capacity and oc->id_long_format.
 */
static void
identifier_format(OutColumn *oc, int64 nrows)
{
	oc->id_long_format = true;
	oc->id_capacity = PG_INT64_MAX;
	if (oc->basetype == INT2OID)
		oc->id_capacity = PG_INT16_MAX;
	else if (oc->basetype == INT4OID)
		oc->id_capacity = PG_INT32_MAX;
	else if (oc->basetype == NUMERICOID && oc->basetypmod >= (int32) VARHDRSZ)
		oc->id_capacity = pow10_minus_1((((oc->basetypmod - VARHDRSZ) >> 16) & 0xffff) -
										numeric_typmod_scale(oc->basetypmod));
	else if (oc->basetype == VARCHAROID && oc->basetypmod >= (int32) VARHDRSZ)
	{
		int			n = oc->basetypmod - VARHDRSZ;

		if (nrows > pow10_minus_1(n - (int) strlen("synthetic-")))
		{
			oc->id_long_format = false;
			oc->id_capacity = pow10_minus_1(n);
		}
		else
			oc->id_capacity = pow10_minus_1(n - (int) strlen("synthetic-"));
	}
}

/*
 * Before any charge: a NOT NULL identifier column must hold fresh values for up to maxrows rows
 * (the rows asked for, or at most dpsynth.max_sample_rows); refused with 22023 otherwise.  A
 * nullable one gets NULL beyond what its type holds.
 */
static void
check_identifiers(OutColumn *out, int nout, int64 maxrows, bool rows_given, const char *label)
{
	for (int i = 0; i < nout; i++)
	{
		OutColumn  *oc = &out[i];

		if (oc->kind != OUT_IDENTIFIER)
			continue;
		prepare_numeric(oc);	/* a numeric(p,s) identifier gets its scale */
		identifier_format(oc, maxrows);
		if (oc->notnull && oc->id_capacity < maxrows)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: identifier column \"%s\" of type %s cannot hold " INT64_FORMAT " fresh values",
							label, oc->name, format_type_with_typemod(oc->typid, oc->typmod), maxrows),
					 errdetail("It holds " INT64_FORMAT " at most.", oc->id_capacity),
					 rows_given ? 0 :
					 errhint("Without rows => the table may have up to dpsynth.max_sample_rows rows; pass rows => at most " INT64_FORMAT ".",
							 oc->id_capacity)));
	}
}

/*
 * The target: the caller's creation schema (or the schema named), a new name, and the right to
 * create there; raises before any work.  Returns the relation name, its schema in *nspid.
 */
static char *
resolve_target(FunctionCallInfo fcinfo, int argno, const char *default_name, const char *function, Oid *nspid)
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
				 errmsg("permission denied to create table %s in schema %s", target, get_namespace_name(*nspid)),
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
 * column's own constraints: the copy must not depend on a type the source's owner controls,
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
						 format_type_with_typemod(out[i].basetype, out[i].basetypmod));
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

/* ---------------------------------------------------------------------------------------
 * What a synthetic table may run.  The caller (often an admin) creates and fills it, so nothing
 * of the source's owner may end up running with the caller's rights: not a CHECK expression
 * calling the owner's function, not a domain constraint, not a constraint name spliced into SQL.
 * Only expressions made of built-in objects (OID below FirstNormalObjectId) are kept, with
 * non-volatile functions that run no query; a domain whose constraints or default are not
 * built-in-only is replaced by its base type.  All of it is decided from the schema (public)
 * before the charge.
 * --------------------------------------------------------------------------------------- */

typedef struct SafeCtx
{
	const char *why;			/* why not, when unsafe */
} SafeCtx;

static bool type_safe(Oid typid, int depth);

/* built-in functions that run queries or read tables although not volatile */
static bool
function_runs_queries(Oid funcid)
{
	static const char *const names[] = {"table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
		"schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "database_to_xml",
	"database_to_xmlschema", "database_to_xml_and_xmlschema", "query_to_xml", "query_to_xmlschema",
	"query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema", "ts_stat", "ts_rewrite"};
	char	   *name = get_func_name(funcid);

	if (!name)
		return true;
	for (size_t i = 0; i < lengthof(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return strstr(name, "_validator") != NULL;
}

static bool
function_unsafe(Oid funcid, void *arg)
{
	SafeCtx    *ctx = arg;

	if (funcid >= FirstNormalObjectId)
		ctx->why = "it calls a function that is not built in";
	else if (func_volatile(funcid) == PROVOLATILE_VOLATILE)
		ctx->why = "it calls a volatile function";
	else if (function_runs_queries(funcid))
		ctx->why = "it calls a function that runs queries";
	else
		return false;
	return true;
}

/*
 * True if the (cooked) expression is unsafe: a function or operator that is not built in, or
 * volatile, or runs queries; a sub-query; a value of a type that is not built in (a user enum, a
 * domain, a composite: their input or checks may run code).  Column references (and a domain
 * check's VALUE) are fine whatever their type: the synthetic table's columns are safe types.
 */
static bool
unsafe_walker(Node *node, SafeCtx *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query) || IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, Aggref) ||
		IsA(node, WindowFunc) || IsA(node, Param) || IsA(node, NextValueExpr))
	{
		ctx->why = "it is not a plain expression";
		return true;
	}
	if (check_functions_in_node(node, function_unsafe, ctx))
		return true;
	if (!IsA(node, List) && !IsA(node, Var) && !IsA(node, CoerceToDomainValue))
	{
		Oid			t = exprType(node);

		if (OidIsValid(t) && t >= FirstNormalObjectId)
		{
			ctx->why = "it uses a type that is not built in";
			return true;
		}
	}
	return expression_tree_walker(node, unsafe_walker, ctx);
}

static bool
expr_builtin_only(Node *expr, const char **why)
{
	SafeCtx		ctx = {NULL};

	if (unsafe_walker(expr, &ctx))
	{
		if (why)
			*why = ctx.why;
		return false;
	}
	return true;
}

/* A domain's own CHECK expressions (not its base type's), as stored (pg_constraint.conbin). */
static List *
domain_checks(Oid domid)
{
	List	   *checks = NIL;
	Relation	conrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key, Anum_pg_constraint_contypid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(domid));
	scan = systable_beginscan(conrel, ConstraintTypidIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		bin;

		if (((Form_pg_constraint) GETSTRUCT(tup))->contype != CONSTRAINT_CHECK)
			continue;
		bin = heap_getattr(tup, Anum_pg_constraint_conbin, RelationGetDescr(conrel), &isnull);
		if (!isnull)
			checks = lappend(checks, stringToNode(TextDatumGetCString(bin)));
	}
	systable_endscan(scan);
	table_close(conrel, AccessShareLock);
	return checks;
}

/* A domain's own constraints and default: built-in only? */
static bool
domain_builtin_only(Oid domid, HeapTuple typtup)
{
	bool		isnull;
	Datum		def = SysCacheGetAttr(TYPEOID, typtup, Anum_pg_type_typdefaultbin, &isnull);
	ListCell   *lc;

	if (!isnull && !expr_builtin_only(stringToNode(TextDatumGetCString(def)), NULL))
		return false;
	foreach(lc, domain_checks(domid))
		if (!expr_builtin_only(lfirst(lc), NULL))
			return false;
	return true;
}

/*
 * Whether values of a type can be handled without running code its owner wrote: built-in types,
 * and domains (at any depth, at most 32) whose CHECKs are built-in only, over such types.
 */
static bool
type_safe(Oid typid, int depth)
{
	HeapTuple	tup;
	Form_pg_type t;
	bool		ok = true;

	check_stack_depth();
	if (depth > 32)
		return false;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	if (!HeapTupleIsValid(tup))
		return false;
	t = (Form_pg_type) GETSTRUCT(tup);
	switch (t->typtype)
	{
		case TYPTYPE_DOMAIN:
			ok = domain_builtin_only(typid, tup) && type_safe(t->typbasetype, depth + 1);
			break;
		case TYPTYPE_COMPOSITE:
			if (typid >= FirstNormalObjectId)
			{
				TupleDesc	desc = lookup_rowtype_tupdesc_noerror(typid, -1, true);

				if (!desc)
					ok = false;
				else
				{
					for (int i = 0; ok && i < desc->natts; i++)
						if (!TupleDescAttr(desc, i)->attisdropped)
							ok = type_safe(TupleDescAttr(desc, i)->atttypid, depth + 1);
					ReleaseTupleDesc(desc);
				}
			}
			break;
		case TYPTYPE_RANGE:
			{
				HeapTuple	rt = SearchSysCache1(RANGETYPE, ObjectIdGetDatum(typid));

				if (!HeapTupleIsValid(rt))
					ok = false;
				else
				{
					Form_pg_range r = (Form_pg_range) GETSTRUCT(rt);

					ok = r->rngcanonical < FirstNormalObjectId && r->rngsubdiff < FirstNormalObjectId &&
						type_safe(r->rngsubtype, depth + 1);
					ReleaseSysCache(rt);
				}
			}
			break;
		case TYPTYPE_MULTIRANGE:
			ok = type_safe(get_multirange_range(typid), depth + 1);
			break;
		default:
			/* enums (built-in input), base types (only superusers make them), arrays: their
			 * elements */
			if (OidIsValid(t->typelem) && IsTrueArrayType(t))
				ok = type_safe(t->typelem, depth + 1);
			break;
	}
	ReleaseSysCache(tup);
	return ok;
}

/*
 * A column whose type is not safe: a domain gets its base type (and the base type's typmod) in
 * synthetic tables, with a NOTICE (the schema is public); any other unsafe type (a composite or
 * array over such a domain) can only be left NULL.  Before any charge.
 */
static void
secure_column_type(OutColumn *oc, const char *label)
{
	oc->source_typid = InvalidOid;
	if (type_safe(oc->typid, 0))
		return;
	if (get_typtype(oc->typid) == TYPTYPE_DOMAIN)
	{
		int32		typmod = -1;
		Oid			base = getBaseTypeAndTypmod(oc->typid, &typmod);

		ereport(NOTICE,
				(errmsg("%s: column \"%s\" gets type %s, the base type of its domain %s", label, oc->name,
						format_type_with_typemod(base, typmod), format_type_be(oc->typid)),
				 errdetail("The domain's constraints or default use objects that are not built in, which would run with your rights.")));
		oc->source_typid = oc->typid;
		oc->typid = base;
		oc->typmod = typmod;
		oc->basetypmod = typmod;
		oc->basetype = base;
	}
	if (!type_safe(oc->typid, 0) && oc->kind == OUT_SYNTH)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s: column \"%s\" of type %s cannot be synthesized", label, oc->name, format_type_be(oc->typid)),
				 errdetail("Making its values would run code that is not built in (a domain's constraints) with your rights."),
				 errhint("Leave it out with columns => ..., or have the owner exclude it.")));
}

/* raw parse tree: function and operator names unqualified or in pg_catalog, built-in type names,
 * columns of the relation with safe types, no sub-query */
typedef struct RawCtx
{
	Relation	rel;
	const char *why;
} RawCtx;

static bool
qualified_outside_catalog(List *name)
{
	return list_length(name) > 1 && strcmp(strVal(linitial(name)), "pg_catalog") != 0;
}

static bool
raw_unsafe_walker(Node *node, RawCtx *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink) || IsA(node, SelectStmt) || IsA(node, ParamRef))
	{
		ctx->why = "it is not a plain expression";
		return true;
	}
	if ((IsA(node, FuncCall) && qualified_outside_catalog(((FuncCall *) node)->funcname)) ||
		(IsA(node, A_Expr) && qualified_outside_catalog(((A_Expr *) node)->name)))
	{
		ctx->why = "it names a function or operator outside pg_catalog";
		return true;
	}
	if (IsA(node, TypeName))
	{
		Type		typ = LookupTypeName(NULL, (TypeName *) node, NULL, true);
		bool		builtin = typ && ((Form_pg_type) GETSTRUCT(typ))->oid < FirstNormalObjectId;

		if (typ)
			ReleaseSysCache(typ);
		if (!builtin)
		{
			ctx->why = "it uses a type that is not built in";
			return true;
		}
		return false;
	}
	if (IsA(node, ColumnRef))
	{
		ColumnRef  *cr = (ColumnRef *) node;
		AttrNumber	att;

		if (list_length(cr->fields) != 1 || !IsA(linitial(cr->fields), String))
		{
			ctx->why = "it references something other than a column";
			return true;
		}
		att = attnameAttNum(ctx->rel, strVal(linitial(cr->fields)), false);
		if (att <= 0 || !type_safe(TupleDescAttr(RelationGetDescr(ctx->rel), att - 1)->atttypid, 0))
		{
			ctx->why = "it references an unknown column, or one of a type that is not safe";
			return true;
		}
		return false;
	}
	return raw_expression_tree_walker(node, raw_unsafe_walker, ctx);
}

/*
 * Validates a stored CHECK expression for a synthetic table (relid, already created): parsed
 * with search_path pinned to pg_catalog, pg_temp, refused unless it uses built-in, non-volatile
 * functions and safe types only; returns it deparsed again, or NULL (with *why) if refused.
 * Nothing of the expression is executed.
 */
static char *
validate_check_text(Oid relid, const char *expr, const char **why)
{
	int			nestlevel = dpsynth_pin_search_path();
	List	   *raw;
	SelectStmt *sel;
	Node	   *rawexpr;
	Node	   *cooked;
	Relation	rel;
	RawCtx		rctx;
	char	   *result = NULL;

	*why = "it is not a single expression";
	raw = raw_parser(psprintf("SELECT (%s\n)", expr), RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		goto done;
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (sel->op != SETOP_NONE || list_length(sel->targetList) != 1 || sel->distinctClause || sel->intoClause ||
		sel->fromClause || sel->whereClause || sel->groupClause || sel->havingClause || sel->windowClause ||
		sel->valuesLists || sel->sortClause || sel->limitOffset || sel->limitCount || sel->lockingClause ||
		sel->withClause || ((ResTarget *) linitial(sel->targetList))->name)
		goto done;
	rawexpr = ((ResTarget *) linitial(sel->targetList))->val;
	rel = table_open(relid, AccessShareLock);
	rctx.rel = rel;
	rctx.why = NULL;
	if (raw_unsafe_walker(rawexpr, &rctx))
		*why = rctx.why;
	else
	{
		ParseState *pstate = make_parsestate(NULL);
		ParseNamespaceItem *nsitem = addRangeTableEntryForRelation(pstate, rel, AccessShareLock, NULL, false, true);

		addNSItemToQuery(pstate, nsitem, true, true, true);
		cooked = transformExpr(pstate, rawexpr, EXPR_KIND_CHECK_CONSTRAINT);
		cooked = coerce_to_boolean(pstate, cooked, "CHECK");
		assign_expr_collations(pstate, cooked);
		if (expr_builtin_only(cooked, why))
			result = deparse_expression(cooked, deparse_context_for(RelationGetRelationName(rel), relid), false, false);
		free_parsestate(pstate);
	}
	table_close(rel, NoLock);
done:
	AtEOXact_GUC(false, nestlevel);
	return result;
}

/*
 * The source's CHECK constraints (public schema facts), name and expression apart.  Those whose
 * expression uses only built-in objects (every object the constraint depends on is the table, its
 * columns or has an OID below FirstNormalObjectId; and the expression tree passes
 * expr_builtin_only) are returned; the names of the others go to *skipped, each with a NOTICE
 * (before the charge).  The expressions are deparsed with search_path pinned to pg_catalog,
 * pg_temp, so that every object they name outside pg_catalog is schema-qualified.
 */
static List *
read_checks(Oid relid, const char *label, List **skipped)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MemoryContext caller_cxt = CurrentMemoryContext;
	List	   *checks = NIL;
	int			nestlevel = dpsynth_pin_search_path();

	*skipped = NIL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT c.conname, pg_catalog.pg_get_expr(c.conbin, c.conrelid), c.conbin::text, "
							  "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass "
							  "AND d.objid = c.oid AND d.refobjid >= 16384 "
							  "AND NOT (d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid = c.conrelid)) "
							  "FROM pg_catalog.pg_constraint c "
							  "WHERE c.conrelid = $1 AND c.contype = 'c' ORDER BY c.oid",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of the source");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *name = SPI_getvalue(tup, desc, 1);
		char	   *expr = SPI_getvalue(tup, desc, 2);
		char	   *bin = SPI_getvalue(tup, desc, 3);
		bool		isnull;
		bool		deps_ok = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
		const char *why = "it depends on objects that are not built in";
		MemoryContext old = MemoryContextSwitchTo(caller_cxt);

		if (deps_ok && expr && bin && expr_builtin_only(stringToNode(bin), &why))
		{
			DpCheck    *c = palloc(sizeof(DpCheck));

			c->name = pstrdup(name);
			c->expr = pstrdup(expr);
			checks = lappend(checks, c);
		}
		else
		{
			ereport(NOTICE,
					(errmsg("%s: CHECK constraint %s is not copied to the synthetic table", label,
							quote_identifier(name)),
					 errdetail("Only constraints made of built-in objects are copied: %s, which would run with your rights.", why)));
			*skipped = lappend(*skipped, pstrdup(name));
		}
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	AtEOXact_GUC(false, nestlevel);
	return checks;
}

/*
 * The checks to add to the target (created, still empty): each validated again against it by
 * validate_check_text and deparsed from what was validated.  A stored model's text is
 * never pasted as it is: a check that does not pass is left out, with a NOTICE.
 */
static List *
validated_checks(Oid target_relid, List *checks, const char *label)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, checks)
	{
		DpCheck    *c = lfirst(lc);
		const char *why = NULL;
		char	   *expr = validate_check_text(target_relid, c->expr, &why);

		if (expr)
		{
			DpCheck    *v = palloc(sizeof(DpCheck));

			v->name = c->name;
			v->expr = expr;
			out = lappend(out, v);
		}
		else
			ereport(NOTICE,
					(errmsg("%s: CHECK constraint %s is not added to the synthetic table", label,
							quote_identifier(c->name)),
					 errdetail("Only constraints made of built-in objects are added: %s.", why)));
	}
	return out;
}

/* a domain check's VALUE, as the target's column (deparsed by name) */
typedef struct ValueToVar
{
	AttrNumber	attnum;
} ValueToVar;

static Node *
value_to_var(Node *node, ValueToVar *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, CoerceToDomainValue))
	{
		CoerceToDomainValue *v = (CoerceToDomainValue *) node;

		return (Node *) makeVar(1, ctx->attnum, v->typeId, v->typeMod, v->collation, 0);
	}
	return expression_tree_mutator(node, value_to_var, ctx);
}

/*
 * The CHECK constraints of the (built-in-only, see secure_column_type) domains of the target's
 * columns, nested domains included, as expressions over the columns: heap_insert does not check
 * domains, so synthetic rows whose values a domain rejects are deleted with those a CHECK
 * rejects (post-processing).  Deparsed with search_path pinned to pg_catalog, pg_temp.
 */
static List *
domain_check_exprs(Oid target_relid, OutColumn *out, int nout)
{
	List	   *exprs = NIL;
	List	   *dpcontext = deparse_context_for(get_rel_name(target_relid), target_relid);
	int			nestlevel = dpsynth_pin_search_path();

	for (int i = 0; i < nout; i++)
	{
		ValueToVar	ctx = {(AttrNumber) (i + 1)};
		Oid			t = out[i].typid;

		while (get_typtype(t) == TYPTYPE_DOMAIN)
		{
			HeapTuple	tup;
			ListCell   *lc;

			foreach(lc, domain_checks(t))
			{
				Node	   *e = lfirst(lc);

				/* defence in depth: such a domain was replaced by its base type before */
				if (!expr_builtin_only(e, NULL))
					continue;
				exprs = lappend(exprs, deparse_expression(value_to_var(e, &ctx), dpcontext, false, false));
			}
			/* the domain's own base type (maybe a domain in turn) */
			tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(t));
			if (!HeapTupleIsValid(tup))
				elog(ERROR, "cache lookup failed for type %u", t);
			t = ((Form_pg_type) GETSTRUCT(tup))->typbasetype;
			ReleaseSysCache(tup);
		}
	}
	AtEOXact_GUC(false, nestlevel);
	return exprs;
}

/*
 * The source's CHECK constraints and NOT NULLs on the target.  Synthetic rows that a CHECK
 * constraint or a column's domain rejects (possible for checks across columns, or narrower than
 * the declared domain) are deleted first: post-processing of released data.  Adding the constraints makes PostgreSQL
 * validate every row.  Runs with search_path pinned to pg_catalog, pg_temp (the expressions
 * were deparsed and validated under it).  Returns the number of rows deleted.
 */
static uint64
add_constraints(Oid nspid, const char *target, OutColumn *out, int nout, List *checks, List *domain_exprs)
{
	char	   *qname = quote_qualified_identifier(get_namespace_name(nspid), target);
	uint64		deleted = 0;
	ListCell   *lc;
	StringInfoData del;
	StringInfoData alter;
	int			nalter = 0;
	int			nestlevel = dpsynth_pin_search_path();

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* one DELETE for all checks, then one ALTER TABLE: PostgreSQL validates it all in one scan */
	initStringInfo(&del);
	initStringInfo(&alter);
	appendStringInfo(&del, "DELETE FROM %s WHERE false", qname);
	appendStringInfo(&alter, "ALTER TABLE %s", qname);
	foreach(lc, checks)
	{
		DpCheck    *c = lfirst(lc);

		/* a CHECK holds unless its expression is false */
		appendStringInfo(&del, " OR (%s) IS FALSE", c->expr);
		appendStringInfo(&alter, "%s ADD CONSTRAINT %s CHECK (%s)", nalter++ ? "," : "", quote_identifier(c->name),
						 c->expr);
	}
	foreach(lc, domain_exprs)
	{
		appendStringInfo(&del, " OR (%s) IS FALSE", (char *) lfirst(lc));
		appendStringInfo(&alter, "%s ADD CHECK (%s)", nalter++ ? "," : "", (char *) lfirst(lc));
	}
	for (int i = 0; i < nout; i++)
		if (out[i].notnull)
			appendStringInfo(&alter, "%s ALTER COLUMN %s SET NOT NULL", nalter++ ? "," : "",
							 quote_identifier(out[i].name));
	if (checks != NIL || domain_exprs != NIL)
	{
		if (SPI_execute(del.data, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not apply the CHECK constraints");
		deleted = SPI_processed;
	}
	if (nalter > 0 && SPI_execute(alter.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not add the constraints");
	SPI_finish();
	AtEOXact_GUC(false, nestlevel);
	CommandCounterIncrement();
	return deleted;
}

/*
 * Creates the target table as the caller, decodes the synthetic codes of the model's columns
 * into it, and adds the source's constraints.  Returns the number of rows left in the table
 * (rows a CHECK rejects are deleted); *target_relid is the table.  Post-processing only: it
 * reads the model and the synthetic codes, and draws its randomness from rng.
 */
static uint64
write_synthetic(DpModel *m, const dp_codes *synth, dp_prng *rng, Oid nspid, const char *target,
				const char *comment, Progress *pr, Oid *target_relid)
{
	OutColumn  *out = m->out;
	int			nout = m->nout;
	uint64		deleted;
	List	   *checks;
	StringInfoData full;
	ListCell   *lc;

	report(pr, "writing the synthetic table", 0);
	for (int i = 0; i < nout; i++)
	{
		if (out[i].kind == OUT_SYNTH)
			prepare_fallback(&out[i], m->res.oneway_noisy[out[i].synth]);
		else if (out[i].kind == OUT_IDENTIFIER)
			identifier_format(&out[i], (int64) synth->nrows);
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
	*target_relid = create_target(nspid, target, out, nout, full.data);
	checks = validated_checks(*target_relid, m->checks, pr->label);
	{
		/*
		 * Rows go in by table_multi_insert, WRITE_BATCH at a time (as COPY does: one WAL record
		 * per page rather than per row); the table is new and has no index yet.
		 */
#define WRITE_BATCH 1000
		Relation	trel = table_open(*target_relid, RowExclusiveLock);
		TupleDesc	tdesc = RelationGetDescr(trel);
		BulkInsertState bistate = GetBulkInsertState();
		CommandId	cid = GetCurrentCommandId(true);
		MemoryContext batchcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth batch", ALLOCSET_DEFAULT_SIZES);
		TupleTableSlot **slots = palloc(sizeof(TupleTableSlot *) * WRITE_BATCH);
		int			nslots = 0;

		if (tdesc->natts != nout)
			elog(ERROR, "the target table has %d columns, not %d", tdesc->natts, nout);
		for (int b = 0; b < WRITE_BATCH; b++)
			slots[b] = table_slot_create(trel, NULL);
		for (uint64 r = 0; r < synth->nrows; r++)
		{
			MemoryContext old = MemoryContextSwitchTo(batchcxt);
			TupleTableSlot *slot = slots[nslots++];

			CHECK_FOR_INTERRUPTS();
			/* (the slot was cleared after the last multi-insert, or is fresh) */
			/* the target's columns are the model's, in order */
			for (int i = 0; i < nout; i++)
			{
				slot->tts_isnull[i] = false;
				if (out[i].kind == OUT_SYNTH)
					slot->tts_values[i] = decode_value(&out[i], synth->col[out[i].synth][r], rng, &slot->tts_isnull[i]);
				else if (out[i].kind == OUT_IDENTIFIER)
					slot->tts_values[i] = identifier_value(&out[i], (int64) r + 1, rng, &slot->tts_isnull[i]);
				else
				{
					slot->tts_values[i] = (Datum) 0;
					slot->tts_isnull[i] = true;
				}
			}
			ExecStoreVirtualTuple(slot);
			MemoryContextSwitchTo(old);
			if (nslots == WRITE_BATCH || r + 1 == synth->nrows)
			{
				table_multi_insert(trel, slots, nslots, cid, 0, bistate);
				for (int b = 0; b < nslots; b++)
					ExecClearTuple(slots[b]);
				nslots = 0;
				MemoryContextReset(batchcxt);
				if (((r + 1) / WRITE_BATCH) % 64 == 0)
					report(pr, "writing the synthetic table", (int) (100.0 * r / synth->nrows));
			}
		}
		for (int b = 0; b < WRITE_BATCH; b++)
			ExecDropSingleTupleTableSlot(slots[b]);
		FreeBulkInsertState(bistate);
		table_close(trel, NoLock);
		MemoryContextDelete(batchcxt);
	}
	deleted = add_constraints(nspid, target, out, nout, checks, domain_check_exprs(*target_relid, out, nout));
	return synth->nrows - deleted;
}

static double
now_seconds(void)
{
	return (double) GetCurrentTimestamp() / 1e6;
}

/* one row of the encoded table (dp_code is the core's uint16 code) */
static void
append_row(const dp_code *codes, void *arg)
{
	if (dp_codes_append((dp_codes *) arg, codes) != 0)
		elog(ERROR, "out of memory");
}

/*
 * The method argument: NULL is the default.  Validated before anything is charged or read.
 */
static const char *
check_method(FunctionCallInfo fcinfo, int argno)
{
	char	   *m;

	if (PG_ARGISNULL(argno))
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

static int64
check_rows(FunctionCallInfo fcinfo, int argno)
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

PG_FUNCTION_INFO_V1(dpsynth_synthesize);
Datum
dpsynth_synthesize(PG_FUNCTION_ARGS)
{
	Oid			relid;
	double		epsilon;
	double		delta;
	char	   *target;
	char	   *label;
	char	   *target_json;
	uint64		written;
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
	dp_plan		plan;
	Oid			nspid;
	int64		ledger_id;
	uint32	   *sizes;
	List	   *checks;
	List	   *skipped_checks;
	dp_codes	codes;
	dp_privsyn_params params;
	dp_privsyn_result res;
	dp_adaptive_stats astats;
	const char *method;
	bool		adaptive;
	DpModel		model;
	int64		model_id;
	dp_prng		rng;
	Progress	pr;
	Oid			target_relid;
	double		t_start = now_seconds();
	double		t_scan,
				t_write;
	TupleDesc	tupdesc;
	Datum		result[9];
	bool		result_nulls[9] = {0};
	int			rc;

	/* ---- 1. validate, plan, check: nothing charged or read yet ---- */
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("source table must not be NULL")));
	relid = PG_GETARG_OID(0);
	epsilon = dpsynth_check_epsilon(fcinfo, 1);
	if (!PG_ARGISNULL(4))
		rows = check_rows(fcinfo, 4);
	if (!PG_ARGISNULL(5))
	{
		only = PG_GETARG_ARRAYTYPE_P(5);
		if (ARR_NDIM(only) > 1)
			ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR), errmsg("columns must be a one-dimensional array")));
	}
	verbose = !PG_ARGISNULL(6) && PG_GETARG_BOOL(6);
	method = check_method(fcinfo, 7);
	adaptive = strcmp(method, "adaptive") == 0;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	rel = dpsynth_open_source(relid);
	dpsynth_check_release_privilege(relid, "dp_synthesize");
	units = dpsynth_rho_for_call(relid, epsilon, &delta);
	if (!PG_ARGISNULL(2))
	{
		double		d = PG_GETARG_FLOAT8(2);

		dpsynth_check_delta(d);
		delta = d;
		units = dpsynth_rho_units(epsilon, delta);
		if (units < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("epsilon %s cannot be converted to zCDP at delta %s", float8out_internal(epsilon),
							float8out_internal(delta))));
	}

	label = psprintf("dp_synthesize(%s)", get_rel_name(relid));
	out = plan_columns(relid, only, label, &nout, &synth_names);
	cols = dpsynth_load_columns(relid, synth_names, &ncols);
	dpsynth_plan_call(relid, adaptive ? DP_CALL_ADAPTIVE : DP_CALL_PRIVSYN, units, epsilon, cols, ncols, &plan);
	units_pipeline = plan.units_release;
	sizes = palloc(sizeof(uint32) * ncols);
	bind_columns(out, nout, cols, false);
	checks = read_checks(relid, label, &skipped_checks);
	check_identifiers(out, nout, rows > 0 ? rows : dpsynth_max_sample_rows, rows > 0,
					  label);
	target = resolve_target(fcinfo, 3, psprintf("%s_synthetic", get_rel_name(relid)), "dp_synthesize", &nspid);

	/* ---- 2. charge once for the whole call ---- */
	{
		StringInfoData tj;

		initStringInfo(&tj);
		escape_json(&tj, target);
		target_json = tj.data;
	}
	ledger_id = dpsynth_charge(relid, "dp_synthesize",
							   OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(synth_names)),
							   epsilon, delta, plan.units_charged, plan.delta_charged,
							   psprintf("{\"target\": %s, \"rows\": " INT64_FORMAT ", \"method\": \"%s\", "
										"\"discovered_columns\": %d, \"rho_units_per_discovery\": " INT64_FORMAT ", "
										"\"rho_units_pipeline\": " INT64_FORMAT "}",
										target_json, rows, method, plan.ndiscover, plan.units_each,
										units_pipeline));

	/* ---- 3. from here on, nothing may fail or speak depending on the data ---- */
	progress_init(&pr, label, verbose);
	if (plan.ndiscover > 0)
	{
		report(&pr, "discovering domains", 0);
		cols = dpsynth_discover(rel, synth_names, cols, ncols, &plan, ledger_id);
		bind_columns(out, nout, cols, true);
	}
	for (int j = 0; j < ncols; j++)
		sizes[j] = dp_domain_ncodes(&cols[j].domain);

	report(&pr, "reading the table", 0);
	if (dp_codes_init(&codes, ncols, 1024, dpsynth_core_alloc, core_realloc, dpsynth_core_free) != 0)
		elog(ERROR, "out of memory");
	dpsynth_scan_codes(rel, cols, ncols, append_row, &codes);
	t_scan = now_seconds();

	/* ---- 4. the method ---- */
	dp_privsyn_default_params(&params);
	params.rho = dpsynth_units_rho(units_pipeline);
	params.rows = (uint64) rows;
	params.max_rows = (uint64) dpsynth_max_sample_rows;
	params.progress = pipeline_progress;
	params.progress_arg = &pr;
	params.gum.progress = gum_progress;
	params.gum.progress_arg = &pr;
	params.gum.threads = (uint32_t) dpsynth_synthesis_threads;
	dp_prng_seed_random(&rng);
	/* an empty table is fine: its exact counts are zeros and the release is noise */
	if (adaptive)
		rc = dp_adaptive_run(&codes, sizes, &params, &rng, dpsynth_core_alloc, dpsynth_core_free, &res,
							 &astats);
	else
		rc = dp_privsyn_run(&codes, sizes, &params, &rng, dpsynth_core_alloc, dpsynth_core_free, &res);
	if (rc != 0)
		elog(ERROR, "dpsynth: the synthesis pipeline failed (%d)", rc);
	if (verbose && adaptive)
		ereport(NOTICE,
				(errmsg("%s: %u rounds (%u anneals) over %u candidates, %u marginals measured besides the one-way ones",
						label, astats.rounds, astats.anneals, astats.candidates, res.n_kway)));
	dp_codes_free(&codes);

	/* ---- 5. write the synthetic table, as the caller ---- */
	memset(&model, 0, sizeof(model));
	model.relname = get_rel_name(relid);
	model.method = adaptive ? DPSYNTH_METHOD_ADAPTIVE_LABEL : DPSYNTH_METHOD_PRIVSYN_LABEL;
	model.nout = nout;
	model.out = out;
	model.ncols = ncols;
	model.sizes = sizes;
	model.res = res;
	memset(&model.res.synth, 0, sizeof(model.res.synth));
	model.checks = checks;
	model.skipped_checks = skipped_checks;
	written = write_synthetic(&model, &res.synth, &rng, nspid, target,
							  psprintf("dpsynth synthetic copy of %s: %s, epsilon %s, delta %s, "
									   "ledger row " INT64_FORMAT ", dpsynth " DPSYNTH_VERSION ", %s",
									   get_rel_name(relid), model.method, float8out_internal(epsilon), float8out_internal(delta),
									   ledger_id, timestamptz_to_str(GetCurrentTimestamp())),
							  &pr, &target_relid);
	dp_codes_free(&res.synth);	/* written; the model below needs the marginals only */

	/* ---- 6. store the released model (unless too large for one jsonb value) ---- */
	report(&pr, "storing the model", 0);
	{
		uint64		cells = 0;

		for (uint32 k = 0; k < res.nmargs; k++)
			cells += res.margs[k].ncells;
		if (cells <= (uint64) dpsynth_max_model_cells)
			model_id = dpsynth_model_store(relid, ledger_id, epsilon, delta, units, &model, cells,
										   dpsynth_model_json(&model));
		else
		{
			/* which marginals were published is released: this says nothing more */
			ereport(WARNING,
					(errmsg("the released model has " UINT64_FORMAT " cells, more than %d: it is not stored",
							cells, dpsynth_max_model_cells),
					 errdetail("The synthetic table is complete; dp_sample and dp_model_json cannot use this release.")));
			model_id = 0;
			result_nulls[8] = true;
		}
	}
	t_write = now_seconds();
	table_close(rel, NoLock);
	dpsynth_complete(ledger_id);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	result[0] = ObjectIdGetDatum(target_relid);
	result[1] = Int64GetDatum((int64) written);
	result[2] = Float8GetDatum(epsilon);
	result[3] = Float8GetDatum(delta);
	result[4] = numeric_from_units(units);
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
	result[8] = Int64GetDatum(model_id);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), result, result_nulls)));
}

/*
 * dp_sample(model, rows, seed, target, verbose): a new synthetic table drawn from a stored model.
 * The model is released data, so this is post-processing: nothing is charged, no private row is
 * read, and the randomness (GUM, splitting merged codes, values inside bins, uuids) comes from the
 * seedable generator; the same model, rows and seed give the same table.
 */
PG_FUNCTION_INFO_V1(dpsynth_sample);
Datum
dpsynth_sample(PG_FUNCTION_ARGS)
{
	int64		model_id;
	int64		rows = -1;
	uint64		seed;
	bool		verbose;
	DpModel    *m;
	DpModelMeta meta;
	char	   *label;
	char	   *target;
	Oid			nspid;
	Oid			target_relid;
	dp_prng		rng;
	dp_gum_params gum;
	dp_codes	synth;
	uint64		nrows;
	uint64		written;
	Progress	pr;
	TupleDesc	tupdesc;
	Datum		result[5];
	bool		result_nulls[5] = {0};
	double		t_start = now_seconds();
	double		t_load,
				t_gum,
				t_write;
	int			rc;

	/* ---- validate and load: nothing created yet ---- */
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("model must not be NULL"),
						errhint("dp_models lists the models you may sample from.")));
	model_id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
		rows = check_rows(fcinfo, 1);
	if (!PG_ARGISNULL(2))
		seed = (uint64) PG_GETARG_INT64(2);
	else
		dp_random_bytes(&seed, sizeof(seed));	/* reported, so that the call can be repeated */
	verbose = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (XactReadOnly || RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("dp_sample cannot run in a read-only transaction"),
				 errdetail("It creates a table."),
				 errhint("Run it in a read-write transaction on the primary.")));

	m = dpsynth_model_load(model_id, &meta);
	label = psprintf("dp_sample(model " INT64_FORMAT ")", model_id);
	nrows = rows >= 0 ? (uint64) rows : dp_privsyn_default_rows(&m->res);
	if (nrows > (uint64) dpsynth_max_sample_rows)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model " INT64_FORMAT " would make " UINT64_FORMAT " rows by default, more than dpsynth.max_sample_rows (%d)",
						model_id, nrows, dpsynth_max_sample_rows),
				 errhint("Pass rows => at most %d.", dpsynth_max_sample_rows)));
	/* the types as they are now: a domain changed since may have to give way to its base type */
	for (int i = 0; i < m->nout; i++)
		secure_column_type(&m->out[i], label);
	for (int i = 0; i < m->nout; i++)
		if (m->out[i].kind == OUT_SYNTH)
		{
			if (m->out[i].domain->kind == DP_DOMAIN_CATEGORIES)
				prepare_other(&m->out[i]);
			prepare_decoding(&m->out[i]);
		}
	check_identifiers(m->out, m->nout, (int64) nrows, true, label);
	target = resolve_target(fcinfo, 3, psprintf("%s_sample_" INT64_FORMAT, m->relname, model_id), "dp_sample",
							&nspid);
	t_load = now_seconds();

	/* ---- GUM and the split of merged codes, the same function as dp_synthesize's ---- */
	progress_init(&pr, label, verbose);
	pipeline_progress(&pr, DP_PHASE_GUM, 0);
	dp_gum_default_params(&gum);
	gum.progress = gum_progress;
	gum.progress_arg = &pr;
	gum.threads = (uint32_t) dpsynth_synthesis_threads;
	dp_prng_seed(&rng, seed);
	rc = dp_privsyn_sample(&m->res, (uint32) m->ncols, m->sizes, nrows, &gum, &rng, dpsynth_core_alloc,
						   dpsynth_core_free, &synth);
	if (rc != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model " INT64_FORMAT " cannot be sampled (%d)", model_id, rc)));
	t_gum = now_seconds();

	/* ---- write it, as dp_synthesize does ---- */
	written = write_synthetic(m, &synth, &rng, nspid, target,
							  psprintf("dpsynth sample of model " INT64_FORMAT ", seed " INT64_FORMAT ": synthetic copy of %s: "
									   "%s, epsilon %s, delta %s, ledger row " INT64_FORMAT
									   ", dpsynth " DPSYNTH_VERSION ", %s",
									   model_id, (int64) seed, m->relname, m->method, float8out_internal(meta.epsilon),
									   float8out_internal(meta.delta), meta.ledger_id,
									   timestamptz_to_str(GetCurrentTimestamp())),
							  &pr, &target_relid);
	dp_codes_free(&synth);
	t_write = now_seconds();
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	result[0] = ObjectIdGetDatum(target_relid);
	result[1] = Int64GetDatum((int64) written);
	result[2] = Int64GetDatum(model_id);
	result[3] = Int64GetDatum((int64) seed);
	result[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
																	   "{\"load\": %.3f, \"gum\": %.3f, \"write\": %.3f, \"total\": %.3f}",
																	   t_load - t_start, t_gum - t_load, t_write - t_gum,
																	   t_write - t_start)));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), result, result_nulls)));
}
