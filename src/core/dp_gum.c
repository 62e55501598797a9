/*
 * dp_gum.c - GUM, PrivSyn's gradually update method (see dp_gum.h for the algorithm): the run and
 * its stages (the 1-way distributions, the peeling of the marginal graph, the iterated marginals
 * and their components, the work arrays, the initial fill, the attribute appending).  The update
 * step (counts, visits, iterations) is in dp_gum_update.c, the working table in dp_gum_store.c,
 * the work memory in dp_gum_mem.c; dp_gum_internal.h holds the types they share.  This file calls
 * the others and none of them calls back into it.
 */
#include "dp_gum_internal.h"

/* ---------- small helpers ---------- */

static int
cmp_frac_desc(const void *a, const void *b)
{
	const frac_idx *x = a,
			   *y = b;

	if (x->frac != y->frac)
		return x->frac < y->frac ? 1 : -1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Largest remainder: out[k] = floor(q_k) or ceil(q_k) with q_k = w_k / sum(w) * total, summing to
 * total exactly (ties to the lower index).  Negative weights count as 0; sum(w) must be > 0.
 * fi: scratch of m entries.
 */
static void
largest_remainder(const double *w, uint32_t m, uint64_t total, uint32_t *out, frac_idx *fi)
{
	double		s = 0;
	uint64_t	assigned = 0,
				rem;

	for (uint32_t k = 0; k < m; k++)
		s += w[k] > 0 ? w[k] : 0;
	for (uint32_t k = 0; k < m; k++)
	{
		double		q = w[k] > 0 ? w[k] / s * (double) total : 0;
		double		f = floor(q);

		if (f > (double) (total - assigned))
			f = (double) (total - assigned);
		out[k] = (uint32_t) f;
		assigned += out[k];
		fi[k].frac = q - f;
		fi[k].idx = k;
	}
	rem = total - assigned;
	if (rem == 0)
		return;
	qsort(fi, m, sizeof(frac_idx), cmp_frac_desc);
	/* rem < number of positive weights, barring rounding; cycle defensively */
	for (uint64_t i = 0; rem > 0; i++)
	{
		uint32_t	k = fi[i % m].idx;

		if (w[k] > 0 || i >= m)
		{
			out[k]++;
			rem--;
		}
	}
}

static void
shuffle_u16(dp_prng *rng, uint16_t *a, size_t n)
{
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = (size_t) dp_prng_below(rng, i);
		uint16_t	t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}
/* ---------- setup ---------- */

static uint32_t
uf_find(uint32_t *parent, uint32_t a)
{
	while (parent[a] != a)
	{
		parent[a] = parent[parent[a]];
		a = parent[a];
	}
	return a;
}

static bool
valid_target(const dp_marg *t, uint32_t ncols, const uint32_t *sizes)
{
	uint64_t	cells = 1;

	if (t->nattrs == 0 || t->nattrs > DP_MARG_MAX_ATTRS || t->cells == NULL)
		return false;
	for (int k = (int) t->nattrs - 1; k >= 0; k--)
	{
		if (t->attrs[k] >= ncols || t->sizes[k] != sizes[t->attrs[k]])
			return false;
		if (k > 0 && t->attrs[k - 1] >= t->attrs[k])
			return false;
		if (t->strides[k] != cells)
			return false;
		cells *= t->sizes[k];
		if (cells > UINT32_MAX)
			return false;
	}
	return cells == t->ncells;
}

void
dp_gum_default_params(dp_gum_params *p)
{
	memset(p, 0, sizeof(*p));
	p->iterations = 200;
	p->alpha0 = 1.0;
	p->tolerance = 1e-4;
	p->progress = NULL;
	p->progress_arg = NULL;
}

/*
 * The rows of a warm start of m rows: want[i] = the start row that row i copies.  With m == n,
 * row i copies row i.  Otherwise every start row is copied floor(n / m) times and n mod m of
 * them, drawn uniformly without replacement, once more, all in random order: the start's shares
 * carry over to n rows up to the draw.  m < n is a coarse start, fitted on fewer rows; m > n
 * copies none in full and draws n of the m rows.  mvarg (max(n, m) values, not yet in use) holds
 * the draw.
 */
static void
start_rows(gum *g, uint32_t m)
{
	uint32_t	n = g->n,
				full = n - n % m;

	if (m == n)
	{
		for (uint32_t i = 0; i < n; i++)
			g->want[i] = i;
		return;
	}
	for (uint32_t i = 0; i < full; i++)
		g->want[i] = i % m;
	for (uint32_t i = 0; i < m; i++)
		g->mvarg[i] = i;
	/* the first n mod m places of a partial Fisher-Yates shuffle: a uniform draw without replacement */
	for (uint32_t k = 0; k < n - full; k++)
	{
		uint32_t	j = k + (uint32_t) dp_prng_below(g->rng, m - k),
					t = g->mvarg[k];

		g->mvarg[k] = g->mvarg[j];
		g->mvarg[j] = t;
		g->want[full + k] = g->mvarg[k];
	}
	dp_prng_shuffle_u32(g->rng, g->want, n);
}

/* ---------- the run, stage by stage ---------- */

/*
 * Stage 1: every column's 1-way distribution (g->onew): its 1-way target, else the projection of
 * the first target that holds it.  Returns 0, or -2 (a column in no target, a distribution with
 * no positive mass, out of memory).
 */
static int
one_way_dist(const dp_marg *targets, uint32_t ntargets, uint32_t c, uint32_t size, double *onew)
{
	const dp_marg *src = NULL;
	uint32_t	pos = 0;
	double		s = 0;

	for (uint32_t i = 0; i < ntargets && src == NULL; i++)
		if (targets[i].nattrs == 1 && targets[i].attrs[0] == c)
			src = &targets[i];
	for (uint32_t i = 0; i < ntargets && src == NULL; i++)
		for (uint32_t k = 0; k < targets[i].nattrs; k++)
			if (targets[i].attrs[k] == c)
			{
				src = &targets[i];
				pos = k;
			}
	if (src == NULL)
		return -2;
	for (uint64_t j = 0; j < src->ncells; j++)
		if (src->cells[j] > 0)
			onew[dp_marg_code(src, j, pos)] += src->cells[j];
	for (uint32_t v = 0; v < size; v++)
		s += onew[v];
	if (!(s > 0) || !isfinite(s))
		return -2;
	return 0;
}

static int
gum_one_way(gum *g, const dp_marg *targets, uint32_t ntargets)
{
	const uint32_t ncols = g->ncols;
	const uint32_t *sizes = g->sizes;

	g->onew = gum_calloc(g, ncols, sizeof(double *));
	if (g->onew == NULL)
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
	{
		g->onew[c] = gum_calloc(g, sizes[c], sizeof(double));
		if (g->onew[c] == NULL || one_way_dist(targets, ntargets, c, sizes[c], g->onew[c]) != 0)
			return -2;
	}
	return 0;
}

int
dp_gum_one_way_counts(const dp_marg *targets, uint32_t ntargets, uint32_t c, uint32_t size,
					  uint64_t total, uint32_t *out)
{
	double	   *onew = dp_zalloc(sizeof(double) * (size_t) size);
	frac_idx   *fi = dp_alloc(sizeof(frac_idx) * (size_t) size);
	int			rc = 0;

	if (onew == NULL || fi == NULL)
		rc = dp_nomem("could not allocate a column's one-way counts");
	else if (size == 0 || one_way_dist(targets, ntargets, c, size, onew) != 0)
	{
		dp_fail(DP_ERR_INVALID, "column %u has no 1-way distribution in GUM's targets", c);
		rc = -2;
	}
	else
		largest_remainder(onew, size, total, out, fi);
	dp_free(onew);
	dp_free(fi);
	return rc;
}

/*
 * Stage 2 (dp_gum.h, step 1): the marginal graph peeled layer by layer.  g->layer[c] is 0 for a
 * core column, else the layer that peeled it; g->parent[c] is its one neighbour then, and
 * g->appm[c] the 2-way target it is appended from.  Returns 0 or -2.
 */
static int
gum_peel(gum *g, const dp_marg *targets, uint32_t ntargets)
{
	const uint32_t ncols = g->ncols;
	uint8_t    *adj,
			   *leaf;
	uint32_t   *deg,
			   *layer,
			   *parent,
			   *appm,
			   *peel;

	adj = gum_calloc(g, (size_t) ncols * ncols, 1);
	deg = gum_calloc(g, ncols, sizeof(uint32_t));
	layer = g->layer = gum_calloc(g, ncols, sizeof(uint32_t));
	parent = g->parent = gum_calloc(g, ncols, sizeof(uint32_t));
	appm = g->appm = gum_calloc(g, ncols, sizeof(uint32_t));
	peel = gum_calloc(g, ncols, sizeof(uint32_t));
	leaf = gum_calloc(g, ncols, 1);
	if (!adj || !deg || !layer || !parent || !appm || !peel || !leaf)
		return -2;
	for (uint32_t i = 0; i < ntargets; i++)
		for (uint32_t a = 0; a < targets[i].nattrs; a++)
			for (uint32_t b = 0; b < targets[i].nattrs; b++)
			{
				uint32_t	x = targets[i].attrs[a],
							y = targets[i].attrs[b];

				if (x != y && !adj[(size_t) x * ncols + y])
				{
					adj[(size_t) x * ncols + y] = 1;
					deg[x]++;
				}
			}
	for (;;)
	{
		uint32_t	nleaf = 0,
					npeel = 0;

		for (uint32_t c = 0; c < ncols; c++)
		{
			leaf[c] = layer[c] == 0 && deg[c] == 1;
			nleaf += leaf[c];
		}
		if (nleaf == 0)
			break;
		g->nlayers++;
		for (uint32_t c = 0; c < ncols; c++)
		{
			uint32_t	p = UINT32_MAX;

			if (!leaf[c])
				continue;
			for (uint32_t q = 0; q < ncols; q++)
				if (q != c && layer[q] == 0 && adj[(size_t) c * ncols + q])
					p = q;
			/* of an isolated pair, keep the lower index as the root */
			if (p == UINT32_MAX || (leaf[p] && c < p))
				continue;
			parent[c] = p;
			peel[npeel++] = c;
		}
		for (uint32_t i = 0; i < npeel; i++)
		{
			uint32_t	c = peel[i];

			layer[c] = g->nlayers;
			deg[c] = 0;
			deg[parent[c]]--;
			appm[c] = UINT32_MAX;
			for (uint32_t t = 0; t < ntargets && appm[c] == UINT32_MAX; t++)
				if (targets[t].nattrs == 2 &&
					((targets[t].attrs[0] == c && targets[t].attrs[1] == parent[c]) ||
					 (targets[t].attrs[1] == c && targets[t].attrs[0] == parent[c])))
					appm[c] = t;
			if (appm[c] == UINT32_MAX)
				return -2;		/* cannot happen: the edge came from a 2-way target */
		}
	}
	return 0;
}

/*
 * Stage 3: the iterated marginals (targets of two attributes or more, all core columns), g->m in
 * target order, their targets scaled to n; tgt_of[i] is the target of g->m[i].  Their columns are
 * joined in uf_parent (union-find) into the components of the core graph.  Returns 0 or -2.
 */
static int
gum_marginals(gum *g, const dp_marg *targets, uint32_t ntargets, uint32_t *tgt_of, uint32_t *uf_parent)
{
	for (uint32_t i = 0; i < ntargets; i++)
	{
		bool		core = targets[i].nattrs >= 2;

		for (uint32_t a = 0; a < targets[i].nattrs && core; a++)
			core = g->layer[targets[i].attrs[a]] == 0;
		if (core)
			tgt_of[g->nm++] = i;
	}
	g->m = gum_calloc(g, g->nm ? g->nm : 1, sizeof(gmarg));
	if (!g->m)
		return -2;
	for (uint32_t c = 0; c < g->ncols; c++)
		uf_parent[c] = c;
	for (uint32_t i = 0; i < g->nm; i++)
	{
		const dp_marg *t = &targets[tgt_of[i]];
		gmarg	   *m = &g->m[i];
		double		s = 0;

		m->nattrs = t->nattrs;
		for (uint32_t a = 0; a < t->nattrs; a++)
		{
			m->attrs[a] = t->attrs[a];
			m->sizes[a] = t->sizes[a];
			m->strides[a] = (uint32_t) t->strides[a];
		}
		m->ncells = (uint32_t) t->ncells;
		if (m->ncells > g->maxcells)
			g->maxcells = m->ncells;
		m->tgt = gum_alloc(g, sizeof(double) * m->ncells);
		if (!m->tgt)
			return -2;
		for (uint32_t q = 0; q < g->nparts; q++)
			if ((m->cnt[q] = gum_alloc(g, sizeof(uint32_t) * m->ncells)) == NULL)
				return -2;
		for (uint32_t k = 0; k < m->ncells; k++)
			s += t->cells[k] > 0 ? t->cells[k] : 0;
		if (!(s > 0) || !isfinite(s))
			return -2;
		for (uint32_t k = 0; k < m->ncells; k++)
			m->tgt[k] = t->cells[k] > 0 ? t->cells[k] / s * g->n : 0;
		for (uint32_t a = 1; a < m->nattrs; a++)
		{
			uint32_t	x = uf_find(uf_parent, m->attrs[0]),
						y = uf_find(uf_parent, m->attrs[a]);

			if (x != y)
				uf_parent[y] = x;
		}
	}
	return 0;
}

/*
 * Stage 4: the components of the core graph, numbered in the order their first column appears in
 * the iterated marginals: the columns of each (comp_cols, in column order, colpos their place)
 * and its marginals (comp_margs); then cntp, comp_attrs and every marginal's neighbours (the
 * marginals sharing a column with it, itself included).  Returns 0 or -2.
 */
static int
gum_components(gum *g, const dp_marg *targets, const uint32_t *tgt_of, uint32_t *uf_parent)
{
	const uint32_t ncols = g->ncols;
	uint32_t   *comp_of_col = gum_calloc(g, ncols, sizeof(uint32_t)),
				ci = 0,
				mi = 0;

	if (comp_of_col == NULL)
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
		comp_of_col[c] = UINT32_MAX;
	for (uint32_t i = 0; i < g->nm; i++)
		for (uint32_t a = 0; a < g->m[i].nattrs; a++)
		{
			uint32_t	root = uf_find(uf_parent, g->m[i].attrs[a]);

			if (comp_of_col[root] == UINT32_MAX)
				comp_of_col[root] = g->ncomp++;
		}
	g->comp_cols_off = gum_calloc(g, g->ncomp + 1, sizeof(uint32_t));
	g->comp_margs_off = gum_calloc(g, g->ncomp + 1, sizeof(uint32_t));
	g->comp_cols = gum_calloc(g, ncols, sizeof(uint32_t));
	g->comp_margs = gum_calloc(g, g->nm ? g->nm : 1, sizeof(uint32_t));
	g->colpos = gum_calloc(g, ncols, sizeof(uint32_t));
	g->cntp = gum_calloc(g, (size_t) g->nparts * (g->nm ? g->nm : 1), sizeof(uint32_t *));
	if (!g->comp_cols_off || !g->comp_margs_off || !g->comp_cols || !g->comp_margs ||
		!g->colpos || !g->cntp)
		return -2;
	for (uint32_t comp = 0; comp < g->ncomp; comp++)
	{
		g->comp_cols_off[comp] = ci;
		g->comp_margs_off[comp] = mi;
		for (uint32_t c = 0; c < ncols; c++)
		{
			bool		covered = false;

			if (g->layer[c] != 0 || comp_of_col[uf_find(uf_parent, c)] != comp)
				continue;
			for (uint32_t i = 0; i < g->nm && !covered; i++)
				covered = dp_marg_contains(&targets[tgt_of[i]], 1, &c);
			if (covered)
			{
				g->colpos[c] = ci - g->comp_cols_off[comp];
				g->comp_cols[ci++] = c;
			}
		}
		for (uint32_t i = 0; i < g->nm; i++)
		{
			gmarg	   *mm = &g->m[i];

			if (comp_of_col[uf_find(uf_parent, mm->attrs[0])] != comp)
				continue;
			mm->comp = comp;
			g->comp_margs[mi++] = i;
		}
	}
	g->comp_cols_off[g->ncomp] = ci;
	g->comp_margs_off[g->ncomp] = mi;
	if ((g->comp_attrs = gum_calloc(g, g->ncomp ? g->ncomp : 1, sizeof(uint64_t))) == NULL)
		return -2;
	for (uint32_t i = 0; i < g->nm; i++)
		g->comp_attrs[g->m[i].comp] += g->m[i].nattrs;
	for (uint32_t q = 0; q < g->nparts; q++)
		for (uint32_t j = 0; j < g->nm; j++)
			g->cntp[(size_t) q * g->nm + j] = g->m[j].cnt[q];
	for (uint32_t i = 0; i < g->nm; i++)
	{
		gmarg	   *m = &g->m[i];

		m->nbr = gum_alloc(g, sizeof(uint32_t) * g->nm);
		if (m->nbr == NULL)
			return -2;
		for (uint32_t j = 0; j < g->nm; j++)
		{
			bool		share = false;

			for (uint32_t a = 0; a < m->nattrs && !share; a++)
				for (uint32_t b = 0; b < g->m[j].nattrs && !share; b++)
					share = m->attrs[a] == g->m[j].attrs[b];
			if (share)
				m->nbr[m->nnbr++] = j;
		}
	}
	return 0;
}

/*
 * Per part: the batches of row changes (about 256 KB of codes each, 256 to 4096 rows), lazy
 * counting's moves of a chunk, the scan's per-cell state and the moves' list.  Returns 0 or -2.
 */
static int
gum_part_scratch(gum *g)
{
	uint32_t	maxcc = 1;

	for (uint32_t comp = 0; comp < g->ncomp; comp++)
		if (g->comp_cols_off[comp + 1] - g->comp_cols_off[comp] > maxcc)
			maxcc = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp];
	g->batch = 32768 / maxcc;
	g->batch = g->batch < 256 ? 256 : g->batch > 4096 ? 4096 : g->batch;
	/* batch_counts works in blocks of GUM_COUNT_BLOCK changes: a batch is whole blocks */
	g->batch -= g->batch % GUM_COUNT_BLOCK;
	for (uint32_t q = 0; q < g->nparts; q++)
	{
		size_t		sz = sizeof(uint16_t) * maxcc * g->batch;

		/* zeroed: a last block's changes past the batch's end are read (and not used) */
		g->bdold[q] = gum_calloc(g, 1, sz);
		g->bdnew[q] = gum_calloc(g, 1, sz);
		g->brold[q] = gum_calloc(g, 1, sz);
		g->brnew[q] = gum_calloc(g, 1, sz);
		g->bio[q] = gum_alloc(g, sizeof(uint32_t) * g->batch);
		g->bin[q] = gum_alloc(g, sizeof(uint32_t) * g->batch);
		g->hist[q] = gum_alloc(g, sizeof(uint32_t) * 3 * GUM_HIST_CELLS);
		if (!g->bdold[q] || !g->bdnew[q] || !g->brold[q] || !g->brnew[q] || !g->bio[q] || !g->bin[q] ||
			!g->hist[q])
			return -2;
		/* a part's share of a chunk is at most GUM_MOVE_CHUNK moves (visit) */
		g->lzdrow[q] = gum_alloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
		g->lzdsrc[q] = gum_alloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
		g->lzrrow[q] = gum_alloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
		g->lzrcell[q] = gum_alloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
		if (!g->lzdrow[q] || !g->lzdsrc[q] || !g->lzrrow[q] || !g->lzrcell[q])
			return -2;
	}
	for (uint32_t q = 0; q < g->nparts; q++)
	{
		g->pleft[q] = gum_alloc(g, sizeof(uint32_t) * (size_t) g->maxcells);
		g->pwbeg[q] = gum_alloc(g, sizeof(uint32_t) * g->maxcells);
		g->pwend[q] = gum_alloc(g, sizeof(uint32_t) * g->maxcells);
		g->mvpart[q] = gum_alloc(g, sizeof(uint32_t) * (size_t) (g->pb[q + 1] - g->pb[q] + 1));
		if (!g->pleft[q] || !g->pwbeg[q] || !g->pwend[q] || !g->mvpart[q])
			return -2;
	}
	return 0;
}

