/*
 * citus_state.c - partial counts whose state Citus can push down to its shards
 * (docs/DISTRIBUTED.md, "Citus"):
 *   type dpsynth.partial_state                                         the counts of one marginal
 *   dpsynth._shard_counts(codes int4[], sizes int4[]) -> partial_state  count the rows
 *   dpsynth._state_vector(state partial_state, sizes int4[]) -> int8[]  the counts of a state
 *
 * Citus pushes an aggregate down to the shards (worker_partial_agg on each shard, combined on the
 * coordinator by coord_combine_agg) only when its state type is not a pseudo-type, so the
 * _partial_counts aggregate of partial.c (an internal state) would pull every row to the
 * coordinator.  Here the state is a type of its own: in memory a varlena holding the dense vector
 * (dp_partial.h), counted in place; as text, what Citus ships from a shard to the coordinator, the
 * portable byte form of dp_partial_encode (dense or sparse, whichever is smaller) in base64.  The
 * input function reads a shard's text as untrusted bytes: every field is checked by
 * dp_partial_decode, and no error repeats the text.
 *
 * Privacy: as partial.c's, these are EXACT counts of raw rows: no EXECUTE for PUBLIC on the
 * aggregate and its support functions (sql/dpsynth.sql); only the extension owner's code (citus.c)
 * runs them, and what it releases goes through the charged noise path.
 */
#include "postgres.h"

#include "common/base64.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "dp_partial.h"
#include "dpsynth.h"

/* A state: the varlena header, padding to 8 bytes, then the dp_partial (int64 counts aligned). */
#define STATE_HEADER	MAXALIGN(VARHDRSZ)
#define STATE_PARTIAL(s) ((dp_partial *) ((char *) (s) + STATE_HEADER))

static void
state_check(dp_partial_status st)
{
	if (st != DP_PARTIAL_OK)
		dpsynth_partial_raise(st);
}

/* A state of ncells cells in cxt, not initialized. */
static struct varlena *
state_alloc(MemoryContext cxt, int64 ncells)
{
	Size		bytes = STATE_HEADER + dp_partial_bytes(ncells);
	struct varlena *s;

	if (bytes > MaxAllocSize)
		dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
	s = MemoryContextAlloc(cxt, bytes);
	SET_VARSIZE(s, bytes);
	return s;
}

static struct varlena *
state_new(MemoryContext cxt, const int32 *sizes, int ncols)
{
	int64		ncells;
	struct varlena *s;

	state_check(dp_partial_shape(sizes, ncols, &ncells));
	s = state_alloc(cxt, ncells);
	dp_partial_init(STATE_PARTIAL(s), sizes, ncols, ncells);
	return s;
}

/*
 * A state argument.  The type's storage is plain (never compressed, toasted or given a short
 * header), so the datum is the state as allocated; its length is checked against its shape all
 * the same.
 */
static struct varlena *
state_arg(FunctionCallInfo fcinfo, int n)
{
	struct varlena *s = (struct varlena *) PG_DETOAST_DATUM(PG_GETARG_DATUM(n));
	dp_partial *p;

	if (VARATT_IS_SHORT(s) || VARSIZE(s) < STATE_HEADER + dp_partial_bytes(0))
		dpsynth_partial_raise(DP_PARTIAL_MALFORMED);
	p = STATE_PARTIAL(s);
	if (p->ncols < 1 || p->ncols > DP_PARTIAL_MAX_COLS || p->ncells < 1 || p->ncells > DP_PARTIAL_MAX_CELLS ||
		VARSIZE(s) != STATE_HEADER + dp_partial_bytes(p->ncells))
		dpsynth_partial_raise(DP_PARTIAL_MALFORMED);
	return s;
}

