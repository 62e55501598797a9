/*
 * dp_gum_store.c - GUM's row store: the working table its iterations read and write (8-bit copies
 * of the iterated marginals' columns when they fit, in the grouped layout on wide components),
 * and its way back to out's 16-bit columns.  dp_gum_internal.h names GUM's other files.
 *
 * Grouped layout.  On a wide component (GUM_GROUP_MIN_COLS columns or more, 8-bit codes) counting
 * mostly goes lazy (see gum.lazy; the layout is chosen whatever the counting mode), and a visit's
 * cost was its duplicates: each copies a row's codes of
 * every column of the component, and with one array per column that reads and writes nearly
 * every cache line of every column at every visit (bench/wide.sh: 79 core columns of 600,000
 * rows, 20,000-130,000 moves per visit).  There the component's columns are stored in groups of
 * at most GUM_GROUP_MAX_BYTES columns, S bytes to a row (row r's codes of group q at
 * grp[q] + r * S, column c at wcol[c][r * S]): a duplicate copies one S-byte slice per group (two
 * or three cache lines per row instead of one per column), while a visit's recount reads only the
 * groups of its marginal's columns, which group_columns tries to put together.  The recount keeps
 * every row's cell (rowidx) for the scan that follows, so the groups are read once per visit.
 * The codes are the same whatever the layout, and so are the rows; on wide tables the grouped
 * layout cuts the final GUM's time, as the wide-table benchmark (bench/wide.sh) shows.
 */
#include "dp_gum_internal.h"

/*
 * Where a grouped component's k columns go: lay[j] = q * S + b puts its column j (comp_cols order)
 * at byte b of group q.  A visit's recount reads every group that holds a column of its marginal,
 * so the columns that marginals join are put in the same group where possible: from consecutive
 * positions, swaps of two positions of different groups (an empty position is a column of no
 * marginal) while one lowers the sum, over the component's marginals, of the groups each reads
 * (first improvement, a bounded number of pair evaluations).  Deterministic; it decides where the
 * codes are stored, never what they are.  Returns 0, -2 (out of memory) or -1 (cancelled at a
 * heartbeat; what it allocated goes with the run's, as every early return's).
 */
