/*
 * encoder.c - a column's encoder as an SQL expression of built-in functions, for the shards of a
 * table spread over many servers (docs/DISTRIBUTED.md, "Next step", item 1):
 *   dpsynth._encoder(tbl, col) -> (expression text, codes int4)
 *       the expression maps the column's value to its cell code under the column's public
 *       domain, exactly as dpsynth_encode does (encode.c), and codes is the domain's number of
 *       codes (the size to give dpsynth._partial_counts);
 *   dpsynth._encode(tbl, col, value) -> int4
 *       dpsynth_encode itself on a value the caller supplies, the yardstick the expression is
 *       tested against (sql/16_encoder.sql).
 * A shard runs the expression where the rows are (postgres_fdw ships, and Citus pushes down,
 * built-in functions), so that its rows' codes are counted there and only counts travel.
 *
 * What the expression reads: the column (quoted) and constants of the public domain only (its
 * labels or edges, and the codes the C encoder gives the special values: NULL, NaN, +/-infinite
 * dates and timestamps).  Categories of types other than text are matched by their output
 * text, as the C encoder matches them, so the expression must run under the output settings
 * dpsynth pins for its own scans (DateStyle ISO, TimeZone UTC, IntervalStyle postgres,
 * extra_float_digits of 1 or more: every float printed in its shortest exact form), and with
 * search_path = pg_catalog (operators and type names are not schema-qualified), which are
 * those of a postgres_fdw remote session.  Categories of money (lc_monetary) and of the reg*
 * types (search_path, OIDs) are not portable between servers: _encoder refuses them.
 *
 * Privacy: neither function reads the table.  _encoder reads the column's public domain; _encode
 * maps a value the caller already holds.  Both are the extension owner's tools (no EXECUTE for
 * PUBLIC), as are the partial-count aggregates the expression feeds.
 */
#include "postgres.h"

#include <math.h>

#include "dpsynth.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/*
 * 2^-1075, exactly: half the smallest double.  A numeric of at most this magnitude rounds to
 * zero, which float8in refuses (out of range), while the C conversion gives 0.0 (strtod).
 */
static const char half_min_double[] =
	"2.47032822920623272088284396434110686182529901307162382212792841250337753635104375932649"
	"9181808179961898982823477228588654633283551779698981993873980053909390631503565951557022"
	"6392290858392449105184435931802849936536152500319370457678249219365623669863658480757001"
	"5857692699037063119282795585513329278343384093519780155312465972635795746227664652728272"
	"2005637400648549997709659947045402082816622623785739345073633900796776193057750674017632"
	"4673600968951340535537458516661134223766678604162159680461914467291840300530057530849048"
	"7653917113865916462395249126236538818796362393732804238910186723484976682350898633885879"
	"2562830275599565752445550725518931369083625477918694866799496832404970582102851318545139"
	"6213837722826145437693412532098591327667236328125E-324";

/* The one column named, with its domain ready (declared, schema, type, or released before). */
static DpColumn *
encoder_column(Oid relid, Name colname)
{
	Datum		name = CStringGetTextDatum(NameStr(*colname));
	ArrayType  *names = construct_array(&name, 1, TEXTOID, -1, false, TYPALIGN_INT);
	int			n;
	DpColumn   *col;

	dpsynth_check_protected(relid);
	col = dpsynth_peek_columns(relid, names, &n);

	if (col->state != DP_COLUMN_READY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of table \"%s\" has no public domain yet", col->name, get_rel_name(relid)),
				 errhint("Declare it with dp_declare, or learn it once with dp_discover.")));
	return col;
}

/* a double that reads back as itself */
static void
append_double(StringInfo s, double x)
{
	appendStringInfo(s, "'%.17g'::float8", x);
}

/*
 * The bins of a numeric domain for a value expression v of type int8 (is_int) or float8 (not
 * NaN).  The C encoder clamps into the end bins and then takes the largest i with edge i <= v;
 * width_bucket over the lower edges of the bins gives that i + 1, 0 below the first edge and the
 * last bin's past the last lower edge, so only the lower end needs a clamp, and v is read once.
 * Functions, not GREATEST and LEAST, which postgres_fdw does not ship (test/script/
 * 13_distributed.sh checks that the shard runs the expression).
 * Integer bins of a real value (dp_encode_real: clamped as doubles, then the bin of floor(x);
 * no column type takes this path today) keep explicit clamps, since floor(x) of a double past
 * int8 cannot be cast.
 */
