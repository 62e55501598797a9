/*
 * dp_decode.h - turning a cell (bin) of a public domain back into a typed value.
 *
 * Decoding is post-processing of released statistics: the bins come from public domains
 * (dp_domain.h) and the randomness from the seedable post-processing generator (dp_prng.h).  It
 * reads no private data and spends no budget.
 *
 * Every function returns a value inside the bin it was given, and respects the column's type:
 * integers stay integers, a numeric column's scale is honoured, and the column's bounds are never
 * left.  Pure C: no PostgreSQL headers.
 */
#ifndef DP_DECODE_H
#define DP_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_domain.h"
#include "dp_prng.h"

/*
 * Uniform on the integers of [lo, hi] (both included); any int64 range works, including
 * [INT64_MIN, INT64_MAX] and the point mass [v, v].  For integers, dates (int days) and timestamps
 * (int64 microseconds).  lo > hi is a caller error; lo is then returned.
 */
int64_t		dp_decode_int(dp_prng *p, int64_t lo, int64_t hi);

/*
 * A value of the real bin [lo, hi) (or [lo, hi] if hi_closed), intersected with the column's
 * bounds [col_lower, col_upper] (NaN or infinite bounds: no constraint; bounds that miss the bin
 * entirely are ignored as a caller error).  lo and hi must be finite with lo <= hi; any finite
 * range works, also [-1e300, 1e300] whose width overflows a double.
 *
 * scale < 0: an unconstrained double (float4/float8, unconstrained numeric), uniform on the
 *   interval; lo <= v < hi (<= hi if closed) holds exactly in double comparison.  A point-mass bin
 *   (lo == hi) returns lo.
 * scale >= 0: numeric(p, scale).  Uniform over the multiples of 10^-scale in the interval; the
 *   returned double is such that printing it with `scale` decimals ("%.*f") and parsing that back
 *   gives the same double, which lies in the interval.  Where doubles are coarser than 10^-scale
 *   (|v| * 10^scale beyond 2^51, or scale > 22) the value is a uniform double of the interval
 *   rounded that way, so only approximately uniform over the multiples.
 *   If the interval holds no such multiple (a bin narrower than 10^-scale), the result is the
 *   multiple of 10^-scale nearest to the bin's midpoint among those inside [col_lower, col_upper];
 *   if the column's bounds hold no multiple either, simply the multiple nearest to the midpoint
 *   (no value of the column type could then satisfy the bounds).
 */
double		dp_decode_real(dp_prng *p, double lo, double hi, bool hi_closed, int scale,
						   double col_lower, double col_upper);

/*
 * The shape of the values inside numeric bins: a piecewise-constant density over the values,
 * npieces pieces of 3 doubles (lo, hi, weight), increasing and disjoint, weight finite and >= 0.
 * Integer domains: a piece is the integers lo..hi (both included, integral doubles, lo <= hi);
 * real domains: the interval [lo, hi) (lo < hi).  It is post-processing of a released histogram
 * (discover.c keeps the noisy histogram that placed the quantile edges, shrunk inside each bin).
 *
 * dp_shape_init clips the pieces to every bin of d (a piece's weight in proportion to the part
 * of it kept: integers counted, reals by length) and keeps each bin's cumulative weights.  It
 * returns 0, or -1 when the pieces are invalid (then nothing is allocated) or memory runs out.
 * dp_shape_pick picks one of bin's parts by weight and returns it in [*lo, *hi] (integers: both
 * included; reals: [*lo, *hi), inside the bin), where the caller draws uniformly (dp_decode_int,
 * dp_decode_real).  The picks of one bin are stratified: the k-th pick in bin b reads the point
 * frac(u_b + k / phi) of the bin's cumulative weight (phi the golden ratio, u_b one dp_prng_unit
 * drawn at the bin's first pick), a low-discrepancy sequence, so that after k picks every part
 * holds its share of them up to O(log k) picks, where independent picks would stray by about
 * sqrt(k).  The bin totals come from the model; the values inside a bin then follow its shape
 * without a draw's sampling error on top of the shape's noise.  A bin that no piece of positive weight
 * overlaps has no shape: dp_shape_pick returns false and draws nothing, and the caller draws
 * over the whole bin, as without a shape.
 */
typedef struct dp_shape
{
	uint32_t	nbins;
	uint32_t   *start;			/* nbins + 1: bin b's parts are start[b] .. start[b + 1] - 1 */
	double	   *lo;
	double	   *hi;
	double	   *cum;			/* cumulative weight of the bin's parts, up to and including this one */
	double	   *phase;			/* nbins: the point of the bin's next pick in [0, 1), < 0 before its first */
} dp_shape;

int			dp_shape_init(dp_shape *s, const dp_domain *d, const double *pieces, uint32_t npieces);
/*
 * Puts pieces (lo <= hi for integers, lo < hi for reals, weights >= 0) in the order
 * dp_shape_init requires: sorted by lo, and a piece that starts inside the one before (or, for
 * integers, at its last value) merged into it (the later end kept, the weights added).  Integer
 * piece ends beyond 2^53 are rounded doubles that can meet so.  Returns the pieces kept.
 */
