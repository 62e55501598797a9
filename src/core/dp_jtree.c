/*
 * dp_jtree.c - the maximum-entropy distribution of a model's marginals on a junction tree, and
 * rows drawn from it (see dp_jtree.h).
 */
#include "dp_jtree.h"

#include <math.h>
#include <string.h>

#include "dp_internal.h"
#include "dp_maxent.h"

#define WORDS(d) (((d) + 63) / 64)

static inline bool
bit_has(const uint64_t *s, uint32_t j)
{
	return (s[j / 64] >> (j % 64)) & 1;
}

static inline void
bit_set(uint64_t *s, uint32_t j)
{
	s[j / 64] |= (uint64_t) 1 << (j % 64);
}

static bool
bit_subset(const uint64_t *a, const uint64_t *b, uint32_t w)
{
	for (uint32_t i = 0; i < w; i++)
		if (a[i] & ~b[i])
			return false;
	return true;
}

void
dp_jtree_free(dp_jtree *t)
{
	for (uint32_t i = 0; t->cl && i < t->ncliques; i++)
	{
		dp_free(t->cl[i].P);
		dp_free(t->cl[i].S);
	}
	dp_free(t->cl);
	memset(t, 0, sizeof(*t));
}

/*
 * The elimination (see dp_jtree.h): the maximal cliques as bitsets into *cliques (nc of them,
 * allocated here).  Returns 0, 1 when a clique exceeds max_cells, -2 on allocation failure.
 */
static int
eliminate(uint64_t *adj, uint32_t d, const uint32_t *sizes, uint64_t max_cells, uint64_t **cliques,
		  uint32_t *nc)
{
	uint32_t	w = WORDS(d);
	uint64_t   *K = dp_alloc(sizeof(uint64_t) * w * d);
	uint64_t   *gone = dp_alloc(sizeof(uint64_t) * w);
	double	   *lg = dp_alloc(sizeof(double) * d);
	uint32_t	n = 0;

	if (!K || !gone || !lg)
	{
		dp_free(K);
		dp_free(gone);
		dp_free(lg);
		return dp_nomem("could not allocate the junction tree's elimination");
	}
	memset(K, 0, sizeof(uint64_t) * w * d);
	memset(gone, 0, sizeof(uint64_t) * w);
	for (uint32_t j = 0; j < d; j++)
		lg[j] = log((double) sizes[j]);
	for (uint32_t step = 0; step < d; step++)
	{
		uint32_t	best = UINT32_MAX;
		double		bestw = 0;
		uint64_t   *k = &K[(uint64_t) n * w];

		for (uint32_t v = 0; v < d; v++)
		{
			double		wt = lg[v];

			if (bit_has(gone, v))
				continue;
			for (uint32_t u = 0; u < d; u++)
				if (u != v && !bit_has(gone, u) && bit_has(&adj[(uint64_t) v * w], u))
					wt += lg[u];
			if (best == UINT32_MAX || wt < bestw - 1e-9)
			{
				best = v;
				bestw = wt;
			}
		}
		if (bestw > log((double) max_cells) + 1e-9)
		{
			dp_free(K);
			dp_free(gone);
			dp_free(lg);
			return 1;
		}
		/* the clique: best and its remaining neighbours, who become pairwise adjacent */
		memset(k, 0, sizeof(uint64_t) * w);
		bit_set(k, best);
		for (uint32_t u = 0; u < d; u++)
			if (u != best && !bit_has(gone, u) && bit_has(&adj[(uint64_t) best * w], u))
				bit_set(k, u);
		for (uint32_t u = 0; u < d; u++)
			if (u != best && bit_has(k, u))
				for (uint32_t i = 0; i < w; i++)
					adj[(uint64_t) u * w + i] |= k[i];
		bit_set(gone, best);
		/* kept when no clique found before contains it (a later one cannot: it lacks best) */
		{
			bool		sub = false;

			for (uint32_t c = 0; c < n && !sub; c++)
				sub = bit_subset(k, &K[(uint64_t) c * w], w);
			if (!sub)
				n++;
		}
	}
	dp_free(gone);
	dp_free(lg);
	*cliques = K;
	*nc = n;
	return 0;
}