static int
group_columns(gum *g, uint32_t comp, uint32_t k, uint32_t ngr, uint32_t S, uint32_t *lay)
{
	const uint32_t *cm = g->comp_margs + g->comp_margs_off[comp];
	const uint32_t nmc = g->comp_margs_off[comp + 1] - g->comp_margs_off[comp],
				P = ngr * S;
	uint32_t   *ioff = gum_calloc(g, (size_t) k + 2, sizeof(uint32_t)),
			   *inc,
			   *occ = gum_alloc(g, sizeof(uint32_t) * P);	/* column at each position, k: none */
	uint64_t	budget = 50000000;	/* marginal evaluations, at most */
	bool		better = true;

	if (ioff == NULL || occ == NULL)
		return -2;
	/* marginals of each column (incidence lists, CSR) */
	for (uint32_t i = 0; i < nmc; i++)
		for (uint32_t a = 0; a < g->m[cm[i]].nattrs; a++)
			ioff[g->colpos[g->m[cm[i]].attrs[a]] + 2]++;
	for (uint32_t j = 0; j < k; j++)
		ioff[j + 2] += ioff[j + 1];
	if ((inc = gum_alloc(g, sizeof(uint32_t) * (ioff[k + 1] ? ioff[k + 1] : 1))) == NULL)
		return -2;
	for (uint32_t i = 0; i < nmc; i++)
		for (uint32_t a = 0; a < g->m[cm[i]].nattrs; a++)
			inc[ioff[g->colpos[g->m[cm[i]].attrs[a]] + 1]++] = cm[i];
	/* now the marginals of column j are inc[ioff[j] .. ioff[j + 1]) */
	for (uint32_t j = 0; j < k; j++)
		lay[j] = j;
	for (uint32_t p = 0; p < P; p++)
		occ[p] = p < k ? p : k;
	while (better && budget > 0)
	{
		better = false;
		for (uint32_t p1 = 0; p1 < P && budget > 0; p1++)
		{
			/* up to 50M marginal evaluations in all: a heartbeat per position, so that a
			 * cancel never waits for them */
			if (gum_heartbeat(g) != 0)
				return -1;
			for (uint32_t p2 = (p1 / S + 1) * S; p2 < P && budget > 0; p2++)
			{
				uint32_t	x = occ[p1],
							y = occ[p2];
				int64_t		delta = 0;

				if (x == k && y == k)
					continue;
				/* groups read before and after the swap, over the marginals of x and of y (a
				 * marginal of both reads the same groups either way: it adds 0 twice) */
				for (int side = 0; side < 2; side++)
				{
					uint32_t	z = side == 0 ? x : y;

					if (z == k)
						continue;
					for (uint32_t e = ioff[z]; e < ioff[z + 1]; e++)
					{
						const gmarg *mm = &g->m[inc[e]];
						uint32_t	gb[DP_MARG_MAX_ATTRS],
									ga[DP_MARG_MAX_ATTRS],
									nb = 0,
									na = 0;

						for (uint32_t a = 0; a < mm->nattrs; a++)
						{
							uint32_t	j = g->colpos[mm->attrs[a]],
										qb = lay[j] / S,
										qa = j == x ? p2 / S : j == y ? p1 / S : qb;
							uint32_t	u;

							for (u = 0; u < nb && gb[u] != qb; u++)
								;
							if (u == nb)
								gb[nb++] = qb;
							for (u = 0; u < na && ga[u] != qa; u++)
								;
							if (u == na)
								ga[na++] = qa;
						}
						delta += (int64_t) na - (int64_t) nb;
					}
					budget -= budget < ioff[z + 1] - ioff[z] ? budget : ioff[z + 1] - ioff[z];
				}
				if (delta < 0)
				{
					occ[p1] = y;
					occ[p2] = x;
					if (x < k)
						lay[x] = p2;
					if (y < k)
						lay[y] = p1;
					better = true;
				}
			}
		}
	}
	gum_free(g, inc);
	gum_free(g, occ);
	gum_free(g, ioff);
	return 0;
}

/*
 * The layout: whether the working table is 8-bit (g->narrow: the iterations run and every column
 * of the iterated marginals has at most 256 codes), and each component's layout, grouped
 * (cstride S > 1) when wide (GUM_GROUP_MIN_COLS columns or more, 8-bit codes, whatever the rows)
 * unless prm->layout asks for column-major, else column-major.  Returns 0 or -2.
 */
static int
choose_layout(gum *g, const dp_gum_params *prm)
{
	const uint32_t ncc = g->comp_cols_off[g->ncomp];
	uint32_t	ngrp = 0;

	g->narrow = g->iterate;
	for (uint32_t i = 0; i < ncc; i++)
		if (g->sizes[g->comp_cols[i]] > 256)
			g->narrow = false;
	g->cstride = gum_calloc(g, g->ncomp + 1, sizeof(uint32_t));
	g->cgrp_off = gum_calloc(g, g->ncomp + 1, sizeof(uint32_t));
	if (!g->cstride || !g->cgrp_off)
		return -2;
	for (uint32_t comp = 0; comp < g->ncomp; comp++)
	{
		uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
					ngr = (k + GUM_GROUP_MAX_BYTES - 1) / GUM_GROUP_MAX_BYTES;

		g->cgrp_off[comp] = ngrp;
		g->cstride[comp] = 1;
		if (g->narrow && k >= GUM_GROUP_MIN_COLS && prm->layout != DP_GUM_LAYOUT_COLUMN_MAJOR)
		{
			g->cstride[comp] = (k + ngr - 1) / ngr;
			ngrp += ngr;
		}
	}
	g->cgrp_off[g->ncomp] = ngrp;
	if (ngrp > 0)
	{
		/* a visit's cells are kept only by the recounts of lazy counting (never incremental) */
		bool		cells = prm->counting != DP_GUM_COUNT_INCREMENTAL;

		g->grp = gum_calloc(g, ngrp, sizeof(uint8_t *));
		if (cells)
			g->rowidx = gum_alloc(g, sizeof(uint32_t) * (size_t) g->n);
		if (!g->grp || (cells && !g->rowidx))
			return -2;
	}
	else if (prm->counting == DP_GUM_COUNT_LAZY && g->iterate)
	{
		/*
		 * Column-major under lazy counting alone: every visit recounts its marginal, and the
		 * cells it computes are kept for the scan that follows (4 bytes a row), as the grouped
		 * layout's.
		 */
		g->rowidx = gum_alloc(g, sizeof(uint32_t) * (size_t) g->n);
		if (g->rowidx == NULL)
			return -2;
	}
	return 0;
}

