/*
 * dp_gum_internal.h - GUM's private types and the functions its files share (not installed, not
 * for any other file of the core: dp_gum.h is GUM's interface).
 *
 * GUM's files, by responsibility:
 *   dp_gum.c          the run: checks, the marginal graph and its peeling, the iterated
 *                     marginals and their components, the work arrays, the initial fill, the
 *                     attribute appending;
 *   dp_gum_update.c   the update step: cell counts (incremental or lazy), one visit of a
 *                     marginal (amounts, wanted rows, the scan, the moves) and the iterations;
 *   dp_gum_store.c    the row store: the working table GUM iterates on (8-bit copies, the
 *                     grouped layout of wide components) and its way back to out's columns;
 *   dp_gum_mem.c      the work memory (gum_alloc and friends);
 *   dp_gum_kernels.h  the loops over the codes, instantiated by dp_gum_update.c.
 * The calls go one way: dp_gum.c calls dp_gum_update.c and dp_gum_store.c, all three call
 * dp_gum_mem.c, and none calls back up (scripts/layout_check.py fails on a loop).
 */
#ifndef DP_GUM_INTERNAL_H
#define DP_GUM_INTERNAL_H

#include "dp_gum.h"
#include "dp_env.h"
#include "dp_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GUM_DECAY		0.84	/* alpha_t = alpha0 * 0.84^floor(t / 20) (PrivSyn) */
#define GUM_DECAY_EVERY 20
#define GUM_PATIENCE	10		/* early stop: iterations without improvement */
#define GUM_BLOCK		1024	/* rows whose cell indexes are computed together */
#define GUM_COUNT_BLOCK	16		/* batch_counts' block of row changes (a batch is whole blocks) */
#define GUM_BISECT		60		/* bisection steps for beta */
#define GUM_PAR_MIN_ROWS 65536	/* a table smaller than this is one part */
#define GUM_MOVE_CHUNK	(1u << 15)	/* moves between two heartbeats (~10-20 ms) */
#define GUM_PREFETCH	16		/* moves ahead whose rows are prefetched */
#define GUM_PREFETCH_MIN_BYTES (1u << 20)	/* ... when the working table is larger than this */
#define GUM_LAZY_MARGIN 1.5		/* lazy counting only where it saves a third at least */
#define GUM_GROUP_MIN_COLS 24	/* grouped layout: components of this many columns at least */
#define GUM_GROUP_MAX_BYTES 32	/* ... in groups of at most this many columns (bytes to a row) */
#define GUM_HIST_CELLS	2048	/* a recount of a marginal of at most this many cells: 4 histograms */

#define CELL_EQ		0
#define CELL_UNDER	1			/* target above current count */
#define CELL_OVER	2			/* current count above target */
typedef struct frac_idx
{
	double		frac;
	uint32_t	idx;
} frac_idx;

typedef struct gmarg
{
	uint32_t	nattrs;
	uint32_t	attrs[DP_MARG_MAX_ATTRS];
	uint32_t	sizes[DP_MARG_MAX_ATTRS];
	uint32_t	strides[DP_MARG_MAX_ATTRS];
	uint32_t	ncells;
	uint32_t	comp;			/* connected component of the core graph */
	double	   *tgt;			/* target counts, scaled to n */
	uint32_t   *cnt[DP_MAX_THREADS];	/* current counts of the rows of part p */
	uint32_t   *nbr;			/* marginals sharing a column with this one (itself included) */
	uint32_t	nnbr;
	double		err;			/* sum |count - tgt| / n */
	bool		dirty;			/* counts out of date (lazy counting): recount before use */
} gmarg;

