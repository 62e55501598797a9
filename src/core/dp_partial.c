/*
 * dp_partial.c - exact partial counts of one marginal: shape, rows, addition, byte form.  See
 * dp_partial.h for what they are for and why they are not a release.
 */
#include "dp_partial.h"

#include <string.h>

static const uint8_t partial_magic[4] = {'D', 'P', 'P', 'C'};

enum
{
	LAYOUT_DENSE = 1,
	LAYOUT_SPARSE = 2
};

dp_partial_status
dp_partial_shape(const int32_t *sizes, int ncols, int64_t *ncells)
{
	int64_t		cells = 1;

	if (ncols < 1 || ncols > DP_PARTIAL_MAX_COLS)
		return DP_PARTIAL_BAD_SHAPE;
	for (int c = 0; c < ncols; c++)
	{
		/* checked before the product so that it cannot overflow: both factors <= 2^24 */
		if (sizes[c] < 1 || sizes[c] > DP_PARTIAL_MAX_CELLS)
			return DP_PARTIAL_BAD_SHAPE;
		cells *= sizes[c];
		if (cells > DP_PARTIAL_MAX_CELLS)
			return DP_PARTIAL_BAD_SHAPE;
	}
	*ncells = cells;
	return DP_PARTIAL_OK;
}

size_t
dp_partial_bytes(int64_t ncells)
{
	return sizeof(dp_partial) + (size_t) ncells * sizeof(int64_t);
}

void
dp_partial_init(dp_partial *p, const int32_t *sizes, int ncols, int64_t ncells)
{
	memset(p, 0, dp_partial_bytes(ncells));
	p->ncols = ncols;
	memcpy(p->sizes, sizes, (size_t) ncols * sizeof(int32_t));
	p->ncells = ncells;
}

int
dp_partial_same_shape(const dp_partial *p, const int32_t *sizes, int ncols)
{
	return p->ncols == ncols && memcmp(p->sizes, sizes, (size_t) ncols * sizeof(int32_t)) == 0;
}

dp_partial_status
dp_partial_add_row(dp_partial *p, const int32_t *codes, int ncodes)
{
	int64_t		cell = 0;

	if (ncodes != p->ncols)
		return DP_PARTIAL_SHAPE_MISMATCH;
	for (int c = 0; c < ncodes; c++)
	{
		if (codes[c] < 0 || codes[c] >= p->sizes[c])
			return DP_PARTIAL_CODE_RANGE;
		cell = cell * p->sizes[c] + codes[c];
	}
	/* one row can never reach INT64_MAX, but the same rule as dp_partial_combine costs nothing */
	if (p->counts[cell] == INT64_MAX)
		return DP_PARTIAL_OVERFLOW;
	p->counts[cell]++;
	return DP_PARTIAL_OK;
}

dp_partial_status
dp_partial_combine(dp_partial *into, const dp_partial *from)
{
	if (!dp_partial_same_shape(into, from->sizes, from->ncols))
		return DP_PARTIAL_SHAPE_MISMATCH;
	/* checked before any cell changes, so that a refused combine leaves `into` as it was */
	for (int64_t i = 0; i < into->ncells; i++)
		if (from->counts[i] > INT64_MAX - into->counts[i])
			return DP_PARTIAL_OVERFLOW;
	for (int64_t i = 0; i < into->ncells; i++)
		into->counts[i] += from->counts[i];
	return DP_PARTIAL_OK;
}

/* ---- byte form: explicit little-endian, so that shards of any architecture agree ---- */

static void
put_u32(uint8_t *out, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t) (v >> (8 * i));
}

static void
put_u64(uint8_t *out, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t) (v >> (8 * i));
}

static uint32_t
get_u32(const uint8_t *in)
{
	uint32_t	v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | in[i];
	return v;
}

static uint64_t
get_u64(const uint8_t *in)
{
	uint64_t	v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | in[i];
	return v;
}

static int64_t
nonzero_cells(const dp_partial *p)
{
	int64_t		nnz = 0;

	for (int64_t i = 0; i < p->ncells; i++)
		nnz += p->counts[i] != 0;
	return nnz;
}

static size_t
header_bytes(int ncols)
{
	return DP_PARTIAL_HEADER_BYTES + 4 * (size_t) ncols;
}

static size_t
dense_bytes(const dp_partial *p)
{
	return header_bytes(p->ncols) + 8 * (size_t) p->ncells;
}

static size_t
sparse_bytes(const dp_partial *p, int64_t nnz)
{
	return header_bytes(p->ncols) + 8 + 16 * (size_t) nnz;
}

size_t
dp_partial_encoded_bytes(const dp_partial *p)
{
	size_t		dense = dense_bytes(p);
	size_t		sparse = sparse_bytes(p, nonzero_cells(p));

	return sparse < dense ? sparse : dense;
}

