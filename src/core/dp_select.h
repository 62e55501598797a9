/*
 * dp_select.h - PrivSyn's choice of marginals (PRIVSYN.md steps 4-7).
 *
 *   step 4  dp_indif_noisy        DP MECHANISM: noisy InDif dependency score of every column pair
 *   step 5  dp_densemarg          post-processing: greedy DenseMarg selection of pairs + coverage
 *   step 6  dp_combine            post-processing: merge cliques of selected pairs into k-way sets
 *   step 7  dp_publication_split  post-processing: split rho3 over the marginals to publish
 *
 * Only dp_indif_noisy (and dp_indif_exact_grid / dp_indif_exact, which release nothing: test and
 * internal helpers) touches private data.  Everything else is a deterministic function of the
 * released noisy scores and of public domain sizes, so it costs no budget (post-processing,
 * Bun & Steinke 2016, Lemma 1.8).
 *
 * Pairs are numbered in the order (0,1), (0,2), ..., (0,d-1), (1,2), ..., (d-2,d-1):
 * dp_pair_index(d, a, b) for a < b.  m = d(d-1)/2 pairs.
 *
 * Pure C: no PostgreSQL headers.  Scratch memory comes from the installed handlers (dp_env.h).
 */
#ifndef DP_SELECT_H
#define DP_SELECT_H

#include <stdint.h>

#include "dp_codes.h"
#include "dp_marg.h"

/*
 * InDif release constants (public, part of the method).
 *   DP_INDIF_SENSITIVITY   Delta = 4: L1/absolute sensitivity of one InDif score under
 *                          add/remove-one (PrivSyn Lemma 4; proof in dp_select.c).
 *   DP_INDIF_GRID_INV      1/q: scores are rounded to the grid q = 1/16 before noise.
 *   DP_INDIF_GRID_SENS     (Delta + q) / q = 4*16 + 1 = 65: sensitivity of one rounded score,
 *                          in grid units (rounding moves each neighbour by <= q/2).
 */
#define DP_INDIF_SENSITIVITY 4
#define DP_INDIF_GRID_INV 16
#define DP_INDIF_GRID (1.0 / DP_INDIF_GRID_INV)
#define DP_INDIF_GRID_SENS (DP_INDIF_SENSITIVITY * DP_INDIF_GRID_INV + 1)

/* Largest domain a column may declare (codes are uint16_t). */
#define DP_SELECT_MAX_SIZE 65536u

/* PrivSyn's gamma: a combined clique must have fewer cells than this. */
#define DP_COMBINE_GAMMA 5000u

/*
 * dp_combine enumerates at most this many candidate k-cliques for one size k; a size with more
 * candidates is skipped (see dp_combine).  Only reachable with a very dense selected graph.
 */
#define DP_COMBINE_MAX_CANDIDATES (1u << 20)

/* Error return of the uint32_t-valued functions below. */
#define DP_SELECT_ERROR UINT32_MAX


/* Number of pairs of d columns, d(d-1)/2. */
static inline uint32_t
dp_pair_count(uint32_t d)
{
	return (uint32_t) ((uint64_t) d * (d ? d - 1 : 0) / 2);
}

/* Index of the pair (a, b), a < b < d, in the order above. */
static inline uint32_t
dp_pair_index(uint32_t d, uint32_t a, uint32_t b)
{
	return (uint32_t) ((uint64_t) a * d - (uint64_t) a * (a + 1) / 2 + (b - a - 1));
}

/*
 * InDif_ab = sum_ij | n_ab(i,j) - n_a(i) n_b(j) / n |, in doubles, from exact marginals: ab over
 * two attributes, a and b the one-way marginals of those attributes (either order), n the row
 * count (n <= 0 gives 0).  NOT a release: private in, private out; for tests and diagnostics.
 * Returns NaN if the attributes or sizes do not match.
 */
double		dp_indif_exact(const dp_marg *ab, const dp_marg *a, const dp_marg *b, double n);

/*
 * The exact rounded scores that dp_indif_noisy perturbs: grid[k] = round(InDif_k / q) (ties up),
 * computed in exact integer arithmetic from the codes, for every pair k.  Column j has sizes[j]
 * codes (1..DP_SELECT_MAX_SIZE); a code >= sizes[j] (a caller bug) is read as sizes[j] - 1.
 * NOT a release: the output is private.  Returns 0, or -1 on invalid arguments or allocation
 * failure (both decided before any row is read).
 */
int			dp_indif_exact_grid(const dp_codes *t, const uint32_t *sizes, int64_t *grid);