/*
 * Stage 5: the work arrays of the visits (sized for the largest iterated marginal, and n or 2n
 * for the rows), of every part, of the fill and the appending.  warm: a warm start's draw needs
 * mvarg to hold its m rows when m > n.  Returns 0 or -2.
 */
static int
gum_scratch(gum *g, const dp_gum_params *prm, bool warm)
{
	const uint32_t n = g->n,
				maxcells = g->maxcells,
				maxsize = g->maxsize;

	g->wbeg = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->wend = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->gain = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->lose = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->dup = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->over = gum_alloc(g, sizeof(uint32_t) * maxcells);
	g->cls = gum_alloc(g, maxcells);
	g->x = gum_alloc(g, sizeof(double) * maxcells);
	g->want = gum_alloc(g, sizeof(uint32_t) * 2 * (size_t) (n ? n : 1));
	g->tot = gum_alloc(g, sizeof(uint32_t) * maxcells);
	if (!g->tot)
		return -2;
	if (gum_part_scratch(g) != 0)
		return -2;
	/* mvarg holds a warm start's draw first (start_rows): m values when m > n */
	g->mvarg = gum_alloc(g, sizeof(uint32_t) * (size_t) (warm && prm->start->nrows > n ? prm->start->nrows : (n ? n : 1)));
	g->mvdup = gum_alloc(g, (size_t) (n ? n : 1));
	g->fi = gum_alloc(g, sizeof(frac_idx) * maxsize);
	g->cntbuf = gum_alloc(g, sizeof(uint32_t) * (maxsize + 1));
	g->codecnt = gum_alloc(g, sizeof(uint32_t) * maxsize);
	g->wbuf = gum_alloc(g, sizeof(double) * maxsize);
	g->order = gum_alloc(g, sizeof(uint32_t) * (g->nm ? g->nm : 1));
	if (!g->wbeg || !g->wend || !g->gain || !g->lose || !g->dup ||
		!g->over || !g->cls || !g->x || !g->want || !g->mvarg || !g->mvdup || !g->fi || !g->cntbuf ||
		!g->codecnt || !g->wbuf || !g->order)
		return -2;
	return 0;
}

