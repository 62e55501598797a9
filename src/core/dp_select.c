/*
 * dp_select.c - PrivSyn's dependency scores, DenseMarg, Combine and publication split
 * (see dp_select.h and PRIVSYN.md steps 4-7).
 *
 * ==== Privacy of the InDif release (dp_indif_noisy) ====
 *
 * Neighbours: D' = D plus one row (add/remove-one; removing is the same relation read backwards).
 * Let n = |D| and, for a pair of columns (a, b), n_ab, n_a, n_b the exact 2-way and 1-way counts.
 *     InDif_ab(D) = sum_ij | n_ab(i,j) - n_a(i) n_b(j) / n |,   defined as 0 when n = 0.
 *
 * (1) Sensitivity of one score (PrivSyn Lemma 4, re-proved here).  Write P = n_a n_b^T / n.  The
 *     added row has codes (x, y), so n_ab' = n_ab + e_x e_y^T, n_a' = n_a + e_x, n_b' = n_b + e_y:
 *       P' - P = [ n n_a e_y^T + n e_x n_b^T + n e_x e_y^T - n_a n_b^T ] / (n (n+1)),
 *     whose entry-wise L1 norm is at most (n*n + n*n + n + n^2) / (n (n+1)) = (3n+1)/(n+1).  By the
 *     triangle inequality, for n >= 1
 *       |InDif(D') - InDif(D)| <= ||n_ab' - n_ab||_1 + ||P' - P||_1 <= 1 + (3n+1)/(n+1)
 *                               = (4n+2)/(n+1) < 4.
 *     For n = 0 both values are 0 (a single row gives n_ab = P = e_x e_y^T).  So Delta = 4.
 *
 * (2) Rounding to the grid q = 1/16.  The released integer is R = round(InDif / q) (ties up),
 *     computed EXACTLY: n * InDif = T = sum_ij |n n_ab(i,j) - n_a(i) n_b(j)| is an integer, and
 *     R = floor((2 T / q + n) / (2 n)), all in 128-bit integers (no floating point touches the
 *     private value).  |q R - InDif| <= q/2 for every dataset, so for neighbours
 *       |q R(D) - q R(D')| <= q/2 + |InDif(D) - InDif(D')| + q/2 <= 4 + q = Delta',
 *     i.e. |R(D) - R(D')| <= Delta'/q = 4/q + 1 = 65 grid units.  (With the strict inequality of
 *     (1) one could prove 64; per PRIVACY.md "the sensitivity used includes the rounding" we use
 *     the simple bound 65, which costs (65/64)^2 - 1 = 3% variance.)
 *
 * (3) The vector.  One row can move all m = d(d-1)/2 rounded scores, each by <= 65, so the L2
 *     sensitivity of R in Z^m is <= 65 sqrt(m).  Adding independent discrete Gaussian noise
 *     N_Z(0, sigma2) to every coordinate is (65^2 m) / (2 sigma2)-zCDP (Canonne, Kamath & Steinke
 *     2020, Theorem 4; Renyi divergences of independent coordinates add).  We take
 *       sigma2 >= m * 65^2 / (2 rho2)        (dp_gaussian_sigma2 rounds up, then * m rounded up,
 *                                             and dp_dgauss_init rounds up again),
 *     hence rho2-zCDP.  This is the same as the paper's "rho2 / m per score, sensitivity Delta'
 *     per score", sequentially composed over the m scores: per-score variance (in score units)
 *     q^2 sigma2 = Delta'^2 / (2 rho2 / m) = (4 + 1/16)^2 m / (2 rho2) ~= 8.252 m / rho2
 *     (the paper's 8 m / rho2 without the rounding).
 *
 * (4) Output: scores[k] = q (R_k + Z_k), exactly representable (|R_k + Z_k| < 2^53).  Validation,
 *     the noise parameter and every allocation are decided before the first row is read, so
 *     whether the call succeeds does not depend on the data.  Out-of-range codes (a caller bug)
 *     are clamped row by row, a fixed map applied to each row, which keeps neighbours neighbours.
 *
 * Everything else in this file is post-processing of the released scores and public sizes.
 */
#include "dp_select.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "dp_accounting.h"
#include "dp_counts.h"
#include "dp_env.h"
#include "dp_sampler.h"

typedef unsigned __int128 u128;

#define DENSE_CELLS (1u << 20)	/* cells of the 2-way count buffer (chunked above this) */
#define SEG_ROWS 0xFFFFFFFFull	/* rows counted in uint32 before flushing into uint64 */
#define MAX_COLS 65535u			/* keeps m < 2^31 */


