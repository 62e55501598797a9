/*
 * dp_adaptive_cand.c - the adaptive method's candidates and their exact counts (dp_adaptive.h,
 * steps 2 and 2c): a candidate's counts in a table (laned histograms, or the estimate's bit sets),
 * the threaded counting of many, the triple candidates, and the counts of rows from elsewhere.
 */
#include "dp_adaptive_cand.h"

#include <string.h>

#include "dp_gum.h"
#include "dp_internal.h"

/* The candidates' order: by cells, then arity, then columns (a total order: qsort's result is unique). */
int
dpa_cmp_cells(const void *a, const void *b)
{
	const Cand *x = a,
			   *y = b;

	if (x->cells != y->cells)
		return x->cells < y->cells ? -1 : 1;
	if (x->nattrs != y->nattrs)
		return x->nattrs < y->nattrs ? -1 : 1;
	for (uint32_t k = 0; k < x->nattrs; k++)
		if (x->attrs[k] != y->attrs[k])
			return x->attrs[k] < y->attrs[k] ? -1 : 1;
	return 0;
}

/* The median of the candidate pairs' cell counts (0 if there is none); cand is sorted by cells;
 * the coarse pairs are not counted (they follow the others and are summed from their fine twins). */
uint64_t
dpa_median_pair_cells(const Cand *cand, uint32_t ncand)
{
	uint32_t	np = 0,
				k = 0;

	for (uint32_t r = 0; r < ncand; r++)
		np += cand[r].nattrs == 2 && !cand[r].coarse;
	for (uint32_t r = 0; r < ncand; r++)
		if (cand[r].nattrs == 2 && !cand[r].coarse && k++ == np / 2)
			return cand[r].cells;
	return 0;
}

static inline uint64_t
cand_index(const Cand *cd, const dp_codes *t, const uint32_t *sizes, uint64_t i)
{
	if (cd->nattrs == 1)
		return t->col[cd->attrs[0]][i];
	if (cd->nattrs == 2)
		return (uint64_t) t->col[cd->attrs[0]][i] * sizes[cd->attrs[1]] + t->col[cd->attrs[1]][i];
	return ((uint64_t) t->col[cd->attrs[0]][i] * sizes[cd->attrs[1]] + t->col[cd->attrs[1]][i]) * sizes[cd->attrs[2]] +
		t->col[cd->attrs[2]][i];
}


/* The counts of candidate cd in table t (x, cd->cells of them, overwritten); lane: LANES *
 * LANE_CELLS scratch. */
static void
cand_count(const Cand *cd, const dp_codes *t, const uint32_t *sizes, uint32_t *x, uint32_t *lane)
{
	uint64_t	n = t->nrows,
				cells = cd->cells;

	if (cells > LANE_CELLS || cd->nattrs > 2)
	{
		memset(x, 0, sizeof(uint32_t) * cells);
		for (uint64_t i = 0; i < n; i++)
			x[cand_index(cd, t, sizes, i)]++;
		return;
	}
	memset(lane, 0, sizeof(uint32_t) * LANES * cells);
	if (cd->nattrs == 1)
	{
		const uint16_t *a = t->col[cd->attrs[0]];

		for (uint64_t i = 0; i < n; i++)
			lane[(size_t) a[i] * LANES + (i & (LANES - 1))]++;
	}
	else
	{
		const uint16_t *a = t->col[cd->attrs[0]],
				   *b = t->col[cd->attrs[1]];
		uint32_t	sb = sizes[cd->attrs[1]];

		for (uint64_t i = 0; i < n; i++)
			lane[((size_t) a[i] * sb + b[i]) * LANES + (i & (LANES - 1))]++;
	}
	for (uint64_t q = 0; q < cells; q++)
	{
		const uint32_t *l = lane + q * LANES;
		uint32_t	sum = 0;

		for (int k = 0; k < LANES; k++)
			sum += l[k];
		x[q] = sum;
	}
}