typedef struct gum
{
	dp_codes   *out;
	uint16_t  **col;			/* out's columns */
	/*
	 * The table GUM iterates on: out's columns, or (narrow) 8-bit copies of the iterated
	 * marginals' columns (comp_cols; the other entries are NULL) when each has at most 256 codes;
	 * copied back before attribute appending.
	 */
	void	  **wcol;
	bool		narrow;
	/*
	 * Grouped layout (8-bit working tables only; see "Grouped layout" above): a component whose
	 * cstride is S > 1 keeps its columns in groups grp[cgrp_off[comp] .. cgrp_off[comp + 1]), n * S
	 * bytes each, row r's codes at grp[q] + r * S; wcol[c] points at column c's byte of row 0, so
	 * that the code of row r is wcol[c][r * S].  cstride is 1 for a column-major component.
	 */
	uint32_t   *cstride;
	uint32_t   *cgrp_off;
	uint8_t   **grp;
	/* the cells of every row of marginal idx_of, kept by its recount for the scan that follows */
	uint32_t   *rowidx;
	const gmarg *idx_of;
	uint32_t	n;
	uint32_t	ncols;
	const uint32_t *sizes;
	dp_prng    *rng;

	gmarg	   *m;				/* iterated marginals */
	uint32_t	nm;
	uint32_t   *comp_cols_off;	/* columns of component c: comp_cols[off[c] .. off[c+1]) */
	uint32_t   *comp_cols;
	uint32_t   *comp_margs_off;
	uint32_t   *comp_margs;
	uint32_t   *colpos;			/* ncols: a core column's index in its component's list */

	/*
	 * The rows are cut into nparts parts of consecutive rows, part p = [pb[p], pb[p + 1]), one per
	 * thread.  Every marginal counts the rows of each part separately (cnt[p]), which costs
	 * nothing more when a row changes (only its own part's counts move) and lets each thread scan
	 * its own part and move the rows of its own part, with no shared counter (see visit).
	 */
	uint32_t	nparts;
	uint32_t	pb[DP_MAX_THREADS + 1];
	uint32_t  **cntp;			/* nparts * nm: cnt[p] of marginal j at [p * nm + j] */

	/* per-visit scratch, sized for the largest iterated marginal */
	uint32_t   *tot,			/* counts over all parts */
			   *wbeg,
			   *wend,
			   *gain,
			   *lose,
			   *dup,
			   *over;			/* list of over-full cells */
	uint8_t    *cls;
	double	   *x;
	uint32_t   *want;			/* 2n: wanted ordinals, then the rows found */
	/*
	 * per part: per cell, the rows still to see up to and including the next wanted one
	 * (UINT32_MAX: none wanted; one counter a cell, so a part's scan touches 4 bytes a cell);
	 * the wanted range per cell
	 */
	uint32_t   *pleft[DP_MAX_THREADS],
			   *pwbeg[DP_MAX_THREADS],
			   *pwend[DP_MAX_THREADS];
	uint64_t	pwanted[DP_MAX_THREADS];
	/* the visit's moves: move i sends row want[i] to cell mvarg[i] (replace) or overwrites it
	 * with a copy of row mvarg[i] (mvdup[i]); mvpart[p] lists the moves whose row is in part p */
	uint32_t   *mvarg;			/* n; before the moves are listed, the sampling's sort scratch */
	uint8_t    *mvdup;
	uint32_t   *mvpart[DP_MAX_THREADS];
	uint32_t	nmvpart[DP_MAX_THREADS];
	/*
	 * Per part, a batch of row changes (see run_moves): old and new codes of the component's
	 * columns, column c at [c * batch ...), for duplicates (bd*) and replaces (br*); and the old
	 * and new cells of one marginal (bio, bin).
	 */
	uint32_t	batch;
	uint16_t   *bdold[DP_MAX_THREADS],
			   *bdnew[DP_MAX_THREADS],
			   *brold[DP_MAX_THREADS],
			   *brnew[DP_MAX_THREADS];
	uint32_t   *bio[DP_MAX_THREADS],
			   *bin[DP_MAX_THREADS];
	/* per part, a recount's three more histograms (3 * GUM_HIST_CELLS; see recount_part) */
	uint32_t   *hist[DP_MAX_THREADS];
	/* per part, lazy counting's moves of one chunk: duplicates (row, source), replaces (row, cell) */
	uint32_t   *lzdrow[DP_MAX_THREADS],
			   *lzdsrc[DP_MAX_THREADS],
			   *lzrrow[DP_MAX_THREADS],
			   *lzrcell[DP_MAX_THREADS];
	const dp_gum_params *prm;
	uint32_t	iter;			/* iterations done (for heartbeats) */

	/*
	 * Counting mode of an iteration.  Incremental: every row change moves the counts of every
	 * marginal it touches, about G x (attributes of the component's marginals) per visit of G
	 * moves.  Lazy: a visit only marks its component's marginals dirty, and a marginal is
	 * recounted (n x its attributes) when it is next needed: at its own visit and at the end of
	 * the iteration.  Both keep exact counts, so the rows are the same; lazy wins on wide tables
	 * (hundreds of marginals in one component: every duplicate touched them all) and incremental
	 * on long, narrow ones.  Each iteration takes the mode that the previous one shows cheaper.
	 */
	bool		lazy;
	uint64_t   *comp_attrs;		/* per component: attributes of its marginals, summed */
	double		inc_work;		/* this iteration: what incremental counting costs */
	double		recount_work;	/* this iteration: what lazy counting cost */

	/*
	 * The run's setup, shared by gum_run's stages (dp_gum.c): the 1-way distribution of every
	 * column (onew), the peeling (layer[c] = 0 for a core column, else its layer; parent[c] and
	 * appm[c], the target it is appended from), the components, the sizes that scratch is cut
	 * to, and the working table's blocks (a column-major column or a group: what the best
	 * table copies).
	 */
	double	  **onew;
	uint32_t   *layer,
			   *parent,
			   *appm;
	uint32_t	nlayers;
	uint32_t	ncomp;
	uint32_t	maxsize;		/* largest column size */
	uint32_t	maxcells;		/* largest iterated marginal */
	frac_idx   *fi;				/* maxsize, for largest_remainder */
	uint32_t   *cntbuf,			/* maxsize + 1 */
			   *codecnt;		/* maxsize */
	double	   *wbuf;			/* maxsize */
	uint32_t   *order;			/* nm: an iteration's order of visits */
	bool		iterate;		/* whether the iterations run at all */
	void	  **blk;
	size_t	   *blksz;
	uint32_t	nblk;

	/* every allocation, freed at the end */
	void	  **allocs;
	size_t		nallocs,
				capallocs;
} gum;