/* The text form: dp_partial_encode's bytes in base64. */
PG_FUNCTION_INFO_V1(dpsynth_state_out);
Datum
dpsynth_state_out(PG_FUNCTION_ARGS)
{
	const dp_partial *p = STATE_PARTIAL(state_arg(fcinfo, 0));
	size_t		len = dp_partial_encoded_bytes(p);
	uint8	   *bytes;
	char	   *out;
	int			n;

	if (len > (MaxAllocSize / 4) * 3 - 8)
		dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
	bytes = palloc(len);
	dp_partial_encode(p, bytes);
	out = palloc(pg_b64_enc_len((int) len) + 1);
	n = pg_b64_encode((const void *) bytes, (int) len, out, pg_b64_enc_len((int) len));
	if (n < 0)
		elog(ERROR, "dpsynth: could not encode partial counts");
	out[n] = '\0';
	pfree(bytes);
	PG_RETURN_CSTRING(out);
}

/* Reads a state from its text form: untrusted (a shard's); the text is never repeated in an error. */
PG_FUNCTION_INFO_V1(dpsynth_state_in);
Datum
dpsynth_state_in(PG_FUNCTION_ARGS)
{
	const char *text = PG_GETARG_CSTRING(0);
	size_t		tlen = strlen(text);
	uint8	   *bytes;
	int			len;
	int32		sizes[DP_PARTIAL_MAX_COLS];
	int			ncols;
	int64		ncells;
	struct varlena *s;

	if (tlen > MaxAllocSize / 2)
		dpsynth_partial_raise(DP_PARTIAL_MALFORMED);
	bytes = palloc(pg_b64_dec_len((int) tlen) + 1);
	len = pg_b64_decode(text, (int) tlen, (void *) bytes, pg_b64_dec_len((int) tlen));
	if (len < 0)
		dpsynth_partial_raise(DP_PARTIAL_MALFORMED);
	state_check(dp_partial_decode_shape(bytes, (size_t) len, sizes, &ncols, &ncells));
	s = state_alloc(CurrentMemoryContext, ncells);
	state_check(dp_partial_decode(bytes, (size_t) len, STATE_PARTIAL(s)));
	pfree(bytes);
	PG_RETURN_POINTER(s);
}

static MemoryContext
state_aggcontext(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s called in non-aggregate context", fn)));
	return aggcontext;
}

/*
 * SFUNC of _shard_counts: one row, as its code in every column.  The first row's state is made
 * in the per-row context, which the executor (PostgreSQL's or Citus's) copies into its own; then
 * the state is counted in place and returned as is, which an aggregate's transition function may
 * do (AggCheckCallContext).
 */
PG_FUNCTION_INFO_V1(dpsynth_state_add);
Datum
dpsynth_state_add(PG_FUNCTION_ARGS)
{
	struct varlena *s;
	int32	   *codes;
	int32	   *sizes;
	int			ncodes;
	int			ncols;

	state_aggcontext(fcinfo, "dpsynth._state_add");
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the codes and sizes of partial counts must not be null")));
	codes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(1), "codes", &ncodes);
	sizes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(2), "sizes", &ncols);
	if (PG_ARGISNULL(0))
		s = state_new(CurrentMemoryContext, sizes, ncols);
	else
	{
		s = state_arg(fcinfo, 0);
		if (!dp_partial_same_shape(STATE_PARTIAL(s), sizes, ncols))
			dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
	}
	state_check(dp_partial_add_row(STATE_PARTIAL(s), codes, ncodes));
	PG_RETURN_POINTER(s);
}

/* COMBINEFUNC: a += b in place (b untouched); a NULL state is no row. */
PG_FUNCTION_INFO_V1(dpsynth_state_combine);
Datum
dpsynth_state_combine(PG_FUNCTION_ARGS)
{
	struct varlena *a;
	struct varlena *b;

	state_aggcontext(fcinfo, "dpsynth._state_combine");
	CHECK_FOR_INTERRUPTS();
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state_arg(fcinfo, 0));
	}
	b = state_arg(fcinfo, 1);
	if (PG_ARGISNULL(0))
	{
		a = state_alloc(CurrentMemoryContext, STATE_PARTIAL(b)->ncells);
		memcpy(a, b, VARSIZE(b));
		PG_RETURN_POINTER(a);
	}
	a = state_arg(fcinfo, 0);
	state_check(dp_partial_combine(STATE_PARTIAL(a), STATE_PARTIAL(b)));
	PG_RETURN_POINTER(a);
}