/*
 * The estimate's counts of small candidates from bit sets: for every column of at most BIT_CODES
 * codes, one bit per row and code (the rows where the column holds the code), so that a pair's
 * cell (u, v) is the population count of the AND of two rows of bits.  A cell costs m / 64 word
 * operations against m increments for the whole marginal in cand_count: cheaper while the
 * candidate has at most BIT_CELLS cells, or BIT_CELLS_VPOPCNT where the processor counts eight
 * words an instruction.  The same integer counts as cand_count.
 */
#define BIT_CODES	64
#define BIT_CELLS	128
#define BIT_CELLS_VPOPCNT 1024	/* ... where eight words are counted an instruction (VPOPCNTQ) */
#define BIT_WORDS	((uint64_t) 1 << 22)	/* 32 MB at most; columns past it are counted as before */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define POPCNT_TARGET __attribute__((target("popcnt")))
bool
dpa_have_popcnt(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("popcnt");
}

/*
 * The population count of p AND q over W words, eight words an instruction on a processor with
 * AVX-512's VPOPCNTQ (the same integer as the word-by-word loop; bits_count checks for it).
 */
#define DPA_VPOPCNT 1
__attribute__((target("popcnt,avx512f,avx512vpopcntdq")))
static uint64_t
and_popcount_vpopcnt(const uint64_t *p, const uint64_t *q, uint64_t W)
{
	__m512i		acc = _mm512_setzero_si512();
	uint64_t	k = 0,
				c;

	for (; k + 8 <= W; k += 8)
		acc = _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_and_si512(_mm512_loadu_si512(p + k),
																		   _mm512_loadu_si512(q + k))));
	c = (uint64_t) _mm512_reduce_add_epi64(acc);
	for (; k < W; k++)
		c += (uint64_t) __builtin_popcountll(p[k] & q[k]);
	return c;
}

#ifdef DPSYNTH_TEST_RNG
static bool test_no_vpopcnt = false;	/* dp_adaptive.h's seam */

void
dp_adaptive_test_no_vpopcnt(bool on)
{
	test_no_vpopcnt = on;
}
#define VPOPCNT_ALLOWED (!test_no_vpopcnt)
#else
#define VPOPCNT_ALLOWED true
#endif

static bool
have_vpopcnt(void)
{
	__builtin_cpu_init();
	return VPOPCNT_ALLOWED && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}
#else
#define POPCNT_TARGET
bool
dpa_have_popcnt(void)
{
	return true;
}
#endif

/* The bit sets of table t (dpa_bits_alloc'd for its sizes and rows). */
void
dpa_bits_fill(Bits *bits, const dp_codes *t, const uint32_t *sizes)
{
	uint64_t	W = bits->words;

	memset(bits->w, 0, sizeof(uint64_t) * bits->nw);
	for (uint32_t c = 0; c < t->ncols; c++)
	{
		const uint16_t *a = t->col[c];
		uint64_t   *w;

		if (bits->off[c] == UINT64_MAX)
			continue;
		w = bits->w + bits->off[c];
		for (uint64_t i = 0; i < t->nrows; i++)
			w[(uint64_t) (a[i] < sizes[c] ? a[i] : 0) * W + (i >> 6)] |= (uint64_t) 1 << (i & 63);
	}
}

/* off and w for a table of m rows and these sizes (columns of at most BIT_CODES codes, until
 * BIT_WORDS); w stays NULL when no column qualifies. */
int
dpa_bits_alloc(Bits *bits, uint32_t d, const uint32_t *sizes, uint64_t m)
{
	uint64_t	W = (m + 63) / 64,
				nw = 0;

	bits->off = dp_zalloc(sizeof(uint64_t) * d);
	if (!bits->off)
		return -1;
	for (uint32_t c = 0; c < d; c++)
	{
		bool		fits = sizes[c] <= BIT_CODES && nw + (uint64_t) sizes[c] * W <= BIT_WORDS;

		bits->off[c] = fits ? nw : UINT64_MAX;
		if (fits)
			nw += (uint64_t) sizes[c] * W;
	}
	bits->rows = m;
	bits->words = W;
	bits->nw = nw;
#ifdef DPA_VPOPCNT
	bits->vpopcnt = have_vpopcnt();
#endif
	if (nw == 0)
		return 0;
	bits->w = dp_zalloc(sizeof(uint64_t) * nw);
	return bits->w ? 0 : -1;
}


