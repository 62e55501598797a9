/*
 * dp_gum.c - GUM, PrivSyn's gradually update method (see dp_gum.h for the algorithm).
 *
 * Data structures.  The synthetic table is `out` itself (column-major uint16 codes), or, while
 * the iterations run, 8-bit copies of the iterated marginals' columns when every one has at most
 * 256 codes (half the memory traffic; see dp_gum_kernels.h).  Every iterated marginal keeps its
 * current integer cell counts, updated incrementally whenever a row changes (the old and new cell
 * of every marginal that touches a changed column), so the errors that order the visits cost
 * O(cells), not O(n).
 *
 * A visit of marginal M must pick rows uniformly inside cells.  Rather than sorting or bucketing
 * the rows by cell (O(n) memory per marginal to maintain, or O(n log n) per visit), a visit first
 * decides, from the known cell counts, WHICH ordinals it wants in each cell: for an over-full cell
 * that loses k of its c rows, k distinct ordinals of [0, c) drawn uniformly and sorted; for an
 * under-full cell that duplicates d rows, d ordinals drawn with replacement, sorted.  One
 * sequential pass over the rows then computes each row's cell of M (column by column over blocks
 * of rows, which vectorises), counts the rows seen per cell, and records a row when its ordinal in
 * its cell is the next wanted one.  The pass stops as soon as every wanted row is found.
 *
 * Parts and threads.  The rows are cut into `threads` parts of consecutive rows, and every
 * marginal counts each part's rows separately.  A row change touches only its own part's counts,
 * so this costs nothing more, and it makes a visit parallel without changing its result: the
 * ordinals of a cell count its rows in row order, so a wanted ordinal falls in a known part, and
 * each part's thread finds its own rows; then each part's thread carries out the moves whose
 * destination row lies in its part (moves are independent: distinct destinations, and sources in
 * under-full cells, which lose no row).  No counter or row is written by two threads, no
 * randomness is drawn while they run, and the rows are the same whatever the number of threads
 * (unit-tested).  Threads live for one pass and block every signal (dp_run_parallel, dp_parallel.c).
 *
 * Measured (gcc 12 -O2, the 2-core VM; bench/gum_bench.c: Adult tiled to 1,000,000 rows, epsilon
 * 1, 75 selected marginals, 45,827 cells): row changes were ~65% of the time and the pass ~15%,
 * both memory-bound.  Changing rows in batches and then moving each marginal's counts over the
 * whole batch (the counts stay in L1; see run_moves), prefetching the rows of moves ahead, 8-bit
 * working columns and a radix sort of the wanted ordinals took one iteration from ~0.49 s to
 * 0.27-0.29 s on one thread, 0.18-0.20 s on two (bench/gum.sh, bench/RESULTS.md; the VM's two
 * vCPUs share much, so two threads give 1.3-1.5x, not 2x).
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
 * The codes are the same whatever the layout, and so are the rows.  Measured on the wide table's
 * final GUM (600,000 rows, 243 iterated marginals in two components of 42 and 37 columns, replayed
 * from its inputs): 8 iterations on one thread 35.5 s -> 19-21 s, all 60 on one thread 154 s ->
 * 91 s, 20 on two threads 58 s -> 28 s; the estimates' GUMs of its adaptive rounds (8,192 rows)
 * about 22 s -> 17 s in all (a loaded 2-core VM: the times vary by 10-20%).
 */
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
#define GUM_BISECT		60		/* bisection steps for beta */
#define GUM_PAR_MIN_ROWS 65536	/* a table smaller than this is one part */
#define GUM_MOVE_CHUNK	(1u << 15)	/* moves between two heartbeats (~10-20 ms) */
#define GUM_PREFETCH	16		/* moves ahead whose rows are prefetched */
#define GUM_PREFETCH_MIN_BYTES (1u << 20)	/* ... when the working table is larger than this */
#define GUM_LAZY_MARGIN 1.5		/* lazy counting only where it saves a third at least */
#define GUM_GROUP_MIN_COLS 24	/* grouped layout: components of this many columns at least */
#define GUM_GROUP_MAX_BYTES 32	/* ... in groups of at most this many columns (bytes to a row) */

#define CELL_EQ		0
#define CELL_UNDER	1			/* target above current count */
#define CELL_OVER	2			/* current count above target */

typedef struct gmarg
{
	uint32_t	nattrs;
	uint32_t	attrs[DP_MARG_MAX_ATTRS];
	uint32_t	sizes[DP_MARG_MAX_ATTRS];
	uint32_t	strides[DP_MARG_MAX_ATTRS];
	uint32_t	ncells;
	uint32_t	comp;			/* connected component of the core graph */
	double	   *tgt;			/* target counts, scaled to n */
	uint32_t   *cnt[DP_GUM_MAX_THREADS];	/* current counts of the rows of part p */
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
	uint32_t	pb[DP_GUM_MAX_THREADS + 1];
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
	/* per part: pairs per cell (rows seen so far, next wanted ordinal), wanted range per cell */
	uint32_t   *pseen[DP_GUM_MAX_THREADS],
			   *pwbeg[DP_GUM_MAX_THREADS],
			   *pwend[DP_GUM_MAX_THREADS];
	uint64_t	pwanted[DP_GUM_MAX_THREADS];
	/* the visit's moves: move i sends row want[i] to cell mvarg[i] (replace) or overwrites it
	 * with a copy of row mvarg[i] (mvdup[i]); mvpart[p] lists the moves whose row is in part p */
	uint32_t   *mvarg;			/* n; before the moves are listed, the sampling's sort scratch */
	uint8_t    *mvdup;
	uint32_t   *mvpart[DP_GUM_MAX_THREADS];
	uint32_t	nmvpart[DP_GUM_MAX_THREADS];
	/*
	 * Per part, a batch of row changes (see run_moves): old and new codes of the component's
	 * columns, column c at [c * batch ...), for duplicates (bd*) and replaces (br*); and the old
	 * and new cells of one marginal (bio, bin).
	 */
	uint32_t	batch;
	uint16_t   *bdold[DP_GUM_MAX_THREADS],
			   *bdnew[DP_GUM_MAX_THREADS],
			   *brold[DP_GUM_MAX_THREADS],
			   *brnew[DP_GUM_MAX_THREADS];
	uint32_t   *bio[DP_GUM_MAX_THREADS],
			   *bin[DP_GUM_MAX_THREADS];
	/* per part, lazy counting's moves of one chunk: duplicates (row, source), replaces (row, cell) */
	uint32_t   *lzdrow[DP_GUM_MAX_THREADS],
			   *lzdsrc[DP_GUM_MAX_THREADS],
			   *lzrrow[DP_GUM_MAX_THREADS],
			   *lzrcell[DP_GUM_MAX_THREADS];
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

	/* every allocation, freed at the end */
	void	  **allocs;
	size_t		nallocs,
				capallocs;
} gum;

/* ---------- memory (the installed handlers, dp_env.h; calling thread only) ---------- */

static void *
gnomem(size_t size)
{
	dp_fail(DP_ERR_NOMEM, "could not allocate %zu bytes of GUM's work memory", size);
	return NULL;
}