static void
append_bins(StringInfo s, const dp_domain *d, const char *v, bool is_int)
{
	uint32		nv = d->nvalues;

	if (d->kind == DP_DOMAIN_INT_BINS && !is_int)
	{
		appendStringInfo(s, "CASE WHEN %s <= ", v);
		append_double(s, (double) d->iedges[0]);
		appendStringInfo(s, " THEN 0 WHEN %s >= ", v);
		append_double(s, (double) (d->iedges[nv] - 1));
		appendStringInfo(s, " THEN %u ELSE pg_catalog.width_bucket(pg_catalog.floor(%s)::int8, '{", nv - 1, v);
		for (uint32 i = 0; i < nv; i++)
			appendStringInfo(s, "%s" INT64_FORMAT, i ? "," : "", d->iedges[i]);
		appendStringInfoString(s, "}'::int8[]) - 1 END");
		return;
	}
	if (d->kind == DP_DOMAIN_INT_BINS)
	{
		appendStringInfo(s, "pg_catalog.int4larger(pg_catalog.width_bucket(%s, '{", v);
		for (uint32 i = 0; i < nv; i++)
			appendStringInfo(s, "%s" INT64_FORMAT, i ? "," : "", d->iedges[i]);
		appendStringInfoString(s, "}'::int8[]) - 1, 0)");
		return;
	}
	/* real bins; an int8 value is compared as the double the C encoder makes of it */
	appendStringInfo(s, "pg_catalog.int4larger(pg_catalog.width_bucket(%s%s, '{", v, is_int ? "::float8" : "");
	for (uint32 i = 0; i < nv; i++)
		appendStringInfo(s, "%s%.17g", i ? "," : "", d->edges[i]);
	appendStringInfoString(s, "}'::float8[]) - 1, 0)");
}

/*
 * Timestamp bins compared as timestamps: width_bucket over the lower edges written as literals
 * (an edge is PostgreSQL's own Timestamp value, microseconds since 2000-01-01, printed under
 * dpsynth's pinned output settings, so it reads back exactly).  No arithmetic on the value, so
 * nothing can overflow, and postgres_fdw ships it (EXTRACT's text constant kept the arithmetic
 * form local).  false, having written nothing, if an edge is not a finite legal timestamp.
 */
static bool
append_time_bins(StringInfo s, const dp_domain *d, const char *c, Oid typid)
{
	StringInfoData lits;
	int			nest;

	for (uint32 i = 0; i < d->nvalues; i++)
		if (!IS_VALID_TIMESTAMP(d->iedges[i]))
			return false;
	initStringInfo(&lits);
	nest = dpsynth_pin_output_settings();
	for (uint32 i = 0; i < d->nvalues; i++)
		appendStringInfo(&lits, "%s\"%s\"", i ? "," : "",
						 OidOutputFunctionCall(typid == TIMESTAMPOID ? F_TIMESTAMP_OUT : F_TIMESTAMPTZ_OUT,
											   TimestampGetDatum(d->iedges[i])));
	AtEOXact_GUC(false, nest);
	appendStringInfo(s, "pg_catalog.int4larger(pg_catalog.width_bucket(%s, '{%s}'::pg_catalog.%s[]) - 1, 0)",
					 c, lits.data, typid == TIMESTAMPOID ? "timestamp" : "timestamptz");
	return true;
}

/* The labels of a categories domain as a text[] literal, in code order. */
static void
append_labels(StringInfo s, const dp_domain *d)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(d->nvalues, 1));
	ArrayType  *arr;

	for (uint32 i = 0; i < d->nvalues; i++)
		elems[i] = PointerGetDatum(cstring_to_text_with_len(d->map.labels[i], d->map.lens[i]));
	arr = construct_array(elems, (int) d->nvalues, TEXTOID, -1, false, TYPALIGN_INT);
	appendStringInfo(s, "%s::text[]",
					 quote_literal_cstr(OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(arr))));
}

/*
 * Whether a column's categories are matched by a text that may differ between servers: money
 * (its text follows lc_monetary) and the reg* types (their text follows search_path, and their
 * OIDs differ between servers).
 */
