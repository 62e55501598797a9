/*
 * dp_privsyn.h - PrivSyn end to end on an encoded table (docs/PRIVSYN.md).
 *
 * Input: the private encoded table (dp_codes, one code per column per row) and each column's
 * number of codes (public, from the domains).  Output: the released model (consistent,
 * non-negative noisy marginals over the original codes) and a synthetic encoded table drawn
 * from it.  Pure C; the PostgreSQL glue does the charging, scanning, decoding and writing.
 *
 * Privacy (rho-zCDP, add/remove-one neighbours).  With rho the budget given here, split by the
 * schedule (dp_schedule_method, dp_schedule.h: the shares are its constants):
 *   one-way marginals   DP_PRIVSYN_ONEWAY_SHARE (0.1) rho split equally over the d columns, each
 *                       histogram (every code, empty ones included) with sensitivity 1
 *   InDif scores        DP_PRIVSYN_INDIF_SHARE (0.1) rho over the m = d(d-1)/2 pair scores
 *                       (dp_select.h states the per-score calibration, sensitivity 4 plus
 *                       rounding)
 *   selected marginals  DP_PRIVSYN_PUBLISH_SHARE (0.8) rho split rho_j proportional to c_j^(2/3)
 *                       (dp_publication_split), each with sensitivity 1 on every cell
 * By sequential composition the release is (0.1 + 0.1 + 0.8) rho = rho-zCDP.  Every release is
 * recorded in the result's spend (dp_spend), which matches the schedule one for one.  Everything else
 * (rare-value merge, DenseMarg, Combine, consistency, Norm-Sub, GUM, splitting merged codes) uses
 * only released values and public facts: post-processing.  When the rare-value merge, selection
 * or Combine depend on released values, they are functions of released values only.
 *
 * Departure from PRIVSYN.md step 3 (post-processing, measured): a LONE rare code (the only code
 * of its column below 3 sigma, typically the NULL/other cell of a column without NULLs) is merged
 * with the column's most populous other code instead of staying a code of its own, where it
 * would add a slice of pure-noise cells to every marginal holding the column.
 */
#ifndef DP_PRIVSYN_H
#define DP_PRIVSYN_H

#include <stdint.h>

#include "dp_codes.h"
#include "dp_gum.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "dp_schedule.h"

/*
 * dp_privsyn_sample's levels for large tables (see sample_gum in dp_privsyn.c): GUM in full on
 * the coarsest level, n / 8^k rows for the largest k that keeps DP_SAMPLE_MIN_COARSE rows or more,
 * then each level 8 times larger (n last) warm from the one below with at most
 * DP_SAMPLE_WARM_ITERS iterations, the last level (n) with DP_SAMPLE_LAST_ITERS: its rows are
 * the copies of the level below as they are (no pass over the rows; the peeled columns are drawn
 * anew, as at every level).  Below 8 * DP_SAMPLE_MIN_COARSE rows, one cold GUM at n.
 * Why the coarsest level is large: GUM fits the 2-way targets, so what the copies carry beyond
 * them (3-way structure) keeps the coarse sample's noise; a smaller coarse level measurably cost
 * 3-way fidelity at 1M rows.  DP_SAMPLE_WARM_ITERS: more warm iterations on the finer levels gave
 * the same distances for more time, and at the last level none at all did too (the copies of the
 * level below are as good as a fit), which saves GUM's largest pass.
 */
#define DP_SAMPLE_LEVEL_FACTOR	8
#define DP_SAMPLE_MIN_COARSE	1000000
#define DP_SAMPLE_WARM_ITERS	5
#define DP_SAMPLE_LAST_ITERS	0