int
dp_jtree_build(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
			   uint64_t max_cells)
{
	uint32_t	w = WORDS(d);
	uint64_t   *adj,
			   *K = NULL;
	uint32_t	nc = 0,
				nord = 0;
	uint32_t   *from = NULL,
			   *order = NULL,
			   *newid = NULL;
	int32_t    *par = NULL;
	double		total = 0;
	int			rc = 0;

	memset(t, 0, sizeof(*t));
	if (d == 0 || nmargs == 0)
		return dp_invalid("junction tree: no column or no marginal");
	if (d > DP_JTREE_MAX_COLS)
		return 1;
	for (uint32_t j = 0; j < d; j++)
		if (sizes[j] == 0)
			return dp_invalid("junction tree: a column of no code");
	for (uint32_t k = 0; k < nmargs; k++)
	{
		if (margs[k].nattrs == 0 || margs[k].nattrs > DP_MARG_MAX_ATTRS)
			return dp_invalid("junction tree: a marginal has no attribute or too many");
		for (uint32_t a = 0; a < margs[k].nattrs; a++)
			if (margs[k].attrs[a] >= d || margs[k].sizes[a] != sizes[margs[k].attrs[a]])
				return dp_invalid("junction tree: a marginal's attributes disagree with the columns");
	}
	adj = dp_alloc(sizeof(uint64_t) * w * d);
	if (!adj)
		return dp_nomem("could not allocate the junction tree's graph");
	memset(adj, 0, sizeof(uint64_t) * w * d);
	for (uint32_t k = 0; k < nmargs; k++)
		for (uint32_t a = 0; a < margs[k].nattrs; a++)
			for (uint32_t b = 0; b < margs[k].nattrs; b++)
				if (a != b)
					bit_set(&adj[(uint64_t) margs[k].attrs[a] * w], margs[k].attrs[b]);
	rc = eliminate(adj, d, sizes, max_cells, &K, &nc);
	dp_free(adj);
	if (rc != 0)
		return rc;

	/* a maximum spanning tree on the intersections' sizes (Prim), rooted at clique 0 */
	from = dp_alloc(sizeof(uint32_t) * nc);
	order = dp_alloc(sizeof(uint32_t) * nc);
	newid = dp_alloc(sizeof(uint32_t) * nc);
	par = dp_alloc(sizeof(int32_t) * nc);
	t->cl = dp_alloc(sizeof(dp_jtree_clique) * nc);
	if (!from || !order || !newid || !par || !t->cl)
	{
		rc = dp_nomem("could not allocate the junction tree");
		goto done;
	}
	memset(t->cl, 0, sizeof(dp_jtree_clique) * nc);
	{
		uint8_t    *in = (uint8_t *) newid;	/* reused as flags until the numbering */
		int64_t    *best = (int64_t *) dp_alloc(sizeof(int64_t) * nc);

		if (!best)
		{
			rc = dp_nomem("could not allocate the junction tree");
			goto done;
		}
		memset(in, 0, nc);
		for (uint32_t c = 0; c < nc; c++)
		{
			best[c] = -1;
			par[c] = -1;
		}
		best[0] = 0;
		for (uint32_t it = 0; it < nc; it++)
		{
			uint32_t	pick = UINT32_MAX;

			for (uint32_t c = 0; c < nc; c++)
				if (!in[c] && (pick == UINT32_MAX || best[c] > best[pick]))
					pick = c;
			in[pick] = 1;
			if (it > 0)
				par[pick] = (int32_t) from[pick];
			for (uint32_t c = 0; c < nc; c++)
				if (!in[c])
				{
					int64_t		s = (int64_t) dp_popcount_and(&K[(uint64_t) pick * w], &K[(uint64_t) c * w], w);

					if (s > best[c])
					{
						best[c] = s;
						from[c] = pick;
					}
				}
		}
		dp_free(best);
	}
	/* preorder from the root: a stack of clique numbers (order) */
	{
		uint32_t	sp = 0;

		order[sp++] = 0;
		while (sp > 0)
		{
			uint32_t	c = order[--sp];

			from[nord++] = c;	/* from: the preorder */
			for (uint32_t x = nc; x-- > 0;)
				if (par[x] == (int32_t) c)
					order[sp++] = x;
		}
	}
	for (uint32_t i = 0; i < nc; i++)
		newid[from[i]] = i;
	t->d = d;
	t->ncliques = nc;
	for (uint32_t i = 0; i < nc; i++)
	{
		dp_jtree_clique *c = &t->cl[i];
		const uint64_t *k = &K[(uint64_t) from[i] * w];
		double		cells = 1;

		for (uint32_t j = 0; j < d; j++)
			if (bit_has(k, j))
			{
				if (c->nattrs == DP_JTREE_MAX_ATTRS)
				{
					rc = 1;
					goto done;
				}
				c->attrs[c->nattrs] = j;
				c->sizes[c->nattrs++] = sizes[j];
				cells *= sizes[j];
			}
		c->ncells = (uint64_t) cells;
		total += cells;
		c->parent = par[from[i]] < 0 ? -1 : (int32_t) newid[par[from[i]]];
		c->sep_cells = 1;
		if (c->parent >= 0)
		{
			const dp_jtree_clique *p = &t->cl[c->parent];	/* numbered before: filled */

			c->depth = p->depth + 1;
			for (uint32_t a = 0, b = 0; a < c->nattrs && b < p->nattrs;)
			{
				if (c->attrs[a] == p->attrs[b])
				{
					c->sep_here[c->nsep] = a;
					c->sep_there[c->nsep++] = b;
					c->sep_cells *= c->sizes[a];
					a++, b++;
				}
				else if (c->attrs[a] < p->attrs[b])
					a++;
				else
					b++;
			}
		}
		total += (double) c->sep_cells;
	}
	if (total > (double) max_cells)
	{
		rc = 1;
		goto done;
	}
	t->cells = (uint64_t) total;

done:
	dp_free(K);
	dp_free(from);
	dp_free(order);
	dp_free(newid);
	dp_free(par);
	if (rc != 0)
		dp_jtree_free(t);
	return rc;
}

