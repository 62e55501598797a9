/*
 * dp_codes.h - the encoded table: one small code per synthesized column per row.
 *
 * Built in one pass over the rows (their number is not known in advance, so the columns grow
 * geometrically, by 1.5x), stored column-major at two bytes per cell: col[j][i] is the code
 * (dp_code of dp_domain.h) of column j in row i.  Marginals of any set of columns are counted
 * from it without reading the table again.
 *
 * Holding the codes of the protected table, this structure is private data: what leaves it must go
 * through a DP mechanism (dp_counts) first.
 *
 * Pure C: no PostgreSQL headers.  Memory comes from the installed handlers (dp_env.h): inside
 * PostgreSQL a memory context, through the "huge" allocator (plain palloc refuses requests above
 * MaxAllocSize = 1 GB, i.e. about 500 million rows per column).
 */
#ifndef DP_CODES_H
#define DP_CODES_H

#include <stdint.h>
#include <stddef.h>

typedef struct dp_codes
{
	uint32_t	ncols;
	uint64_t	nrows;			/* rows appended */
	uint64_t	cap;			/* rows every column has room for */
	uint16_t  **col;			/* col[j][i]: code of column j in row i */
} dp_codes;

/*
 * Empty table of ncols columns with room for initial_cap rows (0: a default of 1024).  Returns 0,
 * or -1 on allocation failure, recorded with dp_fail (nothing is then left allocated, and
 * dp_codes_free is harmless).
 */
int			dp_codes_init(dp_codes *t, uint32_t ncols, uint64_t initial_cap);

/*
 * Appends one row: row[j] is the code of column j (ncols entries).  Returns 0, or -1 on allocation
 * failure, in which case the table is unchanged and still valid.
 */
int			dp_codes_append(dp_codes *t, const uint16_t *row);

/*
 * Keeps the first ncols columns and releases the others (their rows are gone; the kept columns'
 * rows are untouched).  ncols at least the table's: nothing changes.  A caller that appended
 * scratch columns after the real ones (synthesize.c's one scan: a learned column's high halves)
 * drops them with it once it has folded them into the kept ones.
 */
void		dp_codes_keep(dp_codes *t, uint32_t ncols);

/* Releases the columns; the table is then empty (ncols 0) and may be freed again. */
void		dp_codes_free(dp_codes *t);

/*
 * Adds the marginal of the columns cols[0..ncols_sel) to counts: for every row,
 * counts[sum_k code_k * stride_k] += 1, where code_k is the row's code in column cols[k], and the
 * strides are row-major with the last selected column fastest: stride_{ncols_sel-1} = 1,
 * stride_k = stride_{k+1} * ncodes[k+1].  ncodes[k] is the number of codes of column cols[k]
 * (parallel to cols, as in dp_marginal), and counts has prod_k ncodes[k] cells, which the caller
 * zeroes (or not, to accumulate).  ncols_sel == 0 counts every row in counts[0].  A row with a
 * code >= its column's ncodes (a caller bug) is not counted, rather than written out of bounds.
 */
void		dp_codes_count(const dp_codes *t, const uint32_t *cols, uint32_t ncols_sel,
						   const uint32_t *ncodes, int64_t *counts);

#endif							/* DP_CODES_H */