/* Zeroed array of n elements of size bytes, or NULL (also on overflow). */
static void *
sel_calloc(size_t n, size_t size)
{
	void	   *p;

	if (n == 0)
		n = 1;
	p = n <= SIZE_MAX / size ? dp_alloc(n * size) : NULL;
	if (p == NULL)
	{
		dp_fail(DP_ERR_NOMEM, "could not allocate %zu x %zu bytes of selection scratch", n, size);
		return NULL;
	}
	memset(p, 0, n * size);
	return p;
}

static void
sel_release(void *p)
{
	if (p != NULL)
		dp_free(p);
}

/* Wipes (private counts) and frees. */
static void
sel_wipe_release(void *p, size_t bytes)
{
	if (p != NULL)
	{
		sodium_memzero(p, bytes);
		dp_free(p);
	}
}

static bool
sizes_valid(uint32_t d, const uint32_t *sizes)
{
	if (sizes == NULL)
		return false;
	for (uint32_t j = 0; j < d; j++)
		if (sizes[j] == 0 || sizes[j] > DP_SELECT_MAX_SIZE)
			return false;
	return true;
}

static bool
scores_valid(uint32_t m, const double *scores)
{
	if (scores == NULL)
		return false;
	for (uint32_t k = 0; k < m; k++)
		if (!isfinite(scores[k]))
			return false;
	return true;
}

/* ======================================================================================
 * Step 4: InDif
 * ====================================================================================== */

double
dp_indif_exact(const dp_marg *ab, const dp_marg *a, const dp_marg *b, double n)
{
	const dp_marg *A,
			   *B;
	double		s = 0;

	if (ab == NULL || a == NULL || b == NULL || ab->nattrs != 2 || a->nattrs != 1 ||
		b->nattrs != 1)
		return NAN;
	if (a->attrs[0] == ab->attrs[0] && b->attrs[0] == ab->attrs[1])
		A = a, B = b;
	else if (b->attrs[0] == ab->attrs[0] && a->attrs[0] == ab->attrs[1])
		A = b, B = a;
	else
		return NAN;
	if (A->sizes[0] != ab->sizes[0] || B->sizes[0] != ab->sizes[1])
		return NAN;
	if (!(n > 0))
		return 0;
	for (uint32_t i = 0; i < ab->sizes[0]; i++)
		for (uint32_t j = 0; j < ab->sizes[1]; j++)
			s += fabs(ab->cells[(uint64_t) i * ab->strides[0] + j] - A->cells[i] * B->cells[j] / n);
	return s;
}

/* Counts rows [r0, r1) into h[x * sb + y] (all codes of a in one buffer). */
static void
count_full(const uint16_t *restrict ca, const uint16_t *restrict cb, uint64_t r0, uint64_t r1,
		   uint32_t sa, uint32_t sb, uint32_t *restrict h)
{
	const uint32_t maxa = sa - 1,
				maxb = sb - 1;

	for (uint64_t i = r0; i < r1; i++)
	{
		uint32_t	x = ca[i],
					y = cb[i];

		x = x < sa ? x : maxa;
		y = y < sb ? y : maxb;
		h[x * sb + y]++;
	}
}

/* Counts the rows of [r0, r1) whose a-code is in [a0, a0 + span) into h[(x - a0) * sb + y]. */
static void
count_range(const uint16_t *restrict ca, const uint16_t *restrict cb, uint64_t r0, uint64_t r1,
			uint32_t sa, uint32_t sb, uint32_t a0, uint32_t span, uint32_t *restrict h)
{
	const uint32_t maxa = sa - 1,
				maxb = sb - 1;

	for (uint64_t i = r0; i < r1; i++)
	{
		uint32_t	x = ca[i],
					y = cb[i];

		x = x < sa ? x : maxa;
		y = y < sb ? y : maxb;
		x -= a0;				/* wraps to a huge value below a0 */
		if (x < span)
			h[x * sb + y]++;
	}
}

/*
 * round(InDif_ab / q) for one pair, exactly.  na, nb: the (clamped) one-way counts of a and b;
 * h32 / h64: scratch for the largest chunk (<= DENSE_CELLS cells).  n < 2^56 (a uint16_t column of n rows takes 2n
 * bytes), so T <= 2 n^2 < 2^113 and 2 T / q < 2^118 fit in 128 bits, and R <= 2 n / q < 2^61.
 */