/* dpsynth._state_vector(state, sizes int4[]): partial.c's dpsynth_counts_vector of the state. */
PG_FUNCTION_INFO_V1(dpsynth_state_vector);
Datum
dpsynth_state_vector(PG_FUNCTION_ARGS)
{
	int			ncols;
	int32	   *sizes = dpsynth_sizes_arg(fcinfo, 1, &ncols);

	PG_RETURN_ARRAYTYPE_P(dpsynth_counts_vector(PG_ARGISNULL(0) ? NULL : STATE_PARTIAL(state_arg(fcinfo, 0)),
												sizes, ncols));
}

/*
 * The cells of every pair of d columns (a < b, in order, first column slowest), or of the one
 * column when d is 1: dp_synthesize's adaptive method counts them all in one aggregate, each
 * column's code computed once a row (citus.c).  -1 past DP_PARTIAL_MAX_CELLS.
 */
static int64
pairs_cells(const int32 *sizes, int d)
{
	int64		total = 0;

	if (d == 1)
		return sizes[0];
	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++)
		{
			total += (int64) sizes[a] * sizes[b];
			if (total > DP_PARTIAL_MAX_CELLS)
				return -1;
		}
	return total;
}

/*
 * SFUNC of _shard_pairs: one row, as its code in each of d columns (sizes: their domain sizes);
 * the state is one vector of pairs_cells cells, the pairs one after another.  Counted in place.
 */
PG_FUNCTION_INFO_V1(dpsynth_state_add_pairs);
Datum
dpsynth_state_add_pairs(PG_FUNCTION_ARGS)
{
	struct varlena *s;
	dp_partial *p;
	int32	   *codes;
	int32	   *sizes;
	int			ncodes;
	int			d;
	int64		off = 0;

	state_aggcontext(fcinfo, "dpsynth._state_add_pairs");
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the codes and sizes of partial counts must not be null")));
	codes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(1), "codes", &ncodes);
	sizes = dpsynth_int4_elements(PG_GETARG_ARRAYTYPE_P(2), "sizes", &d);
	if (d < 1 || d > 1600 || ncodes != d)	/* 1600: at most the columns of a table */
		dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
	if (PG_ARGISNULL(0))
	{
		int64		total;
		int32		one;

		for (int j = 0; j < d; j++)
			if (sizes[j] < 1)
				dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
		total = pairs_cells(sizes, d);
		if (total < 1)
			dpsynth_partial_raise(DP_PARTIAL_BAD_SHAPE);
		one = (int32) total;
		s = state_new(CurrentMemoryContext, &one, 1);
	}
	else
		s = state_arg(fcinfo, 0);
	p = STATE_PARTIAL(s);
	for (int j = 0; j < d; j++)
		if (codes[j] < 0 || codes[j] >= sizes[j])
			dpsynth_partial_raise(DP_PARTIAL_CODE_RANGE);
	if (d == 1)
	{
		if (p->ncols != 1 || p->ncells != sizes[0])
			dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
		p->counts[codes[0]]++;
		PG_RETURN_POINTER(s);
	}
	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++)
		{
			int64		idx = off + (int64) codes[a] * sizes[b] + codes[b];

			off += (int64) sizes[a] * sizes[b];
			if (off > p->ncells)
				dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
			p->counts[idx]++;
		}
	if (p->ncols != 1 || off != p->ncells)
		dpsynth_partial_raise(DP_PARTIAL_SHAPE_MISMATCH);
	PG_RETURN_POINTER(s);
}
