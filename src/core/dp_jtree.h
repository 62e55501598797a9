/*
 * dp_jtree.h - synthetic rows from the maximum-entropy distribution of a model's marginals on a
 * junction tree, for tables whose whole joint domain is too large to hold (dp_maxent.h holds it)
 * but whose marginals' graph triangulates into small cliques.
 *
 * Pure post-processing: it reads only released marginals and the public merged sizes, and draws
 * its randomness from the seedable post-processing generator (dp_prng), so it spends no budget.
 * Pure C: no PostgreSQL headers.
 *
 * The fit is dp_maxent_fit's (iterative proportional fitting from the uniform start; its limit
 * is the maximum-entropy distribution with the given marginals when one exists), held as the
 * marginals of a junction tree's cliques.  When the marginals admit a joint table both reach the
 * same distribution; noisy ones may admit none, and then the results differ, since the two visit
 * the marginals in different orders and this fit also stops when a sweep stalls (below):
 *
 * dp_jtree_build: the graph with an edge between every two columns of one marginal, triangulated
 * by greedy elimination (each step removes the column whose neighbourhood, itself included, has
 * the fewest cells, ties to the lower index, and joins its remaining neighbours: private-pgm's
 * greedy order), its maximal cliques joined by a maximum spanning tree on the sizes of their
 * intersections (a junction tree: a column in two cliques is in every clique on the path between
 * them), rooted at the first and numbered in preorder.  Every marginal lies inside a clique.
 * The maximum-entropy distribution P of marginals on the graph factorises over it: P is the
 * product of the cliques' marginals over the product of the separators' (Lauritzen 1996, 4.4),
 * so the cliques' marginals hold all of P in sum-of-cliques cells.  A function of the marginals'
 * attributes and the sizes only (public), built in O(d^3); no potential is allocated yet.
 *
 * dp_jtree_fit: the same iterative proportional fitting, with the joint kept in that form
 * (Hugin's: clique and separator potentials whose ratio is the joint): a marginal's update
 * scales the clique that holds it (the joint is scaled by the same factor), and before it the
 * updated cliques' news is passed along the tree's path to that clique (absorption: a clique
 * scaled by its separator's new over its old sums), which keeps the joint unchanged and makes
 * the clique hold the joint's true marginal.  Marginals are visited in the preorder of their
 * cliques, so a sweep walks each edge about twice; the scaling by one marginal and the
 * projection onto the next one homed in the same clique share a pass over it
 * (dp_odo_scale_project in dp_odo.h).  Same stopping rule and sweep bound as
 * dp_maxent_fit, and one more: the fit also ends after a sweep that cut the worst marginal's L1
 * misfit by less than DP_JTREE_STALL of itself.  Noisy marginals of many columns admit no joint
 * table; IPF then settles into a cycle at some misfit within a few sweeps, and later sweeps only
 * cost time.  1% rather than 0.1%: the same fidelity on Adult, and calls about twice
 * as fast.  At the end every clique is brought up
 * to date (collect to the root, distribute).
 *
 * dp_jtree_draw: n rows, clique by clique in preorder, stratified: the rows sharing the codes of
 * a clique's separator with its parent (all n rows for the root) are shuffled and each cell of
 * the clique's new columns gets floor or ceil of m P(new | separator) of those m rows
 * (systematic sampling, as dp_maxent_draw).  Expected count of every joint cell: n P; every cell
 * of the root clique gets floor or ceil of n P.
 */
#ifndef DP_JTREE_H
#define DP_JTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_marg.h"
#include "dp_odo.h"
#include "dp_prng.h"

#define DP_JTREE_MAX_ATTRS	DP_ODO_MAX_COLS	/* columns in one clique */
#define DP_JTREE_MAX_COLS	512		/* beyond, no tree is built (the elimination is O(d^3)) */
#define DP_JTREE_STALL		1e-2	/* a sweep that cut the worst misfit by less: the fit ends */

typedef struct dp_jtree_clique
{
	uint32_t	nattrs;
	uint32_t	attrs[DP_JTREE_MAX_ATTRS];	/* increasing column indices */
	uint32_t	sizes[DP_JTREE_MAX_ATTRS];
	uint64_t	ncells;			/* row-major over attrs, the last fastest */
	double	   *P;				/* potential (after dp_jtree_fit: the clique's marginal of P) */
	int32_t		parent;			/* -1 for the root, else < this clique's index */
	uint32_t	depth;
	uint32_t	nsep;			/* the separator with the parent: */
	uint32_t	sep_here[DP_JTREE_MAX_ATTRS];	/* its positions in attrs */
	uint32_t	sep_there[DP_JTREE_MAX_ATTRS];	/* ... and in the parent's attrs */
	uint64_t	sep_cells;		/* 1 for an empty separator */
	double	   *S;				/* its potential */
} dp_jtree_clique;

typedef struct dp_jtree
{
	uint32_t	d;
	uint32_t	ncliques;
	dp_jtree_clique *cl;		/* in preorder */
	uint64_t	cells;			/* the cliques' and the separators' cells in all */
	bool		fitted;			/* dp_jtree_fit returned a distribution (> 0) */
} dp_jtree;