static int64_t
pair_grid(const dp_codes *t, uint32_t a, uint32_t b, uint32_t sa, uint32_t sb,
		  const uint64_t *na, const uint64_t *nb, uint32_t *h32, uint64_t *h64)
{
	const uint64_t n = t->nrows;
	const uint32_t span = DENSE_CELLS / sb < sa ? DENSE_CELLS / sb : sa;	/* sb <= 2^16 */
	u128		T = 0;

	if (n == 0)
		return 0;
	for (uint32_t a0 = 0; a0 < sa; a0 += span)
	{
		uint32_t	len = sa - a0 < span ? sa - a0 : span;
		size_t		cells = (size_t) len * sb;

		memset(h64, 0, cells * sizeof(uint64_t));
		for (uint64_t r0 = 0; r0 < n; r0 += SEG_ROWS)
		{
			uint64_t	r1 = n - r0 < SEG_ROWS ? n : r0 + SEG_ROWS;

			memset(h32, 0, cells * sizeof(uint32_t));
			if (len == sa)
				count_full(t->col[a], t->col[b], r0, r1, sa, sb, h32);
			else
				count_range(t->col[a], t->col[b], r0, r1, sa, sb, a0, len, h32);
			for (size_t c = 0; c < cells; c++)
				h64[c] += h32[c];
		}
		/* T += sum over this chunk's cells (zero cells included) of |n n_ab - n_a n_b| */
		for (uint32_t i = 0; i < len; i++)
		{
			const uint64_t *row = h64 + (size_t) i * sb;
			const u128	nai = na[a0 + i];

			for (uint32_t j = 0; j < sb; j++)
			{
				u128		x = (u128) n * row[j];
				u128		y = nai * nb[j];

				T += x > y ? x - y : y - x;
			}
		}
	}
	/* InDif = T / n;  R = floor(InDif / q + 1/2) = floor((2 T / q + n) / (2 n)) */
	return (int64_t) ((2 * T * DP_INDIF_GRID_INV + n) / (2 * (u128) n));
}

int
dp_indif_exact_grid(const dp_codes *t, const uint32_t *sizes, int64_t *grid)
{
	uint32_t	d;
	uint64_t   *ones = NULL,
			   *h64 = NULL;
	uint32_t   *h32 = NULL;
	size_t	   *off = NULL;
	size_t		total = 0,
				hcells = 0;

	if (t == NULL || grid == NULL)
		return -1;
	d = t->ncols;
	if (d < 2 || d > MAX_COLS || !sizes_valid(d, sizes) || (t->nrows > 0 && t->col == NULL))
		return -1;

	/* every allocation before the first row is read; sizes depend on public sizes only */
	off = sel_calloc(d + 1, sizeof(size_t));
	if (off != NULL)
	{
		for (uint32_t j = 0; j < d; j++)
			off[j + 1] = off[j] + sizes[j];
		total = off[d];
	}
	/* the count buffers: the largest chunk any pair needs (at most DENSE_CELLS cells) */
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++)
		{
			size_t		span = DENSE_CELLS / sizes[b] < sizes[a] ? DENSE_CELLS / sizes[b] : sizes[a];

			if (span * sizes[b] > hcells)
				hcells = span * sizes[b];
		}
	ones = sel_calloc(total, sizeof(uint64_t));
	h32 = sel_calloc(hcells, sizeof(uint32_t));
	h64 = sel_calloc(hcells, sizeof(uint64_t));
	if (off == NULL || ones == NULL || h32 == NULL || h64 == NULL)
	{
		sel_release(off);
		sel_release(ones);
		sel_release(h32);
		sel_release(h64);
		return -1;
	}

	/* one-way counts, with the same clamping as the pair counts */
	for (uint32_t j = 0; j < d; j++)
	{
		const uint16_t *c = t->col[j];
		uint64_t   *o = ones + off[j];
		const uint32_t s = sizes[j],
					smax = s - 1;

		for (uint64_t i = 0; i < t->nrows; i++)
		{
			uint32_t	x = c[i];

			o[x < s ? x : smax]++;
		}
	}

	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			grid[k] = pair_grid(t, a, b, sizes[a], sizes[b], ones + off[a], ones + off[b], h32, h64);

	sel_wipe_release(ones, total * sizeof(uint64_t));
	sel_wipe_release(h32, hcells * sizeof(uint32_t));
	sel_wipe_release(h64, hcells * sizeof(uint64_t));
	sel_release(off);
	return 0;
}

/*
 * The discrete Gaussian for the InDif vector of d columns: sigma2 >= m * 65^2 / (2 rho2), every
 * step rounded up.  Returns 0, or -1 if invalid or outside the sampler's range.
 */