int
dp_jtree_build_greedy(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t nfirst, uint32_t d,
					  const uint32_t *sizes, uint64_t max_cells, dp_marg *kept, uint32_t *nkept)
{
	uint32_t	n;
	int			rc;

	memset(t, 0, sizeof(*t));
	*nkept = 0;
	if (nfirst == 0 || nfirst > nmargs)
		return dp_invalid("junction tree: a sub-model must keep between 1 and all of the marginals");
	memcpy(kept, margs, sizeof(dp_marg) * nfirst);
	n = nfirst;
	rc = dp_jtree_build(t, kept, n, d, sizes, max_cells);
	if (rc != 0)
		return rc;
	for (uint32_t k = nfirst; k < nmargs; k++)
	{
		dp_jtree	next;
		bool		inside = false;

		/* inside a clique of the current tree: no new edge, the same tree */
		for (uint32_t i = 0; i < t->ncliques && !inside; i++)
		{
			uint32_t	hits = 0;

			for (uint32_t a = 0; a < margs[k].nattrs; a++)
				for (uint32_t b = 0; b < t->cl[i].nattrs; b++)
					hits += t->cl[i].attrs[b] == margs[k].attrs[a];
			inside = hits == margs[k].nattrs;
		}
		kept[n] = margs[k];
		if (inside)
		{
			n++;
			continue;
		}
		rc = dp_jtree_build(&next, kept, n + 1, d, sizes, max_cells);
		if (rc < 0)
		{
			dp_jtree_free(t);
			return rc;
		}
		if (rc == 0)
		{
			dp_jtree_free(t);
			*t = next;
			n++;
		}
	}
	*nkept = n;
	return 0;
}

/* step[j]: the stride of clique c's position j in the table over its positions pos[0..k), or 0 */
static void
steps_of(const dp_jtree_clique *c, const uint32_t *pos, uint32_t k, uint64_t *step)
{
	uint64_t	s = 1;

	memset(step, 0, sizeof(uint64_t) * c->nattrs);
	for (uint32_t i = k; i-- > 0;)
	{
		step[pos[i]] = s;
		s *= c->sizes[pos[i]];
	}
}

/*
 * The fit's passes over a clique.  A clique's scaling is deferred until the clique's next
 * projection (most often the very next pass: along a path of absorptions, and from an
 * absorption into the visit of the clique's marginal) so that both run in one pass,
 * dp_odo_scale_project, where that pass gives the same bits as the two: the scaling is per cell,
 * and the projection's sums are those of dp_odo_project alone when its innermost block, in the
 * walk over the clique with both tables, is the one dp_odo_project walks (jt_same_sums).  Else,
 * and before any other scaling, the deferred one runs alone.
 */
typedef struct jt_pass
{
	dp_jtree_clique *c;			/* the clique whose scaling is deferred, or NULL */
	uint64_t	step[DP_ODO_MAX_COLS];	/* the factors' strides over c's columns */
	const double *f;			/* the factors (kept unchanged until the scaling runs) */
	bool		fuse;			/* false: every scaling runs at once (the unit tests' reference) */
} jt_pass;

#ifdef DPSYNTH_TEST_RNG
static bool jt_test_no_fuse = false;	/* dp_jtree.h's seam */

void
dp_jtree_test_no_fuse(bool on)
{
	jt_test_no_fuse = on;
}
#define JT_FUSE (!jt_test_no_fuse)
#else
#define JT_FUSE true
#endif

bool
dp_jtree_same_sums(const dp_odo_runs *both, const dp_odo_runs *alone)
{
	/* a projection that adds cell by cell (a stride) adds in cell order either way; one whose
	 * innermost block sums into one cell adds the same blocks' sums when the blocks are alike */
	return alone->istep[0] != 0 || (both->istep[1] == 0 && both->inner == alone->inner);
}

static void
jt_flush(jt_pass *ps)
{
	if (ps->c)
	{
		dp_odo_runs r;

		dp_odo_runs_init(&r, ps->c->nattrs, ps->c->sizes, ps->step, NULL);
		dp_jtree_walk(&r, DP_ODO_SCALE, ps->c->P, ps->f, NULL);
		ps->c = NULL;
	}
}