uint32_t	dp_shape_tidy(double *pieces, uint32_t npieces, bool integral);
void		dp_shape_free(dp_shape *s);
bool		dp_shape_pick(dp_shape *s, dp_prng *p, uint32_t bin, double *lo, double *hi);

/*
 * Rows: the values of a table's synthetic rows that take random draws, decoded a chunk at a time
 * into plain buffers, possibly on a helper thread while the caller turns the chunk before into
 * rows of its own (inside PostgreSQL: Datums, tuples, pages, which stay on the backend's thread).
 *
 * The caller lists the columns whose decoding draws from the generator, in the order in which its
 * row-by-row decoding visits them (a column that draws nothing, such as a category, needs no
 * entry: it changes no draw): bins (DP_ROWCOL_INT: an int64 per row; DP_ROWCOL_REAL: a double)
 * and random 128-bit identifiers (DP_ROWCOL_RANDOM128: two dp_prng_next words per row).  Position
 * p of npos is synthetic row order[p] (p if order is NULL); with order, unit[p] is its unit (a
 * unit's positions consecutive) and a unit_constant column is decoded at a unit's first position
 * only, its other positions getting the same value.  Bins: a code at or past the domain's values
 * is NULL if the column allows it (nothing drawn), else fallback_code's bin; inside a bin, the
 * part its shape picks (dp_shape_pick), then dp_decode_int / dp_decode_real (scale, the
 * domain's outer edges as the column's bounds, the last bin closed).
 *
 * The draws are those of decoding the positions in order, row by row and in each row the columns
 * in the order given, on the one generator: which thread decodes a chunk, and the chunk size,
 * change no value.
 *
 * dp_rowdec_init prepares (returns -1 when memory runs out: then nothing is kept; threads false:
 * every chunk decoded on the caller's thread).  dp_rowdec_next makes the next chunk of chunk
 * positions current: r->val[j][i] and r->isnull[j][i] for column j at position p0 + i
 * (RANDOM128: val[j][2 i] and [2 i + 1]), valid until the next call; and starts decoding the one
 * after it on a helper thread, from a copy of the generator's, the shapes' and the unit
 * columns' state, into a buffer of its own.  When the caller needs that chunk, it takes the
 * helper's values and state if the helper has finished, else decodes the chunk itself from the
 * state it kept (the helper's work is then dropped): the caller never waits for a helper that
 * a busy machine has not scheduled, and either way the values and the state after the chunk are
 * the same.  After a late helper the next chunks (1, 2, 4, ... up to 32 after consecutive misses)
 * are decoded by the caller with no helper: where no core is spare, a helper only takes time
 * from the caller's thread.  The helper touches only its own buffer and state and read-only data (the codes, the
 * domains, the shapes' parts, order and unit).  dp_rowdec_abandon (an error path) lets no helper
 * begin and joins every thread; dp_rowdec_free does that and frees the buffers.
 */
typedef enum dp_rowcol_kind
{
	DP_ROWCOL_INT,
	DP_ROWCOL_REAL,
	DP_ROWCOL_RANDOM128
} dp_rowcol_kind;

typedef struct dp_rowcol
{
	dp_rowcol_kind kind;
	const dp_domain *d;			/* INT, REAL */
	const dp_code *codes;		/* INT, REAL: the column's code per synthetic row */
	dp_shape   *shape;			/* INT, REAL: the shape inside the bins (may be empty) */
	bool		notnull;
	dp_code		fallback_code;
	int			scale;			/* REAL: dp_decode_real's scale */
	bool		unit_constant;
} dp_rowcol;

struct dp_rowbuf;

typedef struct dp_rowdec
{
	const dp_rowcol *cols;
	uint32_t	ncols;
	const uint64_t *order;
	const int64_t *unit;
	uint64_t	npos;
	uint64_t	chunk;
	dp_prng    *rng;
	bool		threads;
	/* the current chunk (dp_rowdec_next) */
	uint64_t	p0;
	uint64_t  **val;
	uint8_t   **isnull;
	uint64_t	helped;			/* chunks so far whose helper had finished them */
	/* internal */
	uint64_t	next_p0;		/* the next chunk's first position */
	uint64_t   *kept;			/* per column: a unit_constant column's value in the current unit */
	bool	   *kept_null;
	struct dp_rowbuf *own;		/* the caller's buffer */
	struct dp_rowbuf **pool;	/* helpers' buffers */
	uint32_t	npool;
	struct dp_rowbuf *current;	/* the current chunk's buffer */
	struct dp_rowbuf *ahead;	/* the chunk a helper decodes (NULL: none) */
	struct dp_task *task;		/* one per chunk */
	uint64_t	ntasks;
	uint64_t	reaped;			/* the tasks before it have no thread left */
	uint32_t	backoff;		/* chunks decoded here after the last late helper */
	uint32_t	skip;			/* chunks still to decode here before the next helper */
} dp_rowdec;

int			dp_rowdec_init(dp_rowdec *r, const dp_rowcol *cols, uint32_t ncols, const uint64_t *order,
						   const int64_t *unit, uint64_t npos, uint64_t chunk, dp_prng *rng, bool threads);
void		dp_rowdec_next(dp_rowdec *r);
void		dp_rowdec_abandon(dp_rowdec *r);
void		dp_rowdec_free(dp_rowdec *r);

#endif							/* DP_DECODE_H */