/*
 * A grouped component's columns copied into its groups, group by group, a block of rows at a time
 * (the block's slice stays in cache); each 16-bit column is freed once copied.  Returns 0, -1
 * (cancelled) or -2.
 */
static int
copy_grouped(gum *g, uint32_t comp)
{
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
	const uint32_t n = g->n;
	uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
				S = g->cstride[comp],
				ngr = g->cgrp_off[comp + 1] - g->cgrp_off[comp],
			   *lay = gum_alloc(g, sizeof(uint32_t) * k);
	int			grc;

	if (lay == NULL)
		return -2;
	if ((grc = group_columns(g, comp, k, ngr, S, lay)) != 0)
		return grc;				/* -2, or -1: cancelled */
	for (uint32_t q = 0; q < ngr; q++)
	{
		uint8_t    *gq = gum_calloc(g, n, S);

		if (gq == NULL)
			return -2;
		g->grp[g->cgrp_off[comp] + q] = gq;
		for (uint32_t r0 = 0; r0 < n; r0 += GUM_BLOCK)
		{
			uint32_t	r1 = n - r0 < GUM_BLOCK ? n : r0 + GUM_BLOCK;

			for (uint32_t j = 0; j < k; j++)
			{
				const uint16_t *src = g->col[cc[j]];
				uint8_t    *dst = gq + lay[j] % S;

				if (lay[j] / S != q)
					continue;
				for (uint32_t r = r0; r < r1; r++)
					dst[(size_t) r * S] = (uint8_t) src[r];
			}
		}
		for (uint32_t j = 0; j < k; j++)
			if (lay[j] / S == q)
			{
				g->wcol[cc[j]] = gq + lay[j] % S;
				dp_free(g->col[cc[j]]);
				g->col[cc[j]] = NULL;
			}
		/* a group is n * S bytes to write (10M rows: 320 MB): a heartbeat after each */
		if (gum_heartbeat(g) != 0)
			return -1;
	}
	gum_free(g, lay);
	return 0;
}

/*
 * One part of a copy on the part's thread (narrow_worker, blocks_worker): src and dst are what the
 * worker copies (a column, or arrays of the blocks), widen narrow_worker's direction.
 */
typedef struct copy_part
{
	const gum  *g;
	uint32_t	part;
	const void *src;
	void	   *dst;
	bool		widen;			/* narrow_worker: 8 bits to 16; else 16 to 8 */
} copy_part;

/* worker over every part of g, each on its own thread */
static void
run_copy_parts(const gum *g, void *(*worker) (void *), const void *src, void *dst, bool widen)
{
	copy_part	w[DP_MAX_THREADS];

	for (uint32_t p = 0; p < g->nparts; p++)
	{
		w[p].g = g;
		w[p].part = p;
		w[p].src = src;
		w[p].dst = dst;
		w[p].widen = widen;
	}
	dp_run_parallel(worker, w, sizeof(copy_part), g->nparts);
}

/* one part's rows of a column copied between 16 and 8 bits */
static void *
narrow_worker(void *arg)
{
	const copy_part *w = arg;
	const uint32_t lo = w->g->pb[w->part],
				hi = w->g->pb[w->part + 1];

	if (w->widen)
	{
		const uint8_t *src = w->src;
		uint16_t   *dst = w->dst;

		for (uint32_t r = lo; r < hi; r++)
			dst[r] = src[r];
	}
	else
	{
		const uint16_t *src = w->src;
		uint8_t    *dst = w->dst;

		for (uint32_t r = lo; r < hi; r++)
			dst[r] = (uint8_t) src[r];
	}
	return NULL;
}

