/*
 * dp_partial.h - exact partial counts of one marginal, to be merged across processes and servers.
 *
 * Everything dpsynth reads from protected rows is a vector of counts over the joint cells of a
 * public domain (docs/DISTRIBUTED.md).  A count vector of a union of row sets is the sum of the
 * vectors of its parts, whatever the split: so a table spread over parallel workers, partitions
 * or servers can be counted where its rows are, and only count vectors travel.  This file is the
 * state of that aggregate: its shape (the domain size of each column, mixed radix, the first
 * column varying slowest), the counts, the addition of two states, and a portable byte form.
 *
 * Privacy: these are EXACT counts of raw rows, not a release.  They must reach only the extension
 * owner's code, and whatever leaves the coordinator goes through the charged noise path
 * (dp_noise_counts) exactly as a single-server scan's counts do: the sensitivity (one row, one
 * cell, one count) does not depend on where the counting ran.  A shard's bytes are untrusted
 * input: dp_partial_decode checks every field, so a malformed state is refused, but a well-formed
 * one with false counts is not detectable (a malicious shard can distort, not learn).
 *
 * Pure C: no PostgreSQL headers; the caller allocates (dp_partial_bytes tells how much).
 */
#ifndef DP_PARTIAL_H
#define DP_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

#define DP_PARTIAL_MAX_COLS		16
#define DP_PARTIAL_MAX_CELLS	(INT64_C(1) << 24)	/* 128 MiB of counts, under palloc's 1 GB */

/* Byte form: "DPPC", a version byte, a layout byte (dense or sparse), then little-endian fields. */
#define DP_PARTIAL_VERSION		1
#define DP_PARTIAL_HEADER_BYTES 10	/* magic 4, version 1, layout 1, ncols 4 */

/* What a function below returned: 0, or a failure, negative (dp_env.h's convention: rc < 0 means
 * it failed); these functions take no progress callback and record no words (the glue says them,
 * dp_partial_status_message). */
typedef enum dp_partial_status
{
	DP_PARTIAL_OK = 0,
	DP_PARTIAL_BAD_SHAPE = -1,	/* no column, too many, a size < 1, or too many cells */
	DP_PARTIAL_SHAPE_MISMATCH = -2,	/* two states, or a state and a row, of different shapes */
	DP_PARTIAL_CODE_RANGE = -3, /* a code outside its column's domain */
	DP_PARTIAL_OVERFLOW = -4,	/* a count would pass INT64_MAX */
	DP_PARTIAL_MALFORMED = -5	/* bytes that are not a state of this version */
} dp_partial_status;

typedef struct dp_partial
{
	int			ncols;
	int32_t		sizes[DP_PARTIAL_MAX_COLS];
	int64_t		ncells;
	int64_t		counts[];		/* [ncells] */
} dp_partial;

/* Checks a shape and returns its number of cells in *ncells. */
dp_partial_status dp_partial_shape(const int32_t *sizes, int ncols, int64_t *ncells);

/* Bytes of a state of ncells cells (for the caller's allocator). */
size_t		dp_partial_bytes(int64_t ncells);

/* Initializes a state of a checked shape in memory of dp_partial_bytes(ncells), all counts 0. */
void		dp_partial_init(dp_partial *p, const int32_t *sizes, int ncols, int64_t ncells);

/* Same number of columns and same sizes. */
int			dp_partial_same_shape(const dp_partial *p, const int32_t *sizes, int ncols);

/* Counts one row given by its code in every column. */
dp_partial_status dp_partial_add_row(dp_partial *p, const int32_t *codes, int ncodes);

/* into += from (same shape). */
dp_partial_status dp_partial_combine(dp_partial *into, const dp_partial *from);

/*
 * The byte form: dense (every count) or sparse (the non-zero cells in increasing order),
 * whichever is smaller, so that a shard with few rows sends O(rows) bytes and a full marginal
 * sends 8 bytes a cell.  dp_partial_encoded_bytes is the exact length dp_partial_encode writes.
 */
size_t		dp_partial_encoded_bytes(const dp_partial *p);
void		dp_partial_encode(const dp_partial *p, uint8_t *out);

/*
 * Reads the shape of an encoded state (checked) without its counts, so that the caller can
 * allocate; then dp_partial_decode fills a state of that shape, checking every field.
 */
dp_partial_status dp_partial_decode_shape(const uint8_t *buf, size_t len, int32_t *sizes,
										  int *ncols, int64_t *ncells);
dp_partial_status dp_partial_decode(const uint8_t *buf, size_t len, dp_partial *p);

/* A message for a status (lower case, no period). */
const char *dp_partial_status_message(dp_partial_status st);

#endif
