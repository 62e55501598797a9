/*
 * dp_adaptive.c - adaptive measurement in rounds (see dp_adaptive.h for the method and its
 * privacy arithmetic).
 */
#include "dp_adaptive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_internal.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_consist.h"
#include "dp_counts.h"
#include "dp_random.h"
#include "dp_sampler.h"

#define MEASURE_SHARE	0.9		/* AIM: of a round's cost, the rest selects */
#define SCORE_UNITS		1024	/* scores on a grid of 1/1024 */
/*
 * Sensitivity of a pair's or a triple's integer score, in grid units: one row moves one exact count by 1, so
 * sum |x - y| moves by at most 1 (1024 units); every term is computed in double (x < 2^32 is exact,
 * the subtraction errs by at most 2^-21, i.e. 2^-11 units) and rounded to the nearest unit, which
 * adds at most 1 unit to the change of the one term that moved (the others are computed from the
 * same operands).  A column's score is half of it (weight 1/2).
 */
#define SCORE_SENS		(SCORE_UNITS + 1)
/* a round's scoring (candidates x estimate rows) is split over threads from this much work on */
#define SCORE_THREAD_WORK	((uint64_t) 1 << 21)
#define COUNT_CHUNK			64	/* candidates counted between two progress reports */

/* ---- the exponential mechanism ---- */

uint32_t
dp_exp_mech(const int64_t *score, uint32_t k, double eps, uint64_t sens)
{
	int64_t		max;
	double		c;
	uint64_t	num;

	if (k == 0 || !(eps > 0) || !isfinite(eps) || sens == 0)
		return k;
	max = score[0];
	for (uint32_t r = 1; r < k; r++)
		if (score[r] > max)
			max = score[r];
	/* exp(-c * (max - score)), c = eps / (2 sens) per unit, as num / 2^40 rounded down */
	c = ldexp(eps / (2.0 * (double) sens), 40);
	c = nextafter(c, 0);
	num = c >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t) floor(c);	/* 2^64: never rounds up */
	return dp_exp_mech_draw(score, k, max, num);
}

uint32_t
dp_exp_mech_fitting(int64_t *score, uint32_t *idx, uint32_t k, double eps, uint64_t sens,
					bool (*fits) (void *arg, uint32_t idx), void *arg)
{
	uint32_t	left = k,
				r = dp_exp_mech(score, k, eps, sens);

	/* draws without replacement (Plackett-Luce) until one fits: the first of the fitting ones */
	while (r < left && !fits(arg, idx[r]))
	{
		int64_t		s = score[r];
		uint32_t	i = idx[r];

		left--;
		score[r] = score[left];
		idx[r] = idx[left];
		score[left] = s;
		idx[left] = i;
		r = left > 0 ? dp_exp_mech(score, left, eps, sens) : 0;
	}
	return r < left ? r : k;
}

/* ---- the method ---- */

double
dp_adaptive_selections(double R, uint32_t d, double total, uint64_t cells)
{
	double		lo = (double) DP_ADAPTIVE_SELECTIONS_MIN * d,
				hi = (double) DP_ADAPTIVE_SELECTIONS_MAX * d,
				T;

	if (!(total > 0) || !isfinite(total) || cells == 0 || !(R > 0) || !isfinite(R))
		return lo;
	/*
	 * sigma = tau 2 total / (sqrt(2/pi) cells), rho_t = 1 / (2 sigma^2) = cells^2 / (4 pi tau^2
	 * total^2), T = MEASURE_SHARE R / rho_t.
	 */
	T = MEASURE_SHARE * R * 4 * M_PI * DP_ADAPTIVE_NOISE_TVD * DP_ADAPTIVE_NOISE_TVD * total * total /
		((double) cells * (double) cells);
	return T < lo ? lo : T > hi ? hi : T;
}

double
dp_adaptive_rare_threshold(double rho, uint32_t d)
{
	return dp_rare_threshold(rho, DP_ADAPTIVE_ONEWAY_SHARE, d);
}

typedef struct Cand
{
	uint32_t	nattrs;
	uint32_t	attrs[3];
	uint64_t	cells;
	uint64_t	offset;			/* into the exact counts */
	int32_t		meas;			/* index of its measurement in margs, -1 if none */
} Cand;

/*
 * Whether the model's marginals with candidate c added keep their junction tree within bound
 * cells (step 3b): a candidate measured before adds nothing; one inside a clique of the current
 * tree adds no edge; otherwise the tree is built with it.  A function of the released selections
 * and the public sizes only.  scratch: room for nmargs + 1 marginals' headers.
 */
typedef struct TreeFit
{
	const dp_marg *margs;
	uint32_t	nmargs,
				d;
	const uint32_t *sizes;
	const struct Cand *cand;
	uint64_t	bound;
	const dp_jtree *cur;		/* the current model's tree (NULL: none within bound) */
	dp_marg    *scratch;
	uint32_t	builds;
} TreeFit;

static bool
tree_fits(void *arg, uint32_t r)
{
	TreeFit    *f = arg;
	const Cand *c = &f->cand[r];
	dp_marg    *x = &f->scratch[f->nmargs];
	dp_jtree	t;
	int			rc;

	if (c->meas >= 0)
		return true;
	for (uint32_t i = 0; f->cur && i < f->cur->ncliques; i++)
	{
		uint32_t	hits = 0;

		for (uint32_t k = 0; k < c->nattrs; k++)
			for (uint32_t a = 0; a < f->cur->cl[i].nattrs; a++)
				hits += f->cur->cl[i].attrs[a] == c->attrs[k];
		if (hits == c->nattrs)
			return true;
	}
	memcpy(f->scratch, f->margs, sizeof(dp_marg) * f->nmargs);
	memset(x, 0, sizeof(dp_marg));
	x->nattrs = c->nattrs;
	for (uint32_t k = 0; k < c->nattrs; k++)
	{
		x->attrs[k] = c->attrs[k];
		x->sizes[k] = f->sizes[c->attrs[k]];
	}
	f->builds++;
	rc = dp_jtree_build(&t, f->scratch, f->nmargs + 1, f->d, f->sizes, f->bound);
	if (rc == 0)
		dp_jtree_free(&t);
	return rc == 0;				/* too large, or a build that failed: not offered */
}

static int
cmp_cells(const void *a, const void *b)
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