static bool
bits_usable(const Bits *bits, const Cand *cd)
{
	/* up to these cells bit sets count a candidate faster than cand_count */
	uint64_t	cells = bits && bits->vpopcnt ? BIT_CELLS_VPOPCNT : BIT_CELLS;

	return bits && bits->w && cd->nattrs <= 2 && cd->cells <= cells && bits->off[cd->attrs[0]] != UINT64_MAX &&
		(cd->nattrs == 1 || bits->off[cd->attrs[1]] != UINT64_MAX);
}

/* The population count of p AND q over W words, a word at a time (dp_popcount_and, inlined here
 * with the popcnt instruction where the build can ask for it). */
POPCNT_TARGET static uint64_t
and_popcount(const uint64_t *p, const uint64_t *q, uint64_t W)
{
	return dp_popcount_and(p, q, W);
}

/* cd's exact counts from the bit sets into x (a column's code u: its set AND itself) */
static void
bits_count(const Bits *bits, const Cand *cd, const uint32_t *sizes, uint32_t *x)
{
	uint64_t	W = bits->words;
	const uint64_t *A = bits->w + bits->off[cd->attrs[0]];
	uint64_t	(*count) (const uint64_t *, const uint64_t *, uint64_t) = and_popcount;

#ifdef DPA_VPOPCNT
	if (bits->vpopcnt)
		count = and_popcount_vpopcnt;
#endif
	if (cd->nattrs == 1)
		for (uint64_t u = 0; u < cd->cells; u++)
			x[u] = (uint32_t) count(A + u * W, A + u * W, W);
	else
	{
		const uint64_t *B = bits->w + bits->off[cd->attrs[1]];
		uint32_t	sa = sizes[cd->attrs[0]],
					sb = sizes[cd->attrs[1]];

		for (uint32_t u = 0; u < sa; u++)
			for (uint32_t v = 0; v < sb; v++)
				x[(uint64_t) u * sb + v] = (uint32_t) count(A + (uint64_t) u * W, B + (uint64_t) v * W, W);
	}
}

int64_t
dp_adaptive_bits_check(const dp_codes *t, const uint32_t *sizes)
{
	Bits		bits = {0};
	uint32_t   *x = NULL,
			   *z = NULL,
			   *lane = dp_zalloc(sizeof(uint32_t) * LANES * LANE_CELLS);
	int64_t		bad = 0,
				used = 0;

	if (!lane || dpa_bits_alloc(&bits, t->ncols, sizes, t->nrows) != 0 ||
		!(x = dp_zalloc(sizeof(uint32_t) * BIT_CELLS_VPOPCNT)) || !(z = dp_zalloc(sizeof(uint32_t) * BIT_CELLS_VPOPCNT)))
		bad = -1;
	else if (bits.w && dpa_have_popcnt())
	{
		dpa_bits_fill(&bits, t, sizes);
		for (uint32_t a = 0; a < t->ncols; a++)
			for (uint32_t b = a; b < t->ncols; b++)
			{
				Cand		cd = {a == b ? 1 : 2, {a, b, 0}, a == b ? sizes[a] : (uint64_t) sizes[a] * sizes[b], 0, -1, 0, false, 0};

				if (!bits_usable(&bits, &cd))
					continue;
				bits_count(&bits, &cd, sizes, x);
				cand_count(&cd, t, sizes, z, lane);
				used++;
				for (uint64_t q = 0; q < cd.cells; q++)
					bad += x[q] != z[q];
			}
		bad = bad > 0 ? bad : -2 - used;
	}
	dp_free(bits.off);
	dp_free(bits.w);
	dp_free(x);
	dp_free(z);
	dp_free(lane);
	return bad;
}

/* Candidates k0, k0 + step, ... below k1 counted in table t, by one thread (its own lane buffer). */
typedef struct Counter
{
	const Cand *cand;
	uint32_t	k0,
				k1,
				step;
	uint32_t   *counts;			/* the exact counts: each candidate its own slice */
	const dp_codes *t;
	const uint32_t *sizes;
	uint32_t   *lane;			/* LANES * LANE_CELLS */
} Counter;

