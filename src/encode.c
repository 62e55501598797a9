/*
 * encode.c - a value's code under its column's public domain, and a code's label.
 *
 * The numeric views of a value (integers, dates as days and timestamps as microseconds since
 * 2000-01-01, reals) that encoding and DP discovery read; the encoding of one value and of one
 * row (dpsynth_encode, dpsynth_encode_slot: what the serial and the parallel scan both run, and
 * what encoder.c writes as an SQL expression for remote shards); the label of a code.
 * domain.c sets the columns up (DpColumn.encoding says which branch of dpsynth_encode a column
 * takes); nothing here reads a catalog or a row by itself.
 *
 * Encoding a value never raises (PRIVACY.md, "Errors and side channels"): a value with no place
 * in the domain goes to the NULL cell, or is clamped to the first or last bin.
 */
#include "dpsynth.h"

#include <float.h>

#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

bool
dpsynth_value_is_integral(Oid typid)
{
	return dpsynth_type_is_integer(typid) || dpsynth_type_is_time(typid);
}

/* Never raises: infinite dates and timestamps come out as the extreme int64 values. */
int64
dpsynth_value_int(Oid typid, Datum value)
{
	switch (typid)
	{
		case INT2OID:
			return DatumGetInt16(value);
		case INT4OID:
			return DatumGetInt32(value);
		case INT8OID:
			return DatumGetInt64(value);
		case DATEOID:
			{
				DateADT		d = DatumGetDateADT(value);

				return DATE_IS_NOBEGIN(d) ? PG_INT64_MIN : DATE_IS_NOEND(d) ? PG_INT64_MAX : d;
			}
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return DatumGetInt64(value);
		default:
			return 0;
	}
}

/*
 * The values a numeric, date or timestamp type can hold, in dpsynth_value_int/real's units
 * (finite ones: infinite dates and timestamps fall into the end bins).  Public facts of the type.
 */
void
dpsynth_value_range(Oid typid, double *lo, double *hi)
{
	switch (typid)
	{
		case INT2OID:
			*lo = PG_INT16_MIN, *hi = PG_INT16_MAX;
			return;
		case INT4OID:
			*lo = PG_INT32_MIN, *hi = PG_INT32_MAX;
			return;
		case DATEOID:
			*lo = DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE;
			*hi = DATE_END_JULIAN - POSTGRES_EPOCH_JDATE - 1;
			return;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*lo = (double) MIN_TIMESTAMP;
			*hi = (double) (END_TIMESTAMP - 1);
			return;
		case FLOAT4OID:
			*lo = -FLT_MAX, *hi = FLT_MAX;
			return;
		default:				/* int8 (rounded outwards), float8, numeric as float8 */
			*lo = dpsynth_value_is_integral(typid) ? (double) PG_INT64_MIN : -DBL_MAX;
			*hi = dpsynth_value_is_integral(typid) ? (double) PG_INT64_MAX : DBL_MAX;
			return;
	}
}

/* Never raises: the _no_overflow conversion gives +/-HUGE_VAL for huge numerics. */
double
dpsynth_value_real(Oid typid, Datum value)
{
	switch (typid)
	{
		case FLOAT4OID:
			return DatumGetFloat4(value);
		case FLOAT8OID:
			return DatumGetFloat8(value);
		case NUMERICOID:
			return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
		default:
			return (double) dpsynth_value_int(typid, value);
	}
}

/* Orders OIDs (an enum column's sorted label OIDs, which dpsynth_encode searches). */
int
dpsynth_oid_cmp(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a;
	Oid			y = *(const Oid *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}


static dp_code
encode_varlena(DpColumn *col, Datum value)
{
	text	   *t = DatumGetTextPP(value);
	char	   *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);

	if (col->encoding == DP_ENC_BPCHAR)
		len = bpchartruelen(s, len);
	return dp_encode_label(&col->domain, s, len);
}

/*
 * A scratch column's half of an integer's offset in its declared bounds (DP_ENC_OFFSET_LO/HI,
 * synth_onescan.c): the value clamped into [iedges[0], iedges[1] - 1], less iedges[0]; NULL is
 * the offset with every bit set.
 */