void
dp_partial_encode(const dp_partial *p, uint8_t *out)
{
	int64_t		nnz = nonzero_cells(p);
	int			sparse = sparse_bytes(p, nnz) < dense_bytes(p);
	uint8_t    *w = out + header_bytes(p->ncols);

	memcpy(out, partial_magic, 4);
	out[4] = DP_PARTIAL_VERSION;
	out[5] = sparse ? LAYOUT_SPARSE : LAYOUT_DENSE;
	put_u32(out + 6, (uint32_t) p->ncols);
	for (int c = 0; c < p->ncols; c++)
		put_u32(out + DP_PARTIAL_HEADER_BYTES + 4 * c, (uint32_t) p->sizes[c]);
	if (!sparse)
	{
		for (int64_t i = 0; i < p->ncells; i++, w += 8)
			put_u64(w, (uint64_t) p->counts[i]);
		return;
	}
	put_u64(w, (uint64_t) nnz);
	w += 8;
	for (int64_t i = 0; i < p->ncells; i++)
	{
		if (p->counts[i] == 0)
			continue;
		put_u64(w, (uint64_t) i);
		put_u64(w + 8, (uint64_t) p->counts[i]);
		w += 16;
	}
}

dp_partial_status
dp_partial_decode_shape(const uint8_t *buf, size_t len, int32_t *sizes, int *ncols,
						int64_t *ncells)
{
	uint32_t	n;

	if (len < DP_PARTIAL_HEADER_BYTES || memcmp(buf, partial_magic, 4) != 0 ||
		buf[4] != DP_PARTIAL_VERSION || (buf[5] != LAYOUT_DENSE && buf[5] != LAYOUT_SPARSE))
		return DP_PARTIAL_MALFORMED;
	n = get_u32(buf + 6);
	if (n < 1 || n > DP_PARTIAL_MAX_COLS || len < header_bytes((int) n))
		return DP_PARTIAL_MALFORMED;
	for (uint32_t c = 0; c < n; c++)
	{
		uint32_t	s = get_u32(buf + DP_PARTIAL_HEADER_BYTES + 4 * c);

		if (s > (uint32_t) INT32_MAX)
			return DP_PARTIAL_MALFORMED;
		sizes[c] = (int32_t) s;
	}
	*ncols = (int) n;
	return dp_partial_shape(sizes, *ncols, ncells) == DP_PARTIAL_OK ? DP_PARTIAL_OK : DP_PARTIAL_MALFORMED;
}

static dp_partial_status
decode_dense(const uint8_t *r, size_t left, dp_partial *p)
{
	if (left != 8 * (size_t) p->ncells)
		return DP_PARTIAL_MALFORMED;
	for (int64_t i = 0; i < p->ncells; i++, r += 8)
	{
		uint64_t	v = get_u64(r);

		if (v > (uint64_t) INT64_MAX)
			return DP_PARTIAL_MALFORMED;
		p->counts[i] = (int64_t) v;
	}
	return DP_PARTIAL_OK;
}

/* Cells strictly increasing and in range, counts positive: one encoding per state. */
static dp_partial_status
decode_sparse(const uint8_t *r, size_t left, dp_partial *p)
{
	uint64_t	nnz;
	int64_t		prev = -1;

	if (left < 8)
		return DP_PARTIAL_MALFORMED;
	nnz = get_u64(r);
	if (nnz > (uint64_t) p->ncells || left - 8 != 16 * nnz)
		return DP_PARTIAL_MALFORMED;
	r += 8;
	for (uint64_t k = 0; k < nnz; k++, r += 16)
	{
		uint64_t	cell = get_u64(r);
		uint64_t	v = get_u64(r + 8);

		if (cell >= (uint64_t) p->ncells || (int64_t) cell <= prev || v == 0 || v > (uint64_t) INT64_MAX)
			return DP_PARTIAL_MALFORMED;
		p->counts[cell] = (int64_t) v;
		prev = (int64_t) cell;
	}
	return DP_PARTIAL_OK;
}

dp_partial_status
dp_partial_decode(const uint8_t *buf, size_t len, dp_partial *p)
{
	int32_t		sizes[DP_PARTIAL_MAX_COLS];
	int			ncols;
	int64_t		ncells;
	size_t		h;

	if (dp_partial_decode_shape(buf, len, sizes, &ncols, &ncells) != DP_PARTIAL_OK)
		return DP_PARTIAL_MALFORMED;
	dp_partial_init(p, sizes, ncols, ncells);
	h = header_bytes(ncols);
	if (buf[5] == LAYOUT_DENSE)
		return decode_dense(buf + h, len - h, p);
	return decode_sparse(buf + h, len - h, p);
}

const char *
dp_partial_status_message(dp_partial_status st)
{
	switch (st)
	{
		case DP_PARTIAL_OK:
			return "no error";
		case DP_PARTIAL_BAD_SHAPE:
			return "a marginal needs 1 to 16 columns, each of at least 1 code, and at most 16777216 cells";
		case DP_PARTIAL_SHAPE_MISMATCH:
			return "the partial counts are of different marginals";
		case DP_PARTIAL_CODE_RANGE:
			return "a code is outside its column's domain";
		case DP_PARTIAL_OVERFLOW:
			return "a count would overflow";
		case DP_PARTIAL_MALFORMED:
			return "the bytes are not partial counts of this version";
	}
	return "unknown error";
}