static int
indif_noise(uint32_t d, double rho2, dp_dgauss *g)
{
	double		m,
				s1,
				s;

	if (d < 2 || d > MAX_COLS || !isfinite(rho2) || !(rho2 > 0))
		return -1;
	m = (double) dp_pair_count(d);	/* exact: m < 2^31 */
	s1 = dp_gaussian_sigma2(rho2, (double) DP_INDIF_GRID_SENS);	/* 65^2 / (2 rho2), rounded up */
	if (!isfinite(s1))
		return -1;
	s = nextafter(s1 * m, INFINITY);	/* fl(s1 * m) is within half an ulp: one ulp up covers it */
	if (!isfinite(s))
		return -1;
	return dp_dgauss_init(g, s);
}

double
dp_indif_noise_variance(uint32_t d, double rho2)
{
	dp_dgauss	g;

	if (indif_noise(d, rho2, &g) != 0)
		return NAN;
	return dp_dgauss_sigma2(&g) * DP_INDIF_GRID * DP_INDIF_GRID;
}

int
dp_indif_noisy(const dp_codes *t, const uint32_t *sizes, double rho2, double *scores)
{
	dp_dgauss	g;
	uint32_t	d,
				m;
	int64_t    *grid;

	if (t == NULL || scores == NULL)
		return -1;
	d = t->ncols;
	if (d < 2 || d > MAX_COLS || !sizes_valid(d, sizes))
		return -1;
	if (indif_noise(d, rho2, &g) != 0)
		return -1;
	m = dp_pair_count(d);
	grid = sel_calloc(m, sizeof(int64_t));
	if (grid == NULL)
		return -1;
	if (dp_indif_exact_grid(t, sizes, grid) != 0)	/* fails only before reading a row */
	{
		sel_release(grid);
		return -1;
	}
	if (dp_noise_counts(&g, grid, grid, m) != 0)	/* the grid is >= 0: not refused */
	{
		sel_wipe_release(grid, (size_t) m * sizeof(int64_t));
		return -1;
	}
	for (uint32_t k = 0; k < m; k++)
		scores[k] = (double) grid[k] * DP_INDIF_GRID;
	sel_wipe_release(grid, (size_t) m * sizeof(int64_t));
	return 0;
}

/* ======================================================================================
 * Step 5: DenseMarg (post-processing)
 * ====================================================================================== */

/*
 * Derivation of the noise error (PrivSyn Section 4).  Publishing the marginals j in X with
 * budgets rho_j (sum rho_j = rho3), sensitivity 1, adds Gaussian noise of variance
 * sigma_j^2 = 1 / (2 rho_j) to each of their c_j cells.  E|N(0, sigma^2)| = sqrt(2/pi) sigma, so
 * the expected L1 noise of marginal j is
 *     c_j sqrt(2/pi) / sqrt(2 rho_j) = c_j / sqrt(pi rho_j).
 * Minimising sum_j c_j (pi rho_j)^(-1/2) subject to sum_j rho_j = rho3 (Lagrange:
 * c_j rho_j^(-3/2) / (2 sqrt(pi)) = lambda for all j) gives rho_j proportional to c_j^(2/3):
 * rho_j = rho3 c_j^(2/3) / S with S = sum_{k in X} c_k^(2/3).  Then
 *     sum_j c_j / sqrt(pi rho3 c_j^(2/3) / S) = sqrt(S / (pi rho3)) sum_j c_j^(2/3)
 *                                            = S^(3/2) / sqrt(pi rho3).
 * (The discrete Gaussian's E|Z| is within a negligible factor of the continuous one at these
 * scales.)  It is in counts, like InDif, which is the L1 error (in counts) of approximating a pair
 * by the product of its one-way marginals, i.e. of NOT publishing it.
 */
double
dp_densemarg_noise_error(double S, double rho3)
{
	return pow(S, 1.5) / sqrt(M_PI * rho3);
}

/*
 * Greedy (paper rule): X = {}; each round, among pairs not in X, find the i minimising
 *     total(X + {i}) = noise_error(S_X + c_i^(2/3)) + sum_{j not in X, j != i} score_j
 * (ties: lowest pair index); add it if total(X + {i}) < total(X) strictly, else stop.
 * No data-derived thresholds.  The sum of the other scores is recomputed each round in pair
 * order, so the result is a deterministic function of (scores, sizes, rho3).
 */