bool
dpsynth_encoder_not_portable(const DpColumn *col)
{
	if (col->encoding != DP_ENC_OUTPUT)
		return false;
	switch (col->typid)
	{
		case MONEYOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCLASSOID:
		case REGCOLLATIONOID:
		case REGTYPEOID:
		case REGROLEOID:
		case REGNAMESPACEOID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
			return true;
		default:
			return false;
	}
}

char *
dpsynth_encoder_sql(Oid relid, DpColumn *col)
{
	const dp_domain *d = &col->domain;
	Oid			typid,
				collid;
	int32		typmod;
	bool		bytewise;
	const char *c = quote_identifier(col->name);
	unsigned	nullc = dp_encode_null(d);
	StringInfoData s;

	/* the column's collation (text compared as (col)::text keeps it; enum, format, boolean: none) */
	get_atttypetypmodcoll(relid, col->attnum, &typid, &typmod, &collid);
	bytewise = col->encoding != DP_ENC_TEXT && col->encoding != DP_ENC_BPCHAR ? true :
		!OidIsValid(collid) || get_collation_isdeterministic(collid);
	initStringInfo(&s);
	appendStringInfo(&s, "CASE WHEN %s IS NULL THEN %u ELSE ", c, nullc);
	switch (col->encoding)
	{
		case DP_ENC_BOOL:
			appendStringInfo(&s, "CASE WHEN %s THEN 1 ELSE 0 END", c);
			break;
		case DP_ENC_TEXT:
		case DP_ENC_BPCHAR:
		case DP_ENC_ENUM:
		case DP_ENC_OUTPUT:
		case DP_ENC_BOOL_LABEL:
			{
				char	   *text;

				/*
				 * The text the C encoder looks up: the bytes (text, varchar), without the trailing
				 * spaces (char(n): its cast to text drops them), the label (enum), the output
				 * function's text (format's %s), 'true'/'false' (boolean with categories).
				 */
				if (col->encoding == DP_ENC_OUTPUT)
					text = psprintf("pg_catalog.format('%%s', %s)", c);
				else if (col->encoding == DP_ENC_BOOL_LABEL)
					text = psprintf("CASE WHEN %s THEN 'true' ELSE 'false' END", c);
				else
					text = psprintf("(%s)::text", c);
				/*
				 * The label's position, by bytes as the C encoder compares: under a deterministic
				 * collation text equality is bytewise already, and the expression names none (so
				 * that postgres_fdw ships it: an explicit collation, or COALESCE, it keeps
				 * local); under a nondeterministic one, COLLATE "C".
				 */
				{
					StringInfoData pos;

					initStringInfo(&pos);
					appendStringInfoString(&pos, "pg_catalog.array_position(");
					append_labels(&pos, d);
					appendStringInfo(&pos, ", %s%s)", text, bytewise ? "" : " COLLATE \"C\"");
					appendStringInfo(&s, "CASE WHEN %s IS NULL THEN %u ELSE %s - 1 END", pos.data, nullc, pos.data);
				}
				break;
			}
		case DP_ENC_INT:
			{
				bool		temporal = col->typid == DATEOID || col->typid == TIMESTAMPOID ||
					col->typid == TIMESTAMPTZOID;
				const char *v;

				/* dpsynth_value_int: days since 2000-01-01; microseconds since 2000-01-01 */
				if (temporal)
					appendStringInfo(&s, "CASE WHEN %s = '-infinity' THEN %u WHEN %s = 'infinity' THEN %u ELSE ",
									 c, (unsigned) dp_encode_int(d, PG_INT64_MIN),
									 c, (unsigned) dp_encode_int(d, PG_INT64_MAX));
				if (col->typid == DATEOID)
					v = psprintf("((%s) - '2000-01-01'::date)::int8", c);
				else if (col->typid == TIMESTAMPOID || col->typid == TIMESTAMPTZOID)
					v = psprintf("((EXTRACT(epoch FROM %s) - 946684800) * 1000000)::int8", c);
				else
					v = psprintf("(%s)::int8", c);
				if ((col->typid == TIMESTAMPOID || col->typid == TIMESTAMPTZOID) &&
					d->kind == DP_DOMAIN_INT_BINS && append_time_bins(&s, d, c, col->typid))
					 /* compared as timestamps */ ;
				else if (d->kind == DP_DOMAIN_INT_BINS || d->kind == DP_DOMAIN_REAL_BINS)
					append_bins(&s, d, v, true);
				else
					appendStringInfo(&s, "%u", nullc);
				if (temporal)
					appendStringInfoString(&s, " END");
				break;
			}
		case DP_ENC_REAL:
			{
				const char *x;

				/*
				 * NaN first (a numeric NaN sorts above every number).  A numeric too large for
				 * float8 is clamped to the largest double first, as the C conversion saturates:
				 * either way it lands in an end bin; one that rounds to zero is zero (the cast
				 * would refuse it, and its error would show the value).
				 */
				appendStringInfo(&s, "CASE WHEN %s = 'NaN' THEN %u ELSE ", c, (unsigned) dp_encode_real(d, NAN));
				if (col->typid == NUMERICOID)
					x = psprintf("CASE WHEN pg_catalog.abs(%s) <= %s THEN 0::float8 ELSE pg_catalog.numeric_smaller(pg_catalog.numeric_larger(%s, -1.7976931348623157e308), 1.7976931348623157e308)::float8 END",
								 c, half_min_double, c);
				else
					x = psprintf("(%s)::float8", c);
				if (d->kind == DP_DOMAIN_INT_BINS || d->kind == DP_DOMAIN_REAL_BINS)
					append_bins(&s, d, x, false);
				else
					appendStringInfo(&s, "%u", nullc);
				appendStringInfoString(&s, " END");
				break;
			}
		default:
			elog(ERROR, "column \"%s\" has an encoding with no SQL form", col->name);
	}
	appendStringInfoString(&s, " END");
	return s.data;
}