/* c's sums over its positions pos[0..k) into out (cells of them), c's deferred scaling first */
static void
jt_project(jt_pass *ps, dp_jtree_clique *c, const uint32_t *pos, uint32_t k, double *out, uint64_t cells)
{
	uint64_t	sb[DP_ODO_MAX_COLS];
	dp_odo_runs alone;

	steps_of(c, pos, k, sb);
	dp_odo_runs_init(&alone, c->nattrs, c->sizes, sb, NULL);
	if (ps->c == c && ps->f != out)
	{
		dp_odo_runs both;

		dp_odo_runs_init(&both, c->nattrs, c->sizes, ps->step, sb);
		if (dp_jtree_same_sums(&both, &alone))
		{
			memset(out, 0, sizeof(double) * cells);
			dp_jtree_walk(&both, DP_ODO_SCALE_PROJECT, c->P, ps->f, out);
			ps->c = NULL;
			return;
		}
	}
	if (ps->c != NULL && (ps->c == c || ps->f == out))
		jt_flush(ps);			/* before out is zeroed: out may hold the factors */
	memset(out, 0, sizeof(double) * cells);
	dp_jtree_walk(&alone, DP_ODO_PROJECT, c->P, NULL, out);
}

/* c's cells times f's, f over c's positions pos[0..k): deferred (f must stay unchanged until then) */
static void
jt_scale(jt_pass *ps, dp_jtree_clique *c, const uint32_t *pos, uint32_t k, const double *f)
{
	jt_flush(ps);
	ps->c = c;
	steps_of(c, pos, k, ps->step);
	ps->f = f;
	if (!ps->fuse)
		jt_flush(ps);
}

/*
 * Clique i and its parent: the parent absorbs i's news (up) or i its parent's.  The separator's
 * factors go to bufs[*which] (sep_cells), the other buffer of the last absorption's (whose
 * factors a deferred scaling may still read).
 */
static void
absorb(dp_jtree *t, uint32_t i, bool up, jt_pass *ps, double *const *bufs, int *which)
{
	dp_jtree_clique *c = &t->cl[i],
			   *p = &t->cl[c->parent];
	double	   *buf = bufs[*which];

	*which = 1 - *which;
	jt_project(ps, up ? c : p, up ? c->sep_here : c->sep_there, c->nsep, buf, c->sep_cells);
	for (uint64_t q = 0; q < c->sep_cells; q++)
	{
		double		f = c->S[q] > 0 ? buf[q] / c->S[q] : 0;

		c->S[q] = buf[q];
		buf[q] = f;
	}
	jt_scale(ps, up ? p : c, up ? c->sep_there : c->sep_here, c->nsep, buf);
}

/* Brings clique b up to date from a, the one that is (every message flows toward a). */
static void
move(dp_jtree *t, uint32_t a, uint32_t b, uint32_t *down, jt_pass *ps, double *const *bufs, int *which)
{
	uint32_t	nd = 0;

	while (a != b)
	{
		if (t->cl[a].depth >= t->cl[b].depth)
		{
			absorb(t, a, true, ps, bufs, which);
			a = (uint32_t) t->cl[a].parent;
		}
		else
		{
			down[nd++] = b;
			b = (uint32_t) t->cl[b].parent;
		}
	}
	while (nd > 0)
		absorb(t, down[--nd], false, ps, bufs, which);
}

/* The positions of m's attributes in clique c's, or false when c does not hold them all. */
static bool
positions(const dp_jtree_clique *c, const dp_marg *m, uint32_t *pos)
{
	uint32_t	b = 0;

	for (uint32_t a = 0; a < m->nattrs; a++)
	{
		while (b < c->nattrs && c->attrs[b] < m->attrs[a])
			b++;
		if (b == c->nattrs || c->attrs[b] != m->attrs[a])
			return false;
		pos[a] = b;
	}
	return true;
}

/* The smallest clique holding m, or UINT32_MAX */
static uint32_t
home_of(const dp_jtree *t, const dp_marg *m)
{
	uint32_t	home = UINT32_MAX,
				pos[DP_MARG_MAX_ATTRS];

	for (uint32_t i = 0; i < t->ncliques; i++)
		if (positions(&t->cl[i], m, pos) && (home == UINT32_MAX || t->cl[i].ncells < t->cl[home].ncells))
			home = i;
	return home;
}

uint32_t
dp_jtree_sweeps(const dp_jtree *t, const dp_marg *margs, uint32_t nmargs)
{
	/* a sweep: each marginal's clique twice at most (once when the next shares it), each clique about
	 * three times per edge walked */
	double		cost = 6.0 * (double) t->cells;
	double		s;

	for (uint32_t k = 0; k < nmargs; k++)
	{
		uint32_t	h = home_of(t, &margs[k]);

		if (h != UINT32_MAX)
			cost += 2.0 * (double) t->cl[h].ncells;
	}
	s = DP_MAXENT_WORK / (cost > 1 ? cost : 1);
	return s >= DP_MAXENT_MAX_SWEEPS ? DP_MAXENT_MAX_SWEEPS :
		s <= DP_MAXENT_MIN_SWEEPS ? DP_MAXENT_MIN_SWEEPS : (uint32_t) s;
}