/*
 * Stage 6 (dp_gum.h, step 2): the core columns' first rows, from a warm start's rows when warm
 * (in the order start_rows draws), else independently from their 1-way distributions (counts by
 * largest remainder, shuffled).  Peeled columns are zeroed (filled by appending).  Returns 0 or
 * -1 (cancelled).
 */
static int
gum_fill(gum *g, const dp_gum_params *prm, bool warm)
{
	const uint32_t n = g->n;
	const uint32_t *sizes = g->sizes;

	if (warm)
		start_rows(g, (uint32_t) prm->start->nrows);
	for (uint32_t c = 0; c < g->ncols; c++)
	{
		uint16_t   *col = g->col[c];
		uint32_t	r = 0;

		if (g->layer[c] != 0)
		{
			memset(col, 0, sizeof(uint16_t) * n);	/* filled by appending */
			continue;
		}
		if (warm)
		{
			/* a warm start: the caller's rows, in the order start_rows drew (codes checked,
			 * out of range read as 0) */
			const uint16_t *src = prm->start->col[c];
			const uint16_t size_c = (uint16_t) (sizes[c] - 1);

			if (prm->start->nrows == n)
				/* every row once, in order (start_rows: want[i] == i): a loop that vectorises */
				for (uint32_t i = 0; i < n; i++)
				{
					uint16_t	v = src[i];

					col[i] = v <= size_c ? v : 0;
				}
			else
				for (uint32_t i = 0; i < n; i++)
				{
					uint16_t	v = src[g->want[i]];

					col[i] = v < sizes[c] ? v : 0;
				}
			if (gum_heartbeat(g) != 0)
				return -1;
			continue;
		}
		largest_remainder(g->onew[c], sizes[c], n, g->cntbuf, g->fi);
		for (uint32_t v = 0; v < sizes[c]; v++)
			for (uint32_t j = 0; j < g->cntbuf[v]; j++)
				col[r++] = (uint16_t) v;
		shuffle_u16(g->rng, col, n);
		if (gum_heartbeat(g) != 0)
			return -1;
	}
	return 0;
}