static void *
count_worker(void *arg)
{
	const Counter *c = arg;

	for (uint32_t k = c->k0; k < c->k1; k += c->step)
		if (!c->cand[k].coarse)	/* summed from its fine twin's counts by the caller */
			cand_count(&c->cand[k], c->t, c->sizes, c->counts + c->cand[k].offset, c->lane);
	return NULL;
}

/* The exact counts of candidates [r0, r1) in table t, over at most nthreads threads (each
 * candidate's slice written by one thread: the same counts whatever the number of threads);
 * lanes: nthreads lane buffers (each LANES * LANE_CELLS), taken from the scorers. */
void
dpa_count_cands(const Cand *cand, uint32_t r0, uint32_t r1, uint32_t *counts, const dp_codes *t,
				const uint32_t *sizes, uint32_t *const *lanes, uint32_t nthreads)
{
	uint32_t	T;
	Counter		counters[DP_MAX_THREADS];

	if (r1 <= r0)
		return;
	T = (uint64_t) (r1 - r0) * t->nrows >= SCORE_THREAD_WORK ? nthreads : 1;
	if (T > r1 - r0)
		T = r1 - r0;
	for (uint32_t k = 0; k < T; k++)
		counters[k] = (Counter) {cand, r0 + k, r1, T, counts, t, sizes, lanes[k]};
	dp_run_parallel(count_worker, counters, sizeof(Counter), T);
}

/* The estimate's counts of candidate cd, scaled to total (y); cnt: cd->cells of scratch; bits:
 * the estimate's bit sets, or NULL. */
void
dpa_est_counts(const Cand *cd, const dp_codes *synth, const Bits *bits, const uint32_t *sizes, double total,
			   double *y, uint32_t *cnt, uint32_t *lane)
{
	double		scale = synth->nrows > 0 ? total / (double) synth->nrows : 0;

	if (bits_usable(bits, cd))
		bits_count(bits, cd, sizes, cnt);
	else
		cand_count(cd, synth, sizes, cnt, lane);
	for (uint64_t q = 0; q < cd->cells; q++)
		y[q] = (double) cnt[q] * scale;
}

/*
 * Triple candidates (dp_adaptive.h, step 2c): pair {a, b} was just measured for the first time;
 * every triple {a, b, c} with exactly one of {a, c} and {b, c} measured before becomes a candidate
 * (with both, it was offered when the second of them was measured), while there are
 * fewer than tr->max of them and it has at most DP_ADAPTIVE_TRIPLE_CELLS cells (and the exact
 * counts stay within DP_ADAPTIVE_MAX_TOTAL cells).  Appended to cand with their slices of counts
 * (grown); the caller counts them.  Which triples: a function of the released selections and the
 * public sizes only.  Returns -1 when counts could not grow.
 */
int
dpa_add_triples(Triples *tr, uint32_t d, uint32_t a, uint32_t b, Cand *cand, uint32_t *ncand, uint32_t **counts,
				uint64_t *totcells, const uint32_t *sizes)
{
	tr->pair_measured[(size_t) a * d + b] = tr->pair_measured[(size_t) b * d + a] = 1;
	for (uint32_t c = 0; c < d && tr->n < tr->max; c++)
	{
		uint32_t	t[3];
		uint64_t	cells;
		Cand	   *cd;

		if (c == a || c == b || tr->pair_measured[(size_t) a * d + c] == tr->pair_measured[(size_t) b * d + c])
			continue;
		t[0] = a < b ? a : b;
		t[2] = a < b ? b : a;
		t[1] = c;
		if (c < t[0])
		{
			t[1] = t[0];
			t[0] = c;
		}
		else if (c > t[2])
		{
			t[1] = t[2];
			t[2] = c;
		}
		cells = (uint64_t) sizes[t[0]] * sizes[t[1]] * sizes[t[2]];
		if (cells > DP_ADAPTIVE_TRIPLE_CELLS || *totcells + cells > DP_ADAPTIVE_MAX_TOTAL)
			continue;
		if (*totcells + cells > tr->cap)
		{
			/* grown by half at least: a few reallocations per run, not one per triple */
			uint64_t	cap = tr->cap + tr->cap / 2;
			uint32_t   *grown;

			if (cap < *totcells + cells)
				cap = *totcells + cells;
			if (cap > DP_ADAPTIVE_MAX_TOTAL)
				cap = DP_ADAPTIVE_MAX_TOTAL;
			grown = dp_realloc(*counts, sizeof(uint32_t) * cap);
			if (!grown)
				return -1;
			*counts = grown;
			tr->cap = cap;
		}
		cd = &cand[(*ncand)++];
		*cd = (Cand) {3, {t[0], t[1], t[2]}, cells, *totcells, -1, 0, false, 0};
		*totcells += cells;
		tr->n++;
	}
	return 0;
}

