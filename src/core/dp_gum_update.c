/*
 * dp_gum_update.c - GUM's update step (dp_gum.h, step 3): the marginals' cell counts, one visit
 * of a marginal and the iterations.  dp_gum_internal.h names GUM's other files.
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
 * Why it is shaped so: row changes and the pass over the rows dominate an iteration, both
 * memory-bound.  Rows are changed in batches and then each marginal's counts are moved over the
 * whole batch (the counts stay in L1; see run_moves), the rows of moves ahead are prefetched, the
 * working columns are 8-bit and the wanted ordinals radix-sorted (bench/gum.sh times it).
 */
#include "dp_gum_internal.h"

/* ---------- sampling and rounding ---------- */

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

/* Largest number of values that sort_u32 sorts by buckets (its stack holds their counts). */
#define GUM_SORT_BUCKETS_MAX 2048

/* a[0..m) = src[0..m) sorted, by insertion (src may be a itself: then in place). */
static inline void
insert_sorted(uint32_t *a, const uint32_t *src, uint32_t m)
{
	for (uint32_t i = 0; i < m; i++)
	{
		uint32_t	v = src[i],
					j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/*
 * Sorts a[0..m) ascending, every value below n: insertion sort for a few values; up to
 * GUM_SORT_BUCKETS_MAX values, m buckets of equal width over [0, n) (a counting pass and a
 * placement through tmp, then an insertion sort that only reorders values within a bucket:
 * the values here are uniform draws, about one a bucket); else an LSD radix sort on bytes (as many
 * passes as the largest value needs: two for cells of up to 65,536 rows) through tmp (room for m
 * values).  The result is the sorted values whatever the way.
 */
static void
sort_u32(uint32_t *a, uint32_t m, uint32_t n, uint32_t *tmp)
{
	uint32_t	maxv = 0,
				count[256];
	uint32_t   *src = a,
			   *dst = tmp;

	if (m < 32)
	{
		insert_sorted(a, a, m);
		return;
	}
	if (m <= GUM_SORT_BUCKETS_MAX && n > 0)
	{
		uint32_t	start[GUM_SORT_BUCKETS_MAX + 1];
		/* bucket of v: floor(v * scale / 2^32) <= v * m / n < m, nondecreasing in v */
		uint64_t	scale = ((uint64_t) m << 32) / n;

		memset(start, 0, sizeof(uint32_t) * (m + 1));
		for (uint32_t i = 0; i < m; i++)
			start[(uint32_t) (((uint64_t) a[i] * scale) >> 32) + 1]++;
		for (uint32_t b = 0; b < m; b++)
			start[b + 1] += start[b];
		for (uint32_t i = 0; i < m; i++)
			tmp[start[(uint32_t) (((uint64_t) a[i] * scale) >> 32)]++] = a[i];
		insert_sorted(a, tmp, m);
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

		dp_prng_below_fill_u32(rng, n, dst + have, m - have);
		sort_u32(dst, m, n, tmp);
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
	dp_prng_below_fill_u32(rng, n, dst, m);
	sort_u32(dst, m, n, tmp);
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

double
gum_marg_error(gum *g, const gmarg *m)
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

/* one block of batch_counts: the first attribute's part of the old and new cells, then another's */
static inline void
cells_first(uint32_t *restrict io, uint32_t *restrict in, const uint16_t *restrict o,
			const uint16_t *restrict n, uint32_t s)
{
	for (uint32_t t = 0; t < GUM_COUNT_BLOCK; t++)
	{
		io[t] = s * o[t];
		in[t] = s * n[t];
	}
}

static inline void
cells_add(uint32_t *restrict io, uint32_t *restrict in, const uint16_t *restrict o,
		  const uint16_t *restrict n, uint32_t s)
{
	for (uint32_t t = 0; t < GUM_COUNT_BLOCK; t++)
	{
		io[t] += s * o[t];
		in[t] += s * n[t];
	}
}

/*
 * Moves the counts of part w->part for nb changed rows whose old and new codes are in old / new
 * (column c of the component at [c * batch .. c * batch + nb)), for every marginal of list.
 * The cells are computed in whole blocks of GUM_COUNT_BLOCK changes (a constant trip count,
 * which gcc -O2's "very cheap" vectoriser takes): the last block's entries past nb are computed
 * from whatever the buffers hold there (inside the batch, zeroed at first) and not used.
 */
static void
batch_counts(mover *w, const uint16_t *old, const uint16_t *new, uint32_t nb,
			 const uint32_t *list, uint32_t nlist)
{
	gum		   *g = w->g;
	uint32_t  **cntp = g->cntp + (size_t) w->part * g->nm;
	uint32_t   *restrict io = g->bio[w->part],
			   *restrict in = g->bin[w->part];
	const uint32_t nbb = (nb + GUM_COUNT_BLOCK - 1) / GUM_COUNT_BLOCK * GUM_COUNT_BLOCK;

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

			for (uint32_t t0 = 0; t0 < nbb; t0 += GUM_COUNT_BLOCK)
				if (k == 0)
					cells_first(io + t0, in + t0, o + t0, n + t0, s);
				else
					cells_add(io + t0, in + t0, o + t0, n + t0, s);
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

/*
 * Recounts part p's rows of m; with keep, the rows' cells are also written to keep[row].  A
 * marginal of at most GUM_HIST_CELLS cells is counted into four histograms, row i into histogram
 * i mod 4, summed at the end: rows of one cell come in runs (a few cells hold most rows), and
 * one histogram makes each increment wait for the previous one's store to the same counter.
 */
static void
recount_part(gum *g, gmarg *m, uint32_t p, uint32_t *keep)
{
	uint32_t	buf[GUM_BLOCK];
	uint32_t   *cnt = m->cnt[p];
	const uint32_t C = m->ncells;
	const bool	split = C <= GUM_HIST_CELLS;
	uint32_t   *h1 = g->hist[p],
			   *h2 = h1 + GUM_HIST_CELLS,
			   *h3 = h2 + GUM_HIST_CELLS;

	memset(cnt, 0, sizeof(uint32_t) * C);
	if (split)
	{
		memset(h1, 0, sizeof(uint32_t) * C);
		memset(h2, 0, sizeof(uint32_t) * C);
		memset(h3, 0, sizeof(uint32_t) * C);
	}
	for (uint32_t start = g->pb[p]; start < g->pb[p + 1]; start += GUM_BLOCK)
	{
		uint32_t	nb = g->pb[p + 1] - start < GUM_BLOCK ? g->pb[p + 1] - start : GUM_BLOCK,
					i = 0;
		uint32_t   *idx = keep ? keep + start : buf;

		gindex_block(g, m, start, nb, idx);
		if (split)
			for (; i + 4 <= nb; i += 4)
			{
				cnt[idx[i]]++;
				h1[idx[i + 1]]++;
				h2[idx[i + 2]]++;
				h3[idx[i + 3]]++;
			}
		for (; i < nb; i++)
			cnt[idx[i]]++;
	}
	if (split)
		for (uint32_t k = 0; k < C; k++)
			cnt[k] += h1[k] + h2[k] + h3[k];
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
 * Whether a recount of a marginal keeps its rows' cells in rowidx for the scan of its visit: whenever
 * rowidx exists (a grouped layout unless counting is incremental, or a column-major one under
 * LAZY counting: choose_layout), whatever the marginal.  The one test for both the recount and
 * gum_ensure_counts; every writer of rows must clear idx_of (today only visit's moves, and the
 * end of the run).
 */
static inline bool
keeps_cells(const gum *g)
{
	return g->rowidx != NULL;
}

static void *
recount_worker(void *arg)
{
	recounter  *rc = arg;
	gum		   *g = rc->g;

	if (rc->only != NULL)
		recount_part(g, rc->only, rc->part, keeps_cells(g) ? g->rowidx : NULL);
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

#ifdef DPSYNTH_TEST_RNG
static unsigned long gum_test_recounts = 0;	/* dp_gum.h's seam */

unsigned long
dp_gum_test_recounts(void)
{
	return __atomic_exchange_n(&gum_test_recounts, 0, __ATOMIC_RELAXED);
}
#define GUM_TEST_RECOUNTED(k) __atomic_fetch_add(&gum_test_recounts, (k), __ATOMIC_RELAXED)

static unsigned long gum_test_restores = 0;	/* dp_gum.h's seam */

unsigned long
dp_gum_test_restores(void)
{
	return __atomic_exchange_n(&gum_test_restores, 0, __ATOMIC_RELAXED);
}
#define GUM_TEST_RESTORED() __atomic_fetch_add(&gum_test_restores, 1, __ATOMIC_RELAXED)
#else
#define GUM_TEST_RECOUNTED(k) ((void) 0)
#define GUM_TEST_RESTORED() ((void) 0)
#endif

/* Brings the counts of m (or, with m NULL, of every marginal) up to date. */
void
gum_ensure_counts(gum *g, gmarg *m)
{
	recounter	rc[DP_MAX_THREADS];
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
	/* where rowidx exists, the recount of m kept its rows' cells for the scan of its visit */
	if (m != NULL && keeps_cells(g))
		g->idx_of = m;
	for (uint32_t i = 0; i < g->nm; i++)
		if (m == NULL ? g->m[i].dirty : &g->m[i] == m)
		{
			g->recount_work += (double) g->n * g->m[i].nattrs;
			g->m[i].dirty = false;
			GUM_TEST_RECOUNTED(1);
		}
}

/* ---------- one visit of one marginal, stage by stage ---------- */

/*
 * Visit, stage 1: the cells' classes and continuous gains from tot (the counts over all parts):
 * an under-full cell gains min(a - s, alpha * s) * n, or alpha * a * n when empty; the over-full
 * cells are listed in g->over (*nover of them, lmax their excess).  Returns G, the whole gain
 * rounded (at most the rounded excess); g->gain holds its cumulative rounding over the cells.
 * G == 0: nothing to move.
 */
static uint64_t
visit_gains(gum *g, const gmarg *m, double alpha, uint32_t *nover, double *lmax)
{
	const uint32_t C = m->ncells;
	const uint32_t *tot = g->tot;
	double		sum_gain = 0;
	uint64_t	G;

	*nover = 0;
	*lmax = 0;
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
				g->over[(*nover)++] = k;
				*lmax += c - t;
			}
			else
				g->cls[k] = CELL_EQ;
		}
	}
	G = (uint64_t) floor(sum_gain + 0.5);
	if ((double) G > floor(*lmax + 0.5))
		G = (uint64_t) floor(*lmax + 0.5);
	if (G == 0 || *nover == 0)
		return 0;
	return cum_round(g->x, C, G, NULL, g->gain);
}

/*
 * Visit, stage 2: the losses of the over-full cells, min(s - a, beta * s) * n with beta found by
 * bisection so that they sum to G, rounded exactly into g->lose (capped by the cells' counts).
 * Returns the rows that move: G, or less when the caps bite (the excess gain is then dropped).
 */
static uint64_t
visit_losses(gum *g, const gmarg *m, uint32_t nover, double lmax, uint64_t G)
{
	const uint32_t C = m->ncells;
	const uint32_t *tot = g->tot;
	double		beta = 1;
	uint64_t	L;

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
				hi = mid;		/* close enough: the rounding below makes the total exact */
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
	L = cum_round(g->x, C, G, tot, g->lose);
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
	return G;
}

/*
 * Visit, stage 3: the wanted ordinals, into want: the losses of the over-full cells first (the
 * pool), then the duplicates' sources, round(r * gain) of every under-full cell that has rows;
 * wbeg[k] .. wend[k] are cell k's.  mvarg (n values; a cell's ordinals are at most n) is free
 * until the moves are listed (this thread alone, no helper thread runs yet): the sorts' scratch.
 */
static void
visit_wanted(gum *g, const gmarg *m, uint32_t nover, double r)
{
	const uint32_t C = m->ncells;
	const uint32_t *tot = g->tot;
	uint64_t	pos = 0;

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
}

/*
 * Visit, stage 4: the rows holding the wanted ordinals, each part on its own thread.  The
 * ordinals of a cell count its rows in row order, and the parts are consecutive, so ordinal o of
 * cell k lies in part p when off_p <= o < off_p + cnt[p][k] (off_p: the cell's rows in the parts
 * before p); it is made local to the part.  The rows found are the same whatever the parts, and
 * replace their ordinals in want.  Returns false when some wanted row was not found (counts out
 * of step with the table: a bug).
 */
static bool
visit_find_rows(gum *g, const gmarg *m)
{
	const uint32_t C = m->ncells;
	const uint32_t P = g->nparts;
	scanner		sc[DP_MAX_THREADS];
	bool		lost = false;

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
			g->pleft[q][k] = b < w ? g->want[b] + 1 : UINT32_MAX;
			off = lim;
		}
	}
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
	return !lost;
}

/*
 * Visit, stage 5: the pool (the G rows lost by the over-full cells, want[0 .. G)) in random
 * order, handed to the under-full cells: move i sends row want[i] to cell mvarg[i] (replace) or
 * overwrites it with a copy of row mvarg[i] (duplicate; the sources follow the pool in want, cell
 * by cell); mvpart[p] lists the moves whose row is in part p.
 */
static void
visit_list_moves(gum *g, const gmarg *m, uint64_t G)
{
	const uint32_t C = m->ncells;
	const uint32_t P = g->nparts;
	uint64_t	p = 0,
				srcpos = G;

	dp_prng_shuffle_u32(g->rng, g->want, (size_t) G);
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
}

/*
 * Visit, stage 6: the G moves, each part's on its own thread, in chunks with a heartbeat between
 * them (a cancel never waits for a whole visit).  Incremental counting moves the counts with the
 * rows; lazy counting marks the component's marginals dirty.  Returns 0, or -1 when cancelled.
 */
static int
visit_run_moves(gum *g, const gmarg *m, uint64_t G)
{
	const uint32_t P = g->nparts;

	/* what incremental counting costs for these moves; lazy: the component's counts go stale */
	g->inc_work += (double) G * (double) g->comp_attrs[m->comp];
	if (g->lazy)
		for (uint32_t j = g->comp_margs_off[m->comp]; j < g->comp_margs_off[m->comp + 1]; j++)
			g->m[g->comp_margs[j]].dirty = true;

	g->idx_of = NULL;			/* the rows change: cells kept by a recount are stale */
	for (uint32_t done = 0; done < (uint32_t) G; done += GUM_MOVE_CHUNK)
	{
		mover		w[DP_MAX_THREADS];
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
		if (upto < (uint32_t) G &&
			dp_report(g->prm->progress, g->prm->progress_arg, DP_PHASE_GUM, g->iter, g->prm->iterations, -1) != 0)
			return -1;
	}
	return 0;
}

/*
 * m's error right after its visit's G moves (dp_gum_params.visit_errors): each of the G rows of
 * the pool left its over-full cell (lose) and took an under-full cell's codes of m (gain, whether
 * by a replace or a duplicate), so m's counts are tot - lose + gain, exactly.  G == 0: tot.
 */
static double
post_visit_error(const gum *g, const gmarg *m, uint64_t G)
{
	const uint32_t *tot = g->tot;
	double		s = 0;

	for (uint32_t k = 0; k < m->ncells; k++)
	{
		double		c = (double) tot[k];

		if (G > 0)
			c += (double) g->gain[k] - (double) g->lose[k];
		s += fabs(c - m->tgt[k]);
	}
	return s / (double) g->n;
}

/*
 * One visit of marginal m: rows move from its over-full cells to its under-full ones, exactly as
 * dp_gum.h's step 3 says, through the stages above.  Returns 0, or -1 when the progress callback
 * cancelled (a heartbeat between chunks of moves).
 */
static int
visit(gum *g, gmarg *m, double alpha, double r)
{
	uint32_t	nover;
	double		lmax;
	uint64_t	G;

	gum_ensure_counts(g, m);
	total_counts(g, m, g->tot);
	G = visit_gains(g, m, alpha, &nover, &lmax);
	if (G > 0)
		G = visit_losses(g, m, nover, lmax, G);
	if (G > 0)
		visit_wanted(g, m, nover, r);
	if (G > 0 && !visit_find_rows(g, m))
	{
		/* counts out of step with the table (a bug): resynchronise, keep no cells, change nothing */
		recount(g, m);
		g->idx_of = NULL;
		total_counts(g, m, g->tot);
		G = 0;
	}
	if (g->prm->visit_errors)
		m->err = post_visit_error(g, m, G);
	if (G == 0)
		return 0;
	visit_list_moves(g, m, G);
	return visit_run_moves(g, m, G);
}

/* ---------- the iterations ---------- */

/* The iteration's order of visits: largest error first (ties: target order), into g->order. */
static void
order_visits(gum *g)
{
	uint32_t   *order = g->order;

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
}

/*
 * The counting mode of iteration t (see gum.lazy): lazy where incremental counting would cost
 * more than recounting.  Before the first iteration, a visit moves about min(alpha, err / 2) of
 * the rows; after it, the previous iteration's costs tell.
 */
static void
choose_counting(gum *g, const dp_gum_params *prm, uint32_t t, double alpha)
{
	if (t == 0)
	{
		g->inc_work = 0;
		for (uint32_t i = 0; i < g->nm; i++)
			g->inc_work += fmin(alpha, g->m[i].err / 2) * g->n * (double) g->comp_attrs[g->m[i].comp];
	}
	if (t == 0 || !g->lazy)
	{
		double		total_attrs = 0;

		for (uint32_t c = 0; c < g->ncomp; c++)
			total_attrs += (double) g->comp_attrs[c];
		g->recount_work = 2.0 * g->n * total_attrs;	/* at most: two recounts each */
	}
	g->lazy = prm->counting == DP_GUM_COUNT_LAZY ||
		(prm->counting != DP_GUM_COUNT_INCREMENTAL && g->inc_work > GUM_LAZY_MARGIN * g->recount_work);
	g->inc_work = 0;
	g->recount_work = 0;
}

/*
 * One iteration t: every iterated marginal visited once, in the order of their errors, then
 * every count brought up to date and the errors recomputed.  *mean receives the mean error.
 * Returns 0, or -1 when cancelled.
 */
static int
iteration(gum *g, const dp_gum_params *prm, uint32_t t, double *mean)
{
	double		alpha = prm->alpha0 * pow(GUM_DECAY, (double) (t / GUM_DECAY_EVERY));
	double		r = (t % 2 == 0) ? 0.5 : 1.0;

	order_visits(g);
	g->iter = t;
	choose_counting(g, prm, t, alpha);
	for (uint32_t i = 0; i < g->nm; i++)
	{
		if (visit(g, &g->m[g->order[i]], alpha, r) != 0)
			return -1;
		/* one visit is one pass over the rows: a cancel must not wait for a whole iteration */
		if (dp_report(prm->progress, prm->progress_arg, DP_PHASE_GUM, t, prm->iterations, -1) != 0)
			return -1;
	}
	*mean = 0;
	/* visit_errors: every marginal's error was taken at its visit, and no count is needed here */
	if (!prm->visit_errors)
	{
		gum_ensure_counts(g, NULL);
		for (uint32_t i = 0; i < g->nm; i++)
			g->m[i].err = gum_marg_error(g, &g->m[i]);
	}
	for (uint32_t i = 0; i < g->nm; i++)
		*mean += g->m[i].err;
	*mean /= g->nm;
	g->iter = t + 1;
	return 0;
}

/*
 * The GUM iterations (dp_gum.h, step 3) on the working table, when g->iterate: every marginal
 * counted, then iterations until prm->iterations or the early stop.  The best table reached (the
 * lowest mean error at the end of an iteration) is kept in copies of the working table's blocks
 * and given back at the end if later iterations did worse (no copy at the last iteration, which
 * nothing follows).  With prm->visit_errors the errors are the visits' own and the last table
 * stands (no copy, no restore).  Returns 0, -1 (cancelled) or -2 (out
 * of memory).
 */
int
gum_iterate(gum *g, const dp_gum_params *prm)
{
	double		best = INFINITY,
				snap_err = INFINITY,
				mean = INFINITY;	/* of the last iteration */
	uint32_t	best_at = 0;
	void	  **snap;

	if (!g->iterate)
		return 0;
	/* every marginal counted (a grouped component's in one pass over its rows) */
	for (uint32_t i = 0; i < g->nm; i++)
		g->m[i].dirty = true;
	gum_ensure_counts(g, NULL);
	for (uint32_t i = 0; i < g->nm; i++)
		g->m[i].err = gum_marg_error(g, &g->m[i]);

	snap = gum_calloc(g, g->nblk ? g->nblk : 1, sizeof(void *));
	if (snap == NULL)
		return -2;
	for (uint32_t t = 0; t < prm->iterations; t++)
	{
		if (iteration(g, prm, t, &mean) != 0)
			return -1;
		if (dp_report(prm->progress, prm->progress_arg, DP_PHASE_GUM, t + 1, prm->iterations, mean) != 0)
			return -1;
		/*
		 * the best table so far: kept, and given back if later iterations do worse (nothing to
		 * keep after the last iteration, nor with visit_errors, where the last table stands)
		 */
		if (mean < snap_err)
		{
			snap_err = mean;
			if (t + 1 < prm->iterations && !prm->visit_errors)
			{
				for (uint32_t b = 0; b < g->nblk; b++)
					if (snap[b] == NULL && (snap[b] = gum_alloc(g, g->blksz[b])) == NULL)
						return -2;
				gum_copy_blocks(g, snap, g->blk);
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
	/*
	 * mean: the error of the table as it stands (INFINITY when no iteration ran).  With
	 * visit_errors the last table stands: an error taken at a visit does not compare tables
	 * (the iterations that duplicate half as many rows leave lower ones, not better tables).
	 */
	if (snap_err < mean && !prm->visit_errors)
	{
		gum_copy_blocks(g, g->blk, snap);
		GUM_TEST_RESTORED();
	}
	for (uint32_t b = 0; b < g->nblk; b++)
		gum_free(g, snap[b]);
	return 0;
}