static void *
galloc(gum *g, size_t size)
{
	void	   *p;

	if (size == 0)
		size = 1;
	if (g->nallocs == g->capallocs)
	{
		size_t		cap = g->capallocs ? 2 * g->capallocs : 64;
		void	  **a = dp_alloc(cap * sizeof(void *));

		if (a == NULL)
			return gnomem(size);
		if (g->allocs)
		{
			memcpy(a, g->allocs, g->nallocs * sizeof(void *));
			dp_free(g->allocs);
		}
		g->allocs = a;
		g->capallocs = cap;
	}
	p = dp_alloc(size);
	if (p == NULL)
		return gnomem(size);
	g->allocs[g->nallocs++] = p;
	return p;
}

static void *
gcalloc(gum *g, size_t count, size_t size)
{
	void	   *p;

	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	p = galloc(g, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

static void
gfree_all(gum *g)
{
	for (size_t i = 0; i < g->nallocs; i++)
		dp_free(g->allocs[i]);
	if (g->allocs)
		dp_free(g->allocs);
	g->allocs = NULL;
	g->nallocs = g->capallocs = 0;
}

/* Frees one block of galloc's before the run ends (the last one allocated is found first). */
static void
gfree(gum *g, void *p)
{
	for (size_t i = g->nallocs; p != NULL && i-- > 0;)
		if (g->allocs[i] == p)
		{
			dp_free(p);
			g->allocs[i] = g->allocs[--g->nallocs];
			return;
		}
}

/* ---------- small helpers ---------- */

typedef struct frac_idx
{
	double		frac;
	uint32_t	idx;
} frac_idx;

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

/*
 * Cumulative rounding of x[0..m) (x >= 0) scaled to sum to total: out[k] is floor or ceil of the
 * scaled x[k], zero where x[k] is zero, and sum(out) == total exactly.  With cap (may be NULL),
 * out[k] <= cap[k] is enforced, moving any excess to other cells with x > 0 and room (if the caps
 * allow less than total, the sum falls short).  Returns sum(out).  O(m), deterministic.
 */
static uint64_t
cum_round(const double *x, uint32_t m, uint64_t total, const uint32_t *cap, uint32_t *out)
{
	double		s = 0,
				scale,
				cum = 0;
	uint64_t	prev = 0,
				excess = 0;
	uint32_t	kmax = 0;

	for (uint32_t k = 0; k < m; k++)
	{
		s += x[k];
		if (x[k] > x[kmax])
			kmax = k;
	}
	if (s <= 0 || total == 0)
	{
		memset(out, 0, sizeof(uint32_t) * m);
		return 0;
	}
	scale = (double) total / s;
	for (uint32_t k = 0; k < m; k++)
	{
		uint64_t	r;

		cum += x[k] * scale;
		r = (uint64_t) floor(cum + 0.5);
		if (r > total)
			r = total;
		if (r < prev)
			r = prev;
		out[k] = (uint32_t) (r - prev);
		prev = r;
	}
	out[kmax] += (uint32_t) (total - prev);	/* floating-point shortfall, if any */
	if (cap == NULL)
		return total;
	for (uint32_t k = 0; k < m; k++)
		if (out[k] > cap[k])
		{
			excess += out[k] - cap[k];
			out[k] = cap[k];
		}
	for (uint32_t k = 0; k < m && excess > 0; k++)
		if (x[k] > 0 && out[k] < cap[k])
		{
			uint64_t	room = cap[k] - out[k],
						add = room < excess ? room : excess;

			out[k] += (uint32_t) add;
			excess -= add;
		}
	return total - excess;
}

/*
 * Sorts a[0..m) ascending: insertion sort for a few values, else an LSD radix sort on bytes (as
 * many passes as the largest value needs: two for cells of up to 65,536 rows) through tmp (room
 * for m values).
 */
static void
sort_u32(uint32_t *a, uint32_t m, uint32_t *tmp)
{
	uint32_t	maxv = 0,
				count[256];
	uint32_t   *src = a,
			   *dst = tmp;

	if (m < 32)
	{
		for (uint32_t i = 1; i < m; i++)
		{
			uint32_t	v = a[i],
						j = i;

			for (; j > 0 && a[j - 1] > v; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	for (uint32_t i = 0; i < m; i++)
		if (a[i] > maxv)
			maxv = a[i];
	for (uint32_t shift = 0; shift < 32 && (maxv >> shift) != 0; shift += 8)
	{
		uint32_t	sum = 0,
				   *t;

		memset(count, 0, sizeof(count));
		for (uint32_t i = 0; i < m; i++)
			count[(src[i] >> shift) & 255]++;
		for (uint32_t d = 0; d < 256; d++)
		{
			uint32_t	c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < m; i++)
			dst[count[(src[i] >> shift) & 255]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, sizeof(uint32_t) * m);
}

/* m distinct sorted values of [0, n), uniformly (m <= n); tmp: room for m values. */
static void
sample_distinct_sorted(dp_prng *rng, uint32_t n, uint32_t m, uint32_t *dst, uint32_t *tmp)
{
	uint32_t	have = 0;

	if (m == 0)
		return;
	if ((uint64_t) m * 4 >= n)
	{
		/* selection sampling (Knuth's Algorithm S): O(n) = O(m) here */
		for (uint32_t i = 0; i < n && have < m; i++)
			if (dp_prng_below(rng, n - i) < m - have)
				dst[have++] = i;
		return;
	}
	/* sparse: draw, sort, drop repeats, draw the missing ones again */
	while (have < m)
	{
		uint32_t	j = 0;

		for (uint32_t i = have; i < m; i++)
			dst[i] = (uint32_t) dp_prng_below(rng, n);
		sort_u32(dst, m, tmp);
		for (uint32_t i = 0; i < m; i++)
			if (j == 0 || dst[i] != dst[j - 1])
				dst[j++] = dst[i];
		have = j;
	}
}

/* m sorted values of [0, n) drawn with replacement; tmp: room for m values. */
static void
sample_sorted(dp_prng *rng, uint32_t n, uint32_t m, uint32_t *dst, uint32_t *tmp)
{
	for (uint32_t i = 0; i < m; i++)
		dst[i] = (uint32_t) dp_prng_below(rng, n);
	sort_u32(dst, m, tmp);
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

/* tot[k] = the count of cell k over all parts */
static void
total_counts(const gum *g, const gmarg *m, uint32_t *tot)
{
	memcpy(tot, m->cnt[0], sizeof(uint32_t) * m->ncells);
	for (uint32_t p = 1; p < g->nparts; p++)
		for (uint32_t k = 0; k < m->ncells; k++)
			tot[k] += m->cnt[p][k];
}

static double
marg_error(gum *g, const gmarg *m)
{
	double		s = 0;

	total_counts(g, m, g->tot);
	for (uint32_t k = 0; k < m->ncells; k++)
		s += fabs((double) g->tot[k] - m->tgt[k]);
	return s / (double) g->n;
}

/* ---------- finding the wanted rows: one pass over each part ---------- */

typedef struct scanner
{
	gum		   *g;
	const gmarg *m;
	uint32_t	part;
	uint64_t	left;			/* wanted rows not found (0 when all were) */
} scanner;

/* ---------- moving rows, with incremental counts ---------- */

/*
 * The moves of one visit are independent of each other: every destination is a distinct pool
 * row, and a duplicate's source lies in an under-full cell, which loses no row, so no source is
 * ever overwritten during the visit.  Part p's thread carries out the moves whose destination
 * row is in part p, and so changes only part p's rows and part p's counts: the threads share no
 * written memory (but for cache lines of columns, byte-disjoint).  The result does not depend on
 * the number of parts or threads: no randomness is drawn while moving.
 */
typedef struct mover
{
	gum		   *g;
	const gmarg *m;
	uint32_t	part;
	uint32_t	from,			/* moves mvpart[part][from .. to) */
				to;
} mover;

/*
 * Moves the counts of part w->part for nb changed rows whose old and new codes are in old / new
 * (column c of the component at [c * batch .. c * batch + nb)), for every marginal of list.
 */
static void
batch_counts(mover *w, const uint16_t *old, const uint16_t *new, uint32_t nb,
			 const uint32_t *list, uint32_t nlist)
{
	gum		   *g = w->g;
	uint32_t  **cntp = g->cntp + (size_t) w->part * g->nm;
	uint32_t   *restrict io = g->bio[w->part],
			   *restrict in = g->bin[w->part];

	if (nb == 0)
		return;
	for (uint32_t l = 0; l < nlist; l++)
	{
		const gmarg *mm = &g->m[list[l]];
		uint32_t   *cnt = cntp[list[l]];

		for (uint32_t k = 0; k < mm->nattrs; k++)
		{
			const uint16_t *restrict o = old + (size_t) g->colpos[mm->attrs[k]] * g->batch,
					   *restrict n = new + (size_t) g->colpos[mm->attrs[k]] * g->batch;
			uint32_t	s = mm->strides[k];

			if (k == 0)
				for (uint32_t t = 0; t < nb; t++)
				{
					io[t] = s * o[t];
					in[t] = s * n[t];
				}
			else
				for (uint32_t t = 0; t < nb; t++)
				{
					io[t] += s * o[t];
					in[t] += s * n[t];
				}
		}
		for (uint32_t t = 0; t < nb; t++)
		{
			cnt[io[t]]--;
			cnt[in[t]]++;
		}
	}
}

/* ---------- the kernels, for 8- and 16-bit codes (dp_gum_kernels.h) ---------- */

/*
 * Copies a row's slice of a group (sz bytes, another row's: no overlap).  A group's stride is 17
 * to 32 bytes when it is one of several, 24 to 32 when alone (see the layout's choice in gum_run),
 * so two 16-byte moves do it without a call to memcpy.
 */
static inline void
copy_slice(uint8_t *restrict dst, const uint8_t *restrict src, size_t sz)
{
	if (sz >= 16 && sz <= 32)
	{
		uint8_t		a[16],
					b[16];

		memcpy(a, src, 16);
		memcpy(b, src + sz - 16, 16);
		memcpy(dst, a, 16);
		memcpy(dst + sz - 16, b, 16);
	}
	else
		memcpy(dst, src, sz);
}

#define KS(S) ((void) (S), 1u)
#define CODE_T uint8_t
#define KFN(name) name##_u8
#include "dp_gum_kernels.h"
#undef CODE_T
#undef KFN
#define CODE_T uint16_t
#define KFN(name) name##_u16
#include "dp_gum_kernels.h"
#undef CODE_T
#undef KFN
#undef KS
#define KS(S) (S)
#define CODE_T uint8_t
#define KFN(name) name##_g8
#include "dp_gum_kernels.h"
#undef CODE_T
#undef KFN
#undef KS

static void
gindex_block(const gum *g, const gmarg *m, uint32_t start, uint32_t nb, uint32_t *idx)
{
	const uint32_t S = g->cstride[m->comp];

	if (S > 1)
		gindex_block_g8(m, (uint8_t *const *) g->wcol, start, nb, idx, S);
	else if (g->narrow)
		gindex_block_u8(m, (uint8_t *const *) g->wcol, start, nb, idx, S);
	else
		gindex_block_u16(m, (uint16_t *const *) g->wcol, start, nb, idx, S);
}

/* Recounts part p's rows of m; with keep, the rows' cells are also written to keep[row]. */
static void
recount_part(gum *g, gmarg *m, uint32_t p, uint32_t *keep)
{
	uint32_t	buf[GUM_BLOCK];
	uint32_t   *cnt = m->cnt[p];

	memset(cnt, 0, sizeof(uint32_t) * m->ncells);
	for (uint32_t start = g->pb[p]; start < g->pb[p + 1]; start += GUM_BLOCK)
	{
		uint32_t	nb = g->pb[p + 1] - start < GUM_BLOCK ? g->pb[p + 1] - start : GUM_BLOCK;
		uint32_t   *idx = keep ? keep + start : buf;

		gindex_block(g, m, start, nb, idx);
		for (uint32_t i = 0; i < nb; i++)
			cnt[idx[i]]++;
	}
}

/*
 * Recounts part p's rows of every dirty marginal of a grouped component in one pass over the rows:
 * block by block, every such marginal's cells of the block (the block's slices of the groups stay
 * in cache), instead of one pass over the groups per marginal.
 */
static void
recount_grouped_part(gum *g, uint32_t p)
{
	uint32_t	idx[GUM_BLOCK];

	for (uint32_t i = 0; i < g->nm; i++)
		if (g->m[i].dirty && g->cstride[g->m[i].comp] > 1)
			memset(g->m[i].cnt[p], 0, sizeof(uint32_t) * g->m[i].ncells);
	for (uint32_t start = g->pb[p]; start < g->pb[p + 1]; start += GUM_BLOCK)
	{
		uint32_t	nb = g->pb[p + 1] - start < GUM_BLOCK ? g->pb[p + 1] - start : GUM_BLOCK;

		for (uint32_t i = 0; i < g->nm; i++)
		{
			gmarg	   *m = &g->m[i];
			uint32_t   *cnt = m->cnt[p];

			if (!m->dirty || g->cstride[m->comp] <= 1)
				continue;
			gindex_block_g8(m, (uint8_t *const *) g->wcol, start, nb, idx, g->cstride[m->comp]);
			for (uint32_t r = 0; r < nb; r++)
				cnt[idx[r]]++;
		}
	}
}

static void
recount(gum *g, gmarg *m)
{
	for (uint32_t p = 0; p < g->nparts; p++)
		recount_part(g, m, p, NULL);
	m->dirty = false;
}

/* lazy counting: part p's thread recounts the dirty marginals' rows of its part */
typedef struct recounter
{
	gum		   *g;
	uint32_t	part;
	gmarg	   *only;			/* one marginal, or NULL: every dirty one */
} recounter;

/*
 * Whether a recount of m keeps its rows' cells in rowidx for the scan of its visit (grouped
 * layout, lazy counting possible).  The one test for both the recount and ensure_counts; every
 * writer of rows must clear idx_of (today only visit's moves, and the end of the run).
 */
static inline bool
keeps_cells(const gum *g, const gmarg *m)
{
	return g->cstride[m->comp] > 1 && g->rowidx != NULL;
}

static void *
recount_worker(void *arg)
{
	recounter  *rc = arg;
	gum		   *g = rc->g;

	if (rc->only != NULL)
		recount_part(g, rc->only, rc->part, keeps_cells(g, rc->only) ? g->rowidx : NULL);
	else
	{
		bool		grouped = false;

		for (uint32_t i = 0; i < g->nm; i++)
			if (g->m[i].dirty)
			{
				if (g->cstride[g->m[i].comp] > 1)
					grouped = true;
				else
					recount_part(g, &g->m[i], rc->part, NULL);
			}
		if (grouped)
			recount_grouped_part(g, rc->part);
	}
	return NULL;
}

/* Brings the counts of m (or, with m NULL, of every marginal) up to date. */
static void
ensure_counts(gum *g, gmarg *m)
{
	recounter	rc[DP_GUM_MAX_THREADS];
	bool		any = false;

	if (m != NULL ? !m->dirty : true)
	{
		if (m != NULL)
			return;
		for (uint32_t i = 0; i < g->nm && !any; i++)
			any = g->m[i].dirty;
		if (!any)
			return;
	}
	for (uint32_t p = 0; p < g->nparts; p++)
	{
		rc[p].g = g;
		rc[p].part = p;
		rc[p].only = m;
	}
	dp_run_parallel(recount_worker, rc, sizeof(recounter), g->nparts);
	/* a grouped marginal's recount kept its rows' cells for the scan of its visit */
	if (m != NULL && keeps_cells(g, m))
		g->idx_of = m;
	for (uint32_t i = 0; i < g->nm; i++)
		if (m == NULL ? g->m[i].dirty : &g->m[i] == m)
		{
			g->recount_work += (double) g->n * g->m[i].nattrs;
			g->m[i].dirty = false;
		}
}

/* ---------- one visit of one marginal ---------- */

/* Returns 0, or -1 when the progress callback cancelled (a heartbeat between chunks of moves). */
static int
visit(gum *g, gmarg *m, double alpha, double r)
{
	const uint32_t C = m->ncells;
	double		sum_gain = 0,
				lmax = 0;
	uint32_t	nover = 0;
	const uint32_t P = g->nparts;
	uint32_t   *tot = g->tot;
	uint64_t	G,
				pos = 0,
				p;

	ensure_counts(g, m);
	total_counts(g, m, tot);
	/* classify cells and the continuous gains */
	for (uint32_t k = 0; k < C; k++)
	{
		double		c = tot[k],
					t = m->tgt[k];

		if (t > c)
		{
			g->cls[k] = CELL_UNDER;
			g->x[k] = tot[k] > 0 ? fmin(t - c, alpha * c) : fmin(alpha * t, t);
			sum_gain += g->x[k];
		}
		else
		{
			g->x[k] = 0;
			if (c > t)
			{
				g->cls[k] = CELL_OVER;
				g->over[nover++] = k;
				lmax += c - t;
			}
			else
				g->cls[k] = CELL_EQ;
		}
	}
	G = (uint64_t) floor(sum_gain + 0.5);
	if ((double) G > floor(lmax + 0.5))
		G = (uint64_t) floor(lmax + 0.5);
	if (G == 0 || nover == 0)
		return 0;
	G = cum_round(g->x, C, G, NULL, g->gain);

	/* losses: beta by bisection so that sum min(s - a, beta * s) = G, then exact rounding */
	{
		double		beta = 1;

		if ((double) G < lmax)
		{
			double		lo = 0,
						hi = 1;

			for (int it = 0; it < GUM_BISECT; it++)
			{
				double		mid = 0.5 * (lo + hi),
							l = 0;

				for (uint32_t i = 0; i < nover; i++)
				{
					uint32_t	k = g->over[i];
					double		c = tot[k],
								e = c - m->tgt[k],
								b = mid * c;

					l += e < b ? e : b;
				}
				if (fabs(l - (double) G) < 0.25)
				{
					hi = mid;	/* close enough: the rounding below makes the total exact */
					break;
				}
				if (l < (double) G)
					lo = mid;
				else
					hi = mid;
			}
			beta = hi;
		}
		for (uint32_t i = 0; i < nover; i++)
		{
			uint32_t	k = g->over[i];
			double		c = tot[k];

			g->x[k] = fmin(c - m->tgt[k], beta * c);
		}
		/* x is now zero outside the over-full cells */
		for (uint32_t k = 0; k < C; k++)
			if (g->cls[k] != CELL_OVER)
				g->x[k] = 0;
	}
	{
		uint64_t	L = cum_round(g->x, C, G, tot, g->lose);

		if (L < G)
		{
			/* the caps bite (not seen even with inconsistent inputs): drop the excess gain */
			uint64_t	drop = G - L;

			for (uint32_t k = C; k-- > 0 && drop > 0;)
				if (g->cls[k] == CELL_UNDER)
				{
					uint32_t	d = g->gain[k] < drop ? g->gain[k] : (uint32_t) drop;

					g->gain[k] -= d;
					drop -= d;
				}
			G = L;
		}
	}
	if (G == 0)
		return 0;

	/*
	 * Wanted ordinals: losses of the over-full cells first (the pool), then duplicate sources.
	 * mvarg (n values; a cell's ordinals are at most n) is free until the moves are listed below
	 * (this thread alone, no helper thread runs yet): it is the sorts' scratch.
	 */
	for (uint32_t k = 0; k < C; k++)
	{
		g->wbeg[k] = g->wend[k] = 0;
		g->dup[k] = 0;
	}
	for (uint32_t i = 0; i < nover; i++)
	{
		uint32_t	k = g->over[i];

		if (g->lose[k] == 0)
			continue;
		g->wbeg[k] = (uint32_t) pos;
		sample_distinct_sorted(g->rng, tot[k], g->lose[k], g->want + pos, g->mvarg);
		pos += g->lose[k];
		g->wend[k] = (uint32_t) pos;
	}
	for (uint32_t k = 0; k < C; k++)
	{
		if (g->cls[k] != CELL_UNDER || g->gain[k] == 0 || tot[k] == 0)
			continue;
		g->dup[k] = (uint32_t) floor(r * g->gain[k] + 0.5);
		if (g->dup[k] > g->gain[k])
			g->dup[k] = g->gain[k];
		if (g->dup[k] == 0)
			continue;
		g->wbeg[k] = (uint32_t) pos;
		sample_sorted(g->rng, tot[k], g->dup[k], g->want + pos, g->mvarg);
		pos += g->dup[k];
		g->wend[k] = (uint32_t) pos;
	}

	/*
	 * Find the rows holding the wanted ordinals, each part on its own thread.  The ordinals of a
	 * cell count its rows in row order, and the parts are consecutive, so ordinal o of cell k lies
	 * in part p when off_p <= o < off_p + cnt[p][k] (off_p: the cell's rows in the parts before
	 * p); it is made local to the part.  The rows found are the same whatever the parts.
	 */
	for (uint32_t q = 0; q < P; q++)
		g->pwanted[q] = 0;
	for (uint32_t k = 0; k < C; k++)
	{
		uint32_t	w = g->wbeg[k],
					off = 0;

		for (uint32_t q = 0; q < P; q++)
		{
			uint32_t	lim = off + m->cnt[q][k],
						b = w;

			while (w < g->wend[k] && g->want[w] < lim)
				g->want[w++] -= off;
			g->pwbeg[q][k] = b;
			g->pwend[q][k] = w;
			g->pwanted[q] += w - b;
			g->pseen[q][2 * k] = 0;
			g->pseen[q][2 * k + 1] = b < w ? g->want[b] : UINT32_MAX;
			off = lim;
		}
	}
	{
		scanner		sc[DP_GUM_MAX_THREADS];
		bool		lost = false;

		for (uint32_t q = 0; q < P; q++)
		{
			sc[q].g = g;
			sc[q].m = m;
			sc[q].part = q;
			sc[q].left = 0;
		}
		dp_run_parallel(g->cstride[m->comp] > 1 ? scan_part_g8 : g->narrow ? scan_part_u8 : scan_part_u16,
						sc, sizeof(scanner), P);
		for (uint32_t q = 0; q < P; q++)
			lost |= sc[q].left > 0;
		if (lost)
		{
			/* counts out of step with the table (a bug): resynchronise, change nothing */
			recount(g, m);
			return 0;
		}
	}

	/* the pool: rows lost by the over-full cells, in random order */
	dp_prng_shuffle_u32(g->rng, g->want, (size_t) G);

	/* hand the pool to the under-full cells: the move list, split by the part of its row */
	p = 0;
	{
		uint64_t	srcpos = G;	/* duplicate sources follow the pool, cell by cell */

		for (uint32_t k = 0; k < C; k++)
		{
			uint32_t	rep;

			if (g->cls[k] != CELL_UNDER || g->gain[k] == 0)
				continue;
			rep = g->gain[k] - g->dup[k];
			for (uint32_t j = 0; j < rep; j++, p++)
			{
				g->mvdup[p] = 0;
				g->mvarg[p] = k;
			}
			for (uint32_t j = 0; j < g->dup[k]; j++, p++)
			{
				g->mvdup[p] = 1;
				g->mvarg[p] = g->want[srcpos++];
			}
		}
	}
	for (uint32_t q = 0; q < P; q++)
		g->nmvpart[q] = 0;
	for (uint32_t i = 0; i < (uint32_t) G; i++)
	{
		uint32_t	row = g->want[i],
					q = 0;

		while (row >= g->pb[q + 1])
			q++;
		g->mvpart[q][g->nmvpart[q]++] = i;
	}

	/* what incremental counting costs for these moves; lazy: the component's counts go stale */
	g->inc_work += (double) G * (double) g->comp_attrs[m->comp];
	if (g->lazy)
		for (uint32_t j = g->comp_margs_off[m->comp]; j < g->comp_margs_off[m->comp + 1]; j++)
			g->m[g->comp_margs[j]].dirty = true;

	/* the moves, in chunks with a heartbeat between them (a cancel never waits for a visit) */
	g->idx_of = NULL;			/* the rows change: cells kept by a recount are stale */
	for (uint32_t done = 0; done < (uint32_t) G; done += GUM_MOVE_CHUNK)
	{
		mover		w[DP_GUM_MAX_THREADS];
		uint32_t	upto = (uint32_t) G - done < GUM_MOVE_CHUNK ? (uint32_t) G : done + GUM_MOVE_CHUNK;

		for (uint32_t q = 0; q < P; q++)
		{
			w[q].g = g;
			w[q].m = m;
			w[q].part = q;
			/* this chunk's share of part q's moves, in proportion */
			w[q].from = (uint32_t) ((uint64_t) g->nmvpart[q] * done / G);
			w[q].to = (uint32_t) ((uint64_t) g->nmvpart[q] * upto / G);
		}
		dp_run_parallel(g->cstride[m->comp] > 1 ? run_moves_g8 : g->narrow ? run_moves_u8 : run_moves_u16,
						w, sizeof(mover), P);
		if (upto < (uint32_t) G && g->prm->progress &&
			g->prm->progress(g->prm->progress_arg, g->iter, g->prm->iterations, -1) != 0)
			return -1;
	}
	return 0;
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
	p->threads = 1;
	p->progress = NULL;
	p->progress_arg = NULL;
}

/* A heartbeat for the progress callback outside the iterations (one per column filled or
 * appended: O(n) work each); non-zero cancels. */
static int
heartbeat(gum *g)
{
	if (g->prm->progress == NULL)
		return 0;
	return g->prm->progress(g->prm->progress_arg, g->iter, g->prm->iterations, -1);
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
	uint32_t   *ioff = gcalloc(g, (size_t) k + 2, sizeof(uint32_t)),
			   *inc,
			   *occ = galloc(g, sizeof(uint32_t) * P);	/* column at each position, k: none */
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
	if ((inc = galloc(g, sizeof(uint32_t) * (ioff[k + 1] ? ioff[k + 1] : 1))) == NULL)
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
			if (heartbeat(g) != 0)
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
	gfree(g, inc);
	gfree(g, occ);
	gfree(g, ioff);
	return 0;
}

static int
gum_run(gum *g, const dp_marg *targets, uint32_t ntargets, const dp_gum_params *prm)
{
	const uint32_t ncols = g->ncols;
	const uint32_t *sizes = g->sizes;
	const uint32_t n = g->n;
	uint8_t    *adj;
	uint32_t   *deg,
			   *layer,
			   *parent,
			   *appm,
			   *peel,
			   *tgt_of,
			   *uf_parent,
			   *comp_of_col,
			   *order;
	uint8_t    *leaf;
	double	  **onew;
	uint32_t	maxsize = 1,
				maxcells = 1,
				nlayers = 0,
				ncomp = 0,
				ngrp = 0,		/* groups of the grouped layout */
				nblk = 0,		/* blocks of the working table: blk[b], blksz[b] bytes */
				ncc;			/* columns of the iterated marginals: comp_cols[0 .. ncc) */
	size_t		cw;				/* bytes per code of the working table */
	void	  **blk;
	size_t	   *blksz;
	frac_idx   *fi;
	uint32_t   *cntbuf,
			   *codecnt;
	double	   *wbuf;
	bool		warm,
				iterate;

	for (uint32_t c = 0; c < ncols; c++)
		if (sizes[c] > maxsize)
			maxsize = sizes[c];

	/* ---- 1-way distributions (1-way target, else projection of the first target with c) ---- */
	onew = gcalloc(g, ncols, sizeof(double *));
	if (onew == NULL)
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
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
		onew[c] = gcalloc(g, sizes[c], sizeof(double));
		if (onew[c] == NULL)
			return -2;
		for (uint64_t j = 0; j < src->ncells; j++)
			if (src->cells[j] > 0)
				onew[c][dp_marg_code(src, j, pos)] += src->cells[j];
		for (uint32_t v = 0; v < sizes[c]; v++)
			s += onew[c][v];
		if (!(s > 0) || !isfinite(s))
			return -2;
	}

	/* ---- the marginal graph, peeled layer by layer ---- */
	adj = gcalloc(g, (size_t) ncols * ncols, 1);
	deg = gcalloc(g, ncols, sizeof(uint32_t));
	layer = gcalloc(g, ncols, sizeof(uint32_t));
	parent = gcalloc(g, ncols, sizeof(uint32_t));
	appm = gcalloc(g, ncols, sizeof(uint32_t));
	peel = gcalloc(g, ncols, sizeof(uint32_t));
	leaf = gcalloc(g, ncols, 1);
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
		nlayers++;
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

			layer[c] = nlayers;
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

	/* ---- iterated marginals: targets of >= 2 attributes, all core columns ---- */
	tgt_of = gcalloc(g, ntargets ? ntargets : 1, sizeof(uint32_t));
	if (tgt_of == NULL)
		return -2;
	for (uint32_t i = 0; i < ntargets; i++)
	{
		bool		core = targets[i].nattrs >= 2;

		for (uint32_t a = 0; a < targets[i].nattrs && core; a++)
			core = layer[targets[i].attrs[a]] == 0;
		if (core)
			tgt_of[g->nm++] = i;
	}
	g->m = gcalloc(g, g->nm ? g->nm : 1, sizeof(gmarg));
	uf_parent = gcalloc(g, ncols, sizeof(uint32_t));
	comp_of_col = gcalloc(g, ncols, sizeof(uint32_t));
	if (!g->m || !uf_parent || !comp_of_col)
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
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
		if (m->ncells > maxcells)
			maxcells = m->ncells;
		m->tgt = galloc(g, sizeof(double) * m->ncells);
		if (!m->tgt)
			return -2;
		for (uint32_t q = 0; q < g->nparts; q++)
			if ((m->cnt[q] = galloc(g, sizeof(uint32_t) * m->ncells)) == NULL)
				return -2;
		for (uint32_t k = 0; k < m->ncells; k++)
			s += t->cells[k] > 0 ? t->cells[k] : 0;
		if (!(s > 0) || !isfinite(s))
			return -2;
		for (uint32_t k = 0; k < m->ncells; k++)
			m->tgt[k] = t->cells[k] > 0 ? t->cells[k] / s * n : 0;
		for (uint32_t a = 1; a < m->nattrs; a++)
		{
			uint32_t	x = uf_find(uf_parent, m->attrs[0]),
						y = uf_find(uf_parent, m->attrs[a]);

			if (x != y)
				uf_parent[y] = x;
		}
	}
	/* components: number the roots of the columns covered by iterated marginals */
	for (uint32_t c = 0; c < ncols; c++)
		comp_of_col[c] = UINT32_MAX;
	for (uint32_t i = 0; i < g->nm; i++)
		for (uint32_t a = 0; a < g->m[i].nattrs; a++)
		{
			uint32_t	root = uf_find(uf_parent, g->m[i].attrs[a]);

			if (comp_of_col[root] == UINT32_MAX)
				comp_of_col[root] = ncomp++;
		}
	g->comp_cols_off = gcalloc(g, ncomp + 1, sizeof(uint32_t));
	g->comp_margs_off = gcalloc(g, ncomp + 1, sizeof(uint32_t));
	g->comp_cols = gcalloc(g, ncols, sizeof(uint32_t));
	g->comp_margs = gcalloc(g, g->nm ? g->nm : 1, sizeof(uint32_t));
	g->colpos = gcalloc(g, ncols, sizeof(uint32_t));
	g->cntp = gcalloc(g, (size_t) g->nparts * (g->nm ? g->nm : 1), sizeof(uint32_t *));
	if (!g->comp_cols_off || !g->comp_margs_off || !g->comp_cols || !g->comp_margs ||
		!g->colpos || !g->cntp)
		return -2;
	{
		uint32_t	ci = 0,
					mi = 0;

		for (uint32_t comp = 0; comp < ncomp; comp++)
		{
			g->comp_cols_off[comp] = ci;
			g->comp_margs_off[comp] = mi;
			for (uint32_t c = 0; c < ncols; c++)
			{
				bool		covered = false;

				if (layer[c] != 0 || comp_of_col[uf_find(uf_parent, c)] != comp)
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
		g->comp_cols_off[ncomp] = ci;
		g->comp_margs_off[ncomp] = mi;
		if ((g->comp_attrs = gcalloc(g, ncomp ? ncomp : 1, sizeof(uint64_t))) == NULL)
			return -2;
		for (uint32_t i = 0; i < g->nm; i++)
			g->comp_attrs[g->m[i].comp] += g->m[i].nattrs;
	}
	for (uint32_t q = 0; q < g->nparts; q++)
		for (uint32_t j = 0; j < g->nm; j++)
			g->cntp[(size_t) q * g->nm + j] = g->m[j].cnt[q];
	/* neighbours: marginals sharing a column */
	for (uint32_t i = 0; i < g->nm; i++)
	{
		gmarg	   *m = &g->m[i];

		m->nbr = galloc(g, sizeof(uint32_t) * g->nm);
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

	/* ---- scratch ---- */
	g->wbeg = galloc(g, sizeof(uint32_t) * maxcells);
	g->wend = galloc(g, sizeof(uint32_t) * maxcells);
	g->gain = galloc(g, sizeof(uint32_t) * maxcells);
	g->lose = galloc(g, sizeof(uint32_t) * maxcells);
	g->dup = galloc(g, sizeof(uint32_t) * maxcells);
	g->over = galloc(g, sizeof(uint32_t) * maxcells);
	g->cls = galloc(g, maxcells);
	g->x = galloc(g, sizeof(double) * maxcells);
	g->want = galloc(g, sizeof(uint32_t) * 2 * (size_t) (n ? n : 1));
	g->tot = galloc(g, sizeof(uint32_t) * maxcells);
	if (!g->tot)
		return -2;
	/* batches of about 256 KB of codes per part, 256 to 4096 rows */
	{
		uint32_t	maxcc = 1;

		for (uint32_t comp = 0; comp < ncomp; comp++)
			if (g->comp_cols_off[comp + 1] - g->comp_cols_off[comp] > maxcc)
				maxcc = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp];
		g->batch = 32768 / maxcc;
		g->batch = g->batch < 256 ? 256 : g->batch > 4096 ? 4096 : g->batch;
		for (uint32_t q = 0; q < g->nparts; q++)
		{
			size_t		sz = sizeof(uint16_t) * maxcc * g->batch;

			g->bdold[q] = galloc(g, sz);
			g->bdnew[q] = galloc(g, sz);
			g->brold[q] = galloc(g, sz);
			g->brnew[q] = galloc(g, sz);
			g->bio[q] = galloc(g, sizeof(uint32_t) * g->batch);
			g->bin[q] = galloc(g, sizeof(uint32_t) * g->batch);
			if (!g->bdold[q] || !g->bdnew[q] || !g->brold[q] || !g->brnew[q] || !g->bio[q] || !g->bin[q])
				return -2;
			/* a part's share of a chunk is at most GUM_MOVE_CHUNK moves (visit) */
			g->lzdrow[q] = galloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
			g->lzdsrc[q] = galloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
			g->lzrrow[q] = galloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
			g->lzrcell[q] = galloc(g, sizeof(uint32_t) * GUM_MOVE_CHUNK);
			if (!g->lzdrow[q] || !g->lzdsrc[q] || !g->lzrrow[q] || !g->lzrcell[q])
				return -2;
		}
	}
	for (uint32_t q = 0; q < g->nparts; q++)
	{
		g->pseen[q] = galloc(g, sizeof(uint32_t) * 2 * (size_t) maxcells);
		g->pwbeg[q] = galloc(g, sizeof(uint32_t) * maxcells);
		g->pwend[q] = galloc(g, sizeof(uint32_t) * maxcells);
		g->mvpart[q] = galloc(g, sizeof(uint32_t) * (size_t) (g->pb[q + 1] - g->pb[q] + 1));
		if (!g->pseen[q] || !g->pwbeg[q] || !g->pwend[q] || !g->mvpart[q])
			return -2;
	}
	warm = prm->start && prm->start->ncols == ncols && prm->start->nrows > 0 &&
		prm->start->nrows <= UINT32_MAX;
	/* mvarg holds a warm start's draw first (start_rows): m values when m > n */
	g->mvarg = galloc(g, sizeof(uint32_t) * (size_t) (warm && prm->start->nrows > n ? prm->start->nrows : (n ? n : 1)));
	g->mvdup = galloc(g, (size_t) (n ? n : 1));
	fi = galloc(g, sizeof(frac_idx) * maxsize);
	cntbuf = galloc(g, sizeof(uint32_t) * (maxsize + 1));
	codecnt = galloc(g, sizeof(uint32_t) * maxsize);
	wbuf = galloc(g, sizeof(double) * maxsize);
	order = galloc(g, sizeof(uint32_t) * (g->nm ? g->nm : 1));
	if (!g->wbeg || !g->wend || !g->gain || !g->lose || !g->dup ||
		!g->over || !g->cls || !g->x || !g->want || !g->mvarg || !g->mvdup || !fi || !cntbuf || !codecnt || !wbuf ||
		!order)
		return -2;

	/* ---- initialisation: core columns independently from their 1-way distributions ---- */
	if (warm)
		start_rows(g, (uint32_t) prm->start->nrows);
	for (uint32_t c = 0; c < ncols; c++)
	{
		uint16_t   *col = g->col[c];
		uint32_t	r = 0;

		if (layer[c] != 0)
		{
			memset(col, 0, sizeof(uint16_t) * n);	/* filled by appending */
			continue;
		}
		if (warm)
		{
			/* a warm start: the caller's rows, in the order start_rows drew (codes checked,
			 * out of range read as 0) */
			const uint16_t *src = prm->start->col[c];

			for (uint32_t i = 0; i < n; i++)
			{
				uint16_t	v = src[g->want[i]];

				col[i] = v < sizes[c] ? v : 0;
			}
			if (heartbeat(g) != 0)
				return -1;
			continue;
		}
		largest_remainder(onew[c], sizes[c], n, cntbuf, fi);
		for (uint32_t v = 0; v < sizes[c]; v++)
			for (uint32_t j = 0; j < cntbuf[v]; j++)
				col[r++] = (uint16_t) v;
		shuffle_u16(g->rng, col, n);
		if (heartbeat(g) != 0)
			return -1;
	}
	/*
	 * The working table: 8-bit copies of the iterated marginals' columns (comp_cols, the only
	 * columns the iterations read or write) when they all fit.  The other core columns (degree 0,
	 * or in no iterated marginal) keep their initial fill in out.
	 */
	ncc = g->comp_cols_off[ncomp];
	/* (no iteration: the start stands as it is, and neither a working copy nor counts are needed) */
	iterate = g->nm > 0 && n > 0 && prm->iterations > 0;
	g->narrow = iterate;
	for (uint32_t i = 0; i < ncc; i++)
		if (sizes[g->comp_cols[i]] > 256)
			g->narrow = false;
	cw = g->narrow ? 1 : 2;
	g->wcol = (void **) g->col;
	/* the layout of each component: grouped (cstride S > 1) when wide (GUM_GROUP_MIN_COLS columns
	 * or more, 8-bit codes, whatever the rows), else column-major */
	g->cstride = gcalloc(g, ncomp + 1, sizeof(uint32_t));
	g->cgrp_off = gcalloc(g, ncomp + 1, sizeof(uint32_t));
	if (!g->cstride || !g->cgrp_off)
		return -2;
	for (uint32_t comp = 0; comp < ncomp; comp++)
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
	g->cgrp_off[ncomp] = ngrp;
	if (ngrp > 0)
	{
		/* a visit's cells are kept only by the recounts of lazy counting (never incremental) */
		bool		cells = prm->counting != DP_GUM_COUNT_INCREMENTAL;

		g->grp = gcalloc(g, ngrp, sizeof(uint8_t *));
		if (cells)
			g->rowidx = galloc(g, sizeof(uint32_t) * (size_t) n);
		if (!g->grp || (cells && !g->rowidx))
			return -2;
	}
	if (g->narrow)
	{
		g->wcol = gcalloc(g, ncols, sizeof(void *));
		if (g->wcol == NULL)
			return -2;
		for (uint32_t comp = 0; comp < ncomp; comp++)
		{
			const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
			uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
						S = g->cstride[comp];

			if (S > 1)
			{
				uint32_t	ngr = g->cgrp_off[comp + 1] - g->cgrp_off[comp],
						   *lay = galloc(g, sizeof(uint32_t) * k);
				int			grc;

				if (lay == NULL)
					return -2;
				if ((grc = group_columns(g, comp, k, ngr, S, lay)) != 0)
					return grc; /* -2, or -1: cancelled */
				/* group by group, a block of rows at a time (the block's slice stays in cache) */
				for (uint32_t q = 0; q < ngr; q++)
				{
					uint8_t    *gq = gcalloc(g, n, S);

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
					if (heartbeat(g) != 0)
						return -1;
				}
				gfree(g, lay);
				continue;
			}
			for (uint32_t j = 0; j < k; j++)
			{
				uint32_t	c = cc[j];
				uint8_t    *w8;

				if ((w8 = galloc(g, n)) == NULL)
					return -2;
				for (uint32_t r = 0; r < n; r++)
					w8[r] = (uint8_t) g->col[c][r];
				g->wcol[c] = w8;
				/* the 16-bit column is dead until the end: 2n bytes less at the peak (10M rows: 20 MB a column) */
				dp_free(g->col[c]);
				g->col[c] = NULL;
				if (heartbeat(g) != 0)
					return -1;
			}
		}
	}
	/* the working table's blocks: a column-major column, or a group (what the best table copies) */
	nblk = 0;
	blk = gcalloc(g, ncc ? ncc : 1, sizeof(void *));
	blksz = gcalloc(g, ncc ? ncc : 1, sizeof(size_t));
	if (!blk || !blksz)
		return -2;
	for (uint32_t comp = 0; comp < ncomp; comp++)
	{
		if (g->cstride[comp] > 1)
			for (uint32_t q = g->cgrp_off[comp]; q < g->cgrp_off[comp + 1]; q++)
			{
				blk[nblk] = g->grp[q];
				blksz[nblk++] = (size_t) n * g->cstride[comp];
			}
		else
			for (uint32_t j = g->comp_cols_off[comp]; j < g->comp_cols_off[comp + 1]; j++)
			{
				blk[nblk] = g->wcol[g->comp_cols[j]];
				blksz[nblk++] = cw * (size_t) n;
			}
	}
	if (iterate)
	{
		/* every marginal counted (a grouped component's in one pass over its rows) */
		for (uint32_t i = 0; i < g->nm; i++)
			g->m[i].dirty = true;
		ensure_counts(g, NULL);
		for (uint32_t i = 0; i < g->nm; i++)
			g->m[i].err = marg_error(g, &g->m[i]);
	}

	/* ---- GUM iterations ---- */
	if (iterate)
	{
		double		best = INFINITY,
					snap_err = INFINITY,
					mean = INFINITY;	/* of the last iteration */
		uint32_t	best_at = 0;
		void	  **snap = gcalloc(g, nblk ? nblk : 1, sizeof(void *));

		if (snap == NULL)
			return -2;

		for (uint32_t t = 0; t < prm->iterations; t++)
		{
			double		alpha = prm->alpha0 * pow(GUM_DECAY, (double) (t / GUM_DECAY_EVERY));
			double		r = (t % 2 == 0) ? 0.5 : 1.0;

			/* largest error first (ties: target order) */
			for (uint32_t i = 0; i < g->nm; i++)
			{
				uint32_t	j = i;

				order[i] = i;
				while (j > 0 && g->m[order[j - 1]].err < g->m[order[j]].err)
				{
					uint32_t	tmp = order[j];

					order[j] = order[j - 1];
					order[j - 1] = tmp;
					j--;
				}
			}
			g->iter = t;
			/*
			 * The counting mode: lazy where incremental counting would cost more than recounting.
			 * Before the first iteration, a visit moves about min(alpha, err / 2) of the rows.
			 */
			if (t == 0)
			{
				g->inc_work = 0;
				for (uint32_t i = 0; i < g->nm; i++)
					g->inc_work += fmin(alpha, g->m[i].err / 2) * n * (double) g->comp_attrs[g->m[i].comp];
			}
			if (t == 0 || !g->lazy)
			{
				double		total_attrs = 0;

				for (uint32_t c = 0; c < ncomp; c++)
					total_attrs += (double) g->comp_attrs[c];
				g->recount_work = 2.0 * n * total_attrs;	/* at most: two recounts each */
			}
			g->lazy = prm->counting == DP_GUM_COUNT_LAZY ||
				(prm->counting != DP_GUM_COUNT_INCREMENTAL && g->inc_work > GUM_LAZY_MARGIN * g->recount_work);
			g->inc_work = 0;
			g->recount_work = 0;
			for (uint32_t i = 0; i < g->nm; i++)
			{
				if (visit(g, &g->m[order[i]], alpha, r) != 0)
					return -1;
				/* one visit is one pass over the rows: a cancel must not wait for a whole iteration */
				if (prm->progress && prm->progress(prm->progress_arg, t, prm->iterations, -1) != 0)
					return -1;
			}
			mean = 0;
			ensure_counts(g, NULL);
			for (uint32_t i = 0; i < g->nm; i++)
			{
				g->m[i].err = marg_error(g, &g->m[i]);
				mean += g->m[i].err;
			}
			mean /= g->nm;
			g->iter = t + 1;
			if (prm->progress && prm->progress(prm->progress_arg, t + 1, prm->iterations, mean) != 0)
				return -1;
			if (mean < snap_err)
			{
				/* the best table so far: kept, and given back if later iterations do worse */
				snap_err = mean;
				for (uint32_t b = 0; b < nblk; b++)
				{
					if (snap[b] == NULL && (snap[b] = galloc(g, blksz[b])) == NULL)
						return -2;
					memcpy(snap[b], blk[b], blksz[b]);
				}
			}
			if (mean < best - (prm->tolerance > 0 ? prm->tolerance : 0))
			{
				best = mean;
				best_at = t;
			}
			else if (prm->tolerance >= 0 && t - best_at >= GUM_PATIENCE)
				break;
		}
		/* mean: the error of the table as it stands (INFINITY when no iteration ran) */
		if (snap_err < mean)
			for (uint32_t b = 0; b < nblk; b++)
				memcpy(blk[b], snap[b], blksz[b]);
		for (uint32_t b = 0; b < nblk; b++)
			gfree(g, snap[b]);
	}
	/* the moves' arrays are dead (appending below uses want only): freed before the 16-bit columns come back */
	gfree(g, g->mvarg);
	gfree(g, g->mvdup);
	g->mvarg = NULL;
	g->mvdup = NULL;
	for (uint32_t q = 0; q < g->nparts; q++)
	{
		gfree(g, g->mvpart[q]);
		g->mvpart[q] = NULL;
	}
	gfree(g, g->rowidx);
	g->rowidx = NULL;
	g->idx_of = NULL;			/* no visit's cells are kept any more (a restored best table wrote rows) */

	if (g->narrow)
		for (uint32_t comp = 0; comp < ncomp; comp++)
		{
			const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
			uint32_t	k = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp],
						S = g->cstride[comp];

			/* a group's columns together, else one column at a time */
			for (uint32_t q = 0; q < (S > 1 ? g->cgrp_off[comp + 1] - g->cgrp_off[comp] : k); q++)
			{
				const uint8_t *gq = S > 1 ? g->grp[g->cgrp_off[comp] + q] : g->wcol[cc[q]];
				/* the columns to look at: column q alone when column-major, else all k */
				const uint32_t jlo = S > 1 ? 0 : q,
							jhi = S > 1 ? k : q + 1;

				/* (a column of the group: its codes of row 0 lie in [gq, gq + S); compared as
				 * integers, since the pointers may come from different allocations) */
#define IN_GROUP(j) ((uintptr_t) g->wcol[cc[j]] - (uintptr_t) gq < (uintptr_t) S)
				for (uint32_t j = jlo; j < jhi; j++)
				{
					uint16_t   *c16;

					if (!IN_GROUP(j))
						continue;
					if ((c16 = dp_alloc(sizeof(uint16_t) * (size_t) n)) == NULL)
					{
						gnomem(sizeof(uint16_t) * (size_t) n);
						return -2;
					}
					g->col[cc[j]] = c16;
				}
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
				gfree(g, (void *) gq);
				if (heartbeat(g) != 0)
					return -1;
			}
		}

	/* ---- attribute appending, last peeled layer first ---- */
	for (uint32_t L = nlayers; L >= 1; L--)
		for (uint32_t c = 0; c < ncols; c++)
		{
			const dp_marg *t;
			uint32_t	p,
						pc,
						cc,
					   *rows = g->want;

			if (layer[c] != L)
				continue;
			t = &targets[appm[c]];
			p = parent[c];
			pc = t->attrs[0] == p ? 0 : 1;
			cc = 1 - pc;
			/* rows grouped by the parent's code (counting sort); cntbuf[v] ends group v */
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

					wbuf[j] = w > 0 ? w : 0;
					s += wbuf[j];
				}
				if (!(s > 0) || !isfinite(s))
					memcpy(wbuf, onew[c], sizeof(double) * sizes[c]);
				largest_remainder(wbuf, sizes[c], nv, codecnt, fi);
				dp_prng_shuffle_u32(g->rng, rows + beg, nv);
				for (uint32_t j = 0; j < sizes[c]; j++)
					for (uint32_t k = 0; k < codecnt[j]; k++)
						g->col[c][rows[q++]] = (uint16_t) j;
			}
			if (heartbeat(g) != 0)
				return -1;
		}
	return 0;
}

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
				gnomem(sizeof(uint16_t) * (size_t) n);
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
	g.nparts = params->threads < 1 ? 1 : params->threads > DP_GUM_MAX_THREADS ? DP_GUM_MAX_THREADS : params->threads;
	if (n < GUM_PAR_MIN_ROWS)
		g.nparts = 1;
	for (uint32_t q = 0; q <= g.nparts; q++)
		g.pb[q] = (uint32_t) (n * q / g.nparts);
	rc = gum_run(&g, targets, ntargets, params);
	gfree_all(&g);
	for (uint32_t j = 0; j < ncols; j++)
		if (out->col[j] == NULL)
			out->cap = 0;		/* a run stopped with a 16-bit column freed: out grows anew (dp_realloc of NULL) */
	if (rc == 0)
		out->nrows = n;
	return rc;
}