uint32_t
dp_densemarg_greedy(uint32_t d, const double *scores, const uint32_t *sizes, double rho3,
					uint8_t *selected, uint32_t *order)
{
	uint32_t	m,
				r = 0;
	double	   *w;
	double		S = 0;

	if (d < 2 || d > MAX_COLS || selected == NULL || !sizes_valid(d, sizes) ||
		!isfinite(rho3) || !(rho3 > 0))
		return DP_SELECT_ERROR;
	m = dp_pair_count(d);
	if (!scores_valid(m, scores))
		return DP_SELECT_ERROR;
	w = sel_calloc(m, sizeof(double));
	if (w == NULL)
		return DP_SELECT_ERROR;
	memset(selected, 0, m);
	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			w[k] = pow((double) sizes[a] * (double) sizes[b], 2.0 / 3.0);

	for (;;)
	{
		double		rest = 0,
					cur,
					best_total;
		uint32_t	best = UINT32_MAX;

		for (uint32_t k = 0; k < m; k++)
			if (!selected[k])
				rest += scores[k];
		cur = dp_densemarg_noise_error(S, rho3) + rest;
		best_total = cur;
		for (uint32_t k = 0; k < m; k++)
		{
			double		tk;

			if (selected[k])
				continue;
			tk = dp_densemarg_noise_error(S + w[k], rho3) + (rest - scores[k]);
			if (tk < best_total)
			{
				best_total = tk;
				best = k;
			}
		}
		if (best == UINT32_MAX)
			break;
		selected[best] = 1;
		S += w[best];
		if (order != NULL)
			order[r] = best;
		r++;
	}
	sel_release(w);
	return r;
}

/* key order for coverage: higher score first, then lower pair index */
static bool
better_pair(double s1, uint32_t k1, double s2, uint32_t k2)
{
	return s1 > s2 || (s1 == s2 && k1 < k2);
}

/*
 * Coverage, as a maximum-score attachment (Prim's algorithm on the noisy scores):
 *  - if no pair is selected (no column covered), first select the pair of highest noisy score
 *    overall (ties: lowest pair index); it covers two columns;
 *  - then, while a column is uncovered, select the highest-scoring pair (u, c) with u uncovered
 *    and c covered (ties: lowest pair index), which covers u.
 * So every uncovered column is attached through its best pair to an already-covered column, the
 * strongest attachments first; the result does not depend on the column numbering except for
 * exact ties.  Each uncovered column adds exactly one pair (plus one for the first pair when
 * nothing was selected).
 */
uint32_t
dp_densemarg_cover(uint32_t d, const double *scores, uint8_t *selected)
{
	uint32_t	m,
				added = 0,
				ncov = 0;
	uint8_t    *covered;
	double	   *key;
	uint32_t   *key_pair;

	if (d < 2 || d > MAX_COLS || selected == NULL)
		return DP_SELECT_ERROR;
	m = dp_pair_count(d);
	if (!scores_valid(m, scores))
		return DP_SELECT_ERROR;
	covered = sel_calloc(d, 1);
	key = sel_calloc(d, sizeof(double));
	key_pair = sel_calloc(d, sizeof(uint32_t));
	if (covered == NULL || key == NULL || key_pair == NULL)
	{
		sel_release(covered);
		sel_release(key);
		sel_release(key_pair);
		return DP_SELECT_ERROR;
	}
	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			if (selected[k])
				covered[a] = covered[b] = 1;
	for (uint32_t j = 0; j < d; j++)
		ncov += covered[j];

	if (ncov == 0)
	{
		uint32_t	best = 0,
					ba = 0,
					bb = 1;

		for (uint32_t a = 0, k = 0; a < d; a++)
			for (uint32_t b = a + 1; b < d; b++, k++)
				if (better_pair(scores[k], k, scores[best], best))
					best = k, ba = a, bb = b;
		selected[best] = 1;
		covered[ba] = covered[bb] = 1;
		ncov = 2;
		added++;
	}

	/* key[u]: best pair from uncovered u to the covered set (key_pair UINT32_MAX: none yet) */
	for (uint32_t u = 0; u < d; u++)
	{
		key_pair[u] = UINT32_MAX;
		if (covered[u])
			continue;
		for (uint32_t c = 0; c < d; c++)
		{
			uint32_t	k;

			if (!covered[c])
				continue;
			k = u < c ? dp_pair_index(d, u, c) : dp_pair_index(d, c, u);
			if (key_pair[u] == UINT32_MAX || better_pair(scores[k], k, key[u], key_pair[u]))
				key[u] = scores[k], key_pair[u] = k;
		}
	}
	while (ncov < d)
	{
		uint32_t	u = UINT32_MAX;

		for (uint32_t v = 0; v < d; v++)
			if (!covered[v] &&
				(u == UINT32_MAX || better_pair(key[v], key_pair[v], key[u], key_pair[u])))
				u = v;
		/* ncov >= 1, so every uncovered column has a key */
		selected[key_pair[u]] = 1;
		covered[u] = 1;
		ncov++;
		added++;
		for (uint32_t v = 0; v < d; v++)
		{
			uint32_t	k;

			if (covered[v])
				continue;
			k = u < v ? dp_pair_index(d, u, v) : dp_pair_index(d, v, u);
			if (better_pair(scores[k], k, key[v], key_pair[v]))
				key[v] = scores[k], key_pair[v] = k;
		}
	}
	sel_release(covered);
	sel_release(key);
	sel_release(key_pair);
	return added;
}