PG_FUNCTION_INFO_V1(dpsynth_encoder);
Datum
dpsynth_encoder(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	DpColumn   *col = encoder_column(relid, PG_GETARG_NAME(1));
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (dpsynth_encoder_not_portable(col))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the categories of column \"%s\" (type %s) are matched by a text that may differ between servers",
						col->name, format_type_be(col->typid)),
				 errdetail("The text of money follows lc_monetary; that of the reg* types follows search_path, and their OIDs differ between servers.")));
	values[0] = CStringGetTextDatum(dpsynth_encoder_sql(relid, col));
	values[1] = Int32GetDatum((int32) dp_domain_ncodes(&col->domain));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * _encode's column, loaded once per call site (fn_extra) for as long as the table and the name
 * stay the same (so a domain declared meanwhile by the same statement is not seen), in a memory
 * context of its own that a reload resets.
 */
typedef struct EncodeCache
{
	MemoryContext cxt;
	bool		valid;
	Oid			relid;
	NameData	name;
	DpColumn   *col;
} EncodeCache;

PG_FUNCTION_INFO_V1(dpsynth_encode_value);
Datum
dpsynth_encode_value(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0);
	Name		name = PG_ARGISNULL(1) ? NULL : PG_GETARG_NAME(1);
	EncodeCache *cache = fcinfo->flinfo->fn_extra;
	DpColumn   *col;
	Oid			argtype = getBaseType(get_fn_expr_argtype(fcinfo->flinfo, 2));
	int			nestlevel;
	dp_code		code;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(EncodeCache));
		cache->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "dpsynth encode", ALLOCSET_SMALL_SIZES);
		fcinfo->flinfo->fn_extra = cache;
	}
	if (!cache->valid || cache->relid != relid || strcmp(NameStr(cache->name), NameStr(*name)) != 0)
	{
		MemoryContext old;

		cache->valid = false;	/* (until the column is loaded: an error leaves no half entry) */
		MemoryContextReset(cache->cxt);
		old = MemoryContextSwitchTo(cache->cxt);
		cache->col = encoder_column(relid, name);
		MemoryContextSwitchTo(old);
		cache->relid = relid;
		namestrcpy(&cache->name, NameStr(*name));
		cache->valid = true;
	}
	col = cache->col;
	if (argtype != col->typid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" has type %s, not %s", col->name, format_type_be(col->typid),
						format_type_be(argtype))));
	/* the output function's text (categories of other types) under the settings of dpsynth's scans */
	nestlevel = col->encoding == DP_ENC_OUTPUT ? dpsynth_pin_output_settings() : -1;
	code = dpsynth_encode(col, PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2));
	if (nestlevel >= 0)
		AtEOXact_GUC(false, nestlevel);
	PG_RETURN_INT32((int32) code);
}
