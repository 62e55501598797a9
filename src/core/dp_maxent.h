/*
 * dp_maxent.h - synthetic rows from the maximum-entropy distribution of a model's marginals, for
 * tables whose whole domain (over merged codes) is small.
 *
 * Pure post-processing: it reads only released marginals and draws its randomness from the
 * seedable post-processing generator (dp_prng), so it spends no budget.  Pure C: no PostgreSQL
 * headers.
 *
 * Why: GUM (dp_gum.h) moves rows until
 * the synthetic table's marginals match the measured ones, and whatever it leaves in the
 * combinations no marginal measures is an accident of its row moves.  The distribution with the
 * most entropy among those with the measured marginals, the one private-pgm's estimator fits
 * (AIM, MST), holds nothing beyond them: no interaction that no measurement supports.  A model
 * trained on rows drawn from it learns the measured relationships and no spurious ones.
 *
 * dp_maxent_fit: iterative proportional fitting (Deming and Stephan 1940) over the full joint
 * table of the merged codes, P (ncells doubles, the last column varying fastest), from the
 * uniform distribution: each sweep visits every marginal in turn and scales the cells of P that
 * fall into each of its cells so that P's marginal equals it (normalised to a distribution;
 * negative cells read as 0; a cell of P's marginal that is 0 stays 0).  From the uniform start,
 * the limit is the maximum-entropy distribution among those with the given marginals, when one
 * exists (Csiszar 1975).  It stops after a sweep in which every marginal was within `tol` of
 * its target when visited (L1 between distributions), or after `max_sweeps` sweeps.  Noisy
 * marginals, even consistent ones, may admit no joint table; the fit then ends at max_sweeps
 * with each marginal close to its target, the last ones visited closest.  When the marginals'
 * supports leave no cell (every cell of P scaled to 0), there is no distribution: it returns 0
 * and the caller draws otherwise (dp_privsyn_sample: GUM).
 *
 * dp_maxent_draw: n rows, each cell of P getting floor or ceil of n P (systematic sampling: one
 * uniform offset u, cell c gets floor(C_c + u) - floor(C_{c-1} + u) for the running sum C of
 * n P in cell order, so its expected count is exactly n P_c and the total exactly n), in random
 * order.
 *
 * Cost: a sweep passes once over the ncells cells per marginal, and once more (the scaling by
 * one marginal and the projection onto the next share a pass, dp_odo_scale_project; each pass
 * walks the table in blocks, dp_odo_runs); memory ncells doubles plus the marginals' cells, and
 * n * 4 bytes for the order of the rows.
 */
#ifndef DP_MAXENT_H
#define DP_MAXENT_H

#include <stdint.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_marg.h"
#include "dp_prng.h"

#define DP_MAXENT_TOL		1e-9	/* every marginal within this L1 of its target: converged */
#define DP_MAXENT_MAX_SWEEPS 200	/* at most */
#define DP_MAXENT_MIN_SWEEPS 10		/* ... and at least this many, whatever the work */
#define DP_MAXENT_WORK		((double) (1u << 28))	/* cells x marginals x sweeps: a bound on a fit's time */

/* The sweeps of a fit over ncells cells and nmargs marginals: DP_MAXENT_WORK / (ncells nmargs),
 * within [DP_MAXENT_MIN_SWEEPS, DP_MAXENT_MAX_SWEEPS]. */
uint32_t	dp_maxent_sweeps(uint64_t ncells, uint32_t nmargs);

/* The product of sizes[0..d), or UINT64_MAX when it exceeds 2^62. */
uint64_t	dp_maxent_cells(uint32_t d, const uint32_t *sizes);

/*
 * Fits P (ncells = dp_maxent_cells(d, sizes) doubles, allocated by the caller) to the marginals
 * (each over attributes < d, with sizes matching).  progress, when set, is called after every
 * marginal's visit (dp_env.h: phase DP_PHASE_GUM, done = sweeps done, total = max_sweeps,
 * err = -1); a non-zero return cancels.  Returns
 * the number of sweeps run (>= 1), 0 when P has no mass left (see above), -1 if cancelled, -2 on
 * invalid input (dp_last_error() says which).
 */
int			dp_maxent_fit(const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
						  double *P, uint32_t max_sweeps, double tol,
						  dp_progress_fn progress, void *progress_arg);

/*
 * n rows drawn from P (see above) appended to out (initialised by the caller with d columns).
 * progress, when set, is called as a heartbeat (done = total = 0, err = -1) every 65,536 rows placed; a
 * non-zero return cancels (-1).  Returns 0, -1 if cancelled, or -2 on allocation failure or
 * invalid input (n >= 2^32, a column of more than 65,536 codes, no positive cell).
 */
int			dp_maxent_draw(const double *P, uint32_t d, const uint32_t *sizes, uint64_t n,
						   dp_prng *rng, dp_codes *out,
						   dp_progress_fn progress, void *progress_arg);

#endif							/* DP_MAXENT_H */