int
dp_jtree_fit(dp_jtree *t, const dp_marg *margs, uint32_t nmargs, uint32_t max_sweeps, double tol,
			 dp_progress_fn progress, void *progress_arg)
{
	uint32_t   *home = NULL,
			   *visit = NULL,
			   *down = NULL,
			   *pos = NULL;
	double	   *cur = NULL,
			   *nxt = NULL,
			   *bufs[2] = {NULL, NULL};
	jt_pass		ps = {.c = NULL, .fuse = JT_FUSE};
	int			which = 0;
	bool		ahead = false;	/* cur holds the projection of the next visit's marginal */
	uint64_t	maxm = 1,
				maxs = 1;
	uint32_t	at = 0,
				sweep = 0;
	double		prev = 0;
	int			rc;

	if (!t->cl || t->ncliques == 0 || nmargs == 0 || max_sweeps == 0)
		return dp_invalid("junction tree: no tree, no marginal, or no sweep");
	t->fitted = false;
	home = dp_alloc(sizeof(uint32_t) * nmargs);
	visit = dp_alloc(sizeof(uint32_t) * nmargs);
	pos = dp_alloc(sizeof(uint32_t) * nmargs * DP_MARG_MAX_ATTRS);
	down = dp_alloc(sizeof(uint32_t) * t->ncliques);
	if (!home || !visit || !pos || !down)
	{
		rc = dp_nomem("could not allocate the junction tree's fit");
		goto done;
	}
	for (uint32_t k = 0; k < nmargs; k++)
	{
		const dp_marg *m = &margs[k];
		double		p = 0;

		home[k] = m->nattrs >= 1 && m->nattrs <= DP_MARG_MAX_ATTRS ? home_of(t, m) : UINT32_MAX;
		if (home[k] == UINT32_MAX)
		{
			rc = dp_invalid("junction tree: a marginal lies in no clique");
			goto done;
		}
		positions(&t->cl[home[k]], m, &pos[k * DP_MARG_MAX_ATTRS]);
		for (uint64_t q = 0; q < m->ncells; q++)
			p += m->cells[q] > 0 ? m->cells[q] : 0;
		if (!(p > 0) || !isfinite(p))
		{
			rc = dp_invalid("junction tree: a marginal has no positive cell");
			goto done;
		}
		if (m->ncells > maxm)
			maxm = m->ncells;
	}
	/* the visits in the preorder of the marginals' cliques (stable) */
	{
		uint32_t	n = 0;

		for (uint32_t i = 0; i < t->ncliques; i++)
			for (uint32_t k = 0; k < nmargs; k++)
				if (home[k] == i)
					visit[n++] = k;
	}
	for (uint32_t i = 0; i < t->ncliques; i++)
	{
		dp_jtree_clique *c = &t->cl[i];

		if (c->sep_cells > maxs)
			maxs = c->sep_cells;
		if (!c->P)
			c->P = dp_alloc(sizeof(double) * c->ncells);
		if (!c->S)
			c->S = dp_alloc(sizeof(double) * c->sep_cells);
		if (!c->P || !c->S)
		{
			rc = dp_nomem("could not allocate the junction tree's potentials");
			goto done;
		}
		/* the uniform joint: every clique's and separator's marginal uniform */
		for (uint64_t q = 0; q < c->ncells; q++)
			c->P[q] = 1.0 / (double) c->ncells;
		for (uint64_t q = 0; q < c->sep_cells; q++)
			c->S[q] = 1.0 / (double) c->sep_cells;
	}
	cur = dp_alloc(sizeof(double) * maxm);
	nxt = dp_alloc(sizeof(double) * maxm);
	bufs[0] = dp_alloc(sizeof(double) * maxs);
	bufs[1] = dp_alloc(sizeof(double) * maxs);
	if (!cur || !nxt || !bufs[0] || !bufs[1])
	{
		rc = dp_nomem("could not allocate the junction tree's fit");
		goto done;
	}
	for (sweep = 0; sweep < max_sweeps; sweep++)
	{
		double		worst = 0;

		for (uint32_t v = 0; v < nmargs; v++)
		{
			uint32_t	k = visit[v];
			const dp_marg *m = &margs[k];
			dp_jtree_clique *c = &t->cl[home[k]];
			double		tsum = 0,
						csum = 0,
						l1 = 0;

			if (!ahead)
			{
				move(t, at, home[k], down, &ps, bufs, &which);
				at = home[k];
				jt_project(&ps, c, &pos[k * DP_MARG_MAX_ATTRS], m->nattrs, cur, m->ncells);
			}
			for (uint64_t q = 0; q < m->ncells; q++)
			{
				tsum += m->cells[q] > 0 ? m->cells[q] : 0;
				csum += cur[q];
			}
			for (uint64_t q = 0; q < m->ncells; q++)
			{
				double		tq = (m->cells[q] > 0 ? m->cells[q] : 0) / tsum;

				l1 += fabs(cur[q] / csum - tq);
				cur[q] = cur[q] > 0 ? tq / cur[q] : 0;
			}
			if (!(l1 <= worst))
				worst = l1;		/* NaN too */
			/* the next marginal homed here: its projection in the same pass as this scaling */
			ahead = v + 1 < nmargs && home[visit[v + 1]] == home[k];
			if (ahead)
			{
				uint32_t	kn = visit[v + 1];
				uint64_t	sa[DP_ODO_MAX_COLS],
							sb[DP_ODO_MAX_COLS];
				double	   *swap = cur;

				steps_of(c, &pos[k * DP_MARG_MAX_ATTRS], m->nattrs, sa);
				steps_of(c, &pos[kn * DP_MARG_MAX_ATTRS], margs[kn].nattrs, sb);
				jt_flush(&ps);	/* none is deferred here: the visit's projection took it */
				dp_odo_scale_next(c->nattrs, c->sizes, sa, sb, c->P, cur, nxt, margs[kn].ncells);
				cur = nxt;
				nxt = swap;
			}
			else				/* with the next pass over c: the move's first, or a visit's */
				jt_scale(&ps, c, &pos[k * DP_MARG_MAX_ATTRS], m->nattrs, cur);
			if (dp_report(progress, progress_arg, DP_PHASE_GUM, sweep, max_sweeps, -1) != 0)
			{
				rc = -1;
				goto done;
			}
		}
		if (worst <= tol)
			break;
		/* stalled: noisy marginals that admit no joint table (see dp_jtree.h) */
		if (sweep > 0 && worst > (1.0 - DP_JTREE_STALL) * prev)
			break;
		prev = worst;
	}
	/* every clique up to date: collect to the root, then distribute in preorder */
	move(t, at, 0, down, &ps, bufs, &which);
	for (uint32_t i = 1; i < t->ncliques; i++)
		absorb(t, i, false, &ps, bufs, &which);
	jt_flush(&ps);
	{
		double		mass = 0;

		for (uint64_t q = 0; q < t->cl[0].ncells; q++)
			mass += t->cl[0].P[q];
		rc = !(mass > 0) || !isfinite(mass) ? 0 :
			(int) (sweep < max_sweeps ? sweep + 1 : max_sweeps);
		t->fitted = rc > 0;
	}

done:
	dp_free(home);
	dp_free(visit);
	dp_free(pos);
	dp_free(down);
	dp_free(cur);
	dp_free(nxt);
	dp_free(bufs[0]);
	dp_free(bufs[1]);
	return rc;
}