/*
 * Stage 7 (dp_gum.h, step 4), for one peeled column c: its codes from its 2-way target
 * conditioned on its parent's codes.  The rows are grouped by the parent's code (counting sort);
 * the rows holding code v receive c's codes in counts apportioned by largest remainder from
 * target(v, .), in random order (target(v, .) all zero: c's 1-way distribution).
 */
static void
append_column(gum *g, const dp_marg *t, uint32_t c)
{
	const uint32_t n = g->n,
				p = g->parent[c],
				pc = t->attrs[0] == p ? 0 : 1,
				cc = 1 - pc;
	const uint32_t *sizes = g->sizes;
	uint32_t   *rows = g->want,
			   *cntbuf = g->cntbuf;

	/* cntbuf[v] ends group v */
	memset(cntbuf, 0, sizeof(uint32_t) * (sizes[p] + 1));
	for (uint32_t i = 0; i < n; i++)
		cntbuf[g->col[p][i] + 1]++;
	for (uint32_t v = 0; v < sizes[p]; v++)
		cntbuf[v + 1] += cntbuf[v];
	for (uint32_t i = 0; i < n; i++)
		rows[cntbuf[g->col[p][i]]++] = i;
	for (uint32_t v = 0; v < sizes[p]; v++)
	{
		uint32_t	beg = v == 0 ? 0 : cntbuf[v - 1],
					nv = cntbuf[v] - beg,
					q = beg;
		double		s = 0;

		if (nv == 0)
			continue;
		for (uint32_t j = 0; j < sizes[c]; j++)
		{
			double		w = t->cells[v * t->strides[pc] + j * t->strides[cc]];

			g->wbuf[j] = w > 0 ? w : 0;
			s += g->wbuf[j];
		}
		if (!(s > 0) || !isfinite(s))
			memcpy(g->wbuf, g->onew[c], sizeof(double) * sizes[c]);
		largest_remainder(g->wbuf, sizes[c], nv, g->codecnt, g->fi);
		dp_prng_shuffle_u32(g->rng, rows + beg, nv);
		for (uint32_t j = 0; j < sizes[c]; j++)
			for (uint32_t k = 0; k < g->codecnt[j]; k++)
				g->col[c][rows[q++]] = (uint16_t) j;
	}
}

