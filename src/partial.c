/*
 * partial.c - the partial-count aggregates, dpsynth's building block past one machine
 * (docs/DISTRIBUTED.md):
 *   dpsynth._partial_counts(codes int4[], sizes int4[]) -> bytea   count the rows of one marginal
 *   dpsynth._partial_merge(state bytea) -> bytea                    add states counted elsewhere
 *   dpsynth._partial_vector(state bytea, sizes int4[]) -> int8[]    the counts of a state
 * Both aggregates have a combine function and serialize their state, and are PARALLEL SAFE: so
 * PostgreSQL's parallel query counts in its workers and adds in the leader, and a shard (a
 * postgres_fdw server with this extension, a Citus worker) can count its own rows and send
 * counts, never rows.
 *
 * Privacy: the result is EXACT counts of raw rows.  No EXECUTE for PUBLIC or dpsynth_analyst
 * (sql/dpsynth.sql): only the extension owner's code uses them, and what it releases from them
 * goes through the charged noise path (dp_noise_counts), as a single-server scan's counts do.
 * The aggregates run with the caller's rights over rows the caller can read, so even a role
 * granted them could count nothing it could not SELECT.  The codes come from a total encoder of
 * a public domain, so a code out of range is a caller's bug, not a fact of the data: refused.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "dp_partial.h"
#include "dpsynth.h"

/*
 * Raises st as an error whose SQLSTATE says what was wrong; never repeats the bytes it was read
 * from (a shard's, untrusted).  Shared with citus_state.c.
 */
void
dpsynth_partial_raise(dp_partial_status st)
{
	int			code;

	switch (st)
	{
		case DP_PARTIAL_CODE_RANGE:
		case DP_PARTIAL_OVERFLOW:
			code = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
			break;
		case DP_PARTIAL_MALFORMED:
			code = ERRCODE_INVALID_BINARY_REPRESENTATION;
			break;
		default:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
	}
	ereport(ERROR,
			(errcode(code),
			 errmsg("invalid partial counts: %s", dp_partial_status_message(st))));
}

/* The memory context of the aggregate's state; the support functions are for aggregates only. */
static MemoryContext
partial_aggcontext(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", fn)));
	return aggcontext;
}

/* A one-dimensional int4 array without NULLs: its elements and their number.  Shared with citus_state.c. */
int32 *
dpsynth_int4_elements(ArrayType *a, const char *what, int *n)
{
	if (ARR_ELEMTYPE(a) != INT4OID || ARR_NDIM(a) > 1 || ARR_HASNULL(a))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional int4 array without NULLs", what)));
	*n = ARR_NDIM(a) == 0 ? 0 : ARR_DIMS(a)[0];
	return (int32 *) ARR_DATA_PTR(a);
}

static dp_partial *
partial_new(MemoryContext cxt, const int32 *sizes, int ncols)
{
	int64		ncells;
	dp_partial_status st = dp_partial_shape(sizes, ncols, &ncells);
	dp_partial *p;

	if (st != DP_PARTIAL_OK)
		dpsynth_partial_raise(st);
	p = MemoryContextAllocHuge(cxt, dp_partial_bytes(ncells));
	dp_partial_init(p, sizes, ncols, ncells);
	return p;
}

static dp_partial *
partial_copy(MemoryContext cxt, const dp_partial *from)
{
	dp_partial *p = partial_new(cxt, from->sizes, from->ncols);

	memcpy(p->counts, from->counts, (size_t) from->ncells * sizeof(int64));
	return p;
}

/* Decodes untrusted bytes (a shard's, a worker's) into a state allocated in cxt. */
static dp_partial *
partial_decode(MemoryContext cxt, bytea *b)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
	size_t		len = VARSIZE_ANY_EXHDR(b);
	int32		sizes[DP_PARTIAL_MAX_COLS];
	int			ncols;
	int64		ncells;
	dp_partial *p;
	dp_partial_status st;

	st = dp_partial_decode_shape(buf, len, sizes, &ncols, &ncells);
	if (st != DP_PARTIAL_OK)
		dpsynth_partial_raise(st);
	p = MemoryContextAllocHuge(cxt, dp_partial_bytes(ncells));
	st = dp_partial_decode(buf, len, p);
	if (st != DP_PARTIAL_OK)
		dpsynth_partial_raise(st);
	return p;
}

static bytea *
partial_encode(const dp_partial *p)
{
	size_t		len = dp_partial_encoded_bytes(p);
	bytea	   *b;

	if (len > MaxAllocSize - VARHDRSZ)
		dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
	b = palloc(VARHDRSZ + len);
	SET_VARSIZE(b, VARHDRSZ + len);
	dp_partial_encode(p, (uint8 *) VARDATA(b));
	return b;
}

static void
partial_check(dp_partial_status st)
{
	if (st != DP_PARTIAL_OK)
		dpsynth_partial_raise(st);
}

/* SFUNC of _partial_counts: one row, given as its code in every column of the marginal. */
PG_FUNCTION_INFO_V1(dpsynth_partial_add);
Datum
dpsynth_partial_add(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = partial_aggcontext(fcinfo, "dpsynth._partial_counts_add");
	dp_partial *p = PG_ARGISNULL(0) ? NULL : (dp_partial *) PG_GETARG_POINTER(0);
	int32	   *codes;
	int32	   *sizes;
	int			ncodes;
	int			ncols;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the codes and sizes of partial counts must not be null"),
				 errhint("Encode a NULL value as a code of its column's domain.")));
	codes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(1), "codes", &ncodes);
	sizes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(2), "sizes", &ncols);
	if (p == NULL)
		p = partial_new(aggcontext, sizes, ncols);
	else if (!dp_partial_same_shape(p, sizes, ncols))
		dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
	partial_check(dp_partial_add_row(p, codes, ncodes));
	PG_RETURN_POINTER(p);
}