/*
 * Models with many marginals (dp_privsyn_sample_coarse).  A GUM iteration costs about one pass
 * over the rows per marginal, so its work is rows x marginals, and a cold GUM needs its 30
 * iterations (it has not converged by then on a wide table).  Below DP_SAMPLE_LEVEL_FACTOR *
 * DP_SAMPLE_MIN_COARSE rows, a model of more than DP_SAMPLE_WIDE_MARGS marginals whose rows x
 * marginals exceed DP_SAMPLE_WIDE_WORK gets one coarse level: n / 4^k rows for the smallest k
 * that brings rows x marginals to DP_SAMPLE_WIDE_WORK / 2 or less (at least
 * DP_SAMPLE_WIDE_MIN_COARSE rows), GUM in full there, then n rows warm from its copies with
 * DP_SAMPLE_WARM_ITERS iterations.  A model of fewer marginals keeps the rule above, whose coarse
 * level of at least DP_SAMPLE_MIN_COARSE rows was chosen for the 3-way structure the copies
 * carry.  On a wide table this costs a little fidelity for a GUM several times faster; capping
 * the cold GUM's iterations, or a coarse level of n / 2, cost as much fidelity for less time
 * saved.
 */
#define DP_SAMPLE_WIDE_MARGS	128
#define DP_SAMPLE_WIDE_WORK		((double) (1u << 27))
#define DP_SAMPLE_WIDE_FACTOR	4
#define DP_SAMPLE_WIDE_MIN_COARSE 65536

/*
 * From this many rows asked for, dp_privsyn_sample's split of merged codes draws nothing for a
 * merged code with a single member of positive weight (it is that member's with probability 1):
 * the same distribution of rows, fewer draws (on adult_1m most rows of 7 of its 15 columns sit in
 * such a code: a common value that absorbed a rare one released at zero or below).  Below it,
 * every row of a merged code of several members takes a draw, so that a seed's rows on a smaller
 * table do not depend on this rule.
 */
#define DP_SPLIT_NODRAW_ROWS	(1u << 19)

/* The phases of a synthesis are dp_env.h's dp_phase (DP_PHASE_ONEWAY .. DP_PHASE_GUM). */

/*
 * Exact counts of rows that the run's table does not hold: the partitions of a table on other
 * servers, counted there (docs/DISTRIBUTED.md).  The adaptive method adds them to its own
 * table's counts wherever it counts (the one-way marginals and every candidate), so that every
 * exact count its mechanisms see is that of all the rows (test_adaptive.c; the random draws are
 * not the same as a run over all the rows, and no triples are taken).  Over the original codes:
 * oneway[j][c] rows of code c of column j; pair[k] for the k-th pair a < b in the order (0, 1),
 * (0, 2), ..., (d - 2, d - 1): sizes[a] * sizes[b] counts, the code of a times sizes[b] plus
 * the code of b.  nrows: the rows they count (every one-way array sums to it).
 */
typedef struct dp_extra_counts
{
	uint64_t	nrows;
	const uint64_t *const *oneway;
	const uint64_t *const *pair;
} dp_extra_counts;

/*
 * Earlier releases of the one-way marginals' cells (NULL: none): for column j, est[j] (NULL:
 * none) holds sizes[j] estimates of its codes' counts and var[j] their variances (a code whose
 * variance is not finite and > 0 has none).  They must be independent of the run's own noise
 * (another release, e.g. the quantile histogram a discovery in the same call released, summed
 * over each bin) and released or public.  The run's one-way count of such a code becomes the
 * inverse-variance mean of its own noisy count and the estimate (post-processing of both
 * releases); the marginal's recorded rho stays its own measurement's (the consistency weights and
 * the rare-value threshold are those of the less precise count).
 */
typedef struct dp_oneway_prior
{
	const double *const *est;
	const double *const *var;
} dp_oneway_prior;

