/*
 * test_partial.c - partial counts (src/core/dp_partial.c): a table's counts equal the sum of its
 * parts' counts whatever the split, the byte form round-trips in both layouts, and malformed
 * bytes from a shard are refused.
 */
#include <stdlib.h>
#include <string.h>

#include "dp_partial.h"
#include "unit.h"

static dp_partial *
new_state(const int32_t *sizes, int ncols)
{
	int64_t		ncells;
	dp_partial *p;

	if (dp_partial_shape(sizes, ncols, &ncells) != DP_PARTIAL_OK)
		return NULL;
	p = malloc(dp_partial_bytes(ncells));
	dp_partial_init(p, sizes, ncols, ncells);
	return p;
}

static int
same_counts(const dp_partial *a, const dp_partial *b)
{
	return a->ncells == b->ncells &&
		memcmp(a->counts, b->counts, (size_t) a->ncells * sizeof(int64_t)) == 0;
}

/* Encodes p and decodes it into a fresh state (NULL if refused). */
static dp_partial *
round_trip(const dp_partial *p, size_t *len)
{
	uint8_t    *buf;
	int32_t		sizes[DP_PARTIAL_MAX_COLS];
	int			ncols;
	int64_t		ncells;
	dp_partial *q;

	*len = dp_partial_encoded_bytes(p);
	buf = malloc(*len);
	dp_partial_encode(p, buf);
	if (dp_partial_decode_shape(buf, *len, sizes, &ncols, &ncells) != DP_PARTIAL_OK)
	{
		free(buf);
		return NULL;
	}
	q = malloc(dp_partial_bytes(ncells));
	if (dp_partial_decode(buf, *len, q) != DP_PARTIAL_OK)
	{
		free(q);
		q = NULL;
	}
	free(buf);
	return q;
}

static void
test_shapes(void)
{
	int32_t		ok_sizes[3] = {3, 4, 5};
	int32_t		zero[2] = {3, 0};
	int32_t		huge[2] = {1 << 13, 1 << 12};
	int32_t		edge[2] = {1 << 12, 1 << 12};
	int64_t		n = 0;

	unit_check(dp_partial_shape(ok_sizes, 3, &n) == DP_PARTIAL_OK && n == 60, "3 x 4 x 5 has 60 cells");
	unit_check(dp_partial_shape(zero, 2, &n) == DP_PARTIAL_BAD_SHAPE, "a column of 0 codes is refused");
	/* dp_env.h's return codes: a failure is negative */
	unit_check(DP_PARTIAL_BAD_SHAPE < 0 && DP_PARTIAL_SHAPE_MISMATCH < 0 && DP_PARTIAL_CODE_RANGE < 0 &&
			   DP_PARTIAL_OVERFLOW < 0 && DP_PARTIAL_MALFORMED < 0 && dp_partial_shape(zero, 2, &n) < 0,
			   "every failure status is negative (rc < 0 means failed)");
	unit_check(dp_partial_shape(ok_sizes, 0, &n) == DP_PARTIAL_BAD_SHAPE, "no column is refused");
	unit_check(dp_partial_shape(ok_sizes, DP_PARTIAL_MAX_COLS + 1, &n) == DP_PARTIAL_BAD_SHAPE,
			   "17 columns are refused");
	unit_check(dp_partial_shape(edge, 2, &n) == DP_PARTIAL_OK && n == DP_PARTIAL_MAX_CELLS,
			   "exactly 2^24 cells are accepted");
	unit_check(dp_partial_shape(huge, 2, &n) == DP_PARTIAL_BAD_SHAPE, "2^25 cells are refused");
}

static void
test_rows(void)
{
	int32_t		sizes[2] = {3, 4};
	int32_t		other[2] = {4, 3};
	dp_partial *p = new_state(sizes, 2);
	dp_partial *q = new_state(other, 2);
	int32_t		row[2] = {2, 1};
	int32_t		bad[2] = {3, 0};
	int32_t		neg[2] = {0, -1};

	unit_check(dp_partial_add_row(p, row, 2) == DP_PARTIAL_OK && p->counts[2 * 4 + 1] == 1,
			   "row (2, 1) counts in cell 9 (first column slowest)");
	unit_check(dp_partial_add_row(p, bad, 2) == DP_PARTIAL_CODE_RANGE, "a code past its domain is refused");
	unit_check(dp_partial_add_row(p, neg, 2) == DP_PARTIAL_CODE_RANGE, "a negative code is refused");
	unit_check(dp_partial_add_row(p, row, 1) == DP_PARTIAL_SHAPE_MISMATCH, "a row of 1 code for 2 columns is refused");
	unit_check(dp_partial_combine(p, q) == DP_PARTIAL_SHAPE_MISMATCH, "3 x 4 and 4 x 3 do not combine");
	q->sizes[0] = 3;
	q->sizes[1] = 4;
	q->counts[9] = INT64_MAX;
	unit_check(dp_partial_combine(p, q) == DP_PARTIAL_OVERFLOW && p->counts[9] == 1,
			   "an overflowing combine is refused and changes nothing");
	free(p);
	free(q);
}

/*
 * 20000 random rows of a 5 x 7 x 3 marginal, split over k = 1..8 parts at random: the sum of the
 * parts (combined in a random tree order, through the byte form) equals the whole.
 */