/* gum_exact_one_way's passes over one part of a column's rows, on the part's thread */
typedef struct onew_part
{
	gum		   *g;
	uint32_t	part;
	uint32_t	c;				/* the column */
	uint32_t   *cnt;			/* this part's count of each code, or where its next row goes */
	bool		place;			/* false: count the part's codes; true: place its rows */
} onew_part;

static void *
onew_worker(void *arg)
{
	onew_part  *o = arg;
	const uint16_t *col = o->g->col[o->c];
	const uint32_t lo = o->g->pb[o->part],
				hi = o->g->pb[o->part + 1];
	uint32_t   *cnt = o->cnt,
			   *rows = o->g->want;

	if (!o->place)
	{
		memset(cnt, 0, sizeof(uint32_t) * o->g->sizes[o->c]);
		for (uint32_t i = lo; i < hi; i++)
			cnt[col[i]]++;
	}
	else
		for (uint32_t i = lo; i < hi; i++)
			rows[cnt[col[i]]++] = i;
	return NULL;
}

/*
 * Stage 6b (dp_gum_params.one_way_exact): every core column's counts set to its 1-way
 * distribution's largest-remainder counts of n rows, the counts the independent fill starts from.
 * In each over-full cell the surplus rows are drawn uniformly without replacement; they are
 * shuffled and handed to the under-full cells, in code order, as many as each lacks; a moved row
 * changes this column's code only.  GUM's visits match the k-way targets only up to their step
 * sizes, and a column's 1-way counts drift with them: on a big table with a heaped column of many
 * codes the drift was the larger part of that column's one-way error at a large budget.  The
 * column's codes are counted, and its rows grouped by code (in row order within a code), each
 * part of the rows on its own thread: each part's rows of a code go after the parts' before it,
 * so the groups are the same whatever the parts, and so are the draws.  Returns 0, -1
 * (cancelled) or -2 (out of memory).
 */