typedef struct dp_privsyn_params
{
	double		rho;			/* the pipeline's whole budget */
	uint64_t	rows;			/* synthetic rows; 0 = the consistent noisy total */
	uint64_t	max_rows;		/* if > 0, at most this many rows (caps the default count) */
	uint32_t	gamma;			/* Combine's cell bound, 5000 */
	dp_gum_params gum;
	/*
	 * The adaptive method only (NULL: none): d flags, non-zero for a column the caller will model
	 * (public: an argument of the call).  Every candidate pair with a flagged column is measured
	 * once before the rounds, whatever its score (see dp_adaptive.h).
	 */
	const uint8_t *focus;
	/*
	 * The adaptive method only (NULL: none ordered): per column, how many of its first codes are
	 * ordered values (the bins of a number, date or time; 0 for categories), public facts of the
	 * domain.  The rare-value merge joins such codes with their neighbours (dp_rare_merge).
	 */
	const uint32_t *ordered;
	/*
	 * NULL, or the run's own data table, which the run may then take over (the caller keeps only
	 * an empty table, which dp_codes_free accepts): its codes are recoded in place to the merged
	 * codes instead of into a copy, and freed as soon as no more exact counts are taken (the
	 * adaptive method: after its rounds when they count triples, which only tables of fewer than
	 * DP_ADAPTIVE_SYNTH_ROWS rows do), which lowers the peak memory of big tables by a copy of
	 * the codes.
	 */
	dp_codes   *consume;
	/*
	 * The adaptive method only (NULL: none): counts of rows the table does not hold (see
	 * dp_extra_counts).  The rounds then take no triples (they count the table itself), and
	 * dp_privsyn_run refuses them.
	 */
	const dp_extra_counts *extra;
	/* NULL, or earlier releases of the one-way cells to combine with (dp_oneway_prior) */
	const dp_oneway_prior *prior;
	/* the adaptive method only: if > 0, the distinct k-way marginals allowed instead of
	 * dp_adaptive_max_kway's (a public choice; tests) */
	uint64_t	max_kway;
	/* progress (dp_env.h): phase, done = the fraction done in [0,1], total = 1; non-zero return
	 * cancels (run returns -1) */
	dp_progress_fn progress;
	void	   *progress_arg;
} dp_privsyn_params;

typedef struct dp_privsyn_result
{
	dp_marg    *margs;			/* the released model: consistent marginals, original codes */
	uint32_t	nmargs;
	uint32_t	n_oneway;		/* the first n_oneway of margs are one-way */
	uint32_t	n_kway;
	double		total;			/* consistent noisy total */
	uint32_t	merged_codes;	/* codes merged as rare, over all columns */
	/* the rare-value merge, post-processing of the released one-way marginals: the model's
	 * marginals are over merged codes; code_map[j][c] is the merged code of original code c,
	 * merged_sizes[j] the number of merged codes, and oneway_noisy[j][c] the released one-way
	 * count of original code c (how a merged code is split back: dp_privsyn_sample) */
	uint32_t   *merged_sizes;
	uint16_t  **code_map;
	double	  **oneway_noisy;
	/* per column, how many of its codes' one-way counts were combined with an earlier release
	 * (dp_privsyn_params.prior); NULL when none was given */
	uint32_t   *oneway_prior;
	double		seconds[DP_PHASE_COUNT];
	dp_codes	synth;			/* the synthetic rows, original codes */
	dp_spend	spend;			/* what the run released, release by release (dp_schedule.h) */
} dp_privsyn_result;

void		dp_privsyn_default_params(dp_privsyn_params *p);

/*
 * The rare-value threshold of a run with budget rho over d columns (public: RARE_SIGMAS times
 * the one-way noise scale): a code whose released one-way count falls below it is merged.
 * Lets a caller size learned bins so that they survive (binning 'auto').  0 if d == 0 or rho
 * is not positive.
 */
double		dp_privsyn_rare_threshold(double rho, uint32_t d);

/* The same for one-way marginals that take rho_oneway in all (any method). */
double		dp_rare_threshold(double rho_oneway, uint32_t d);

/* The same for a run of method call (its schedule's one-way rho): 0 where the schedule fails. */
double		dp_method_rare_threshold(dp_plan_call call, double rho, uint32_t d);