/*
 * Draws rows [base, base + n) of out (present, zeroed) from the fitted tree, clique by clique in
 * preorder (dp_jtree_draw's rule); key and order have room for n values, start for the largest
 * separator's cells + 1.  *placed counts the rows placed (the heartbeat's clock).  Returns 0, or
 * -1 if progress asked to stop.
 */
static int
draw_rows(const dp_jtree *t, uint64_t n, uint64_t base, dp_prng *rng, dp_codes *out, uint32_t *key,
		  uint32_t *order, uint32_t *start, uint64_t *placed_io, dp_progress_fn progress,
		  void *progress_arg)
{
	uint64_t	placed = *placed_io;

	for (uint32_t i = 0; i < t->ncliques; i++)
	{
		const dp_jtree_clique *c = &t->cl[i];
		uint64_t	stride[DP_JTREE_MAX_ATTRS];
		uint32_t	newpos[DP_JTREE_MAX_ATTRS],
					newsizes[DP_JTREE_MAX_ATTRS],
					nnew = 0;

		stride[c->nattrs - 1] = 1;
		for (uint32_t a = c->nattrs - 1; a-- > 0;)
			stride[a] = stride[a + 1] * c->sizes[a + 1];
		for (uint32_t a = 0, s = 0; a < c->nattrs; a++)
		{
			if (s < c->nsep && c->sep_here[s] == a)
				s++;
			else
			{
				newpos[nnew] = a;
				newsizes[nnew++] = c->sizes[a];
			}
		}
		if (nnew == 0)
			continue;			/* nothing new (not for a maximal clique) */
		/* the rows grouped by their separator's cell (counting sort), each group shuffled */
		memset(start, 0, sizeof(uint32_t) * (c->sep_cells + 1));
		/*
		 * The keys column by column (loops that vectorise); uint32 is exact: every partial key
		 * is below sep_cells < 2^32
		 */
		memset(key, 0, sizeof(uint32_t) * (size_t) n);
		for (uint32_t q = 0; q < c->nsep; q++)
		{
			const uint16_t *restrict cq = out->col[c->attrs[c->sep_here[q]]] + base;
			const uint32_t zq = c->sizes[c->sep_here[q]];
			uint32_t   *restrict kr = key;

			for (uint64_t r = 0; r < n; r++)
				kr[r] = kr[r] * zq + cq[r];
		}
		for (uint64_t r = 0; r < n; r++)
			start[key[r] + 1]++;
		for (uint64_t s = 0; s < c->sep_cells; s++)
			start[s + 1] += start[s];
		for (uint64_t r = 0; r < n; r++)
			order[start[key[r]]++] = (uint32_t) r;
		/* start[s] is now the end of group s */
		for (uint64_t s = 0, lo = 0; s < c->sep_cells; lo = start[s], s++)
		{
			uint64_t	hi = start[s],
						m = hi - lo,
						cellbase = 0,
						done = 0;
			double		tot = 0,
						run = 0,
						u;
			int64_t		prev = 0;
			uint64_t	last = 0,
						nnewcells = 0,
						j;
			dp_odo		o;

			if (m == 0)
				continue;
			dp_prng_shuffle_u32(rng, order + lo, m);
			for (uint32_t q = 0; q < c->nsep; q++)
				cellbase += stride[c->sep_here[q]] * out->col[c->attrs[c->sep_here[q]]][base + order[lo]];
			dp_odo_start(&o, nnew, newsizes);
			for (uint32_t a = 0; a < nnew; a++)
				o.step[a] = stride[newpos[a]];
			nnewcells = c->ncells / c->sep_cells;
			for (j = 0; j < nnewcells; j++, dp_odo_next(&o))
			{
				double		p = c->P[cellbase + o.idx];

				if (p > 0)
				{
					tot += p;
					last = j;
				}
			}
			u = dp_prng_unit(rng);
			dp_odo_start(&o, nnew, newsizes);
			for (uint32_t a = 0; a < nnew; a++)
				o.step[a] = stride[newpos[a]];
			for (j = 0; j < nnewcells && done < m; j++, dp_odo_next(&o))
			{
				double		p = c->P[cellbase + o.idx];
				int64_t		now;
				uint64_t	take;

				/* no mass on this separator cell (numerically): uniform over the new cells */
				run += tot > 0 ? (p > 0 ? p : 0) / tot * (double) m : (double) m / (double) nnewcells;
				now = (int64_t) floor(run + u);
				if (now > (int64_t) m || (tot > 0 && j == last) || j == nnewcells - 1)
					now = (int64_t) m;
				take = now > prev ? (uint64_t) (now - prev) : 0;
				if (take > m - done)
					take = m - done;
				for (uint64_t x = 0; x < take; x++, done++, placed++)
				{
					uint32_t	r = order[lo + done];

					for (uint32_t a = 0; a < nnew; a++)
						out->col[c->attrs[newpos[a]]][base + r] = (uint16_t) o.code[a];
					if ((placed & 0xFFFF) == 0xFFFF && dp_report(progress, progress_arg, DP_PHASE_GUM, 0, 0, -1) != 0)
					{
						*placed_io = placed;
						return -1;
					}
				}
				if (now > prev)
					prev = now;
			}
		}
	}
	*placed_io = placed;
	return 0;
}