/*
 * Builds t (zeroed by the caller) for the marginals over columns of sizes[0..d).  Returns 0; 1
 * when the tree would hold more than max_cells cells, a clique more than DP_JTREE_MAX_ATTRS
 * columns, or d exceeds DP_JTREE_MAX_COLS (t stays empty: the caller draws otherwise); -2 on
 * invalid input or allocation failure (dp_last_error() says which).
 */
int			dp_jtree_build(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t d,
						   const uint32_t *sizes, uint64_t max_cells);
void		dp_jtree_free(dp_jtree *t);

/*
 * A sub-model's tree: margs[0..nfirst) (the one-way marginals) are kept, then each later marginal
 * in the given order when the tree of those kept so far with it holds at most max_cells cells (one
 * inside a clique of the current tree adds no edge and is kept without a build).  The kept
 * marginals' headers (shallow copies: they share the cells) go to kept (room for nmargs), their
 * count to *nkept, and t is built on them (zeroed here).  A function of the marginals'
 * attributes, their order and the sizes only.  Returns 0; 1 when the first nfirst alone do not
 * fit (t empty, *nkept 0); -2 on invalid input or allocation failure.
 */
int			dp_jtree_build_greedy(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t nfirst,
								  uint32_t d, const uint32_t *sizes, uint64_t max_cells, dp_marg *kept,
								  uint32_t *nkept);

/*
 * Whether dp_odo_scale_project over runs both (a clique's scaling by one table, then its
 * projection onto another) sums the projection as dp_odo_project over runs alone (that other
 * table only) does, so that the one pass gives the same bits as the two (dp_jtree_fit fuses the
 * two passes only then).
 */
bool		dp_jtree_same_sums(const dp_odo_runs *both, const dp_odo_runs *alone);

/*
 * One pass of op over a clique's table P (dp_odo_project, dp_odo_scale or dp_odo_scale_project
 * over runs r), on the call's threads where that gives the same bits as one thread: a clique of
 * 2^16 cells or more, cut by the codes of an outer block that the projected table holds
 * (dp_jtree_walk.c).
 */
void		dp_jtree_walk(const dp_odo_runs *r, dp_odo_op op, double *P, const double *f, double *out);

#ifdef DPSYNTH_TEST_RNG
/* The unit tests' seam (dp_random.h's): true makes dp_jtree_fit run every scaling at once, in a
 * pass of its own (the reference its fused passes must equal bit for bit). */
extern void dp_jtree_test_no_fuse(bool on);

/* ... and the fit's passes walked on threads since the last call, by the block cut: the walk's K
 * loop (a range of each of its runs) or an outer block turned by the odometer; both reset to 0. */
extern void dp_jtree_test_cuts(uint64_t *kloop, uint64_t *outer);
#endif

/* The sweeps of a fit: DP_MAXENT_WORK over a sweep's cost, within dp_maxent's bounds. */
uint32_t	dp_jtree_sweeps(const dp_jtree *t, const dp_marg *margs, uint32_t nmargs);

/*
 * Fits the tree's potentials (allocated here) to the marginals, each over attributes of one
 * clique (those dp_jtree_build was given).  progress as dp_maxent_fit.  Returns the sweeps run
 * (>= 1), 0 when the marginals' supports leave no distribution, -1 if cancelled, -2 on invalid
 * input or allocation failure.
 */
int			dp_jtree_fit(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t max_sweeps,
						 double tol, dp_progress_fn progress, void *progress_arg);

/*
 * n rows drawn from the fitted tree (see above) appended to out (initialised by the caller with
 * d columns).  progress as dp_maxent_draw (a heartbeat every 65,536 rows placed).  Returns 0, -1
 * if cancelled, -2 on allocation failure or invalid input (n >= 2^32, a column of more than
 * 65,536 codes, a separator of 2^32 cells or more, a tree not fitted or whose fit left no
 * distribution).
 */
int			dp_jtree_draw(const dp_jtree *t, uint64_t n, dp_prng *rng, dp_codes *out,
						  dp_progress_fn progress, void *progress_arg);

/*
 * dp_jtree_draw in chunks: with 0 < chunk < n, the rows are cut into chunks of `chunk`
 * consecutive rows (the last one shorter), and each chunk is drawn as dp_jtree_draw draws rows (a
 * stratified draw of its own rows) from a generator seeded by one output of rng, all the seeds
 * taken in chunk order before any chunk is drawn; the chunks run on dp_threads() threads, a
 * heartbeat of progress between every round of them.  The rows are a function of the tree, n,
 * chunk and rng only, not of the threads.  Each chunk is stratified on its own, so a joint cell's
 * count is off its expected n P by up to one per chunk rather than one in all.  chunk 0, or n or
 * more: dp_jtree_draw itself, the same rows.  Returns as dp_jtree_draw.
 */
int			dp_jtree_draw_chunked(const dp_jtree *t, uint64_t n, uint64_t chunk, dp_prng *rng,
								  dp_codes *out, dp_progress_fn progress, void *progress_arg);

#endif							/* DP_JTREE_H */