static int
gum_exact_one_way(gum *g)
{
	const uint32_t n = g->n,
				P = g->nparts;
	uint32_t   *rows = g->want,
			   *pool = g->want + n,
			   *cnt = g->cntbuf,
			   *tgt = g->codecnt,
			   *pc = gum_alloc(g, sizeof(uint32_t) * (size_t) P * g->maxsize);
	onew_part	w[DP_MAX_THREADS];

	if (pc == NULL)
		return -2;
	for (uint32_t c = 0; c < g->ncols; c++)
	{
		const uint32_t sz = g->sizes[c];
		uint16_t   *col = g->col[c];
		uint32_t	np = 0,
					q = 0;

		if (g->layer[c] != 0)
			continue;
		if (g->prm->chunk_counts != NULL)
		{
			/* a chunk of a bigger table: its share of the whole's counts (dp_gum_chunk_next) */
			uint64_t	sum = 0;

			memcpy(tgt, g->prm->chunk_counts[c], sizeof(uint32_t) * sz);
			for (uint32_t v = 0; v < sz; v++)
				sum += tgt[v];
			if (sum != n)
			{
				dp_fail(DP_ERR_INVALID, "a chunk's one-way counts sum to %llu, not to its %u rows",
						(unsigned long long) sum, n);
				return -2;
			}
		}
		else
			largest_remainder(g->onew[c], sz, n, tgt, g->fi);
		for (uint32_t p = 0; p < P; p++)
		{
			w[p].g = g;
			w[p].part = p;
			w[p].c = c;
			w[p].cnt = pc + (size_t) p * g->maxsize;
			w[p].place = false;
		}
		dp_run_parallel(onew_worker, w, sizeof(onew_part), P);
		memset(cnt, 0, sizeof(uint32_t) * (sz + 1));
		for (uint32_t p = 0; p < P; p++)
			for (uint32_t v = 0; v < sz; v++)
				cnt[v + 1] += w[p].cnt[v];
		for (uint32_t v = 0; v < sz && np == 0; v++)
			if (cnt[v + 1] > tgt[v])
				np = 1;
		if (np == 0)
			continue;			/* exact already */
		np = 0;
		/* cnt[v]: where group v starts; each part's rows of v after the parts' before it */
		for (uint32_t v = 0; v < sz; v++)
		{
			uint32_t	at = cnt[v];

			cnt[v + 1] += cnt[v];
			for (uint32_t p = 0; p < P; p++)
			{
				uint32_t	k = w[p].cnt[v];

				w[p].cnt[v] = at;
				at += k;
			}
		}
		for (uint32_t p = 0; p < P; p++)
			w[p].place = true;
		dp_run_parallel(onew_worker, w, sizeof(onew_part), P);
		/* cnt[v] ends group v */
		for (uint32_t v = 0; v < sz; v++)
			cnt[v] = cnt[v + 1];
		for (uint32_t v = 0; v < sz; v++)
		{
			uint32_t	beg = v == 0 ? 0 : cnt[v - 1],
						nv = cnt[v] - beg;

			/* a partial Fisher-Yates shuffle: the first nv - tgt[v] rows, uniformly drawn */
			for (uint32_t k = 0; nv > tgt[v] && k < nv - tgt[v]; k++)
			{
				uint32_t	j = k + (uint32_t) dp_prng_below(g->rng, nv - k),
							t = rows[beg + j];

				rows[beg + j] = rows[beg + k];
				rows[beg + k] = t;
				pool[np++] = t;
			}
		}
		dp_prng_shuffle_u32(g->rng, pool, np);
		for (uint32_t v = 0; v < sz; v++)
		{
			uint32_t	beg = v == 0 ? 0 : cnt[v - 1],
						nv = cnt[v] - beg;

			for (uint32_t k = nv; k < tgt[v] && q < np; k++)
				col[pool[q++]] = (uint16_t) v;
		}
		if (gum_heartbeat(g) != 0)
			return -1;
	}
	return 0;
}