static void
test_splits(void)
{
	int32_t		sizes[3] = {5, 7, 3};
	int			nrows = 20000;
	int32_t    *rows = malloc((size_t) nrows * 3 * sizeof(int32_t));
	dp_partial *whole = new_state(sizes, 3);
	int			all_equal = 1;

	srand(12);
	for (int r = 0; r < nrows; r++)
	{
		for (int c = 0; c < 3; c++)
			rows[3 * r + c] = rand() % sizes[c];
		dp_partial_add_row(whole, rows + 3 * r, 3);
	}
	for (int k = 1; k <= 8; k++)
	{
		dp_partial *parts[8];
		dp_partial *merged = new_state(sizes, 3);

		for (int j = 0; j < k; j++)
			parts[j] = new_state(sizes, 3);
		for (int r = 0; r < nrows; r++)
			dp_partial_add_row(parts[rand() % k], rows + 3 * r, 3);
		for (int j = k - 1; j >= 0; j--)
		{
			size_t		len;
			dp_partial *back = round_trip(parts[j], &len);

			all_equal &= back != NULL && dp_partial_combine(merged, back) == DP_PARTIAL_OK;
			free(back);
			free(parts[j]);
		}
		all_equal &= same_counts(merged, whole);
		free(merged);
	}
	unit_check(all_equal, "for 1 to 8 random parts, the combined parts' counts equal the whole's");
	free(rows);
	free(whole);
}

static void
test_layouts(void)
{
	int32_t		sizes[2] = {100, 100};
	dp_partial *p = new_state(sizes, 2);
	size_t		len;
	dp_partial *back;
	int32_t		row[2] = {7, 42};

	for (int i = 0; i < 3; i++)
		dp_partial_add_row(p, row, 2);
	back = round_trip(p, &len);
	unit_check(back && same_counts(back, p) && len == 10 + 8 + 8 + 16,
			   "one non-zero cell of 10000: sparse, %zu bytes, round-trips", len);
	free(back);
	for (int a = 0; a < 100; a++)
		for (int b = 0; b < 100; b++)
		{
			row[0] = a;
			row[1] = b;
			dp_partial_add_row(p, row, 2);
		}
	back = round_trip(p, &len);
	unit_check(back && same_counts(back, p) && len == 10 + 8 + 8 * 10000,
			   "every cell non-zero: dense, %zu bytes, round-trips", len);
	free(back);
	memset(p->counts, 0, sizeof(int64_t) * 10000);
	back = round_trip(p, &len);
	unit_check(back && same_counts(back, p) && len == 10 + 8 + 8, "no row: sparse, empty, round-trips");
	free(back);
	free(p);
}

static dp_partial_status
decode_bytes(const uint8_t *buf, size_t len)
{
	int32_t		sizes[DP_PARTIAL_MAX_COLS];
	int			ncols;
	int64_t		ncells;
	dp_partial *q;
	dp_partial_status st;

	st = dp_partial_decode_shape(buf, len, sizes, &ncols, &ncells);
	if (st != DP_PARTIAL_OK)
		return st;
	q = malloc(dp_partial_bytes(ncells));
	st = dp_partial_decode(buf, len, q);
	free(q);
	return st;
}

/* A shard's bytes are untrusted: every malformed form is refused, none is read out of bounds. */
static void
test_malformed(void)
{
	int32_t		sizes[2] = {4, 4};
	dp_partial *p = new_state(sizes, 2);
	int32_t		r1[2] = {1, 1};
	int32_t		r2[2] = {3, 2};
	uint8_t		buf[64];
	uint8_t		bad[64];
	size_t		len;
	int			truncated_refused = 1;

	dp_partial_add_row(p, r1, 2);
	dp_partial_add_row(p, r2, 2);
	len = dp_partial_encoded_bytes(p);	/* sparse: 10 + 8 + 8 + 2 * 16 = 58 */
	dp_partial_encode(p, buf);
	unit_check(len == 58 && decode_bytes(buf, len) == DP_PARTIAL_OK, "the sparse form of 2 rows decodes");
	for (size_t l = 0; l < len; l++)
		truncated_refused &= decode_bytes(buf, l) == DP_PARTIAL_MALFORMED;
	unit_check(truncated_refused, "every truncation is refused");
	memcpy(bad, buf, len);
	bad[len] = 0;
	unit_check(decode_bytes(bad, len + 1) == DP_PARTIAL_MALFORMED, "a trailing byte is refused");
	memcpy(bad, buf, len);
	bad[0] = 'X';
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "a wrong magic is refused");
	memcpy(bad, buf, len);
	bad[4] = 2;
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "another version is refused");
	memcpy(bad, buf, len);
	memcpy(bad + 26, buf + 42, 8);	/* first cell := second cell: not increasing */
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "repeated sparse cells are refused");
	memcpy(bad, buf, len);
	memset(bad + 34, 0, 8);
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "a zero sparse count is refused");
	memcpy(bad, buf, len);
	bad[41] = 0x80;
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "a count past INT64_MAX is refused");
	memcpy(bad, buf, len);
	bad[42 + 0] = 16;			/* second cell 16 of 16 cells */
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "a cell past the shape is refused");
	memcpy(bad, buf, len);
	bad[10] = 0;				/* a column of 0 codes */
	unit_check(decode_bytes(bad, len) == DP_PARTIAL_MALFORMED, "a column of 0 codes is refused");
	free(p);
}

int
main(void)
{
	test_shapes();
	test_rows();
	test_splits();
	test_layouts();
	test_malformed();
	return unit_done();
}