/*
 * Runs the pipeline.  Noise comes from dp_sampler (libsodium); rng drives post-processing only
 * (GUM, splitting merged codes).  Memory comes from the installed handlers (dp_env.h).  Returns 0
 * (release out with dp_privsyn_result_free), -1 if cancelled through the progress callback, -2 on
 * invalid input or allocation failure; on failure dp_last_error() says what failed and nothing
 * is left allocated.
 */
int			dp_privsyn_run(const dp_codes *data, const uint32_t *sizes, const dp_privsyn_params *p,
						   dp_prng *rng, dp_privsyn_result *out);

/* Releases what dp_privsyn_run or dp_adaptive_run left in r; r is then zeroed. */
void		dp_privsyn_result_free(dp_privsyn_result *r);

/*
 * Whether dp_privsyn_sample draws the model's rows from the maximum-entropy distribution of its
 * marginals rather than by GUM: the consistent total is at least half a row and either
 * gum->maxent_cells is set and the joint domain over merged codes has at most that many cells
 * (dp_maxent.h), or gum->jtree_cells is set and the junction tree of the marginals has at most
 * that many (dp_jtree.h).
 * (GUM still draws them when the marginals' supports leave no distribution.)
 */
bool		dp_privsyn_draws_maxent(const dp_privsyn_result *model, uint32_t d, const dp_gum_params *gum);

/*
 * Which way: 1 over the whole joint table (at most gum->maxent_cells cells; dp_maxent.h), 2 on the
 * junction tree of the model's marginals (the joint table larger, the tree at most
 * gum->jtree_cells cells; dp_jtree.h), 0 by GUM.  *cells (when cells is set): the cells of that
 * table or tree, 0 for GUM.
 */
int			dp_privsyn_maxent_path(const dp_privsyn_result *model, uint32_t d, const dp_gum_params *gum,
								   uint64_t *cells);

/*
 * The released model alone (margs, nmargs, total, merged_sizes, code_map, oneway_noisy of a
 * dp_privsyn_result, as dp_privsyn_run leaves them or as they are read back from storage) is all
 * that synthesis needs.  dp_privsyn_sample draws nrows synthetic rows from it into synth (which it
 * initialises; release it with dp_codes_free): GUM on the model's marginals over merged codes
 * (params gum, NULL for the defaults; from 8M rows on coarse to fine, see DP_SAMPLE_MIN_COARSE;
 * when gum->start has d columns and rows, one GUM run at nrows from it instead, as
 * dp_gum_params.start says, which is how the adaptive method starts from its last estimate;
 * every column uniform instead when the model's total is
 * not positive, so that its marginals are all zero), then every merged code split back (in
 * place) among its member codes in
 * proportion to their released (non-negative) one-way counts, for 4 members or more those counts
 * shrunk toward their mean by the positive-part James-Stein factor with the one-way noise's
 * variance (from the rho of the column's one-way marginal in the model; none: no shrinkage),
 * uniformly if the weights are all zero (from DP_SPLIT_NODRAW_ROWS rows, a merged code with one
 * member of positive weight is that member's without a draw).
 * d columns with sizes[j] original codes each.  Pure post-processing: it reads no private data,
 * its randomness is rng only, and the same model, nrows and rng state give the same rows.
 * dp_privsyn_run calls it for its own synthetic rows, so a stored PrivSyn model sampled again is
 * drawn exactly as the original synthesis was (an adaptive synthesis may start from its last
 * estimate, which is not stored: dp_sample then starts cold).  The split calls gum->progress (a heartbeat: iter =
 * iters = gum->iterations, err = -1) every 65,536 rows.  Returns 0, -1 if GUM's (or the split's) progress callback cancelled, -2
 * on invalid input (a code_map entry out of range, no marginal, ...) or allocation failure, and
 * dp_last_error() then says which.
 */
int			dp_privsyn_sample(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes,
							  uint64_t nrows, const dp_gum_params *gum, dp_prng *rng, dp_codes *synth);