/* Stage 7: the peeled columns appended, last peeled layer first.  Returns 0 or -1 (cancelled). */
static int
gum_append(gum *g, const dp_marg *targets)
{
	for (uint32_t L = g->nlayers; L >= 1; L--)
		for (uint32_t c = 0; c < g->ncols; c++)
		{
			if (g->layer[c] != L)
				continue;
			append_column(g, &targets[g->appm[c]], c);
			if (gum_heartbeat(g) != 0)
				return -1;
		}
	return 0;
}

/*
 * The run: the stages above, then the working table (dp_gum_store.c), the iterations
 * (dp_gum_update.c) and the way back to out's columns before the appending.  Returns 0, -1
 * (cancelled) or -2 (invalid input, out of memory).
 */
static int
gum_run(gum *g, const dp_marg *targets, uint32_t ntargets, const dp_gum_params *prm)
{
	uint32_t   *tgt_of,
			   *uf_parent;
	bool		warm;
	int			rc;

	g->maxsize = 1;
	g->maxcells = 1;
	for (uint32_t c = 0; c < g->ncols; c++)
		if (g->sizes[c] > g->maxsize)
			g->maxsize = g->sizes[c];
	if ((rc = gum_one_way(g, targets, ntargets)) != 0 ||
		(rc = gum_peel(g, targets, ntargets)) != 0)
		return rc;
	tgt_of = gum_calloc(g, ntargets ? ntargets : 1, sizeof(uint32_t));
	uf_parent = gum_calloc(g, g->ncols, sizeof(uint32_t));
	if (tgt_of == NULL || uf_parent == NULL)
		return -2;
	if ((rc = gum_marginals(g, targets, ntargets, tgt_of, uf_parent)) != 0 ||
		(rc = gum_components(g, targets, tgt_of, uf_parent)) != 0)
		return rc;
	warm = prm->start && prm->start->ncols == g->ncols && prm->start->nrows > 0 &&
		prm->start->nrows <= UINT32_MAX;
	if ((rc = gum_scratch(g, prm, warm)) != 0 ||
		(rc = gum_fill(g, prm, warm)) != 0)
		return rc;
	/* (no iteration: the start stands as it is, and neither a working copy nor counts are needed) */
	g->iterate = g->nm > 0 && g->n > 0 && prm->iterations > 0;
	if ((rc = gum_working_table(g, prm)) != 0 ||
		(rc = gum_iterate(g, prm)) != 0)
		return rc;
	gum_free_moves(g);
	if ((rc = gum_restore_columns(g)) != 0)
		return rc;
	if (prm->one_way_exact && (rc = gum_exact_one_way(g)) != 0)
		return rc;
	return gum_append(g, targets);
}