uint32_t
dp_densemarg(uint32_t d, const double *scores, const uint32_t *sizes, double rho3,
			 uint8_t *selected)
{
	uint32_t	r = dp_densemarg_greedy(d, scores, sizes, rho3, selected, NULL);
	uint32_t	c;

	if (r == DP_SELECT_ERROR)
		return DP_SELECT_ERROR;
	c = dp_densemarg_cover(d, scores, selected);
	if (c == DP_SELECT_ERROR)
		return DP_SELECT_ERROR;
	return r + c;
}

/* ======================================================================================
 * Step 6: Combine (post-processing)
 * ====================================================================================== */

typedef struct clique
{
	double		score;			/* sum of the noisy scores of its pairs, in pair order */
	uint32_t	k;
	uint32_t	v[DP_MARG_MAX_ATTRS];	/* increasing */
} clique;

typedef struct enum_ctx
{
	uint32_t	d,
				words,
				k;				/* clique size being enumerated */
	const uint64_t *adj;		/* d rows of words: the selected-pair graph */
	const uint8_t *used;		/* columns of accepted cliques (at the start of this size) */
	const uint32_t *sizes;
	const double *scores;
	uint64_t	gamma;
	uint64_t   *cand;			/* (DP_MARG_MAX_ATTRS + 1) levels of words */
	uint32_t	cur[DP_MARG_MAX_ATTRS];
	clique	   *list;
	size_t		n,
				cap;
	bool		overflow,
				oom;
} enum_ctx;

