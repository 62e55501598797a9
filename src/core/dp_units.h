/*
 * dp_units.h - privacy per unit (a person, a patient) rather than per row: contribution bounding
 * and the rows-per-unit shape of a synthetic table.
 *
 * A table whose owner declared a privacy unit column (dp_privacy_unit(table, column, ...)) is
 * released at unit level: two tables are neighbours when they differ in all the rows of one unit.
 * Before any count, each unit keeps at most k of its rows, chosen uniformly at random (the k
 * smallest of independent random keys drawn from the CSPRNG, dp_random.h); docs/PRIVACY.md proves
 * the sensitivities this gives.  Units are compared by the exact bytes of their key (the glue
 * makes equal values equal bytes), so two units never merge.
 *
 * Pure C: no PostgreSQL headers.  Memory comes from the installed handlers (dp_env.h).
 */
#ifndef DP_UNITS_H
#define DP_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_prng.h"

/* The largest row bound per unit a table may declare (the rows-per-unit histogram has k cells). */
#define DP_UNIT_MAX_ROWS 1000

/*
 * A rows-per-unit bound learned under DP (max_rows_per_unit NULL): a release bounds every unit to
 * DP_UNIT_LEARN_MAX rows, releases the histogram of the units' bounded row counts (one unit adds 1
 * to one cell: L2 sensitivity 1), and keeps k = dp_unit_pick_k_weighed(that histogram) rows per
 * unit: the bound of least estimated error up to the histogram's DP_UNIT_LEARN_QUANTILE-quantile.
 * The quantile is a cap only, against a k set by the last 1% of the units, where the error
 * estimate (one count vector's noise) is least sure: the estimate picks k below it wherever the
 * noise outweighs the rows a larger k would keep.  k is a function of the released histogram and
 * public numbers only (post-processing: it costs nothing beyond the histogram's release).
 */
#define DP_UNIT_LEARN_MAX 32
#define DP_UNIT_LEARN_QUANTILE 0.99

/*
 * Where k is picked, every cell of the released rows-per-unit histogram counts as its value less
 * DP_UNIT_LEARN_Z times the noise's sd, and at least 0: most of the K cells hold no unit, and
 * their noise, summed as it is, has sd sigma sqrt(K - k) beyond any k, as large as a small
 * table's units (docs/PRIVACY.md, "Learning the rows-per-unit bound").  A cell of noise alone
 * passes 3 sigma with probability 0.00135, and then counts for its excess over 3 sigma only.
 */
#define DP_UNIT_LEARN_Z 3.0

/*
 * Where k is learned by dp_synthesize and no cell of the release stands above this many sds of
 * its noise, the histogram is released a second time (DP_SCHEDULE_UNIT_SHAPE_TOPUP, units.c): a
 * cell between DP_UNIT_LEARN_Z and this counts for an excess of at most 3 sd, no more than a cell
 * of noise alone that passes the shrink, so the release cannot tell the units' cell from noise
 * (males at epsilon 0.3: 363 units in cell 8 with sd 99, 3.7 sd; k fell to a noise cell or to 1).
 */
#define DP_UNIT_LEARN_TOPUP_Z 6.0

/*
 * Post-processing of a released histogram hist[1..kmax] of units by bounded row count (hist[0]
 * ignored): with every cell counted as max(hist[j] - shrink, 0) (shrink a public number:
 * DP_UNIT_LEARN_Z times the noise's sd, or 0), the smallest k with hist[1] + ... + hist[k] >= q
 * (hist[1] + ... + hist[kmax]), the q-quantile of the units' row counts; kmax if no k below
 * reaches it, 1 if no cell is above shrink.  Reads no data: any k it returns costs nothing beyond
 * the histogram's release.
 */
uint32_t	dp_unit_pick_k(const int64_t *hist, uint32_t kmax, double q, double shrink);