/* The median of the candidate pairs' cell counts (0 if there is none); cand is sorted by cells. */
static uint64_t
median_pair_cells(const Cand *cand, uint32_t ncand)
{
	uint32_t	np = 0,
				k = 0;

	for (uint32_t r = 0; r < ncand; r++)
		np += cand[r].nattrs == 2;
	for (uint32_t r = 0; r < ncand; r++)
		if (cand[r].nattrs == 2 && k++ == np / 2)
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

/*
 * Candidates of at most LANE_CELLS cells are counted in LANES interleaved histograms: rows in a row
 * often fall in the same cell of a small marginal, and one histogram would chain every increment
 * on the previous store.  Same integer counts, several times faster on small marginals.
 */
#define LANES 4
#define LANE_CELLS 4096

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
 * candidate has at most BIT_CELLS cells.  The same integer counts as cand_count.
 */
#define BIT_CODES	64
#define BIT_CELLS	128
#define BIT_WORDS	((uint64_t) 1 << 22)	/* 32 MB at most; columns past it are counted as before */

typedef struct Bits
{
	uint64_t	rows;			/* of the table they were allocated for */
	uint64_t	words;			/* per code: ceil(rows / 64) */
	uint64_t   *off;			/* per column: its code 0's first word, or UINT64_MAX (none) */
	uint64_t   *w;				/* the bits */
	uint64_t	nw;				/* words allocated */
} Bits;

#if defined(__x86_64__) || defined(__i386__)
#define POPCNT_TARGET __attribute__((target("popcnt")))
static bool
have_popcnt(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("popcnt");
}
#else
#define POPCNT_TARGET
static bool
have_popcnt(void)
{
	return true;
}
#endif

/* The bit sets of table t (bits_alloc'd for its sizes and rows). */
static void
bits_fill(Bits *bits, const dp_codes *t, const uint32_t *sizes)
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
static int
bits_alloc(Bits *bits, uint32_t d, const uint32_t *sizes, uint64_t m)
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
	if (nw == 0)
		return 0;
	bits->w = dp_zalloc(sizeof(uint64_t) * nw);
	return bits->w ? 0 : -1;
}


static bool
bits_usable(const Bits *bits, const Cand *cd)
{
	return bits && bits->w && cd->nattrs <= 2 && cd->cells <= BIT_CELLS && bits->off[cd->attrs[0]] != UINT64_MAX &&
		(cd->nattrs == 1 || bits->off[cd->attrs[1]] != UINT64_MAX);
}