/* dp_gum_mem.c: the work memory (every block freed at the end of the run) */
extern void *gum_nomem(size_t size);
extern void *gum_alloc(gum *g, size_t size);
extern void *gum_calloc(gum *g, size_t count, size_t size);
extern void gum_free(gum *g, void *p);
extern void gum_free_all(gum *g);

/* A heartbeat for the progress callback outside the iterations (one per column filled or
 * appended: O(n) work each); non-zero cancels. */
static inline int
gum_heartbeat(gum *g)
{
	return dp_report(g->prm->progress, g->prm->progress_arg, DP_PHASE_GUM, g->iter, g->prm->iterations, -1);
}

/* dp_gum_update.c: counts and the iterations */
extern void gum_ensure_counts(gum *g, gmarg *m);
extern double gum_marg_error(gum *g, const gmarg *m);
extern int	gum_iterate(gum *g, const dp_gum_params *prm);

/* dp_gum_store.c: the working table */
extern int	gum_working_table(gum *g, const dp_gum_params *prm);
extern void gum_free_moves(gum *g);
extern int	gum_restore_columns(gum *g);
/* every working block b copied from src[b] to dst[b] (blksz[b] bytes), each part's share of each
 * block on its own thread */
extern void gum_copy_blocks(const gum *g, void *const *dst, void *const *src);

#endif							/* DP_GUM_INTERNAL_H */