/*
 * Post-processing of the same histogram, weighing a bound's noise against the rows it drops:
 * with every cell counted as above (c_j = max(hist[j] - shrink, 0)), N = sum j c_j the rows up to
 * kmax, D(k) = sum over j > k of (j - k) c_j the rows a bound k drops and N - D(k) those it keeps,
 * the k in 1..kcap (kcap = dp_unit_pick_k(hist, kmax, q, shrink), the quantile as a cap) of least
 *   D(k) / N + noise_l1 Delta(k) / (2 (N - D(k))),
 * smallest k on ties: two total variations added, a bound on the one dropping moves between the
 * counts kept and all (D(k) / N: removing a share f of the rows moves at most f of the
 * distribution) and the expected one of the release's noise relative to the rows it counts (half
 * the noise's expected L1 norm over the total: the total variation between two distributions is
 * half their L1 distance).  noise_l1 (public): the expected L1 norm of the release's noise at
 * sensitivity 1 (for a count vector, sqrt(2 / pi) times the sum of its cells' sds); Delta(k) the sensitivity at bound k
 * with a cell bound cell (0: none), sqrt(floor(k/c) c^2 + (k mod c)^2) at c = min(cell, k): the
 * cell bound of the release's noise, not the declared one where the release ignores it.
 * noise_l1 <= 0 (or not finite) returns kcap; 1 if no cell is above shrink.
 */
uint32_t	dp_unit_pick_k_weighed(const int64_t *hist, uint32_t kmax, double q, double shrink,
								   double noise_l1, uint32_t cell);

/*
 * Whether any cell of a released histogram hist[1..kmax] (hist[0] ignored) is above shrink: where
 * none is, dp_unit_pick_k and dp_unit_pick_k_weighed have nothing to weigh and return 1, and
 * dp_unit_fold_hist folds every cell as released.  Post-processing (reads no data).
 */
bool		dp_unit_hist_any_above(const int64_t *hist, uint32_t kmax, double shrink);

/*
 * Two independent releases a[1..kmax] (noise variance va) and b[1..kmax] (variance vb) of the same
 * histogram combined into out[1..kmax] (out[0] set to 0; out may be a): each cell the
 * precision-weighted mean (a_j / va + b_j / vb) / (1 / va + 1 / vb), rounded to the nearest
 * integer; returns the mean's noise variance 1 / (1 / va + 1 / vb) (rounding aside), or -1 (out
 * untouched) unless va and vb are positive and finite.  Post-processing of the two releases.
 */
double		dp_unit_hist_combine(const int64_t *a, double va, const int64_t *b, double vb, uint32_t kmax,
								 int64_t *out);

/*
 * Post-processing of a released histogram hist[1..kmax] (hist[0] ignored): the histogram of the
 * units' row counts bounded at k (1 <= k <= kmax), out[1..k] (out[0] set to 0), every cell
 * released below shrink (as for dp_unit_pick_k: DP_UNIT_LEARN_Z times the noise's sd) counting as
 * no unit: cells 1..k-1 as released where they reach shrink, else 0; cell k the sum of the
 * released cells from k up to the last cell above k that reaches shrink (cell k alone, 0 below
 * shrink, where none does), the cells beyond it counting as empty.  Why: most of the kmax cells
 * hold no unit, and folding them all adds their noise to cell k (sd sigma sqrt(kmax - k)), as
 * large as a small table's units, while every cell of noise alone drawn positive adds units of
 * its size to the synthetic table; a cell of noise alone reaches 3 sigma with probability
 * 0.00135.  The cells between k and the last one kept fold as released (no bias from the cells
 * a unit does reach).  Where no cell reaches shrink, out is the fold of every cell as released.
 * shrink 0 folds every cell as released.
 */
void		dp_unit_fold_hist(const int64_t *hist, uint32_t kmax, uint32_t k, double shrink, int64_t *out);

/*
 * Whether a release whose noise variance is sigma2 k^2 (a histogram of sensitivity k: one unit's k
 * rows may all fall in one cell) can draw its noise (dp_dgauss_init) for every k in 1..kmax, the
 * k it will use being learned after the charge: sigma2 k^2 grows with k, so both ends are checked.
 * 0 if so, else -1.
 */
int			dp_unit_noise_drawable(double sigma2, uint32_t kmax);