/* SFUNC of _partial_merge: one state counted elsewhere (a worker, a shard); NULL: nothing counted. */
PG_FUNCTION_INFO_V1(dpsynth_partial_merge_add);
Datum
dpsynth_partial_merge_add(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = partial_aggcontext(fcinfo, "dpsynth._partial_merge_add");
	dp_partial *p = PG_ARGISNULL(0) ? NULL : (dp_partial *) PG_GETARG_POINTER(0);
	dp_partial *in;

	CHECK_FOR_INTERRUPTS();
	if (PG_ARGISNULL(1))
	{
		if (p == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(p);
	}
	in = partial_decode(p == NULL ? aggcontext : CurrentMemoryContext, PG_GETARG_BYTEA_PP(1));
	if (p == NULL)
		PG_RETURN_POINTER(in);
	partial_check(dp_partial_combine(p, in));
	pfree(in);
	PG_RETURN_POINTER(p);
}

/* COMBINEFUNC of both: the result lives in the aggregate's context, as the executor requires. */
PG_FUNCTION_INFO_V1(dpsynth_partial_combine);
Datum
dpsynth_partial_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = partial_aggcontext(fcinfo, "dpsynth._partial_combine");
	dp_partial *a = PG_ARGISNULL(0) ? NULL : (dp_partial *) PG_GETARG_POINTER(0);
	dp_partial *b = PG_ARGISNULL(1) ? NULL : (dp_partial *) PG_GETARG_POINTER(1);

	CHECK_FOR_INTERRUPTS();
	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
		PG_RETURN_POINTER(partial_copy(aggcontext, b));
	partial_check(dp_partial_combine(a, b));
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(dpsynth_partial_serialize);
Datum
dpsynth_partial_serialize(PG_FUNCTION_ARGS)
{
	partial_aggcontext(fcinfo, "dpsynth._partial_serialize");
	PG_RETURN_BYTEA_P(partial_encode((dp_partial *) PG_GETARG_POINTER(0)));
}

PG_FUNCTION_INFO_V1(dpsynth_partial_deserialize);
Datum
dpsynth_partial_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = partial_aggcontext(fcinfo, "dpsynth._partial_deserialize");

	PG_RETURN_POINTER(partial_decode(aggcontext, PG_GETARG_BYTEA_PP(0)));
}

/* FINALFUNC of both: the state's byte form, which can cross a server boundary; NULL for no row. */
PG_FUNCTION_INFO_V1(dpsynth_partial_final);
Datum
dpsynth_partial_final(PG_FUNCTION_ARGS)
{
	partial_aggcontext(fcinfo, "dpsynth._partial_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_BYTEA_P(partial_encode((dp_partial *) PG_GETARG_POINTER(0)));
}

/* An int8[] of n counts, built in place (n <= 2^24, so far under the 1 GB limit). */
ArrayType *
dpsynth_int8_array(const int64 *counts, int64 n)
{
	Size		bytes = ARR_OVERHEAD_NONULLS(1) + (Size) n * sizeof(int64);
	ArrayType  *a = palloc0(bytes);

	SET_VARSIZE(a, bytes);
	a->ndim = 1;
	a->dataoffset = 0;
	a->elemtype = INT8OID;
	ARR_DIMS(a)[0] = (int) n;
	ARR_LBOUND(a)[0] = 1;
	memcpy(ARR_DATA_PTR(a), counts, (Size) n * sizeof(int64));
	return a;
}

/*
 * The sizes argument n of an int8[]-vector function (_partial_vector, citus_state.c's
 * _state_vector): the shape the caller planned, not NULL.
 */
int32 *
dpsynth_sizes_arg(FunctionCallInfo fcinfo, int n, int *ncols)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the sizes of partial counts must not be null")));
	return dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(n), "sizes", ncols);
}

/*
 * The counts of state p as int8[], cell by cell (first column slowest), checked against the shape
 * the caller planned (sizes, from dpsynth_sizes_arg): a NULL state (no row anywhere) is all
 * zeros, a state of another shape is refused, so that a shard cannot change the marginal being
 * counted.
 */
ArrayType *
dpsynth_counts_vector(const dp_partial *p, const int32 *sizes, int ncols)
{
	if (p == NULL)
		p = partial_new(CurrentMemoryContext, sizes, ncols);
	else if (!dp_partial_same_shape(p, sizes, ncols))
		dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
	return dpsynth_int8_array(p->counts, p->ncells);
}

/* dpsynth._partial_vector(state bytea, sizes int4[]): dpsynth_counts_vector of a decoded state. */
PG_FUNCTION_INFO_V1(dpsynth_partial_vector);
Datum
dpsynth_partial_vector(PG_FUNCTION_ARGS)
{
	int			ncols;
	int32	   *sizes = dpsynth_sizes_arg(fcinfo, 1, &ncols);

	PG_RETURN_ARRAYTYPE_P(dpsynth_counts_vector(PG_ARGISNULL(0) ? NULL :
												partial_decode(CurrentMemoryContext, PG_GETARG_BYTEA_PP(0)),
												sizes, ncols));
}
