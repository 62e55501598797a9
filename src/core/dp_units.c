/*
 * dp_units.c - contribution bounding per privacy unit, and the rows-per-unit shape of a
 * synthetic table (dp_units.h).
 *
 * The bounding sorts the row indices by (unit key bytes, random key, row index) with a merge sort
 * (stable, O(n log n), n extra indices of memory), then keeps the first k rows of each run of
 * equal unit keys: for every unit, the k rows of smallest random key, a uniformly random subset
 * of size min(k, rows) because the keys are independent and identically distributed.
 */
#include "dp_units.h"

#include <math.h>
#include <string.h>

#include "dp_env.h"
#include "dp_sampler.h"

typedef struct sort_ctx
{
	const uint8_t *bytes;
	const uint64_t *off;
	const uint64_t *rkey;
} sort_ctx;

/* -1, 0, 1: unit key of rows a and b, compared as byte strings (shorter first on a tie) */
static int
unit_cmp(const sort_ctx *s, uint64_t a, uint64_t b)
{
	uint64_t	la = s->off[a + 1] - s->off[a],
				lb = s->off[b + 1] - s->off[b];
	int			c = memcmp(s->bytes + s->off[a], s->bytes + s->off[b], la < lb ? la : lb);

	if (c != 0)
		return c < 0 ? -1 : 1;
	return la < lb ? -1 : la > lb ? 1 : 0;
}

/* row a before row b: by unit, then random key, then index */
static int
row_before(const sort_ctx *s, uint64_t a, uint64_t b)
{
	int			c = unit_cmp(s, a, b);

	if (c != 0)
		return c < 0;
	if (s->rkey[a] != s->rkey[b])
		return s->rkey[a] < s->rkey[b];
	return a < b;
}

