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

uint64_t
dp_unit_assign(const double *hist, uint32_t k, uint64_t nrows, dp_prng *rng, int64_t *unit_of_row)
{
	double		total = 0;
	uint64_t	r = 0,
				units = 0;

	for (uint32_t j = 1; j <= k; j++)
		total += hist[j] > 0 ? hist[j] : 0;
	while (r < nrows)
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
		err = dropped / rows + noise_l1 * bound_sensitivity(k, cell) / (rows - dropped);
		if (err < best_err)
		{
			best = k;
			best_err = err;
		}
	}
	return best;
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