#ifdef DPSYNTH_TEST_RNG
#ifdef DPSYNTH_VERSION
#error "DPSYNTH_TEST_RNG is for the unit tests' library only (Makefile), never the extension"
#endif
static uint32_t gum_test_par_min_rows = 0;	/* dp_gum.h's seam; 0: GUM_PAR_MIN_ROWS */

void
dp_gum_test_par_min_rows(uint32_t rows)
{
	gum_test_par_min_rows = rows;
}
#define GUM_SPLIT_MIN_ROWS (gum_test_par_min_rows ? gum_test_par_min_rows : GUM_PAR_MIN_ROWS)
#else
#define GUM_SPLIT_MIN_ROWS GUM_PAR_MIN_ROWS
#endif

int
dp_gum_run(const dp_marg *targets, uint32_t ntargets, uint32_t ncols, const uint32_t *sizes,
		   uint64_t n, const dp_gum_params *params, dp_prng *rng, dp_codes *out)
{
	dp_gum_params defaults;
	gum			g;
	int			rc;

	if (out == NULL || rng == NULL || sizes == NULL || (ntargets > 0 && targets == NULL))
		return -2;
	out->nrows = 0;
	if (params == NULL)
	{
		dp_gum_default_params(&defaults);
		params = &defaults;
	}
	if (!(params->alpha0 > 0) || !isfinite(params->alpha0) || isnan(params->tolerance))
		return -2;
	if (out->ncols != ncols || n >= UINT32_MAX)
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
		if (sizes[c] == 0 || sizes[c] > 65536)
			return -2;
	for (uint32_t i = 0; i < ntargets; i++)
		if (!valid_target(&targets[i], ncols, sizes))
			return -2;
	if (ncols == 0 || n == 0)
		return 0;

	/* room for n rows in every column */
	if (out->cap < n)
	{
		for (uint32_t j = 0; j < ncols; j++)
		{
			uint16_t   *p = dp_realloc(out->col[j], sizeof(uint16_t) * (size_t) n);

			if (p == NULL)
			{
				gum_nomem(sizeof(uint16_t) * (size_t) n);
				return -2;
			}
			out->col[j] = p;
		}
		out->cap = n;
	}

	memset(&g, 0, sizeof(g));
	g.out = out;
	g.col = out->col;
	g.n = (uint32_t) n;
	g.ncols = ncols;
	g.sizes = sizes;
	g.rng = rng;
	g.prm = params;
	/* one part per thread; a small table is one part (threads would cost more than they save) */
	g.nparts = params->threads > 0 && params->threads <= DP_MAX_THREADS ? params->threads : dp_threads();
	if (n < GUM_SPLIT_MIN_ROWS)
		g.nparts = 1;
	for (uint32_t q = 0; q <= g.nparts; q++)
		g.pb[q] = (uint32_t) (n * q / g.nparts);
	rc = gum_run(&g, targets, ntargets, params);
	gum_free_all(&g);
	for (uint32_t j = 0; j < ncols; j++)
		if (out->col[j] == NULL)
			out->cap = 0;		/* a run stopped with a 16-bit column freed: out grows anew (dp_realloc of NULL) */
	if (rc == 0)
		out->nrows = n;
	return rc;
}