/*
 * Whether counts from elsewhere are those of one set of rows: every column's and every pair's
 * present and adding up to nrows (without overflow).  Honest servers always pass (each counts
 * its rows in one snapshot); a server that sends other counts fails the call instead of
 * overflowing a count.
 */
bool
dpa_extra_consistent(const dp_extra_counts *ex, uint32_t d, const uint32_t *sizes)
{
	size_t		k = 0;

	if (!ex->oneway || (d > 1 && !ex->pair))
		return false;
	for (uint32_t j = 0; j < d; j++)
	{
		uint64_t	sum = 0;

		if (!ex->oneway[j])
			return false;
		for (uint32_t c = 0; c < sizes[j]; c++)
			if (__builtin_add_overflow(sum, ex->oneway[j][c], &sum))
				return false;
		if (sum != ex->nrows)
			return false;
	}
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
		{
			uint64_t	sum = 0;

			if (!ex->pair[k])
				return false;
			for (size_t c = 0; c < (size_t) sizes[a] * sizes[b]; c++)
				if (__builtin_add_overflow(sum, ex->pair[k][c], &sum))
					return false;
			if (sum != ex->nrows)
				return false;
		}
	return true;
}

/*
 * x + v, at most DP_ADAPTIVE_COUNT_CAP: with counts from elsewhere the rows are not bounded by
 * what the table holds, and a refusal after the charge would depend on their number.  Clamping
 * moves a count by no more than the rows moved it (sensitivity unchanged).
 */
static inline uint32_t
add_capped(uint32_t x, uint64_t v)
{
	return v >= (uint64_t) (DP_ADAPTIVE_COUNT_CAP - x) ? DP_ADAPTIVE_COUNT_CAP : x + (uint32_t) v;
}

/*
 * Adds the counts of rows the table does not hold (p->extra, over the original codes) to the
 * candidates' exact counts (over merged codes): each original cell into the merged cell its
 * codes map to, so that every count is that of all the rows, clamped at DP_ADAPTIVE_COUNT_CAP.
 */
void
dpa_add_extra(const dp_extra_counts *ex, const Cand *cand, uint32_t ncand, uint32_t *counts, uint32_t d,
			  const uint32_t *sizes, const dp_privsyn_result *out)
{
	for (uint32_t r = 0; r < ncand; r++)
	{
		const Cand *cd = &cand[r];
		uint32_t   *x = counts + cd->offset;
		uint32_t	a = cd->attrs[0];

		if (cd->coarse)
			continue;			/* summed from its fine twin's counts by the caller */

		if (cd->nattrs == 1)
		{
			for (uint32_t c = 0; c < sizes[a]; c++)
				x[out->code_map[a][c]] = add_capped(x[out->code_map[a][c]], ex->oneway[a][c]);
		}
		else if (cd->nattrs == 2)
		{
			uint32_t	b = cd->attrs[1],
						mb = out->merged_sizes[b];
			/* pair (a, b), a < b: index sum over a' < a of (d - 1 - a'), plus b - a - 1 */
			size_t		k = (size_t) a * (2 * (size_t) d - a - 1) / 2 + (b - a - 1);
			const uint64_t *pc = ex->pair[k];

			for (uint32_t ca = 0; ca < sizes[a]; ca++)
			{
				uint32_t   *row = x + (size_t) out->code_map[a][ca] * mb;

				for (uint32_t cb = 0; cb < sizes[b]; cb++)
					row[out->code_map[b][cb]] = add_capped(row[out->code_map[b][cb]], pc[(size_t) ca * sizes[b] + cb]);
			}
		}
	}
}