/* A column's n codes copied between 16 and 8 bits, each part's rows on its own thread (a fresh
 * column's first touch, its page faults, included). */
static void
narrow_copy(const gum *g, const void *src, void *dst, bool widen)
{
	run_copy_parts(g, narrow_worker, src, dst, widen);
}

/* A column-major component's columns copied to 8 bits, each 16-bit column freed once copied. */
static int
copy_narrow(gum *g, uint32_t comp)
{
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
	uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp];

	for (uint32_t j = 0; j < k; j++)
	{
		uint32_t	c = cc[j];
		uint8_t    *w8;

		if ((w8 = gum_alloc(g, g->n)) == NULL)
			return -2;
		narrow_copy(g, g->col[c], w8, false);
		g->wcol[c] = w8;
		/* the 16-bit column is dead until the end: 2n bytes less at the peak (10M rows: 20 MB a column) */
		dp_free(g->col[c]);
		g->col[c] = NULL;
		if (gum_heartbeat(g) != 0)
			return -1;
	}
	return 0;
}

/*
 * The working table: 8-bit copies of the iterated marginals' columns (comp_cols, the only columns
 * the iterations read or write) when they all fit, else out's columns themselves.  The other core
 * columns (degree 0, or in no iterated marginal) keep their initial fill in out.  Then the list
 * of its blocks (blk, blksz: a column-major column or a group), what the best table copies.
 * Returns 0, -1 (cancelled) or -2.
 */
int
gum_working_table(gum *g, const dp_gum_params *prm)
{
	const uint32_t ncc = g->comp_cols_off[g->ncomp];
	int			rc;

	if ((rc = choose_layout(g, prm)) != 0)
		return rc;
	g->wcol = (void **) g->col;
	if (g->narrow)
	{
		g->wcol = gum_calloc(g, g->ncols, sizeof(void *));
		if (g->wcol == NULL)
			return -2;
		for (uint32_t comp = 0; comp < g->ncomp; comp++)
			if ((rc = g->cstride[comp] > 1 ? copy_grouped(g, comp) : copy_narrow(g, comp)) != 0)
				return rc;
	}
	g->nblk = 0;
	g->blk = gum_calloc(g, ncc ? ncc : 1, sizeof(void *));
	g->blksz = gum_calloc(g, ncc ? ncc : 1, sizeof(size_t));
	if (!g->blk || !g->blksz)
		return -2;
	for (uint32_t comp = 0; comp < g->ncomp; comp++)
	{
		if (g->cstride[comp] > 1)
			for (uint32_t q = g->cgrp_off[comp]; q < g->cgrp_off[comp + 1]; q++)
			{
				g->blk[g->nblk] = g->grp[q];
				g->blksz[g->nblk++] = (size_t) g->n * g->cstride[comp];
			}
		else
			for (uint32_t j = g->comp_cols_off[comp]; j < g->comp_cols_off[comp + 1]; j++)
			{
				g->blk[g->nblk] = g->wcol[g->comp_cols[j]];
				g->blksz[g->nblk++] = (g->narrow ? 1 : 2) * (size_t) g->n;
			}
	}
	return 0;
}

/* The moves' arrays and the kept cells, dead once the iterations are over (appending uses want
 * only): freed before the 16-bit columns come back. */
void
gum_free_moves(gum *g)
{
	gum_free(g, g->mvarg);
	gum_free(g, g->mvdup);
	g->mvarg = NULL;
	g->mvdup = NULL;
	for (uint32_t q = 0; q < g->nparts; q++)
	{
		gum_free(g, g->mvpart[q]);
		g->mvpart[q] = NULL;
	}
	gum_free(g, g->rowidx);
	g->rowidx = NULL;
	g->idx_of = NULL;			/* no visit's cells are kept any more (a restored best table wrote rows) */
}