static int
cmp_clique(const void *x, const void *y)
{
	const clique *a = x,
			   *b = y;

	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	for (uint32_t i = 0; i < a->k; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

static uint32_t
popcount_words(const uint64_t *w, uint32_t words)
{
	uint32_t	c = 0;

	for (uint32_t i = 0; i < words; i++)
		c += (uint32_t) __builtin_popcountll(w[i]);
	return c;
}

static void
record_clique(enum_ctx *e)
{
	clique	   *c;
	double		s = 0;

	if (e->n >= DP_COMBINE_MAX_CANDIDATES)
	{
		e->overflow = true;
		return;
	}
	if (e->n == e->cap)
	{
		size_t		ncap = e->cap ? 2 * e->cap : 256;
		clique	   *nl = sel_calloc(ncap, sizeof(clique));

		if (nl == NULL)
		{
			e->oom = true;
			return;
		}
		if (e->n)
			memcpy(nl, e->list, e->n * sizeof(clique));
		sel_release(e->list);
		e->list = nl;
		e->cap = ncap;
	}
	c = &e->list[e->n++];
	c->k = e->k;
	for (uint32_t i = 0; i < e->k; i++)
		c->v[i] = e->cur[i];
	for (uint32_t i = 0; i < e->k; i++)
		for (uint32_t j = i + 1; j < e->k; j++)
			s += e->scores[dp_pair_index(e->d, c->v[i], c->v[j])];
	c->score = s;
}

/*
 * Extends the partial clique cur[0..depth) (cell product prod < gamma, nused of its columns in
 * used) by each vertex of cand level `depth`, in increasing order.
 */
static void
enum_rec(enum_ctx *e, uint32_t depth, uint64_t prod, uint32_t nused)
{
	const uint64_t *cand = e->cand + (size_t) depth * e->words;
	uint64_t   *next = e->cand + (size_t) (depth + 1) * e->words;

	if (depth == e->k)
	{
		record_clique(e);
		return;
	}
	if (popcount_words(cand, e->words) < e->k - depth)
		return;
	for (uint32_t wi = 0; wi < e->words; wi++)
	{
		uint64_t	bits = cand[wi];

		while (bits)
		{
			uint32_t	v = wi * 64 + (uint32_t) __builtin_ctzll(bits);
			uint64_t	p = prod * e->sizes[v];	/* prod < gamma < 2^32, size <= 2^16 */
			uint32_t	nu = nused + e->used[v];

			bits &= bits - 1;
			if (e->overflow || e->oom)
				return;
			if (p >= e->gamma || nu > 2)
				continue;
			e->cur[depth] = v;
			/* next = cand & adj[v] & {vertices > v} */
			for (uint32_t i = 0; i < e->words; i++)
			{
				uint64_t	gt = i < v / 64 ? 0 : i > v / 64 ? ~0ull :
					(v % 64 == 63 ? 0 : ~0ull << (v % 64 + 1));

				next[i] = cand[i] & e->adj[(size_t) v * e->words + i] & gt;
			}
			enum_rec(e, depth + 1, p, nu);
		}
	}
}

/*
 * Combine.  Graph G: columns as nodes, selected pairs as edges.  used = {} (columns of accepted
 * cliques).  For k = min(DP_MARG_MAX_ATTRS, d) down to 3:
 *   1. Candidates: ALL k-cliques of G (the original selected graph; edges are not removed by
 *      earlier acceptances) whose cell product prod sizes is < gamma.  They are enumerated
 *      directly, each exactly once, as increasing vertex lists (extend a partial clique by a
 *      larger common neighbour), rather than as sub-cliques of Bron-Kerbosch maximal cliques,
 *      which would list shared sub-cliques repeatedly; the cell product is pruned on the way.
 *      Cliques sharing > 2 columns with `used` as it stands at the start of size k are pruned
 *      too: `used` only grows, so they would be rejected anyway.  Cliques larger than
 *      DP_MARG_MAX_ATTRS are not considered (a dp_marg has at most that many attributes); with
 *      sizes >= 2 and gamma = 5000 no larger clique could qualify unless columns have 1-3 codes.
 *   2. Order: descending clique score (sum of the noisy scores of its k(k-1)/2 pairs), ties by
 *      lexicographic order of the increasing vertex lists.
 *   3. In that order, accept a candidate iff it shares at most 2 columns with `used` (updated
 *      after every acceptance); an accepted clique adds its columns to `used`.
 *   If a size has more than DP_COMBINE_MAX_CANDIDATES candidates, that size is skipped whole
 *   (deterministic; only a very dense selection can trigger it, and the pairs stay published).
 * Finally, the selected pairs inside an accepted clique are dropped; the output is the accepted
 * cliques (in acceptance order) followed by the remaining selected pairs (pair order).  Every
 * selected pair is contained in some output set.  Accepted cliques pairwise share <= 2 columns,
 * so they can share at most one pair.
 */
uint32_t
dp_combine(uint32_t d, const uint8_t *selected, const double *scores, const uint32_t *sizes,
		   uint32_t gamma, uint32_t (*sets)[DP_MARG_MAX_ATTRS], uint32_t *set_sizes,
		   uint32_t max_sets)
{
	enum_ctx	e;
	uint32_t	m,
				words,
				nsets = 0,
				nacc = 0,
				result = DP_SELECT_ERROR;
	uint64_t   *adj = NULL,
			   *cand = NULL;
	uint8_t    *used = NULL,
			   *dropped = NULL;
	clique	   *acc = NULL;
	size_t		acc_cap;

	if (d < 2 || d > MAX_COLS || selected == NULL || !sizes_valid(d, sizes) ||
		(max_sets > 0 && (sets == NULL || set_sizes == NULL)))
		return DP_SELECT_ERROR;
	m = dp_pair_count(d);
	if (!scores_valid(m, scores))
		return DP_SELECT_ERROR;
	words = (d + 63) / 64;
	acc_cap = m / 3 + 1;		/* accepted cliques pairwise share <= 1 pair, each has >= 3 */
	adj = sel_calloc((size_t) d * words, sizeof(uint64_t));
	cand = sel_calloc((size_t) (DP_MARG_MAX_ATTRS + 1) * words, sizeof(uint64_t));
	used = sel_calloc(d, 1);
	dropped = sel_calloc(m, 1);
	acc = sel_calloc(acc_cap, sizeof(clique));
	memset(&e, 0, sizeof(e));
	if (adj == NULL || cand == NULL || used == NULL || dropped == NULL || acc == NULL)
		goto done;

	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			if (selected[k])
			{
				adj[(size_t) a * words + b / 64] |= 1ull << (b % 64);
				adj[(size_t) b * words + a / 64] |= 1ull << (a % 64);
			}

	e.d = d;
	e.words = words;
	e.adj = adj;
	e.used = used;
	e.sizes = sizes;
	e.scores = scores;
	e.gamma = gamma;
	e.cand = cand;
	for (uint32_t k = d < DP_MARG_MAX_ATTRS ? d : DP_MARG_MAX_ATTRS; k >= 3; k--)
	{
		e.k = k;
		e.n = 0;
		e.overflow = false;
		for (uint32_t i = 0; i < words; i++)
			cand[i] = i + 1 < words || d % 64 == 0 ? ~0ull : (1ull << (d % 64)) - 1;
		enum_rec(&e, 0, 1, 0);
		if (e.oom)
			goto done;
		if (e.overflow || e.n == 0)
			continue;
		qsort(e.list, e.n, sizeof(clique), cmp_clique);
		for (size_t c = 0; c < e.n; c++)
		{
			const clique *q = &e.list[c];
			uint32_t	shared = 0;

			for (uint32_t i = 0; i < q->k; i++)
				shared += used[q->v[i]];
			if (shared > 2)
				continue;
			if (nacc == acc_cap)	/* cannot happen (see acc_cap); fail safe */
				goto done;
			acc[nacc++] = *q;
			for (uint32_t i = 0; i < q->k; i++)
			{
				used[q->v[i]] = 1;
				for (uint32_t j = i + 1; j < q->k; j++)
					dropped[dp_pair_index(d, q->v[i], q->v[j])] = 1;
			}
		}
	}

	nsets = nacc;
	for (uint32_t k = 0; k < m; k++)
		if (selected[k] && !dropped[k])
			nsets++;
	if (nsets > max_sets)
		goto done;
	for (uint32_t i = 0; i < nacc; i++)
	{
		set_sizes[i] = acc[i].k;
		for (uint32_t j = 0; j < DP_MARG_MAX_ATTRS; j++)
			sets[i][j] = j < acc[i].k ? acc[i].v[j] : 0;
	}
	nsets = nacc;
	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			if (selected[k] && !dropped[k])
			{
				set_sizes[nsets] = 2;
				memset(sets[nsets], 0, sizeof(sets[nsets]));
				sets[nsets][0] = a;
				sets[nsets][1] = b;
				nsets++;
			}
	result = nsets;

done:
	sel_release(e.list);
	sel_release(adj);
	sel_release(cand);
	sel_release(used);
	sel_release(dropped);
	sel_release(acc);
	return result;
}

/* ======================================================================================
 * Step 7: publication budget split (post-processing)
 * ====================================================================================== */

/*
 * rho_j = rho3 * c_j^(2/3) / W, W = sum_k c_k^(2/3) (the optimum derived above for
 * dp_densemarg_noise_error; the research code's c^(1/2) is not).  Rounding against the spender:
 * with u = 2^-53 and w_j the computed weights, fl(W) >= (1 - (n-1)u) sum_j w_j, and each
 * rho_j = fl(fl(rho3 * fl(w_j / fl(W))) * shrink) <= rho3 (w_j / fl(W)) shrink (1+u)^3, so
 *     sum_j rho_j <= rho3 * shrink * (1+u)^3 / (1 - (n-1)u) <= rho3 * shrink * (1 + (n+3)u)
 * (for n u << 1).  shrink = fl(1 - (2n+16)u) <= 1 - (2n+15)u makes this < rho3: the real sum of
 * the returned budgets never exceeds rho3, and falls short of it by a relative ~(n+12) 1.1e-16.
 */
void
dp_publication_split(const uint64_t *cells, uint32_t n, double rho3, double *rho_out)
{
	double		W = 0,
				shrink;
	bool		ok = cells != NULL && isfinite(rho3) && rho3 > 0 && n < (1u << 30);

	if (n == 0 || rho_out == NULL)
		return;
	for (uint32_t j = 0; ok && j < n; j++)
		ok = cells[j] > 0;
	if (!ok)
	{
		for (uint32_t j = 0; j < n; j++)
			rho_out[j] = NAN;
		return;
	}
	for (uint32_t j = 0; j < n; j++)
		W += pow((double) cells[j], 2.0 / 3.0);
	shrink = 1.0 - (2.0 * n + 16.0) * (DBL_EPSILON / 2);
	for (uint32_t j = 0; j < n; j++)
		rho_out[j] = rho3 * (pow((double) cells[j], 2.0 / 3.0) / W) * shrink;
}