static dp_code
encode_offset(DpColumn *col, Datum value, bool isnull)
{
	const dp_domain *d = &col->domain;
	uint64		off = PG_UINT64_MAX;

	if (!isnull)
	{
		int64		v = dpsynth_value_int(col->typid, value);

		v = Max(Min(v, d->iedges[1] - 1), d->iedges[0]);
		off = (uint64) (v - d->iedges[0]);
	}
	return (dp_code) (col->encoding == DP_ENC_OFFSET_LO ? off & 0xFFFF : (off >> 16) & 0xFFFF);
}

/*
 * Encodes one value.  Allocations (detoasting, output functions) go to the current memory
 * context, which the caller resets per row.  Nothing here raises on a value.
 */
dp_code
dpsynth_encode(DpColumn *col, Datum value, bool isnull)
{
	if (col->encoding == DP_ENC_OFFSET_LO || col->encoding == DP_ENC_OFFSET_HI)
		return encode_offset(col, value, isnull);
	if (isnull)
		return dp_encode_null(&col->domain);
	switch (col->encoding)
	{
		case DP_ENC_TEXT:
		case DP_ENC_BPCHAR:
			return encode_varlena(col, value);
		case DP_ENC_OUTPUT:
			{
				char	   *s = OutputFunctionCall(&col->outfunc, value);

				return dp_encode_label(&col->domain, s, strlen(s));
			}
		case DP_ENC_BOOL_LABEL:
			return DatumGetBool(value) ? dp_encode_label(&col->domain, "true", 4)
				: dp_encode_label(&col->domain, "false", 5);
		case DP_ENC_BOOL:
			return DatumGetBool(value) ? 1 : 0;
		case DP_ENC_ENUM:
			{
				Oid			key = DatumGetObjectId(value);
				Oid		   *hit = bsearch(&key, col->enum_oids, col->nenum, sizeof(Oid), dpsynth_oid_cmp);

				return hit ? col->enum_codes[hit - col->enum_oids] : dp_encode_null(&col->domain);
			}
		case DP_ENC_INT:
			return dp_encode_int(&col->domain, dpsynth_value_int(col->typid, value));
		case DP_ENC_REAL:
			return dp_encode_real(&col->domain, dpsynth_value_real(col->typid, value));
	}
	return dp_encode_null(&col->domain);
}

/* The codes of one row (slot in the root's layout); allocations go to rowcxt, reset here. */
void
dpsynth_encode_slot(DpColumn *cols, int ncols, AttrNumber maxatt, TupleTableSlot *slot,
					MemoryContext rowcxt, dp_code *codes)
{
	MemoryContext old;

	slot_getsomeattrs(slot, maxatt);
	old = MemoryContextSwitchTo(rowcxt);
	for (int j = 0; j < ncols; j++)
	{
		AttrNumber	a = cols[j].attnum - 1;

		codes[j] = dpsynth_encode(&cols[j], slot->tts_values[a], slot->tts_isnull[a]);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(rowcxt);
}

/* Labels: categories as declared; bins as ranges in the column's own notation. */
Datum
dpsynth_code_label(DpColumn *col, dp_code code, bool *isnull)
{
	char		buf[256];

	*isnull = false;
	if (code >= col->domain.nvalues)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (col->domain.kind == DP_DOMAIN_CATEGORIES)
		return PointerGetDatum(cstring_to_text_with_len(col->domain.map.labels[code],
														col->domain.map.lens[code]));
	if (dpsynth_type_is_time(col->typid))
	{
		int64		lo,
					hi;
		Oid			outfn;
		bool		varlena;
		char	   *a,
				   *b;

		dp_int_bin_range(&col->domain, code, &lo, &hi);
		getTypeOutputInfo(col->typid, &outfn, &varlena);
		if (col->typid == DATEOID)
		{
			a = OidOutputFunctionCall(outfn, DateADTGetDatum((DateADT) lo));
			b = OidOutputFunctionCall(outfn, DateADTGetDatum((DateADT) hi));
		}
		else
		{
			a = OidOutputFunctionCall(outfn, TimestampGetDatum(lo));
			b = OidOutputFunctionCall(outfn, TimestampGetDatum(hi));
		}
		return CStringGetTextDatum(lo == hi ? a : psprintf("[%s,%s]", a, b));
	}
	dp_code_label(&col->domain, code, buf, sizeof(buf));
	return CStringGetTextDatum(buf);
}