/*
 * Block q of a component back to out: its 16-bit columns allocated, its codes copied a block of
 * rows at a time, the 8-bit block freed.  A grouped component's block q is its group q (its
 * columns together), a column-major one's is its column q.  Returns 0 or -2.
 */
static int
restore_block(gum *g, uint32_t comp, uint32_t q)
{
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
	const uint32_t n = g->n;
	uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
				S = g->cstride[comp];
	const uint8_t *gq = S > 1 ? g->grp[g->cgrp_off[comp] + q] : g->wcol[cc[q]];
	/* the columns to look at: column q alone when column-major, else all k */
	const uint32_t jlo = S > 1 ? 0 : q,
				jhi = S > 1 ? k : q + 1;

	/* (a column of the group: its codes of row 0 lie in [gq, gq + S); compared as integers,
	 * since the pointers may come from different allocations) */
#define IN_GROUP(j) ((uintptr_t) g->wcol[cc[j]] - (uintptr_t) gq < (uintptr_t) S)
	for (uint32_t j = jlo; j < jhi; j++)
	{
		uint16_t   *c16;

		if (!IN_GROUP(j))
			continue;
		if ((c16 = dp_alloc(sizeof(uint16_t) * (size_t) n)) == NULL)
		{
			gum_nomem(sizeof(uint16_t) * (size_t) n);
			return -2;
		}
		g->col[cc[j]] = c16;
	}
	if (S == 1)
		narrow_copy(g, gq, g->col[cc[q]], true);
	else
		for (uint32_t r0 = 0; r0 < n; r0 += GUM_BLOCK)
		{
			uint32_t	r1 = n - r0 < GUM_BLOCK ? n : r0 + GUM_BLOCK;

			for (uint32_t j = jlo; j < jhi; j++)
			{
				const uint8_t *src = g->wcol[cc[j]];
				uint16_t   *dst = g->col[cc[j]];

				if (!IN_GROUP(j))
					continue;
				for (uint32_t r = r0; r < r1; r++)
					dst[r] = src[(size_t) r * S];
			}
		}
	for (uint32_t j = jlo; j < jhi; j++)
		if (IN_GROUP(j))
			g->wcol[cc[j]] = NULL;
#undef IN_GROUP
	gum_free(g, (void *) gq);
	return 0;
}

/*
 * The 8-bit working table back to out's 16-bit columns (nothing to do when it was out itself),
 * block by block with a heartbeat after each.  Returns 0, -1 (cancelled) or -2.
 */
int
gum_restore_columns(gum *g)
{
	if (!g->narrow)
		return 0;
	for (uint32_t comp = 0; comp < g->ncomp; comp++)
	{
		uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
					S = g->cstride[comp],
					nb = S > 1 ? g->cgrp_off[comp + 1] - g->cgrp_off[comp] : k;

		for (uint32_t q = 0; q < nb; q++)
		{
			if (restore_block(g, comp, q) != 0)
				return -2;
			if (gum_heartbeat(g) != 0)
				return -1;
		}
	}
	return 0;
}

/* gum_copy_blocks: part p copies bytes [sz p / P, sz (p + 1) / P) of every block (src and dst:
 * arrays of the blocks) */
static void *
blocks_worker(void *arg)
{
	const copy_part *w = arg;
	void	   *const *dstb = w->dst;
	void	   *const *srcb = w->src;
	const uint32_t P = w->g->nparts;

	for (uint32_t b = 0; b < w->g->nblk; b++)
	{
		size_t		sz = w->g->blksz[b],
					lo = sz / P * w->part,
					hi = w->part + 1 == P ? sz : sz / P * (w->part + 1);

		memcpy((uint8_t *) dstb[b] + lo, (const uint8_t *) srcb[b] + lo, hi - lo);
	}
	return NULL;
}

void
gum_copy_blocks(const gum *g, void *const *dst, void *const *src)
{
	run_copy_parts(g, blocks_worker, src, (void *) dst, false);
}