/* bottom-up merge sort of idx[0..n) with tmp[0..n) as scratch; the result ends in idx */
static void
merge_sort(const sort_ctx *s, uint64_t *idx, uint64_t *tmp, uint64_t n)
{
	uint64_t   *src = idx,
			   *dst = tmp;

	for (uint64_t width = 1; width < n; width *= 2)
	{
		for (uint64_t lo = 0; lo < n; lo += 2 * width)
		{
			uint64_t	mid = lo + width < n ? lo + width : n,
						hi = lo + 2 * width < n ? lo + 2 * width : n,
						i = lo,
						j = mid,
						o = lo;

			while (i < mid && j < hi)
				dst[o++] = row_before(s, src[j], src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
		}
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
		if ((width & 0xFFFF) == 0)
			dp_check_interrupts();
	}
	if (src != idx)
		memcpy(idx, src, sizeof(uint64_t) * n);
}

int
dp_unit_bound(uint64_t n, const uint8_t *bytes, const uint64_t *off, const uint64_t *rkey,
			  uint32_t k, uint64_t *kept, uint8_t *first, uint64_t *nkept, int64_t *hist)
{
	sort_ctx	s = {bytes, off, rkey};
	uint64_t   *idx,
			   *tmp;
	uint64_t	out = 0,
				run = 0;

	if (hist)
		memset(hist, 0, sizeof(int64_t) * ((size_t) k + 1));
	*nkept = 0;
	if (n == 0)
		return 0;
	idx = dp_alloc(sizeof(uint64_t) * n);
	tmp = dp_alloc(sizeof(uint64_t) * n);
	if (idx == NULL || tmp == NULL)
	{
		dp_free(idx);
		dp_free(tmp);
		dp_fail(DP_ERR_NOMEM, "out of memory bounding %llu rows per unit", (unsigned long long) n);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		idx[i] = i;
	merge_sort(&s, idx, tmp, n);
	dp_free(tmp);
	for (uint64_t i = 0; i < n; i++)
	{
		int			starts = i == 0 || unit_cmp(&s, idx[i - 1], idx[i]) != 0;

		if (starts)
		{
			if (i > 0 && hist)
				hist[run]++;
			run = 0;
		}
		if (run < k)
		{
			kept[out] = idx[i];
			first[out] = (uint8_t) starts;
			out++;
			run++;
		}
	}
	if (hist && k > 0)
		hist[run]++;
	dp_free(idx);
	*nkept = out;
	return 0;
}

/* the positive part of hist[1..k], the total unit sizes are drawn against */
static double
hist_total(const double *hist, uint32_t k)
{
	double		total = 0;

	for (uint32_t j = 1; j <= k; j++)
		total += hist[j] > 0 ? hist[j] : 0;
	return total;
}

/* one unit size from the distribution proportional to max(hist[j], 0); 1 if total is 0 */
static uint32_t
draw_size(const double *hist, uint32_t k, double total, dp_prng *rng)
{
	uint32_t	size = 1;

	if (total > 0)
	{
		double		u = dp_prng_unit(rng) * total,
					acc = 0;

		for (size = 1; size < k; size++)
		{
			acc += hist[size] > 0 ? hist[size] : 0;
			if (u < acc)
				break;
		}
		/* size == k when u fell in the last cell (or past it by rounding) */
	}
	return size;
}

uint64_t
dp_unit_assign(const double *hist, uint32_t k, uint64_t nrows, dp_prng *rng, int64_t *unit_of_row)
{
	double		total = hist_total(hist, k);
	uint64_t	r = 0,
				units = 0;

	while (r < nrows)
	{
		uint32_t	size = draw_size(hist, k, total, rng);

		units++;
		for (uint32_t i = 0; i < size && r < nrows; i++)
			unit_of_row[r++] = (int64_t) units;
	}
	return units;
}

/* a cell's units where k is picked: less shrink, at least 0 (dp_unit_pick_k) */
static double
counted(int64_t cell, double shrink)
{
	return (double) cell > shrink ? (double) cell - shrink : 0;
}

uint32_t
dp_unit_pick_k(const int64_t *hist, uint32_t kmax, double q, double shrink)
{
	double		total = 0,
				acc = 0;

	for (uint32_t j = 1; j <= kmax; j++)
		total += counted(hist[j], shrink);
	if (!(total > 0))
		return 1;
	for (uint32_t k = 1; k < kmax; k++)
	{
		acc += counted(hist[k], shrink);
		if (acc >= q * total)
			return k;
	}
	return kmax;
}

/* the L2 sensitivity of a count vector under bounds (k, min(cell, k)); cell 0: none */
static double
bound_sensitivity(uint32_t k, uint32_t cell)
{
	uint32_t	c = cell > 0 && cell < k ? cell : k;

	return sqrt((double) (k / c) * c * c + (double) (k % c) * (k % c));
}

uint32_t
dp_unit_pick_k_weighed(const int64_t *hist, uint32_t kmax, double q, double shrink,
					   double noise_l1, uint32_t cell)
{
	uint32_t	kcap = dp_unit_pick_k(hist, kmax, q, shrink),
				best = kcap;
	double		rows = 0,
				best_err = INFINITY;

	if (!(noise_l1 > 0) || !isfinite(noise_l1))
		return kcap;
	for (uint32_t j = 1; j <= kmax; j++)
		rows += (double) j * counted(hist[j], shrink);
	if (!(rows > 0))
		return 1;
	for (uint32_t k = 1; k <= kcap; k++)
	{
		double		dropped = 0,
					err;

		for (uint32_t j = k + 1; j <= kmax; j++)
			dropped += (double) (j - k) * counted(hist[j], shrink);
		if (!(rows - dropped > 0))
			continue;
		/* both terms total variations (dp_units.h): the noise's is half its L1 norm over the rows */
		err = dropped / rows + 0.5 * noise_l1 * bound_sensitivity(k, cell) / (rows - dropped);
		if (err < best_err)
		{
			best = k;
			best_err = err;
		}
	}
	return best;
}

void
dp_unit_fold_hist(const int64_t *hist, uint32_t kmax, uint32_t k, double shrink, int64_t *out)
{
	uint32_t	last = k;
	int64_t		total = 0;

	/* the last cell above k released at shrink or more: the cells beyond it are noise alone
	 * (shrink 0: every cell, as released) */
	if (!(shrink > 0))
		last = kmax;
	else
		for (uint32_t j = kmax; j > k; j--)
			if ((double) hist[j] >= shrink)
			{
				last = j;
				break;
			}
	out[0] = 0;
	for (uint32_t j = 1; j <= k; j++)
		out[j] = 0;
	for (uint32_t j = 1; j <= last; j++)
		out[j < k ? j : k] += hist[j];
	/* the cells below k, and cell k where nothing above it passed, count as empty below shrink */
	for (uint32_t j = 1; j <= k; j++)
	{
		if (shrink > 0 && (double) out[j] < shrink && (j < k || last == k))
			out[j] = 0;
		total += out[j] > 0 ? out[j] : 0;
	}
	/* no cell passed (a table smaller than the noise): the fold of every cell, as released */
	if (total == 0 && shrink > 0)
		dp_unit_fold_hist(hist, kmax, k, 0, out);
}

int
dp_unit_noise_drawable(double sigma2, uint32_t kmax)
{
	dp_dgauss	g;

	if (kmax < 1 || dp_dgauss_init(&g, sigma2) != 0 ||
		dp_dgauss_init(&g, sigma2 * (double) kmax * (double) kmax) != 0)
		return -1;
	return 0;
}

/* the grouped assignment lets a cancel in at least once per this many rows of each of its loops */
#define DP_UNITS_CHECK_EVERY 65536

typedef struct group_ctx
{
	const uint16_t *const *gcols;
	uint32_t	ngcols;
} group_ctx;

/* row a before row b: by the group columns' codes in order, then by index */
static int
group_before(const group_ctx *g, uint64_t a, uint64_t b)
{
	for (uint32_t j = 0; j < g->ngcols; j++)
		if (g->gcols[j][a] != g->gcols[j][b])
			return g->gcols[j][a] < g->gcols[j][b];
	return a < b;
}

static int
same_group(const group_ctx *g, uint64_t a, uint64_t b)
{
	for (uint32_t j = 0; j < g->ngcols; j++)
		if (g->gcols[j][a] != g->gcols[j][b])
			return 0;
	return 1;
}

/* bottom-up merge sort of idx[0..n) by group_before, tmp[0..n) as scratch */
static void
group_sort(const group_ctx *g, uint64_t *idx, uint64_t *tmp, uint64_t n)
{
	uint64_t   *src = idx,
			   *dst = tmp,
				work = 0;

	for (uint64_t width = 1; width < n; width *= 2)
	{
		for (uint64_t lo = 0; lo < n; lo += 2 * width)
		{
			uint64_t	mid = lo + width < n ? lo + width : n,
						hi = lo + 2 * width < n ? lo + 2 * width : n,
						i = lo,
						j = mid,
						o = lo;

			while (i < mid && j < hi)
				dst[o++] = group_before(g, src[j], src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
			/* a cancel gets in every DP_UNITS_CHECK_EVERY rows merged, in every pass */
			work += hi - lo;
			if (work >= DP_UNITS_CHECK_EVERY)
			{
				work = 0;
				dp_check_interrupts();
			}
		}
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != idx)
		memcpy(idx, src, sizeof(uint64_t) * n);
}

/* Room for need positions in *order and *unit_of_pos (*cap of them now): 0, or -1 on allocation
 * failure (what was allocated stays valid, for the caller to free). */
static int
grow_positions(uint64_t **order, int64_t **unit_of_pos, uint64_t *cap, uint64_t need)
{
	uint64_t	c = *cap + *cap / 2;
	uint64_t   *o;
	int64_t    *u;

	if (need <= *cap)
		return 0;
	if (c < need)
		c = need;
	o = dp_realloc(*order, sizeof(uint64_t) * c);
	if (o == NULL)
		return -1;
	*order = o;
	u = dp_realloc(*unit_of_pos, sizeof(int64_t) * c);
	if (u == NULL)
		return -1;
	*unit_of_pos = u;
	*cap = c;
	return 0;
}

/*
 * Cuts one group's rows rows[0..n) (shuffled) into units, appending to order and unit_of_pos at
 * *npos (grown past *cap as needed: a group's last unit may add up to k - 1 positions); the last
 * unit as dp_unit_assign_grouped says.  0, or -1 on allocation failure.
 */
static int
assign_group(const double *hist, uint32_t k, double total, const uint64_t *rows, uint64_t n,
			 dp_prng *rng, uint64_t **orderp, int64_t **unitp, uint64_t *cap, uint64_t *npos, int64_t *units)
{
	uint64_t	pos = 0;

	while (pos < n)
	{
		uint32_t	size = draw_size(hist, k, total, rng);
		uint64_t	left = n - pos;
		uint64_t   *order;
		int64_t    *unit_of_pos;

		if (size > left && dp_prng_below(rng, size) >= left)
			break;				/* dropped, with probability 1 - left / size */
		if (grow_positions(orderp, unitp, cap, *npos + size) != 0)
			return -1;
		order = *orderp;
		unit_of_pos = *unitp;
		(*units)++;
		for (uint32_t i = 0; i < size; i++)
		{
			uint64_t	row;

			if (i < left)
				row = rows[pos + i];
			else if (pos > 0)
				row = rows[dp_prng_below(rng, pos)];	/* the group's other rows */
			else
				row = rows[dp_prng_below(rng, n)];
			order[*npos] = row;
			unit_of_pos[*npos] = *units;
			if (++(*npos) % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
		pos += size < left ? size : left;
	}
	return 0;
}

/*
 * Puts the units of order/unit_of_pos[0..npos) (units 1..units, each over consecutive positions)
 * in a uniformly random order, numbered 1..units again in that order, so that the table is not
 * sorted by the grouping columns.  0, or -1 on allocation failure (nothing changed).
 */
static int
shuffle_units(uint64_t *order, int64_t *unit_of_pos, uint64_t npos, int64_t units, dp_prng *rng)
{
	uint64_t   *start = dp_alloc(sizeof(uint64_t) * ((size_t) units + 1)),
			   *perm = dp_alloc(sizeof(uint64_t) * ((size_t) units + 1)),
			   *copy = dp_alloc(sizeof(uint64_t) * (npos + 1)),
				p = 0;

	if (start == NULL || perm == NULL || copy == NULL)
	{
		dp_free(start);
		dp_free(perm);
		dp_free(copy);
		return -1;
	}
	for (uint64_t i = 0; i < npos; i++)
	{
		if (i == 0 || unit_of_pos[i] != unit_of_pos[i - 1])
			start[p++] = i;
		if ((i + 1) % DP_UNITS_CHECK_EVERY == 0)
			dp_check_interrupts();
	}
	start[p] = npos;
	for (uint64_t u = 0; u < (uint64_t) units; u++)
		perm[u] = u;
	for (uint64_t u = (uint64_t) units; u > 1; u--)
	{
		uint64_t	j = dp_prng_below(rng, u),
					t = perm[u - 1];

		perm[u - 1] = perm[j];
		perm[j] = t;
		if (u % DP_UNITS_CHECK_EVERY == 0)
			dp_check_interrupts();
	}
	memcpy(copy, order, sizeof(uint64_t) * npos);
	p = 0;
	for (uint64_t u = 0; u < (uint64_t) units; u++)
		for (uint64_t i = start[perm[u]]; i < start[perm[u] + 1]; i++)
		{
			order[p] = copy[i];
			unit_of_pos[p++] = (int64_t) u + 1;
			if (p % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
	dp_free(start);
	dp_free(perm);
	dp_free(copy);
	return 0;
}

int64_t
dp_unit_assign_grouped(const double *hist, uint32_t k, uint64_t nrows,
					   const uint16_t *const *gcols, uint32_t ngcols, dp_prng *rng,
					   uint64_t **order, int64_t **unit_of_pos, uint64_t *npos)
{
	group_ctx	g = {gcols, ngcols};
	double		total = hist_total(hist, k);
	uint64_t   *idx,
			   *tmp,
				done = 0,
				cap;
	int64_t		units = 0;

	*order = NULL;
	*unit_of_pos = NULL;
	*npos = 0;
	if (nrows == 0)
		return 0;
	idx = dp_alloc(sizeof(uint64_t) * nrows);
	tmp = dp_alloc(sizeof(uint64_t) * nrows);
	if (idx == NULL || tmp == NULL)
		goto nomem;
	for (uint64_t i = 0; i < nrows; i++)
		idx[i] = i;
	group_sort(&g, idx, tmp, nrows);
	dp_free(tmp);
	tmp = NULL;
	/* each group adds at most k - 1 rows to fill its last unit, and drops as many in expectation:
	 * room for a few more than the rows, grown by assign_group when a draw needs more (many small
	 * groups would otherwise reserve k times the rows) */
	cap = nrows + nrows / 16 + (k > 0 ? k : 1);
	*order = dp_alloc(sizeof(uint64_t) * cap);
	*unit_of_pos = dp_alloc(sizeof(int64_t) * cap);
	if (*order == NULL || *unit_of_pos == NULL)
		goto nomem;
	for (uint64_t lo = 0; lo < nrows;)
	{
		uint64_t	hi = lo + 1;

		while (hi < nrows && same_group(&g, idx[lo], idx[hi]))
			hi++;
		/* Fisher-Yates: which of the group's rows share a unit is random */
		for (uint64_t i = hi - lo - 1; i > 0; i--)
		{
			uint64_t	j = dp_prng_below(rng, i + 1),
						t = idx[lo + i];

			idx[lo + i] = idx[lo + j];
			idx[lo + j] = t;
			if (i % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
		if (assign_group(hist, k, total, idx + lo, hi - lo, rng, order, unit_of_pos, &cap, npos, &units) != 0)
			goto nomem;
		lo = hi;
		if ((++done & 0xFFF) == 0)
			dp_check_interrupts();
	}
	dp_free(idx);
	idx = NULL;
	if (shuffle_units(*order, *unit_of_pos, *npos, units, rng) != 0)
		goto nomem;
	return units;

nomem:
	dp_free(idx);
	dp_free(tmp);
	dp_free(*order);
	dp_free(*unit_of_pos);
	*order = NULL;
	*unit_of_pos = NULL;
	*npos = 0;
	dp_fail(DP_ERR_NOMEM, "out of memory forming %llu synthetic rows into units", (unsigned long long) nrows);
	return -1;
}