POPCNT_TARGET static void
bits_count(const Bits *bits, const Cand *cd, const uint32_t *sizes, uint32_t *x)
{
	uint64_t	W = bits->words;
	const uint64_t *A = bits->w + bits->off[cd->attrs[0]];

	if (cd->nattrs == 1)
	{
		for (uint64_t u = 0; u < cd->cells; u++)
		{
			uint64_t	c = 0;

			for (uint64_t k = 0; k < W; k++)
				c += (uint64_t) __builtin_popcountll(A[u * W + k]);
			x[u] = (uint32_t) c;
		}
		return;
	}
	{
		const uint64_t *B = bits->w + bits->off[cd->attrs[1]];
		uint32_t	sa = sizes[cd->attrs[0]],
					sb = sizes[cd->attrs[1]];

		for (uint32_t u = 0; u < sa; u++)
			for (uint32_t v = 0; v < sb; v++)
			{
				const uint64_t *p = A + (uint64_t) u * W,
						   *q = B + (uint64_t) v * W;
				uint64_t	c = 0;

				for (uint64_t k = 0; k < W; k++)
					c += (uint64_t) __builtin_popcountll(p[k] & q[k]);
				x[(uint64_t) u * sb + v] = (uint32_t) c;
			}
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

	if (!lane || bits_alloc(&bits, t->ncols, sizes, t->nrows) != 0 ||
		!(x = dp_zalloc(sizeof(uint32_t) * BIT_CELLS)) || !(z = dp_zalloc(sizeof(uint32_t) * BIT_CELLS)))
		bad = -1;
	else if (bits.w && have_popcnt())
	{
		bits_fill(&bits, t, sizes);
		for (uint32_t a = 0; a < t->ncols; a++)
			for (uint32_t b = a; b < t->ncols; b++)
			{
				Cand		cd = {a == b ? 1 : 2, {a, b, 0}, a == b ? sizes[a] : (uint64_t) sizes[a] * sizes[b], 0, -1};

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
		cand_count(&c->cand[k], c->t, c->sizes, c->counts + c->cand[k].offset, c->lane);
	return NULL;
}

/* The exact counts of candidates [r0, r1) in table t, over at most nthreads threads (each
 * candidate's slice written by one thread: the same counts whatever the number of threads);
 * lanes: nthreads lane buffers (each LANES * LANE_CELLS), taken from the scorers. */
static void
count_cands(const Cand *cand, uint32_t r0, uint32_t r1, uint32_t *counts, const dp_codes *t,
			const uint32_t *sizes, uint32_t *const *lanes, uint32_t nthreads)
{
	uint32_t	T;
	Counter		counters[DP_GUM_MAX_THREADS];

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
static void
est_counts(const Cand *cd, const dp_codes *synth, const Bits *bits, const uint32_t *sizes, double total,
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
 * The estimate's resolution (dp_adaptive.h, steps b and d).  A round's estimate of m rows stands
 * for the total rows the measurements describe, each row for s = total / m of them: as if it were
 * m rows drawn without replacement from the ideal table of total rows that fits the measurements.
 * A cell's scaled count y then errs by that draw's sampling: for its c = y / s rows, variance
 * m p (1 - p) (total - m) / (total - 1) with p = y / total, i.e. about (s - 1) y (1 - y / total)
 * in scaled units (the finite-population correction makes it 0 when the estimate holds every
 * row, s <= 1).  Two draws, before and after a round that told the estimate nothing new, differ
 * by twice that variance.
 *
 * Measured by a temporary instrumentation of the rounds (2026-11-26, the estimate made again from
 * unchanged measurements, against sqrt(2/pi) * sum sqrt(2 s y (1 - y / total)), the two-draw
 * churn without the correction): 0.9 to 1.2 times it on Adult repeated 30 times (s = 119) once a
 * dozen pairs were measured, 0.04 to 1.7 on Adult (s = 4), 0 to 0.4 on Adult's first 5,000 rows
 * (s = 1: GUM reproduces the consistent counts); a first version without the correction annealed
 * too early on the small tables (smokeban's range .0014 against .0011, bench/RESULTS.md).
 *
 * Both uses add this error to sigma's per cell, in quadrature (independent errors), and take
 * E|N(0, v)| = sqrt(2/pi) sqrt(v): with an exact estimate (m == 0) or one that holds every row
 * (s <= 1) both are AIM's sqrt(2/pi) sigma per cell.  y, total and m are the released estimate's
 * (post-processing): the exact counts are not read here, and the score's sensitivity is
 * unchanged.
 */
static double
resolution_l1(const double *y, uint64_t cells, double sigma, double total, uint64_t m, double draws)
{
	double		s = m > 0 && total > 0 ? total / (double) m : 0,
				l1 = 0;

	if (!(s > 1))
		return sqrt(2 / M_PI) * sigma * (double) cells;	/* AIM's, exactly; no per-cell work */
	for (uint64_t q = 0; q < cells; q++)
	{
		double		v = draws * (s - 1) * y[q] * (1 - y[q] / total);

		l1 += sqrt(2 / M_PI) * sqrt(sigma * sigma + fmax(v, 0));
	}
	return l1;
}

double
dp_adaptive_score_floor(const double *y, uint64_t cells, double sigma, double total, uint64_t m)
{
	return resolution_l1(y, cells, sigma, total, m, 1);
}

double
dp_adaptive_anneal_bar(const double *z, uint64_t cells, double sigma, double total, uint64_t m)
{
	return resolution_l1(z, cells, sigma, total, m, 2);
}

/*
 * The cap on distinct k-way marginals (dp_adaptive.h, step b): the final GUM's work bound over the
 * released total, at least DP_ADAPTIVE_MIN_KWAY_PER_COL d, or DP_ADAPTIVE_MIN_KWAY_MAX if fewer.
 * A total that is not a number of at least one row counts as one row (no cap beyond the work
 * bound itself).
 */
uint64_t
dp_adaptive_max_kway(uint32_t d, double total)
{
	double		k = DP_ADAPTIVE_GUM_WORK / (total >= 1 ? total : 1);	/* at most 2^27 */
	uint64_t	least = (uint64_t) DP_ADAPTIVE_MIN_KWAY_PER_COL * d;

	if (least > DP_ADAPTIVE_MIN_KWAY_MAX)
		least = DP_ADAPTIVE_MIN_KWAY_MAX;

	return k > (double) least ? (uint64_t) k : least;
}

/*
 * What a candidate measured before subtracts from its score (dp_adaptive.h, step b): the
 * estimate's misfit to the measurement so far, z (rho_z), plus AIM's floor at the noise the
 * measurement would have once this round's (sigma) is averaged in.  Everything here is released
 * or public: the exact counts are not read, and the score's sensitivity is unchanged.  A one-way
 * marginal with merged codes carries its rho as a consistency weight, while a merged cell's noise
 * is larger (dp_privsyn.c): sigma' is then too small, and the column scores a little high.
 */
double
dp_adaptive_remeasure_floor(const double *z, double rho_z, const double *y, uint64_t cells, double sigma)
{
	double		misfit = 0,
				prec = 1 / (sigma * sigma) + (rho_z > 0 ? 2 * rho_z : 0);

	for (uint64_t q = 0; q < cells; q++)
		misfit += fabs(z[q] - y[q]);
	return misfit + sqrt(2 / M_PI) * sqrt(1 / prec) * (double) cells;
}

/*
 * Measures candidate cd: its exact counts x plus discrete Gaussian noise g (rho) on every cell.
 * A candidate measured before is averaged with its earlier measurement, weights in proportion to
 * their rho (the average of Gaussian measurements with rho a and b is one with rho a + b).
 */
static int
measure(Cand *cd, const uint32_t *x, const uint32_t *sizes, dp_dgauss *g, double rho, dp_marg *margs,
		uint32_t *nmargs)
{
	dp_marg		noisy;

	if (dp_marg_init(&noisy, cd->nattrs, cd->attrs, sizes) != 0)
		return -2;
	for (uint64_t q = 0; q < cd->cells; q++)
		noisy.cells[q] = (double) x[q];
	if (dp_noise_counts_f64(g, noisy.cells, noisy.cells, cd->cells) != 0)
	{
		dp_marg_free(&noisy);
		return -2;
	}
	noisy.rho = rho;
	if (cd->meas < 0)
	{
		cd->meas = (int32_t) *nmargs;
		margs[(*nmargs)++] = noisy;
	}
	else
	{
		dp_marg    *old = &margs[cd->meas];
		double		wsum = old->rho + noisy.rho;

		for (uint64_t q = 0; q < cd->cells; q++)
			old->cells[q] = (old->cells[q] * old->rho + noisy.cells[q] * noisy.rho) / wsum;
		old->rho = wsum;
		dp_marg_free(&noisy);
	}
	return 0;
}

/*
 * Step 2b: the focus pairs, measured once each before the rounds (see dp_adaptive.h); returns
 * what they cost (0 with no focus), or -1 on failure.
 */
static double
measure_focus(Cand *cand, uint32_t ncand, const uint32_t *counts, const uint32_t *sizes,
			  const uint8_t *focus, double R, double rho_t, dp_marg *margs, uint32_t *nmargs,
			  uint32_t *npairs)
{
	uint32_t	F = 0;
	double		rho_f = rho_t;
	dp_dgauss	g;

	*npairs = 0;
	if (!focus)
		return 0;
	for (uint32_t k = 0; k < ncand; k++)
		F += cand[k].nattrs == 2 && (focus[cand[k].attrs[0]] || focus[cand[k].attrs[1]]);
	if (F == 0)
		return 0;
	if ((double) F * rho_f > R / 2)
		rho_f = nextafter(R / (2.0 * F), 0);	/* rounded down: never more than R / 2 in all */
	if (dp_dgauss_init(&g, dp_gaussian_sigma2(rho_f, 1.0)) != 0)
	{
		dp_invalid("the focus pairs' noise scale is out of range");	/* recorded: the first failure wins */
		return -1;
	}
	for (uint32_t k = 0; k < ncand; k++)
	{
		Cand	   *cd = &cand[k];

		if (cd->nattrs != 2 || !(focus[cd->attrs[0]] || focus[cd->attrs[1]]))
			continue;
		if (measure(cd, counts + cd->offset, sizes, &g, rho_f, margs, nmargs) != 0)
			return -1;
	}
	*npairs = F;
	return (double) F * rho_f;
}

/*
 * Scoring, split over threads: candidates [k0, k1) against the estimate, each with its own
 * scratch.  The scores do not depend on the split.  No hook is called from here (see
 * dp_run_parallel).
 */
typedef struct Scorer
{
	const Cand *cand;
	uint32_t	k0,
				k1;
	const uint32_t *counts;		/* the exact counts */
	const dp_codes *synth;
	const Bits *bits;			/* synth's bit sets, or NULL */
	const uint32_t *sizes;
	double		total;
	double		sigma;			/* of this round's measurement */
	const dp_marg *margs;		/* the measurements so far (a candidate's: cand->meas) */
	int64_t    *score;
	double	   *y;				/* maxcells */
	uint32_t   *ycnt;			/* maxcells */
	uint32_t   *lane;			/* LANES * LANE_CELLS */
} Scorer;

static void *
score_worker(void *arg)
{
	const Scorer *s = arg;

	for (uint32_t k = s->k0; k < s->k1; k++)
	{
		const Cand *ck = &s->cand[k];
		const uint32_t *xk = s->counts + ck->offset;
		int64_t		e = 0,
					bias;

		est_counts(ck, s->synth, s->bits, s->sizes, s->total, s->y, s->ycnt, s->lane);
		for (uint64_t q = 0; q < ck->cells; q++)
			e += llround(fabs((double) xk[q] - s->y[q]) * SCORE_UNITS);
		if (ck->meas >= 0)
			bias = llround(dp_adaptive_remeasure_floor(s->margs[ck->meas].cells, s->margs[ck->meas].rho, s->y,
													   ck->cells, s->sigma) * SCORE_UNITS);
		else
			bias = llround(dp_adaptive_score_floor(s->y, ck->cells, s->sigma, s->total, s->synth->nrows) * SCORE_UNITS);
		s->score[k] = ck->nattrs >= 2 ? e - bias : (e - bias) / 2;
	}
	return NULL;
}

/*
 * The estimate (post-processing): margs[0..nmargs) copied, made consistent, and GUM draws
 * min(DP_ADAPTIVE_SYNTH_ROWS, total) rows from them into synth (freed and made anew).
 */
static int
estimate(const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
		 const dp_gum_params *gum, dp_prng *rng, dp_codes *synth, double *total)
{
	dp_marg    *work = dp_zalloc(sizeof(dp_marg) * nmargs);
	dp_codes	next = {0};
	dp_gum_params prm = *gum;
	uint64_t	ns;
	bool		warm;
	int			rc = 0;

	if (!work)
		return dp_nomem("could not allocate the marginals of a round's estimate");
	for (uint32_t k = 0; k < nmargs; k++)
		if (dp_marg_copy(&work[k], &margs[k]) != 0)
		{
			for (uint32_t j = 0; j < k; j++)
				dp_marg_free(&work[j]);
			dp_free(work);
			return dp_nomem("could not allocate the marginals of a round's estimate");
		}
	*total = dp_consist(work, nmargs, DP_ADAPTIVE_EST_CONSIST_ITERS);
	/*
	 * The first estimate fixes the number of rows; every later one is warm, from the previous
	 * estimate's rows, which already follow all but the newest measurements.
	 */
	warm = synth->nrows > 0 && synth->ncols == d;
	ns = warm ? synth->nrows : *total >= DP_ADAPTIVE_SYNTH_ROWS ? DP_ADAPTIVE_SYNTH_ROWS :
		(*total >= 1 ? (uint64_t) llround(*total) : 1);
	prm.start = warm ? synth : NULL;
	if (warm)
		prm.iterations = ns < DP_ADAPTIVE_SYNTH_ROWS ? DP_ADAPTIVE_WARM_ITERS_FULL : DP_ADAPTIVE_WARM_ITERS;
	if (*total < 0 || dp_codes_init(&next, d, ns) != 0)
		rc = -2;				/* dp_consist or dp_codes_init said why */
	else if (!(*total >= 0.5))
	{
		/* under half a row: the marginals may keep no positive cell; uniform rows, as
		 * dp_privsyn_sample */
		for (uint32_t j = 0; j < d; j++)
			for (uint64_t i = 0; i < ns; i++)
				next.col[j][i] = (uint16_t) dp_prng_below(rng, sizes[j]);
		next.nrows = ns;
	}
	else
	{
		rc = dp_gum_run(work, nmargs, d, sizes, ns, &prm, rng, &next);
		if (rc == -1)
			rc = dp_cancelled();
		else if (rc != 0)
			rc = dp_invalid("GUM could not synthesize a round's estimate from the measured marginals");
	}
	for (uint32_t k = 0; k < nmargs; k++)
		dp_marg_free(&work[k]);
	dp_free(work);
	dp_codes_free(synth);
	*synth = next;
	return rc;
}

/*
 * Step 5: whether the last estimate (m rows) is the final GUM's start for n rows.  It must hold
 * every row (m below DP_ADAPTIVE_SYNTH_ROWS, so not capped) and have about the n rows asked for,
 * 0.95 n <= m <= 1.25 n; dp_gum_params.start then draws n of m > n rows uniformly without
 * replacement, or copies n - m of m < n rows twice.  A function of the estimate's size only.
 */
static bool
final_from_estimate(uint64_t m, uint64_t n)
{
	return m > 0 && m < DP_ADAPTIVE_SYNTH_ROWS && n > 0 &&
		(double) m >= 0.95 * (double) n && (double) m <= 1.25 * (double) n;
}

/*
 * Step 5 when the model's junction tree is too large to draw on: n rows (merged codes, into out,
 * initialised here) drawn from the maximum-entropy distribution of a sub-model, the one-way
 * marginals and then the k-way ones in the order they were measured while the tree of those kept
 * stays within DP_ADAPTIVE_JTREE_CELLS (dp_jtree_build_greedy).  Post-processing of the released
 * marginals only.  Returns 0; 1 when no sub-model could be fitted (out empty); -1 if cancelled;
 * -2 on allocation failure.
 */
static int
submodel_rows(const dp_privsyn_result *model, uint32_t d, uint64_t n, const dp_gum_params *gum,
			  dp_prng *rng, dp_codes *out, dp_adaptive_draw *how)
{
	dp_marg    *kept = dp_alloc(sizeof(dp_marg) * model->nmargs);
	uint32_t	nkept = 0;
	dp_jtree	t;
	int			rc;

	memset(out, 0, sizeof(*out));
	if (!kept)
		return dp_nomem("could not allocate the final sub-model");
	rc = dp_jtree_build_greedy(&t, model->margs, model->nmargs, d, d, model->merged_sizes,
							   DP_ADAPTIVE_JTREE_CELLS, kept, &nkept);
	if (rc == 0)
	{
		how->sub_margs = nkept;
		how->sub_cells = t.cells;
		rc = dp_jtree_fit(&t, kept, nkept, dp_jtree_sweeps(&t, kept, nkept), DP_MAXENT_TOL,
						  gum->progress, gum->progress_arg);
		if (rc > 0)
			rc = dp_codes_init(out, d, n) != 0 ? -2 :
				dp_jtree_draw(&t, n, rng, out, gum->progress, gum->progress_arg);
		else if (rc == 0)
			rc = 1;
		dp_jtree_free(&t);
	}
	dp_free(kept);
	if (rc != 0)
	{
		dp_codes_free(out);
		how->sub_margs = 0;
		how->sub_cells = 0;
	}
	return rc < 0 ? rc : rc > 0 ? 1 : 0;
}

bool
dp_adaptive_draws_submodel(const dp_privsyn_result *model, uint32_t d, uint64_t nrows, const dp_gum_params *gum)
{
	return gum && !gum->start && model->total >= 0.5 && model->nmargs > d && nrows > 0 &&
		nrows < (uint64_t) DP_SAMPLE_LEVEL_FACTOR * DP_SAMPLE_MIN_COARSE &&
		d <= DP_ADAPTIVE_TREE_COLS && dp_adaptive_tree_bound(model->total) == 0 &&
		!dp_privsyn_draws_maxent(model, d, gum);
}

int
dp_adaptive_sample(const dp_privsyn_result *model, uint32_t d, const uint32_t *sizes, uint64_t nrows,
				   const dp_gum_params *gum, dp_prng *rng, dp_codes *synth, dp_adaptive_draw *how)
{
	dp_gum_params prm = *gum;
	dp_codes	start = {0};
	int			rc;

	memset(how, 0, sizeof(*how));
	if (dp_adaptive_draws_submodel(model, d, nrows, gum))
	{
		rc = submodel_rows(model, d, nrows, gum, rng, &start, how);
		if (rc < 0)
		{
			memset(synth, 0, sizeof(*synth));
			return rc == -1 ? dp_cancelled() : rc;
		}
		if (rc == 0)
		{
			prm.start = &start;
			if (prm.iterations > DP_ADAPTIVE_FINAL_WARM_ITERS)
				prm.iterations = DP_ADAPTIVE_FINAL_WARM_ITERS;
			prm.maxent_cells = 0;	/* known too large: no second build of the whole tree */
			prm.jtree_cells = 0;
		}
	}
	rc = dp_privsyn_sample(model, d, sizes, nrows, &prm, rng, synth);
	dp_codes_free(&start);
	return rc;
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
typedef struct Triples
{
	uint8_t    *pair_measured;	/* d x d */
	uint32_t	n,				/* cand[ncand - n ..]: the triples */
				max;
	uint64_t	cap;			/* cells allocated in counts */
} Triples;

static int
add_triples(Triples *tr, uint32_t d, uint32_t a, uint32_t b, Cand *cand, uint32_t *ncand, uint32_t **counts,
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
		*cd = (Cand) {3, {t[0], t[1], t[2]}, cells, *totcells, -1};
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
static bool
extra_consistent(const dp_extra_counts *ex, uint32_t d, const uint32_t *sizes)
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
static void
add_extra(const dp_extra_counts *ex, const Cand *cand, uint32_t ncand, uint32_t *counts, uint32_t d,
		  const uint32_t *sizes, const dp_privsyn_result *out)
{
	for (uint32_t r = 0; r < ncand; r++)
	{
		const Cand *cd = &cand[r];
		uint32_t   *x = counts + cd->offset;
		uint32_t	a = cd->attrs[0];

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

#define PROGRESS(phase, frac) \
	do { if (p->progress && p->progress(p->progress_arg, (phase), (frac)) != 0) { rc = dp_cancelled(); goto done; } } while (0)
#define FAIL(call) do { rc = (call); goto done; } while (0)

int
dp_adaptive_run(const dp_codes *data, const uint32_t *sizes, const dp_privsyn_params *p,
				dp_prng *rng, dp_privsyn_result *out, dp_adaptive_stats *stats)
{
	uint64_t	tree_bound = DP_ADAPTIVE_TREE_CELLS;	/* step 3b, set once T is */
	uint32_t	d = data->ncols;
	dp_codes	merged = {0},
				synth = {0};
	Cand	   *cand = NULL;
	uint32_t	ncand = 0,
				maxcand;
	uint32_t   *counts = NULL;
	double	   *y = NULL,
			   *zbuf = NULL;
	uint32_t   *lanebuf = NULL,
			   *ycnt = NULL;
	Scorer	   *scorers = NULL;
	Bits		bits = {0};
	const Bits *bitsp = NULL;	/* &bits once the estimate's bit sets exist */
	uint32_t	nthreads = 1;
	int64_t    *sub = NULL;
	uint32_t   *subidx = NULL,
			   *picked = NULL,
				batch;
	int64_t    *score = NULL;
	dp_marg    *margs = NULL;
	uint32_t	nmargs = 0;
	uint64_t	maxcells = 1,
				totcells = 0;
	double		R,
				used = 0,
				rho_t,
				eps_t,
				total = 0;
	uint64_t	nrows;
	dp_adaptive_stats st = {0};
	dp_gum_params round_gum,
				final_gum;
	double		t0;
	int			rc = 0;
	bool		merged_ok = false;
	Triples		tr = {0};
	uint32_t   *lanes[DP_GUM_MAX_THREADS];
	uint32_t   *newpairs = NULL,
				nnew;
	uint64_t	kmax;			/* distinct k-way marginals the rounds may measure (step 3b) */

	memset(out, 0, sizeof(*out));
	dp_clear_error();
	if (d == 0 || d > 4096)
		return dp_invalid("the adaptive method synthesizes 1 to 4096 columns");
	if (!(p->rho > 0) || !isfinite(p->rho))
		return dp_invalid("rho is not a positive number");
	if (data->nrows >= ((uint64_t) 1 << 31))
		return dp_invalid("the adaptive method reads fewer than 2^31 rows");
	if (p->extra && !extra_consistent(p->extra, d, sizes))
		return dp_invalid("the counts from elsewhere are not those of one set of rows: every column's and every pair's must add up to their rows");
	maxcand = d + (d * (d - 1)) / 2;
	tr.max = DP_ADAPTIVE_TRIPLES_PER_COL * d;
	maxcand += tr.max;
	/* the measured marginals: the d one-way ones, then one per measured pair or triple at most */
	margs = dp_zalloc(sizeof(dp_marg) * maxcand);
	cand = dp_zalloc(sizeof(Cand) * maxcand);
	if (!margs || !cand)
		FAIL(dp_nomem("could not allocate the adaptive method's candidate marginals"));

	/* ---- 1. one-way marginals and the rare-value merge: DP_ADAPTIVE_ONEWAY_SHARE of rho ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_ONEWAY, 0);
	merged_ok = true;			/* dp_codes_free is harmless on what the stage did not initialise */
	rc = dp_privsyn_oneway_stage(data, sizes, p->ordered, p->rho, DP_ADAPTIVE_ONEWAY_SHARE, out, margs, &merged, p->consume,
								 p->extra);
	if (rc != 0)
		goto done;
	nmargs = d;
	st.rho_oneway = p->rho * DP_ADAPTIVE_ONEWAY_SHARE;
	out->seconds[DP_PHASE_ONEWAY] = dp_now() - t0;

	/* ---- 2. candidates (public: the merged sizes) and their exact counts ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_SELECT, 0);
	for (uint32_t a = 0; a < d; a++)
	{
		Cand	   *cd = &cand[ncand];

		cd->nattrs = 1;
		cd->attrs[0] = a;
		cd->cells = out->merged_sizes[a];
		ncand++;
	}
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++)
		{
			uint64_t	cells = (uint64_t) out->merged_sizes[a] * out->merged_sizes[b];

			if (cells > DP_ADAPTIVE_MAX_CELLS)
				continue;
			cand[ncand].nattrs = 2;
			cand[ncand].attrs[0] = a;
			cand[ncand].attrs[1] = b;
			cand[ncand].cells = cells;
			ncand++;
		}
	qsort(cand, ncand, sizeof(Cand), cmp_cells);
	{
		uint32_t	keep = 0;

		/* smallest first until the total is reached; columns always fit (their cells < 2^16 each) */
		for (uint32_t r = 0; r < ncand; r++)
		{
			if (cand[r].nattrs >= 2 && totcells + cand[r].cells > DP_ADAPTIVE_MAX_TOTAL)
				continue;
			cand[r].offset = totcells;
			totcells += cand[r].cells;
			if (cand[r].cells > maxcells)
				maxcells = cand[r].cells;
			cand[keep++] = cand[r];
		}
		ncand = keep;
	}
	st.candidates = ncand;
	if (maxcells < DP_ADAPTIVE_TRIPLE_CELLS)
		maxcells = DP_ADAPTIVE_TRIPLE_CELLS;	/* a triple's estimate and its counts before a round */
	counts = dp_zalloc(sizeof(uint32_t) * totcells);
	y = dp_zalloc(sizeof(double) * maxcells);
	lanebuf = dp_zalloc(sizeof(uint32_t) * LANES * LANE_CELLS);
	ycnt = dp_zalloc(sizeof(uint32_t) * maxcells);
	score = dp_zalloc(sizeof(int64_t) * maxcand);
	nthreads = p->gum.threads < 1 ? 1 : p->gum.threads > DP_GUM_MAX_THREADS ? DP_GUM_MAX_THREADS : p->gum.threads;
	scorers = dp_zalloc(sizeof(Scorer) * nthreads);
	if (!counts || !y || !lanebuf || !ycnt || !score || !scorers)
		FAIL(dp_nomem("could not allocate the candidates' exact counts and scoring buffers"));
	for (uint32_t t = 0; t < nthreads; t++)
	{
		Scorer	   *s = &scorers[t];

		s->cand = cand;
		s->counts = counts;
		s->sizes = out->merged_sizes;
		s->score = score;
		/* thread 0 uses the buffers the rest of the rounds use */
		s->y = t == 0 ? y : dp_zalloc(sizeof(double) * maxcells);
		s->ycnt = t == 0 ? ycnt : dp_zalloc(sizeof(uint32_t) * maxcells);
		s->lane = t == 0 ? lanebuf : dp_zalloc(sizeof(uint32_t) * LANES * LANE_CELLS);
		if (!s->y || !s->ycnt || !s->lane)
			FAIL(dp_nomem("could not allocate a scoring thread's buffers"));
		lanes[t] = s->lane;
	}
	/*
	 * The exact counts, COUNT_CHUNK candidates at a time over nthreads threads (each candidate's
	 * slice written by one thread: the same counts whatever the number of threads); progress
	 * and interrupts between chunks, on this thread only.
	 */
	for (uint32_t r = 0; r < ncand; r++)
		cand[r].meas = cand[r].nattrs == 1 ? (int32_t) cand[r].attrs[0] : -1;
	for (uint32_t r0 = 0; r0 < ncand; r0 += COUNT_CHUNK)
	{
		count_cands(cand, r0, r0 + COUNT_CHUNK < ncand ? r0 + COUNT_CHUNK : ncand, counts, &merged,
					out->merged_sizes, lanes, nthreads);
		PROGRESS(DP_PHASE_SELECT, 0);
	}
	if (p->extra)
		add_extra(p->extra, cand, ncand, counts, d, sizes, out);

	/* ---- 3. rounds ---- */
	R = p->rho * (1 - DP_ADAPTIVE_ONEWAY_SHARE);
	{
		/* T from public facts: the released one-way marginals' total and the candidates' sizes */
		double		n1 = 0,
					T;

		for (uint32_t j = 0; j < d; j++)
			n1 += dp_marg_total(&margs[j]);
		T = dp_adaptive_selections(R, d, n1 / d, median_pair_cells(cand, ncand));
		st.selections = T;
		tree_bound = dp_adaptive_tree_bound(n1 / d);
		rho_t = MEASURE_SHARE * R / T;
		eps_t = sqrt(8 * (1 - MEASURE_SHARE) * R / T);
	}
	{
		double		cost = measure_focus(cand, ncand, counts, out->merged_sizes, p->focus, R, rho_t, margs,
										 &nmargs, &st.focus_pairs);

		if (cost < 0)
			FAIL(dp_nomem("could not allocate the focus pairs' measured marginals"));
		used += cost;
		st.rho_measure += cost;
	}
	round_gum = p->gum;
	round_gum.progress = NULL;	/* short runs: the rounds report and check between them */
	rc = estimate(margs, nmargs, d, out->merged_sizes, &round_gum, rng, &synth, &total);
	if (rc != 0)
		goto done;
	kmax = p->max_kway > 0 ? p->max_kway : dp_adaptive_max_kway(d, total);
	st.max_kway = kmax > UINT32_MAX ? UINT32_MAX : (uint32_t) kmax;
	/*
	 * Triples (step 2c) only when the estimates hold every row (fewer than DP_ADAPTIVE_SYNTH_ROWS:
	 * a function of the released total); then the focus pairs' triples.
	 */
	if (synth.nrows >= DP_ADAPTIVE_SYNTH_ROWS || p->extra)
	{
		tr.max = 0;
		/* no more exact counts to take: the private data the rounds need is in counts */
		dp_codes_free(&merged);
		merged_ok = false;
	}
	else
	{
		tr.cap = totcells;
		tr.pair_measured = dp_zalloc((size_t) d * d);
		if (!tr.pair_measured)
			FAIL(dp_nomem("could not allocate the adaptive method's triple candidates"));
	}
	for (uint32_t k = 0; k < ncand && tr.max > 0; k++)
		if (cand[k].nattrs == 2 && cand[k].meas >= 0 &&
			add_triples(&tr, d, cand[k].attrs[0], cand[k].attrs[1], cand, &ncand, &counts, &totcells,
						out->merged_sizes) != 0)
			FAIL(dp_nomem("could not allocate a triple's exact counts"));
	if (tr.n > 0)
		count_cands(cand, ncand - tr.n, ncand, counts, &merged, out->merged_sizes, lanes, nthreads);
	/* the estimates' bit sets: every later estimate has the first one's rows (a warm start) */
	if (have_popcnt())
	{
		if (bits_alloc(&bits, d, out->merged_sizes, synth.nrows) != 0)
			FAIL(dp_nomem("could not allocate the estimate's bit sets"));
	}
	batch = (d + DP_ADAPTIVE_BATCH_COLS - 1) / DP_ADAPTIVE_BATCH_COLS;
	if (batch > ncand)
		batch = ncand;
	picked = dp_zalloc(sizeof(uint32_t) * batch);
	zbuf = dp_zalloc(sizeof(double) * batch * maxcells);
	sub = dp_zalloc(sizeof(int64_t) * maxcand);
	subidx = dp_zalloc(sizeof(uint32_t) * maxcand);
	newpairs = dp_zalloc(sizeof(uint32_t) * batch);
	if (!picked || !zbuf || !sub || !subidx || !newpairs)
		FAIL(dp_nomem("could not allocate the rounds' selection buffers"));
	for (;;)
	{
		bool		last = false;
		double		sigma;
		dp_dgauss	g;
		double		moved = 0,
					expect = 0,
					zb_total;

		dp_check_interrupts();	/* up to 16 d rounds, each an estimate by GUM */

		if (R - used < 2 * batch * (rho_t + eps_t * eps_t / 8))
		{
			/* the last round: what is left, rounded down, over the batch */
			double		rem = (R - used) * (1 - 1e-9);

			if (!(rem > 0))
				break;
			rho_t = MEASURE_SHARE * rem / batch;
			eps_t = sqrt(8 * (1 - MEASURE_SHARE) * rem / batch) * (1 - 1e-12);
			last = true;
		}
		if (dp_dgauss_init(&g, dp_gaussian_sigma2(rho_t, 1.0)) != 0)
			FAIL(dp_invalid("a round's measurement noise is out of the sampler's range"));
		sigma = sqrt(dp_dgauss_sigma2(&g));

		/* b. scores against the current estimate, over nthreads threads */
		PROGRESS(DP_PHASE_SELECT, fmin(used / R, 1));
		bitsp = bits.w && synth.nrows == bits.rows ? &bits : NULL;
		if (bitsp)
			bits_fill(&bits, &synth, out->merged_sizes);
		{
			uint32_t	T = (uint64_t) ncand * synth.nrows >= SCORE_THREAD_WORK ? nthreads : 1;

			for (uint32_t t = 0; t < T; t++)
			{
				Scorer	   *s = &scorers[t];

				s->k0 = (uint32_t) ((uint64_t) ncand * t / T);
				s->k1 = (uint32_t) ((uint64_t) ncand * (t + 1) / T);
				s->synth = &synth;
				s->bits = bitsp;
				s->total = total;
				s->sigma = sigma;
				s->counts = counts;
				s->margs = margs;
			}
			dp_run_parallel(score_worker, scorers, sizeof(Scorer), T);
		}

		/* select and measure the batch, one exponential mechanism each, without repeats */
		nnew = 0;
		for (uint32_t b = 0; b < batch; b++)
		{
			uint32_t	nsub = 0,
						r;
			Cand	   *cd;
			const uint32_t *x;
			bool		full = nmargs - d >= kmax;	/* the cap on distinct k-way marginals */

			for (uint32_t k = 0; k < ncand; k++)
			{
				bool		taken = full && cand[k].meas < 0;	/* no new marginal once full */

				for (uint32_t e = 0; e < b; e++)
					taken |= picked[e] == k;
				if (!taken)
				{
					sub[nsub] = score[k];
					subidx[nsub++] = k;
				}
			}
			used += rho_t + eps_t * eps_t / 8;
			st.rho_measure += rho_t;
			st.rho_select += eps_t * eps_t / 8;
			/*
			 * the exponential mechanism over the candidates that keep the model's junction tree
			 * within tree_bound (dp_adaptive_tree_bound); when none does (or the table has more than
			 * DP_ADAPTIVE_TREE_COLS columns, or the model's tree is already larger), over all; on
			 * tables too large for a bound (tree_bound 0), over all
			 */
			if (tree_bound == 0)
				r = dp_exp_mech(sub, nsub, eps_t, SCORE_SENS);
			else
			{
				TreeFit		tf = {margs, nmargs, d, out->merged_sizes, cand, tree_bound, NULL, NULL, 0};
				dp_jtree	cur;
				bool		have = d <= DP_ADAPTIVE_TREE_COLS &&
					dp_jtree_build(&cur, margs, nmargs, d, out->merged_sizes, tree_bound) == 0;

				tf.cur = have ? &cur : NULL;
				tf.scratch = dp_alloc(sizeof(dp_marg) * (nmargs + 1));
				if (!tf.scratch)
				{
					if (have)
						dp_jtree_free(&cur);
					FAIL(dp_nomem("could not allocate the junction tree's check"));
				}
				r = have ? dp_exp_mech_fitting(sub, subidx, nsub, eps_t, SCORE_SENS, tree_fits, &tf) : nsub;
				st.tree_builds += tf.builds;
				dp_free(tf.scratch);
				if (have)
					dp_jtree_free(&cur);
				if (r >= nsub)
				{
					st.tree_unbounded++;
					r = dp_exp_mech(sub, nsub, eps_t, SCORE_SENS);
				}
			}
			if (r >= nsub)
				FAIL(dp_invalid("a round's exponential mechanism had no candidate to select"));
			r = subidx[r];
			picked[b] = r;
			cd = &cand[r];
			x = counts + cd->offset;
			est_counts(cd, &synth, bitsp, out->merged_sizes, total, zbuf + (size_t) b * maxcells, ycnt, lanebuf);

			/* c. measure */
			if (cd->nattrs == 2 && cd->meas < 0)
				newpairs[nnew++] = r;
			st.remeasured += cd->meas >= 0;
			if (measure(cd, x, out->merged_sizes, &g, rho_t, margs, &nmargs) != 0)
				FAIL(dp_nomem("could not allocate a measured marginal"));
		}
		st.rounds++;
		if (tr.n < tr.max)
		{
			uint32_t	k0 = ncand;

			for (uint32_t e = 0; e < nnew; e++)
				if (add_triples(&tr, d, cand[newpairs[e]].attrs[0], cand[newpairs[e]].attrs[1], cand, &ncand, &counts,
								&totcells, out->merged_sizes) != 0)
					FAIL(dp_nomem("could not allocate a triple's exact counts"));
			count_cands(cand, k0, ncand, counts, &merged, out->merged_sizes, lanes, nthreads);
		}

		/* a. the next estimate; d. anneal */
		zb_total = total;
		rc = estimate(margs, nmargs, d, out->merged_sizes, &round_gum, rng, &synth, &total);
		if (rc != 0)
			goto done;
		for (uint32_t b = 0; b < batch; b++)
		{
			const Cand *cd = &cand[picked[b]];
			const double *zb = zbuf + (size_t) b * maxcells;

			est_counts(cd, &synth, NULL, out->merged_sizes, total, y, ycnt, lanebuf);
			for (uint64_t q = 0; q < cd->cells; q++)
				moved += fabs(y[q] - zb[q]);
			/* zb: the counts before the round, scaled by that round's total */
			expect += dp_adaptive_anneal_bar(zb, cd->cells, sigma, zb_total, synth.nrows);
		}
		PROGRESS(DP_PHASE_SELECT, fmin(used / R, 1));
		if (last)
			break;
		if (moved <= expect)
		{
			rho_t *= 4;
			eps_t *= 2;
			st.anneals++;
		}
	}
	out->seconds[DP_PHASE_SELECT] = dp_now() - t0;
	/* the rounds are over: no more exact counts to take */
	if (merged_ok)
		dp_codes_free(&merged);
	merged_ok = false;

	/* ---- 4. the final model ---- */
	t0 = dp_now();
	PROGRESS(DP_PHASE_CONSIST, 0);
	out->total = dp_consist(margs, nmargs, 100);
	if (out->total < 0)
		FAIL(-2);				/* dp_consist said why */
	st.triples = tr.n;
	for (uint32_t k = d; k < nmargs; k++)
		st.triples_measured += margs[k].nattrs == 3;
	out->margs = margs;
	out->nmargs = nmargs;
	out->n_kway = nmargs - d;
	margs = NULL;				/* out owns them */
	out->seconds[DP_PHASE_CONSIST] = dp_now() - t0;

	t0 = dp_now();
	PROGRESS(DP_PHASE_GUM, 0);
	nrows = p->rows ? p->rows : dp_privsyn_default_rows(out);
	if (p->max_rows && nrows > p->max_rows)
		nrows = p->max_rows;
	/*
	 * Cold, at most DP_ADAPTIVE_FINAL_ITERS iterations: measured against 200 (5 tables, 3 runs
	 * each, bench/RESULTS.md), 30 to 60 give the same distances and AUC; GUM's steps have decayed
	 * and its rows already match the consistent marginals (30 since 2026-11-26: dp_adaptive.h,
	 * step 5).  Warm (step 5 in dp_adaptive.h) when the last estimate has about the rows asked
	 * for: from its rows, DP_ADAPTIVE_FINAL_WARM_ITERS.
	 */
	final_gum = p->gum;
	final_gum.iterations = dp_adaptive_final_iters(final_gum.iterations);
	final_gum.start = NULL;
	final_gum.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
	final_gum.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
	{
		uint64_t	cells;
		int			path = dp_privsyn_maxent_path(out, d, &final_gum, &cells);

		st.final_maxent = path != 0;
		st.final_tree_cells = path == 2 ? cells : 0;
	}
	/* under half a row dp_privsyn_sample draws uniform rows: no GUM to start */
	if (!st.final_maxent && out->total >= 0.5 && final_from_estimate(synth.nrows, nrows))
	{
		final_gum.start = &synth;
		if (final_gum.iterations > DP_ADAPTIVE_FINAL_WARM_ITERS)
			final_gum.iterations = DP_ADAPTIVE_FINAL_WARM_ITERS;
		st.final_warm = true;
	}
	{
		dp_adaptive_draw how;

		rc = dp_adaptive_sample(out, d, sizes, nrows, &final_gum, rng, &out->synth, &how);
		st.final_sub_margs = how.sub_margs;
		st.final_sub_cells = how.sub_cells;
	}
	if (rc != 0)
		goto done;
	out->seconds[DP_PHASE_GUM] = dp_now() - t0;
	PROGRESS(DP_PHASE_GUM, 1);

done:
	if (merged_ok)
		dp_codes_free(&merged);
	dp_codes_free(&synth);
	if (margs)
	{
		/* a failure before the model was handed over: out->margs is unset; the one-way slots
		 * may be filled even when nmargs is not yet d, the rest are zeroed */
		for (uint32_t k = 0; k < (nmargs > d ? nmargs : d); k++)
			dp_marg_free(&margs[k]);
		dp_free(margs);
	}
	dp_free(cand);
	dp_free(tr.pair_measured);
	dp_free(newpairs);
	dp_free(bits.off);
	dp_free(bits.w);
	dp_free(counts);
	dp_free(y);
	dp_free(lanebuf);
	dp_free(ycnt);
	if (scorers)
	{
		for (uint32_t t = 1; t < nthreads; t++)
		{
			dp_free(scorers[t].y);
			dp_free(scorers[t].ycnt);
			dp_free(scorers[t].lane);
		}
		dp_free(scorers);
	}
	dp_free(score);
	dp_free(zbuf);
	dp_free(sub);
	dp_free(subidx);
	dp_free(picked);
	if (rc != 0)
		dp_privsyn_result_free(out);
	if (stats)
		*stats = st;
	return rc;
}