/* one chunk of dp_jtree_draw_chunked, on a thread of its own (no handler, no callback) */
typedef struct chunk_job
{
	const dp_jtree *t;
	dp_codes   *out;
	uint64_t	base,
				n,
				seed;
	uint32_t   *key,
			   *order,
			   *start;
} chunk_job;

static void *
chunk_worker(void *arg)
{
	chunk_job  *j = arg;
	dp_prng		r;
	uint64_t	placed = 0;

	if (j->n > 0)
	{
		/* the chunk's rows zeroed here, not before the chunks: each thread touches its own
		 * rows' fresh pages first */
		for (uint32_t c = 0; c < j->t->d; c++)
			memset(j->out->col[c] + j->base, 0, sizeof(uint16_t) * (size_t) j->n);
		dp_prng_seed(&r, j->seed);
		(void) draw_rows(j->t, j->n, j->base, &r, j->out, j->key, j->order, j->start, &placed, NULL, NULL);
	}
	return NULL;
}

int
dp_jtree_draw(const dp_jtree *t, uint64_t n, dp_prng *rng, dp_codes *out,
			  dp_progress_fn progress, void *progress_arg)
{
	return dp_jtree_draw_chunked(t, n, 0, rng, out, progress, progress_arg);
}

int
dp_jtree_draw_chunked(const dp_jtree *t, uint64_t n, uint64_t chunk, dp_prng *rng, dp_codes *out,
					  dp_progress_fn progress, void *progress_arg)
{
	chunk_job	jobs[DP_MAX_THREADS];
	uint64_t   *seeds = NULL,
				nchunks = 1,
				rows = n;
	uint32_t	T = 1;
	uint64_t	base = out->nrows,
				placed = 0,
				maxs = 1;
	uint32_t   *key = NULL,
			   *order = NULL,
			   *start = NULL;
	uint16_t   *row = NULL;
	int			rc = 0;

	if (!t->cl || t->ncliques == 0 || n >= ((uint64_t) 1 << 32) || out->ncols != t->d)
		return dp_invalid("junction tree: a draw of too many rows, or from a tree it cannot hold");
	if (!t->fitted)
		return dp_invalid("junction tree: a draw from a tree not fitted, or with no distribution");
	for (uint32_t i = 0; i < t->ncliques; i++)
	{
		/* the rows' separator cells are kept as uint32 */
		if (t->cl[i].sep_cells >= ((uint64_t) 1 << 32))
			return dp_invalid("junction tree: a separator of 2^32 cells or more");
		for (uint32_t a = 0; a < t->cl[i].nattrs; a++)
			if (t->cl[i].sizes[a] > 65536)
				return dp_invalid("junction tree: a column of more than 65,536 codes");
		if (t->cl[i].sep_cells > maxs)
			maxs = t->cl[i].sep_cells;
	}
	if (n == 0)
		return 0;
	if (chunk > 0 && chunk < n)
	{
		nchunks = (n + chunk - 1) / chunk;
		rows = chunk;
		T = dp_threads();
		if (T > nchunks)
			T = (uint32_t) nchunks;
		if (T > DP_MAX_THREADS)
			T = DP_MAX_THREADS;
	}
	memset(jobs, 0, sizeof(jobs));
	row = dp_alloc(sizeof(uint16_t) * t->d);
	key = dp_alloc(sizeof(uint32_t) * rows * T);
	order = dp_alloc(sizeof(uint32_t) * rows * T);
	start = dp_alloc(sizeof(uint32_t) * (maxs + 1) * T);
	seeds = nchunks > 1 ? dp_alloc(sizeof(uint64_t) * nchunks) : NULL;
	if (!row || !key || !order || !start || (nchunks > 1 && !seeds))
	{
		rc = dp_nomem("could not allocate the junction tree's draw");
		goto done;
	}
	memset(row, 0, sizeof(uint16_t) * t->d);
	if (out->cap - out->nrows >= n)
	{
		/* room already (the usual case: out made for n rows): the new rows zeroed in place,
		 * by each chunk's thread when drawn in chunks (chunk_worker) */
		if (nchunks == 1)
			for (uint32_t j = 0; j < t->d; j++)
				memset(out->col[j] + base, 0, sizeof(uint16_t) * (size_t) n);
		out->nrows += n;
	}
	else
		for (uint64_t r = 0; r < n; r++)
			if (dp_codes_append(out, row) != 0)
			{
				rc = -2;		/* dp_codes_append said why */
				goto done;
			}
	if (nchunks == 1)
		rc = draw_rows(t, n, base, rng, out, key, order, start, &placed, progress, progress_arg);
	else
	{
		/*
		 * Each chunk of `chunk` consecutive rows is drawn alone, from a generator seeded by one
		 * output of rng (taken in chunk order before any is drawn): the rows depend on the
		 * chunk size, not on the threads.  T chunks at a time, a heartbeat between.
		 */
		for (uint64_t i = 0; i < nchunks; i++)
			seeds[i] = dp_prng_next(rng);
		for (uint32_t w = 0; w < T; w++)
		{
			jobs[w].t = t;
			jobs[w].out = out;
			jobs[w].key = key + (size_t) w * rows;
			jobs[w].order = order + (size_t) w * rows;
			jobs[w].start = start + (size_t) w * (maxs + 1);
		}
		for (uint64_t i0 = 0; i0 < nchunks && rc == 0; i0 += T)
		{
			uint32_t	nj = nchunks - i0 < T ? (uint32_t) (nchunks - i0) : T;

			for (uint32_t w = 0; w < nj; w++)
			{
				uint64_t	lo = (i0 + w) * chunk;

				jobs[w].base = base + lo;
				jobs[w].n = n - lo < chunk ? n - lo : chunk;
				jobs[w].seed = seeds[i0 + w];
			}
			dp_run_parallel(chunk_worker, jobs, sizeof(chunk_job), nj);
			if (dp_report(progress, progress_arg, DP_PHASE_GUM, 0, 0, -1) != 0)
				rc = -1;
		}
	}
done:
	dp_free(seeds);
	dp_free(row);
	dp_free(key);
	dp_free(order);
	dp_free(start);
	return rc;
}