/*
 * Chooses the rows each unit keeps, in one pass with memory bounded per unit (dp_unit_keep): rows
 * arrive one at a time (dp_unit_keep_add) with their unit key bytes, their codes and a random key;
 * each unit keeps its min(cap, rows) rows of smallest random key (ties, of probability about
 * rows^2 / 2^65, broken by a function of the unit's own rows and their arrival).  A unit holds at
 * most 2 cap rows whatever its number of rows (trimmed back to cap when it reaches 2 cap), so
 * memory grows with units and the rows they keep, not with the rows read: per unit its key bytes
 * and an entry of the table of units (32 bytes, the table at most 3/4 full), per row held its
 * codes, its key and a link (12 bytes); at most 2^32 - 1 rows held in all (add fails past them,
 * as on allocation failure).  A row that cannot be among its unit's cap smallest costs its
 * look-up only.
 * dp_unit_keep_finish ends the reading and fills hist (cap + 1 entries, or NULL) with hist[j] = the
 * number of units that keep j rows (hist[0] = 0); then dp_unit_keep_unit(b, i, rows), for i below
 * dp_unit_keep_units(b), writes to rows (room for cap) the codes (ncols each) of unit i's kept
 * rows in increasing random key, so that its first j rows are its j of smallest key for any
 * j <= cap, and returns their number; the codes stay valid until dp_unit_keep_free.  The units
 * come in the table's order: the seeded hash's (the seed drawn from the CSPRNG), with arrival
 * order only among colliding units.  Units are compared by their exact bytes: two units never
 * merge.  new returns NULL (a cap of 0 or over 32,767, or no memory) and add -1 on allocation
 * failure or after finish (dp_fail).  Pure computation; add calls dp_check_interrupts every
 * 65,536 rows.
 */
typedef struct dp_unit_keep dp_unit_keep;

dp_unit_keep *dp_unit_keep_new(uint32_t ncols, uint32_t cap);
int			dp_unit_keep_add(dp_unit_keep *b, const uint8_t *key, uint32_t keylen,
							 const uint16_t *codes, uint64_t rkey);
int			dp_unit_keep_finish(dp_unit_keep *b, int64_t *hist);
uint64_t	dp_unit_keep_units(const dp_unit_keep *b);
uint32_t	dp_unit_keep_unit(dp_unit_keep *b, uint64_t i, const uint16_t **rows);
/* Bytes of memory the bounding holds (the table of units, the keys, the rows' store). */
uint64_t	dp_unit_keep_bytes(const dp_unit_keep *b);
void		dp_unit_keep_free(dp_unit_keep *b);

/*
 * Post-processing of a released rows-per-unit histogram: hist[1..k] noisy numbers of units that
 * keep j rows (hist[0] ignored).  Assigns each of nrows synthetic rows, in order, to a synthetic
 * unit numbered from 1: unit sizes are drawn independently from the distribution proportional to
 * max(hist[j], 0) (every unit of one row if no cell is positive), and consecutive rows share a
 * unit; the last unit is cut at nrows.  unit_of_row has nrows entries.  Returns the number of
 * units.
 */
uint64_t	dp_unit_assign(const double *hist, uint32_t k, uint64_t nrows, dp_prng *rng,
						   int64_t *unit_of_row);

/*
 * As dp_unit_assign, for a table whose owner declared columns constant within a unit (a patient's
 * sex): no synthetic unit mixes rows of different values of those columns.  Post-processing of
 * the synthetic rows and of the released histogram.  The rows are grouped by their codes in
 * gcols[0..ngcols) (each nrows entries); each group's rows are shuffled, then cut into units of
 * sizes drawn independently as dp_unit_assign draws them.  Where a group's last unit is drawn
 * larger (s) than the r rows left, it is kept with probability r / s, filled up with s - r rows
 * drawn uniformly from the group's other rows (from the group's own r rows if it has no other),
 * and else its r rows are dropped: every unit then has a size drawn from the histogram, and each
 * group keeps its rows in expectation.  The units are then put in a random order (the output is
 * not sorted by group).  Writes to *order the row of each output position (a row may appear
 * twice, or not at all) and to *unit_of_pos its unit, numbered from 1 in that order, a unit's rows
 * consecutive; both have *npos entries, allocated with dp_alloc (the caller frees them with
 * dp_free).  Returns the number of units, or -1 on allocation failure (dp_fail), when nothing
 * is allocated.
 */
int64_t		dp_unit_assign_grouped(const double *hist, uint32_t k, uint64_t nrows,
								   const uint16_t *const *gcols, uint32_t ngcols, dp_prng *rng,
								   uint64_t **order, int64_t **unit_of_pos, uint64_t *npos);

#endif							/* DP_UNITS_H */