/*
 * dp_privsyn_sample's last step, on its own: every merged code of the first nrows rows of synth
 * (codes over model's merged codes, d columns) split back, in place, among its members as
 * dp_privsyn_sample says (the same draws from rng).  gum (may be NULL): its progress callback
 * gets the split's heartbeat.  Returns 0, -1 if cancelled, -2 on allocation failure; synth is
 * then partly split and stays the caller's to free.
 */
int			dp_privsyn_split(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes,
							 uint64_t nrows, const dp_gum_params *gum, dp_prng *rng, dp_codes *synth);

/*
 * Steps 1-2 of the pipeline, shared by every method (dp_privsyn_run and dp_adaptive_run): the d
 * one-way marginals released with rho_oneway in all (rho_oneway / d each, discrete Gaussian,
 * sensitivity 1; the schedule's DP_RELEASE_ONEWAY, recorded in out->spend), then the rare-value
 * merge below dp_rare_threshold (post-processing).  With topup (the adaptive method's schedule;
 * NULL: none), the one-way top-up of dp_oneway_topup after the first release, drawn from the
 * rounds' pool: every column released again with its rho / d, each cell's two counts combined by
 * their precisions, the merge's threshold and the margs' rho those of the sum; *rho_topup (when
 * set) is what it took, 0 for none.  Fills out->merged_sizes,
 * code_map, oneway_noisy, merged_codes and n_oneway (out zeroed by the caller), margs[0..d) with
 * the one-way marginals over merged codes (rho = rho_oneway / d, the consistency weight), and
 * merged (initialised here) with the private table recoded to merged codes: in place when consume
 * is data (merged then takes over data's columns and data is left empty), in a copy otherwise
 * (consume NULL).  prior (NULL: none): earlier releases of the one-way cells, each combined with
 * the run's noisy count by inverse variance (dp_oneway_prior), after the top-up (the count's
 * variance then that of rho / d and the top-up's together).  Returns 0, or -2
 * with dp_last_error() saying what failed (what it allocated is then for the caller to release:
 * dp_privsyn_result_free, dp_marg_free of margs[0..d), dp_codes_free of merged).
 */
int			dp_privsyn_oneway_stage(const dp_codes *data, const uint32_t *sizes, const uint32_t *ordered,
									double rho_oneway, const dp_schedule *topup, double *rho_topup,
									dp_privsyn_result *out, dp_marg *margs,
									dp_codes *merged, dp_codes *consume, const dp_extra_counts *extra,
									const dp_oneway_prior *prior);

/*
 * The rare-value merge of one column (post-processing of its released one-way counts noisy[0 ..
 * size)): fills code_map[0 .. size) with each code's merged code, returns the number of merged
 * codes (0 only when its scratch could not be allocated) and sets *nmerged to the number of codes
 * that share their merged code with another.  A
 * code is rare when its released count is below rare_below.  The first `ordered` codes are
 * ordered values (bins of a number, a date, a time: public, from the domain's kind): each run of
 * consecutive rare ones is merged into one code, and a run whose released counts still add up
 * to less than rare_below joins the lighter of its neighbours.  Among the other codes (the
 * labels of a category column, the NULL cell of a binned one) the rare ones become one code when
 * there are at least two; a lone one joins the most populous code that is not rare.  ordered = 0 is PrivSyn's merge.
 */
uint32_t	dp_rare_merge(const double *noisy, uint32_t size, uint32_t ordered, double rare_below,
						  uint16_t *code_map, uint32_t *nmerged);

/*
 * The rows of dp_privsyn_sample's coarse level for a model of nmargs marginals below
 * DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE rows (see DP_SAMPLE_WIDE_WORK); nrows when there
 * is none.  Public facts only: the rows asked for and the model's number of marginals.
 */
uint64_t	dp_privsyn_sample_coarse(uint64_t nrows, uint64_t nmargs);

/* The default number of synthetic rows: the model's consistent noisy total, rounded, >= 0. */
uint64_t	dp_privsyn_default_rows(const dp_privsyn_result *model);

#endif