/*
 * Variance (in score units) of the noise dp_indif_noisy adds to each score for d columns and
 * budget rho2: q^2 * sigma2, sigma2 >= m (Delta'/q)^2 / (2 rho2) the discrete Gaussian parameter
 * actually used (about (4 + q)^2 m / (2 rho2) = 8.252 m / rho2).  NaN if it is out of the
 * sampler's range or the arguments are invalid.  Public: depends on d and rho2 only.
 */
double		dp_indif_noise_variance(uint32_t d, double rho2);

/*
 * DP MECHANISM (PRIVSYN.md step 4).  Releases all m = d(d-1)/2 InDif scores of the columns of t
 * (d = t->ncols, domains sizes[0..d)) into scores[0..m), in pair order:
 *     scores[k] = q * (round(InDif_k / q) + Z_k),  Z_k ~ N_Z(0, sigma2) independent,
 *     q = 1/16, sigma2 >= m * 65^2 / (2 rho2)  (discrete Gaussian, exact sampler).
 * Privacy: rho2-zCDP with respect to adding or removing one row of t (the row count included).
 * The caller must have CHARGED rho2 before calling (this draws the noise).
 * Returns 0; or -1, releasing nothing and leaving scores untouched, when rho2 is not a positive
 * finite number, d < 2, a size is 0 or > DP_SELECT_MAX_SIZE, the noise parameter is outside the
 * sampler's range, or scratch allocation fails.  All of these are decided before any row is read,
 * so success or failure does not depend on the data.
 */
int			dp_indif_noisy(const dp_codes *t, const uint32_t *sizes, double rho2, double *scores);

/* DenseMarg noise error of a set with S = sum c_j^(2/3): S^(3/2) / sqrt(pi rho3).  Public. */
double		dp_densemarg_noise_error(double S, double rho3);

/*
 * Post-processing.  The greedy part of DenseMarg (PRIVSYN.md step 5), without coverage:
 * selected[0..m) is overwritten (1 = selected).  If order is not NULL, order[0..r) receives the
 * selected pair indexes in the order they were added.  Returns r, or DP_SELECT_ERROR (nothing
 * selected) if d < 2, rho3 is not positive finite, a score is not finite, or a size is 0.
 */
uint32_t	dp_densemarg_greedy(uint32_t d, const double *scores, const uint32_t *sizes,
								double rho3, uint8_t *selected, uint32_t *order);

/*
 * Post-processing.  Coverage: adds pairs to selected[0..m) until every column is in a selected
 * pair (see dp_select.c for the exact rule).  Returns the number of pairs added, or
 * DP_SELECT_ERROR if d < 2 or a score is not finite.
 */
uint32_t	dp_densemarg_cover(uint32_t d, const double *scores, uint8_t *selected);

/*
 * Post-processing.  DenseMarg = greedy + coverage.  selected[0..m) is overwritten.  Returns the
 * number of selected pairs, or DP_SELECT_ERROR (see dp_densemarg_greedy).
 */
uint32_t	dp_densemarg(uint32_t d, const double *scores, const uint32_t *sizes, double rho3,
						 uint8_t *selected);

/*
 * Post-processing.  Combine (PRIVSYN.md step 6): cliques of the selected-pair graph become
 * k-way attribute sets (3 <= k <= DP_MARG_MAX_ATTRS) when they share at most 2 columns with the
 * cliques already accepted and have fewer than gamma cells; the selected pairs inside accepted
 * cliques are dropped.  Output: sets[i][0..set_sizes[i]) (increasing column indexes), first the
 * accepted cliques in acceptance order, then the remaining selected pairs in pair order.
 * Returns the number of sets (at most the number of selected pairs), or DP_SELECT_ERROR if d < 2,
 * a score is not finite, a size is 0, or more than max_sets sets would be needed.
 */
uint32_t	dp_combine(uint32_t d, const uint8_t *selected, const double *scores,
					   const uint32_t *sizes, uint32_t gamma,
					   uint32_t (*sets)[DP_MARG_MAX_ATTRS], uint32_t *set_sizes,
					   uint32_t max_sets);

/*
 * Post-processing.  Publication budgets (PRIVSYN.md step 7): marginal j with cells[j] cells gets
 * rho_out[j] = rho3 * c_j^(2/3) / sum_k c_k^(2/3), shrunk by a relative 1e-13 or so so that the
 * exact real sum never exceeds rho3 (budget arithmetic rounds against the spender).
 * Invalid input (n == 0, rho3 not positive finite, a cell count of 0) fills rho_out with NaN
 * (when n > 0), which every consumer of a budget refuses.
 */
void		dp_publication_split(const uint64_t *cells, uint32_t n, double rho3, double *rho_out);

#endif							/* DP_SELECT_H */
