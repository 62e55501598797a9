/*
 * test_units.c - unit tests of src/core/dp_units.c: contribution bounding per privacy unit and
 * the rows-per-unit shape of a synthetic table.
 *
 * Bounding (dp_unit_keep, one pass): every unit keeps min(k, its rows) of its own rows, grouped and
 * flagged, with the histogram of kept rows per unit; units whose keys are prefixes of each other or
 * differ in one byte stay apart; the same rows as the sort by (unit bytes, random key) it replaced,
 * on 200 random tables; memory that grows with units, not rows; the kept subset is uniform (each of 5 rows of a unit kept with frequency 2/5
 * at k = 2, over 20,000 draws of CSPRNG keys: a 6-sigma band).  Assignment: unit sizes follow the
 * released histogram, negative cells count as zero, and every row gets a unit; grouped by the
 * columns constant within a unit, no unit mixes groups or is cut.  Learning k: the
 * 0.95-quantile of a histogram of row counts, negative cells summed as they are.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_accounting.h"
#include "dp_env.h"
#include "dp_plan.h"
#include "dp_random.h"
#include "dp_sampler.h"
#include "dp_schedule.h"
#include "dp_units.h"
#include "unit.h"

/* rows of units given by sizes[], unit u's key the bytes "u<u>" (u >= 10 gives longer keys,
 * and unit 1's key "u1" is a prefix of unit 10's "u10") */
static void
build(const uint32_t *sizes, uint32_t nunits, uint8_t **bytes, uint64_t **off, uint64_t *n,
	  uint32_t **unit_of)
{
	uint64_t	rows = 0,
				pos = 0,
				r = 0;

	for (uint32_t u = 0; u < nunits; u++)
		rows += sizes[u];
	*bytes = malloc(rows * 16 + 1);
	*off = malloc(sizeof(uint64_t) * (rows + 1));
	*unit_of = malloc(sizeof(uint32_t) * (rows + 1));
	/* interleave the units' rows, so that a unit's rows are not adjacent in the input */
	for (uint32_t round = 0;; round++)
	{
		bool		any = false;

		for (uint32_t u = 0; u < nunits; u++)
			if (round < sizes[u])
			{
				int			len = sprintf((char *) *bytes + pos, "u%u", u);

				(*off)[r] = pos;
				(*unit_of)[r] = u;
				pos += (uint64_t) len;
				r++;
				any = true;
			}
		if (!any)
			break;
	}
	(*off)[r] = pos;
	*n = rows;
}

/* the key bytes of rows, for ordering units as the reference does (test only: one table at a time) */
static const uint8_t *cmp_bytes;
static const uint64_t *cmp_off;

/* two units by the key bytes of their first rows (row indices), shorter first on a tie */
static int
unit_first_cmp(const void *x, const void *y)
{
	uint64_t	a = ((const uint64_t *) x)[0],
				b = ((const uint64_t *) y)[0],
				la = cmp_off[a + 1] - cmp_off[a],
				lb = cmp_off[b + 1] - cmp_off[b];
	int			c = memcmp(cmp_bytes + cmp_off[a], cmp_bytes + cmp_off[b], la < lb ? la : lb);

	return c != 0 ? c : la < lb ? -1 : la > lb ? 1 : 0;
}

static const uint64_t *cmp_rkey;

/* rows a and b (indices) by unit key bytes (shorter first on a tie), then random key, then index */
static int
row_ref_cmp(const void *x, const void *y)
{
	uint64_t	a = *(const uint64_t *) x,
				b = *(const uint64_t *) y;
	int			c = unit_first_cmp(x, y);

	if (c != 0)
		return c;
	return cmp_rkey[a] < cmp_rkey[b] ? -1 : cmp_rkey[a] > cmp_rkey[b] ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

/*
 * The bounding as it was specified before it streamed, the reference dp_unit_keep must equal:
 * row indices sorted by (unit key bytes, random key, row index), each unit's first k kept,
 * grouped and flagged; hist (k + 1 entries) the units by rows kept.
 */
static void
ref_bound(uint64_t n, const uint8_t *bytes, const uint64_t *off, const uint64_t *rkey, uint32_t k,
		  uint64_t *kept, uint8_t *first, uint64_t *nkept, int64_t *hist)
{
	uint64_t   *idx = malloc(sizeof(uint64_t) * (n + 1));
	uint64_t	out = 0,
				run = 0;

	for (uint64_t i = 0; i < n; i++)
		idx[i] = i;
	cmp_bytes = bytes;
	cmp_off = off;
	cmp_rkey = rkey;
	qsort(idx, n, sizeof(uint64_t), row_ref_cmp);
	if (hist)
		memset(hist, 0, sizeof(int64_t) * ((size_t) k + 1));
	for (uint64_t i = 0; i < n; i++)
	{
		int			starts = i == 0 || unit_first_cmp(&idx[i - 1], &idx[i]) != 0;

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
	if (hist && k > 0 && n > 0)
		hist[run]++;
	*nkept = out;
	free(idx);
}

/*
 * dp_unit_keep on n rows (row i's key bytes[off[i] .. off[i + 1]), its random key rkey[i], its one
 * code the low 16 bits of i, and its second code the high ones), in the reference's terms: the
 * kept rows' indices grouped by unit (each unit's first k), the units ordered by key bytes as the
 * reference orders them (dp_unit_keep's own order is its hash's), first flags, hist; -1 on a
 * failure.
 */
static int
keep_bound(uint64_t n, const uint8_t *bytes, const uint64_t *off, const uint64_t *rkey, uint32_t cap,
		   uint32_t k, uint64_t *kept, uint8_t *first, uint64_t *nkept, int64_t *hist, uint64_t *mem)
{
	dp_unit_keep *b = dp_unit_keep_new(2, cap);
	const uint16_t **rows = malloc(sizeof(uint16_t *) * cap);
	uint64_t	out = 0,
				nunits,
			   *units;				/* per unit: its rows' indices, cap + 1 slots, the last its count */

	if (b == NULL)
		return -1;
	for (uint64_t i = 0; i < n; i++)
	{
		uint16_t	codes[2] = {(uint16_t) (i & 0xFFFF), (uint16_t) (i >> 16)};

		if (dp_unit_keep_add(b, bytes + off[i], (uint32_t) (off[i + 1] - off[i]), codes, rkey[i]) != 0)
		{
			dp_unit_keep_free(b);
			return -1;
		}
	}
	if (dp_unit_keep_finish(b, hist) != 0)
	{
		dp_unit_keep_free(b);
		return -1;
	}
	if (mem)
		*mem = dp_unit_keep_bytes(b);
	nunits = dp_unit_keep_units(b);
	units = malloc(sizeof(uint64_t) * (cap + 1) * (nunits + 1));
	for (uint64_t u = 0; u < nunits; u++)
	{
		uint32_t	r = dp_unit_keep_unit(b, u, rows);

		for (uint32_t j = 0; j < r; j++)
			units[u * (cap + 1) + j] = (uint64_t) rows[j][0] | ((uint64_t) rows[j][1] << 16);
		units[u * (cap + 1) + cap] = r;
	}
	cmp_bytes = bytes;
	cmp_off = off;
	qsort(units, nunits, sizeof(uint64_t) * (cap + 1), unit_first_cmp);
	for (uint64_t u = 0; u < nunits; u++)
		for (uint64_t j = 0; j < units[u * (cap + 1) + cap] && j < k; j++)
		{
			kept[out] = units[u * (cap + 1) + j];
			first[out] = j == 0;
			out++;
		}
	*nkept = out;
	free(units);
	free(rows);
	dp_unit_keep_free(b);
	return 0;
}

static void
test_bound(void)
{
	uint32_t	sizes[12] = {1, 2, 3, 8, 40, 0, 1, 1, 5, 2, 7, 1};
	uint32_t	k = 3;
	uint8_t    *bytes;
	uint64_t   *off,
			   *rkey,
			   *kept,
				n,
				nkept;
	uint32_t   *unit_of;
	uint8_t    *first;
	int64_t		hist[4];
	uint32_t	seen[12] = {0};
	int64_t		want[4] = {0};
	bool		grouped = true,
				flags = true;
	uint32_t	nfirst = 0;
	int			rc;

	build(sizes, 12, &bytes, &off, &n, &unit_of);
	rkey = malloc(sizeof(uint64_t) * n);
	kept = malloc(sizeof(uint64_t) * n);
	first = malloc(n);
	dp_random_bytes(rkey, sizeof(uint64_t) * n);
	rc = keep_bound(n, bytes, off, rkey, k, k, kept, first, &nkept, hist, NULL);
	unit_check(rc == 0, "dp_unit_keep succeeds on %llu rows", (unsigned long long) n);
	for (uint64_t i = 0; i < nkept; i++)
	{
		uint32_t	u = unit_of[kept[i]];

		seen[u]++;
		if (first[i])
			nfirst++;
		if (i > 0 && !first[i] && unit_of[kept[i - 1]] != u)
			grouped = false;
		if (i > 0 && first[i] && unit_of[kept[i - 1]] == u)
			flags = false;
		/* within a unit, increasing random keys */
		if (i > 0 && !first[i] && rkey[kept[i - 1]] > rkey[kept[i]])
			grouped = false;
	}
	unit_check(grouped, "kept rows are grouped by unit, in increasing random key");
	unit_check(flags && (nkept == 0 || first[0]), "first[] flags exactly the start of each unit");
	{
		bool		ok = true;
		uint32_t	units = 0;

		for (uint32_t u = 0; u < 12; u++)
		{
			uint32_t	w = sizes[u] < k ? sizes[u] : k;

			ok = ok && seen[u] == w;
			if (w > 0)
			{
				want[w]++;
				units++;
			}
		}
		unit_check(ok, "every unit keeps min(k, its rows) rows (units 1 and 10: keys \"u1\", \"u10\" stay apart)");
		unit_check(nfirst == units, "one first flag per unit (%u, want %u)", nfirst, units);
	}
	unit_check(memcmp(hist, want, sizeof(hist)) == 0,
			   "histogram of kept rows per unit: %lld %lld %lld %lld", (long long) hist[0],
			   (long long) hist[1], (long long) hist[2], (long long) hist[3]);
	rc = keep_bound(0, bytes, off, rkey, k, k, kept, first, &nkept, hist, NULL);
	unit_check(rc == 0 && nkept == 0 && hist[1] == 0, "an empty table keeps nothing");
	free(bytes);
	free(off);
	free(unit_of);
	free(rkey);
	free(kept);
	free(first);
}

/*
 * dp_unit_keep equals the reference on random tables: up to 60 units (6,000 in one table of five,
 * so that the table of units grows) of 0 to 70 rows (keys of 1 to 12 bytes from a 3-letter
 * alphabet, so that prefixes and one-byte differences abound), interleaved at random, caps 1, 3,
 * 32 and 1000 (units of more than 2 cap rows are trimmed while read), and a learned k below the
 * cap (its first k rows a unit; the histogram is the cap's); random keys with ties forced in one
 * table of four.
 */
static void
test_keep_reference(void)
{
	dp_prng		rng;
	int			bad = 0,
				tables = 0;

	dp_prng_seed(&rng, 7);
	for (int t = 0; t < 200; t++)
	{
		/* one table of five past the table of units' first growth (768 units) */
		uint32_t	nunits = 1 + (uint32_t) dp_prng_below(&rng, t % 5 == 4 ? 6000 : 60),
					caps[4] = {1, 3, 32, 1000},
					cap = caps[t % 4],
					k = cap == 32 ? 1 + (uint32_t) dp_prng_below(&rng, 32) : cap;
		uint64_t	n = 0,
					pos = 0;
		uint8_t    *ukey = malloc(12 * nunits),
				   *ulen = malloc(nunits),
				   *bytes;
		uint32_t   *left = malloc(sizeof(uint32_t) * nunits);
		uint64_t   *off,
				   *rkey,
				   *kr,
				   *kk,
					nr,
					nk;
		uint8_t    *fr,
				   *fk;
		int64_t		hr[1001],
					hk[1001],
					hc[1001];

		for (uint32_t u = 0; u < nunits; u++)
		{
			/* short keys collide on purpose (one unit then), long ones stay apart */
			ulen[u] = (uint8_t) (1 + dp_prng_below(&rng, 12));
			for (int j = 0; j < ulen[u]; j++)
				ukey[12 * u + j] = (uint8_t) ('a' + dp_prng_below(&rng, 3));
			left[u] = (uint32_t) dp_prng_below(&rng, 71);
			n += left[u];
		}
		bytes = malloc(12 * n + 1);
		off = malloc(sizeof(uint64_t) * (n + 1));
		rkey = malloc(sizeof(uint64_t) * (n + 1));
		kr = malloc(sizeof(uint64_t) * (n + 1));
		kk = malloc(sizeof(uint64_t) * (n + 1));
		fr = malloc(n + 1);
		fk = malloc(n + 1);
		for (uint64_t i = 0; i < n; i++)
		{
			uint32_t	u;

			do
				u = (uint32_t) dp_prng_below(&rng, nunits);
			while (left[u] == 0);
			left[u]--;
			off[i] = pos;
			memcpy(bytes + pos, ukey + 12 * u, ulen[u]);
			pos += ulen[u];
			rkey[i] = t % 4 == 1 ? dp_prng_below(&rng, 4) : dp_prng_next(&rng);
		}
		off[n] = pos;
		ref_bound(n, bytes, off, rkey, k, kr, fr, &nr, hr);
		if (cap != k)			/* the histogram is the bounding's, at cap */
			ref_bound(n, bytes, off, rkey, cap, kk, fk, &nk, hc);
		if (keep_bound(n, bytes, off, rkey, cap, k, kk, fk, &nk, hk, NULL) != 0)
			bad++;
		else if (nr != nk || memcmp(fr, fk, nr) != 0 ||
				 memcmp(cap == k ? hr : hc, hk, sizeof(int64_t) * (cap + 1)) != 0)
			bad++;
		else if (t % 4 != 1 && memcmp(kr, kk, sizeof(uint64_t) * nr) != 0)
			bad++;
		else if (t % 4 == 1)
		{
			/* ties: the same random keys kept, unit by unit (which of two tied rows may differ) */
			for (uint64_t i = 0; i < nr; i++)
				if (rkey[kr[i]] != rkey[kk[i]] || off[kr[i] + 1] - off[kr[i]] != off[kk[i] + 1] - off[kk[i]] ||
					memcmp(bytes + off[kr[i]], bytes + off[kk[i]], off[kr[i] + 1] - off[kr[i]]) != 0)
				{
					bad++;
					break;
				}
		}
		tables++;
		free(ukey);
		free(ulen);
		free(left);
		free(bytes);
		free(off);
		free(rkey);
		free(kr);
		free(kk);
		free(fr);
		free(fk);
	}
	unit_check(bad == 0, "dp_unit_keep keeps the reference's rows, grouped and flagged as it does, with its histogram, on %d random tables (%d differ)",
			   tables, bad);
}

/*
 * Memory grows with the units, not with their rows: 10 units of 200,000 rows each at a bound of 3
 * hold what 10 units of 3 rows hold; 100,000 units of one row of 15 codes under 160 bytes a unit:
 * 42 for the row, at most 86 for the table of units (32 bytes a slot, at least 3/8 of them used),
 * the key bytes, and the store's last block, partly used.
 */
static void
test_keep_memory(void)
{
	dp_unit_keep *few = dp_unit_keep_new(15, 3),
			   *many = dp_unit_keep_new(15, 3),
			   *small = dp_unit_keep_new(15, 3);
	uint16_t	codes[15] = {0};
	uint64_t	rk;
	char		key[16];
	const uint16_t *rows[3];
	bool		ok = few && many && small;

	for (uint64_t i = 0; ok && i < 2000000; i++)
	{
		int			len = sprintf(key, "p%llu", (unsigned long long) (i % 10));

		dp_random_bytes(&rk, sizeof(rk));
		ok = dp_unit_keep_add(few, (const uint8_t *) key, (uint32_t) len, codes, rk) == 0;
		if (ok && i < 30)
			ok = dp_unit_keep_add(small, (const uint8_t *) key, (uint32_t) len, codes, rk) == 0;
	}
	for (uint64_t i = 0; ok && i < 100000; i++)
	{
		int			len = sprintf(key, "p%llu", (unsigned long long) i);

		dp_random_bytes(&rk, sizeof(rk));
		ok = dp_unit_keep_add(many, (const uint8_t *) key, (uint32_t) len, codes, rk) == 0;
	}
	ok = ok && dp_unit_keep_finish(few, NULL) == 0 && dp_unit_keep_finish(many, NULL) == 0 &&
		dp_unit_keep_finish(small, NULL) == 0;
	unit_check(ok && dp_unit_keep_units(few) == 10 && dp_unit_keep_unit(few, 0, rows) == 3,
			   "2,000,000 rows of 10 units at a bound of 3: 10 units of 3 rows");
	unit_check(ok && dp_unit_keep_bytes(few) == dp_unit_keep_bytes(small),
			   "... held in the memory of 30 rows of those units (%llu bytes against %llu)",
			   ok ? (unsigned long long) dp_unit_keep_bytes(few) : 0ULL,
			   ok ? (unsigned long long) dp_unit_keep_bytes(small) : 0ULL);
	unit_check(ok && dp_unit_keep_bytes(many) < 100000 * 160,
			   "100,000 units of one row (15 codes: 42 bytes a row kept) in %llu bytes, under 160 a unit",
			   ok ? (unsigned long long) dp_unit_keep_bytes(many) : 0ULL);
	dp_unit_keep_free(few);
	dp_unit_keep_free(many);
	dp_unit_keep_free(small);
}

/* each of 5 rows of one unit kept with probability 2/5 at k = 2 */
static void
test_uniform(void)
{
	uint8_t		bytes[5] = {'a', 'a', 'a', 'a', 'a'};
	uint64_t	off[6] = {0, 1, 2, 3, 4, 5};	/* five one-byte keys "a": one unit */
	uint64_t	rkey[5],
				kept[5],
				nkept;
	uint8_t		first[5];
	uint32_t	count[5] = {0};
	const int	trials = 20000;
	bool		ok = true;
	double		p = 0.4,
				sd = sqrt(trials * p * (1 - p));

	for (int t = 0; t < trials; t++)
	{
		dp_random_bytes(rkey, sizeof(rkey));
		if (keep_bound(5, bytes, off, rkey, 2, 2, kept, first, &nkept, NULL, NULL) != 0 || nkept != 2)
			ok = false;
		for (uint64_t i = 0; i < nkept; i++)
			count[kept[i]]++;
	}
	unit_check(ok, "one unit of 5 rows keeps 2 at k = 2, every time");
	for (int i = 0; i < 5; i++)
		unit_check(fabs(count[i] - trials * p) < 6 * sd, "row %d kept %u times of %d (expected %.0f +- 6 * %.1f)",
				   i, count[i], trials, trials * p, sd);
}

static void
test_assign(void)
{
	double		hist[4] = {99, 10, -5, 30};	/* hist[0] ignored, the negative cell counts as 0 */
	uint64_t	nrows = 200000;
	int64_t    *unit = malloc(sizeof(int64_t) * nrows);
	dp_prng		rng;
	uint64_t	units,
				size = 0,
				n1 = 0,
				n3 = 0,
				other = 0;
	bool		consecutive = true;

	dp_prng_seed(&rng, 42);
	units = dp_unit_assign(hist, 3, nrows, &rng, unit);
	for (uint64_t r = 0; r < nrows; r++)
	{
		if (r > 0 && unit[r] != unit[r - 1] && unit[r] != unit[r - 1] + 1)
			consecutive = false;
		size++;
		if (r + 1 == nrows || unit[r + 1] != unit[r])
		{
			if (r + 1 < nrows)	/* the last unit may be cut */
			{
				if (size == 1)
					n1++;
				else if (size == 3)
					n3++;
				else
					other++;
			}
			size = 0;
		}
	}
	unit_check(unit[0] == 1 && (uint64_t) unit[nrows - 1] == units && consecutive,
			   "units numbered 1..%llu over consecutive rows", (unsigned long long) units);
	unit_check(other == 0, "no unit of a size whose cell is not positive (%llu)", (unsigned long long) other);
	{
		double		f3 = (double) n3 / (double) (n1 + n3);

		unit_check(fabs(f3 - 0.75) < 0.01, "units of 3 rows: %.4f of all, expected 0.75", f3);
	}
	{
		double		zero[3] = {0, -1, 0};

		units = dp_unit_assign(zero, 2, 10, &rng, unit);
		unit_check(units == 10 && unit[9] == 10, "no positive cell: one row per unit");
	}
	free(unit);
}

static void
test_pick_k(void)
{
	int64_t		h[33] = {0};

	h[1] = 90;
	h[2] = 5;
	h[8] = 5;
	unit_check(dp_unit_pick_k(h, 8, 0.95, 0) == 2, "90/5/5 units of 1/2/8 rows: k = 2 (got %u)", dp_unit_pick_k(h, 8, 0.95, 0));
	h[2] = 4;
	h[8] = 6;
	unit_check(dp_unit_pick_k(h, 8, 0.95, 0) == 8, "90/4/6 units of 1/2/8 rows: k = 8 (got %u)", dp_unit_pick_k(h, 8, 0.95, 0));
	h[3] = -3;
	h[2] = 7;
	h[8] = 3;
	/* the negative cell at 3 counts as 0: total 100, 0.95 of it 95: 90 at k = 1, 97 at 2 */
	unit_check(dp_unit_pick_k(h, 8, 0.95, 0) == 2, "a negative noisy cell: k = 2 (got %u)", dp_unit_pick_k(h, 8, 0.95, 0));
	memset(h, 0, sizeof(h));
	h[1] = -4;
	h[5] = -2;
	unit_check(dp_unit_pick_k(h, 8, 0.95, 0) == 1, "no positive cell: k = 1");
	memset(h, 0, sizeof(h));
	h[8] = 10;
	unit_check(dp_unit_pick_k(h, 8, 0.95, 0) == 8, "every unit at the ceiling: k = kmax");

	/*
	 * A small table whose every unit has 8 rows (363 units), released at sd 34: the 24 cells past 8
	 * hold noise alone, here +20 each (within 3 sd), 480 in all.  Summed as they are they would be
	 * 57% of the total and put k near the ceiling; each less 3 sd, at least 0, k = 8.
	 */
	memset(h, 0, sizeof(h));
	h[8] = 363;
	for (int j = 9; j <= 32; j++)
		h[j] = 20;
	unit_check(dp_unit_pick_k(h, 32, 0.95, 3 * 34.0) == 8, "noise alone past 8: k = 8 (got %u)",
			   dp_unit_pick_k(h, 32, 0.95, 3 * 34.0));
	unit_check(dp_unit_pick_k(h, 32, 0.95, 0) > 8, "the same cells counted as they are: k > 8 (got %u)",
			   dp_unit_pick_k(h, 32, 0.95, 0));
	/* a cell just past the shrink counts for its excess only: 40 less 39 is 1 of 325, k = 8 */
	h[20] = 40;
	unit_check(dp_unit_pick_k(h, 32, 0.95, 39.0) == 8, "a cell of 40 past a shrink of 39: k = 8 (got %u)",
			   dp_unit_pick_k(h, 32, 0.95, 39.0));
	/* a tail well past it counts: 120 less 39 is 81 of 405, 20%, so k = 20 */
	h[20] = 120;
	unit_check(dp_unit_pick_k(h, 32, 0.95, 39.0) == 20, "a cell of 120 past a shrink of 39: k = 20 (got %u)",
			   dp_unit_pick_k(h, 32, 0.95, 39.0));
	/* every cell within the shrink (a table smaller than the noise): k = 1 */
	unit_check(dp_unit_pick_k(h, 32, 0.95, 400.0) == 1, "no cell past the shrink: k = 1 (got %u)",
			   dp_unit_pick_k(h, 32, 0.95, 400.0));
}

/*
 * dp_unit_fold_hist: the histogram bounded at k folds the cells from k up to the last one above
 * k released at the shrink or more; the tail beyond it, noise alone, does not reach cell k, and a
 * cell below the shrink holds no unit (unless none reaches it).
 */
static void
test_fold_hist(void)
{
	int64_t		h[33] = {0},
				out[33];
	int64_t		tail = 0;

	/* 363 units of 8 rows, released as 363; cells 1..7 and 9..32 noise within 3 sd (sd 34) */
	for (int j = 1; j <= 32; j++)
		h[j] = (j % 3 == 0 ? 41 : j % 3 == 1 ? -57 : 12);
	h[8] = 363;
	for (int j = 9; j <= 32; j++)
		tail += h[j];
	dp_unit_fold_hist(h, 32, 8, 3 * 34.0, out);
	unit_check(out[8] == 363, "a tail of noise alone is not folded into cell 8 (got %lld, all folded %lld)",
			   (long long) out[8], (long long) (363 + tail));
	for (int j = 1; j < 8; j++)
		unit_check(out[j] == 0, "cell %d below k, noise within 3 sd: no unit (got %lld)", j, (long long) out[j]);
	unit_check(out[0] == 0, "cell 0 is 0");
	/* shrink 0: every cell folded as released (the sum from k to kmax) */
	dp_unit_fold_hist(h, 32, 8, 0, out);
	unit_check(out[8] == 363 + tail && out[1] == h[1] && out[2] == h[2],
			   "shrink 0 folds every cell as released (got %lld)", (long long) out[8]);
	/* cells a unit reaches below the last significant one fold as released, a small one included */
	memset(h, 0, sizeof(h));
	h[1] = 7111;
	h[2] = 732;
	h[3] = 183;
	h[4] = 90;
	h[5] = 120;
	h[6] = -30;
	h[7] = 101;
	dp_unit_fold_hist(h, 32, 2, 102.0, out);
	unit_check(out[1] == 7111 && out[2] == 732 + 183 + 90 + 120,
			   "k = 2: cell 2 folds cells 2..5, the last at 102 or more (got %lld %lld)",
			   (long long) out[1], (long long) out[2]);
	/* the last cell itself at k: nothing beyond it folded */
	dp_unit_fold_hist(h, 32, 5, 102.0, out);
	unit_check(out[5] == 120 && out[3] == 183 && out[4] == 0,
			   "k = 5, no cell above 5 at 102: cell 5 as released, cell 4 (90) none (got %lld %lld)",
			   (long long) out[5], (long long) out[4]);
	/* k = kmax: the cells that reach 102 as released, the others none */
	h[32] = -9;
	dp_unit_fold_hist(h, 32, 32, 102.0, out);
	unit_check(out[1] == 7111 && out[2] == 732 && out[7] == 0 && out[32] == 0,
			   "k = kmax: 7111 and 732 kept, 101 and -9 none");
	/* shrink 0 with negative top cells: still every cell folded */
	memset(h, 0, sizeof(h));
	h[1] = 10;
	h[2] = 110;
	h[31] = -7;
	h[32] = -5;
	dp_unit_fold_hist(h, 32, 2, 0, out);
	unit_check(out[2] == 98, "shrink 0 folds negative top cells too (got %lld)", (long long) out[2]);
	/* a cell exactly at shrink is kept (>=), and cell k below shrink still folds where a cell
	 * above it passes */
	memset(h, 0, sizeof(h));
	h[1] = 500;
	h[2] = 40;
	h[3] = 102;
	dp_unit_fold_hist(h, 32, 2, 102.0, out);
	unit_check(out[2] == 142, "cell 3 at exactly 102 ends the fold; cell 2 (40) folds with it (got %lld)",
			   (long long) out[2]);
	/* k = 1: one cell, the fold of 1..L */
	memset(h, 0, sizeof(h));
	h[1] = 300;
	h[2] = 150;
	h[3] = 20;
	h[4] = 200;
	h[5] = 30;
	dp_unit_fold_hist(h, 32, 1, 102.0, out);
	unit_check(out[1] == 300 + 150 + 20 + 200 && out[0] == 0, "k = 1: cells 1..4 folded, 5 dropped (got %lld)",
			   (long long) out[1]);
	/* no cell reaches 102 (a table smaller than the noise): every cell folded as released */
	memset(h, 0, sizeof(h));
	h[1] = 50;
	h[2] = 40;
	h[9] = -20;
	dp_unit_fold_hist(h, 32, 2, 102.0, out);
	unit_check(out[1] == 50 && out[2] == 20, "no cell at 102: the fold as released (got %lld %lld)",
			   (long long) out[1], (long long) out[2]);
}

/*
 * dp_unit_pick_k_weighed: the bound of least estimated error, D(k) / N + noise_l1 Delta(k) / (2 (N - D(k))),
 * up to the quantile's k.
 */
static void
test_pick_k_weighed(void)
{
	int64_t		h[33] = {0};

	/*
	 * 900 units of 1 row, 100 of 2: N = 1100, the quantile's k is 2.  k = 1 drops 100 rows:
	 * err(1) = 100 / 1100 + W / 2000, err(2) = 2 W / 2200; k = 1 is better past W = 222.2.
	 */
	h[1] = 900;
	h[2] = 100;
	unit_check(dp_unit_pick_k(h, 32, 0.95, 0) == 2, "900/100 units of 1/2 rows: the quantile's k = 2");
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 400, 0) == 1, "noise 400 at sensitivity 1: k = 1 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 0.95, 0, 400, 0));
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 223, 0) == 1, "noise 223, just past 222.2: k = 1");
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 221, 0) == 2, "noise 221, just short of 222.2: k = 2");
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 0, 0) == 2, "no noise weight: the quantile's k");
	/* a cell bound of 1: Delta(2) = sqrt 2, k = 1 is better past W = 636.4 only */
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 400, 1) == 2, "noise 400, cell bound 1: k = 2 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 0.95, 0, 400, 1));
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 660, 1) == 1, "noise 660, cell bound 1: k = 1");
	/* the same counts less a shrink of 50: 850 and 50, k = 1 past W = 105.9 (N 950) */
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 50, 120, 0) == 1, "shrink 50, noise 120: k = 1 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 0.95, 50, 120, 0));
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 50, 100, 0) == 2, "shrink 50, noise 100: k = 2");

	/* every unit of 8 rows: any k below 8 drops rows and counts fewer for the same noise per row */
	memset(h, 0, sizeof(h));
	h[8] = 363;
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 1e6, 0) == 8, "every unit of 8 rows, heavy noise: k = 8 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 0.95, 0, 1e6, 0));
	/* the quantile caps it: a tail of 5% at 30 rows would be kept at no noise, but k = 2 */
	memset(h, 0, sizeof(h));
	h[1] = 900;
	h[2] = 50;
	h[30] = 50;
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 0, 1e-9, 0) == 2, "a thin tail, no noise: the cap k = 2 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 0.95, 0, 1e-9, 0));
	/* no cell past the shrink: k = 1 */
	unit_check(dp_unit_pick_k_weighed(h, 32, 0.95, 1000, 5, 0) == 1, "no cell past the shrink: k = 1");
}

/*
 * The learned k on a histogram shaped like covid_testing's train table (../shared/datasets: 8,229
 * children, 7,111 with 1 test, a tail to 20), as dp_synthesize weighs it there, with the shrink
 * (3 sd of the histogram's noise) and W its ledger records on a first call at epsilon 0.3, 1 and 3
 * (bench/units_pick_k.py draws the noise; these are the noiseless cells).  At epsilon 3 (shrink
 * 36.75, W 221.69) the counts are 7074, 695, 146, 53, 3 (N 9133, the 0.99-quantile 3), and the
 * error of k = 2, 3, 4 is .0537, .0432, .0489: k = 3.  Counting the noise's L1 norm rather than
 * its total variation (.0787, .0798, .0975) and capping at the 0.95-quantile (2) both picked 2,
 * the bound that kept it behind the row-level baseline at k = 3 and 4 on the range metric.  At
 * epsilon 1 (shrink 101.31, W 611.10) k = 2 (.1328, .0820, .1076 for k = 1, 2, 3), at 0.3
 * (shrink 313.75, W 1892.46) k = 1 (.1859 against .2479), as before.
 */
static void
test_pick_k_covid(void)
{
	int64_t		h[33] = {0};

	h[1] = 7111;
	h[2] = 732;
	h[3] = 183;
	h[4] = 90;
	h[5] = 40;
	h[6] = 26;
	h[7] = 20;
	h[8] = 11;
	h[9] = 5;
	h[10] = 3;
	h[11] = 1;
	h[12] = 2;
	h[13] = 1;
	h[14] = 1;
	h[15] = 1;
	h[20] = 2;
	unit_check(dp_unit_pick_k(h, 32, DP_UNIT_LEARN_QUANTILE, 0) == 5, "covid's cells as they are: the cap k = 5 (got %u)",
			   dp_unit_pick_k(h, 32, DP_UNIT_LEARN_QUANTILE, 0));
	unit_check(dp_unit_pick_k(h, 32, DP_UNIT_LEARN_QUANTILE, 36.75) == 3, "covid at epsilon 3: the cap k = 3 (got %u)",
			   dp_unit_pick_k(h, 32, DP_UNIT_LEARN_QUANTILE, 36.75));
	unit_check(dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 36.75, 221.69, 0) == 3,
			   "covid at epsilon 3: k = 3 (got %u)", dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 36.75, 221.69, 0));
	unit_check(dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 101.31, 611.10, 0) == 2,
			   "covid at epsilon 1: k = 2 (got %u)", dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 101.31, 611.10, 0));
	unit_check(dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 313.75, 1892.46, 0) == 1,
			   "covid at epsilon 0.3: k = 1 (got %u)", dp_unit_pick_k_weighed(h, 32, DP_UNIT_LEARN_QUANTILE, 313.75, 1892.46, 0));
	/* without the cap, the estimate alone still stops at 3: k = 4 keeps 56 rows for 1/3 more noise */
	unit_check(dp_unit_pick_k_weighed(h, 32, 1.0, 36.75, 221.69, 0) == 3, "covid at epsilon 3, no cap: k = 3 (got %u)",
			   dp_unit_pick_k_weighed(h, 32, 1.0, 36.75, 221.69, 0));
}

/*
 * dp_unit_noise_drawable: a discovery per unit with k still to learn is refused before the charge
 * unless its noise sigma2 k^2 can be drawn at every k from 1 to the ceiling, both ends.
 */
static void
test_noise_drawable(void)
{
	double		lo = DP_DGAUSS_SIGMA2_MIN,
				hi = DP_DGAUSS_SIGMA2_MAX;

	unit_check(dp_unit_noise_drawable(lo, DP_UNIT_LEARN_MAX) == 0, "the smallest variance, at k = 1 to 32: drawable");
	/* at k = 32 it is 2^-21, drawable: only the k = 1 end refuses */
	unit_check(dp_unit_noise_drawable(lo / 2, DP_UNIT_LEARN_MAX) == -1, "half the smallest variance at k = 1: refused");
	unit_check(dp_unit_noise_drawable(lo / 2, 1) == -1, "half the smallest variance, k = 1 only: refused");
	unit_check(dp_unit_noise_drawable(hi / 1024, DP_UNIT_LEARN_MAX) == 0, "the largest variance at k = 32: drawable");
	/* at k = 1 it is 2^51, drawable: only the k = 32 end refuses */
	unit_check(dp_unit_noise_drawable(hi / 512, DP_UNIT_LEARN_MAX) == -1, "twice the largest variance at k = 32: refused");
	unit_check(dp_unit_noise_drawable(1.0, 0) == -1, "no k: refused");

	/*
	 * Why no SQL call reaches either refusal today: a call is charged at most 9e18 units
	 * (dp_rho_units), one discovered column gets at most all of them (dp_discover of one column;
	 * inside a release, DP_PLAN_DISCOVERY_SHARE), at least one unit; both ends are drawable at
	 * the ceiling of a learned k and at the largest declared k.  Should a limit move, this fails,
	 * and the refusal needs its SQL test.
	 */
	{
		double		most = dp_gaussian_sigma2(dp_units_rho((int64_t) 9e18), 1.0),
					least = dp_gaussian_sigma2(dp_units_rho(1), 1.0);

		unit_check(dp_unit_noise_drawable(most, DP_UNIT_LEARN_MAX) == 0 &&
				   dp_unit_noise_drawable(most, DP_UNIT_MAX_ROWS) == 0,
				   "the largest rho a discovered column can get: drawable at every k (sigma2 %.3g at k = 1)", most);
		unit_check(dp_unit_noise_drawable(least, DP_UNIT_LEARN_MAX) == 0 &&
				   dp_unit_noise_drawable(least, DP_UNIT_MAX_ROWS) == 0,
				   "one unit of rho: drawable at every k up to %d (sigma2 %.3g at k = 1)", DP_UNIT_MAX_ROWS, least);
	}
}

/*
 * Grouped assignment: rows of 2 group columns (4 x 3 values, skewed), unit sizes 1 or 3 (1:3):
 * every unit lies in one group, has a size of a positive cell (no unit is cut), its rows are
 * consecutive and numbered 1..units, in random order rather than by group; each group's rows change by at most k - 1 = 2 (only its last
 * unit is filled up or dropped); sizes keep the 1:3 shares.
 */
static void
test_assign_grouped(void)
{
	double		hist[4] = {0, 10, -5, 30};
	uint64_t	nrows = 60000,
				npos,
				*order;
	int64_t    *unit,
				units,
				last = 0;
	uint16_t   *g0 = malloc(sizeof(uint16_t) * nrows),
			   *g1 = malloc(sizeof(uint16_t) * nrows);
	const uint16_t *gcols[2] = {g0, g1};
	int64_t		in[12] = {0},
				out[12] = {0};
	uint64_t	n1 = 0,
				n3 = 0,
				bad_size = 0,
				mixed = 0,
				unnumbered = 0,
				group_changes = 0;
	dp_prng		rng;

	dp_prng_seed(&rng, 7);
	for (uint64_t r = 0; r < nrows; r++)
	{
		uint64_t	x = dp_prng_below(&rng, 100);

		g0[r] = (uint16_t) (x < 60 ? 0 : x < 90 ? 1 : x < 99 ? 2 : 3);
		g1[r] = (uint16_t) dp_prng_below(&rng, 3);
		in[g0[r] * 3 + g1[r]]++;
	}
	units = dp_unit_assign_grouped(hist, 3, nrows, gcols, 2, &rng, &order, &unit, &npos);
	unit_check(units > 0 && npos > 0, "grouped assignment: %lld units over %llu positions", (long long) units,
			   (unsigned long long) npos);
	for (uint64_t p = 0; p < npos;)
	{
		uint64_t	q = p + 1;

		if (unit[p] != last + 1)
			unnumbered++;
		if (p > 0 && (g0[order[p]] != g0[order[p - 1]] || g1[order[p]] != g1[order[p - 1]]))
			group_changes++;
		last = unit[p];
		while (q < npos && unit[q] == unit[p])
		{
			if (g0[order[q]] != g0[order[p]] || g1[order[q]] != g1[order[p]])
				mixed++;
			q++;
		}
		if (q - p == 1)
			n1++;
		else if (q - p == 3)
			n3++;
		else
			bad_size++;
		for (uint64_t i = p; i < q; i++)
			out[g0[order[i]] * 3 + g1[order[i]]]++;
		p = q;
	}
	unit_check(unnumbered == 0 && last == units, "units numbered 1..%lld, each over consecutive positions",
			   (long long) units);
	unit_check(mixed == 0, "no unit mixes groups (%llu rows do)", (unsigned long long) mixed);
	/* units in random order: consecutive units are mostly of different groups (sorted: 11 changes) */
	unit_check(group_changes > (uint64_t) units / 2, "units in random order, not by group (%llu group changes)",
			   (unsigned long long) group_changes);
	unit_check(bad_size == 0, "no unit cut to a size whose cell is not positive (%llu)", (unsigned long long) bad_size);
	{
		double		f3 = (double) n3 / (double) (n1 + n3);

		unit_check(fabs(f3 - 0.75) < 0.02, "units of 3 rows: %.4f of all, expected 0.75", f3);
	}
	for (int c = 0; c < 12; c++)
		/* the last unit changes a group's rows by at most 2, up or down, once */
		unit_check(llabs(out[c] - in[c]) <= 2, "group %d keeps its %lld rows up to the last unit (%lld)", c,
				   (long long) in[c], (long long) out[c]);
	free(order);
	free(unit);
	{
		double		zero[3] = {0, -1, 0};

		units = dp_unit_assign_grouped(zero, 2, nrows, gcols, 2, &rng, &order, &unit, &npos);
		unit_check(units == (int64_t) nrows && npos == nrows, "no positive cell: one row per unit, none dropped");
		free(order);
		free(unit);
	}
	free(g0);
	free(g1);
}

static long interrupts;

static size_t largest_alloc;

static void *
t_alloc(size_t n)
{
	largest_alloc = n > largest_alloc ? n : largest_alloc;
	return malloc(n);
}

static void *
t_realloc(void *p, size_t n)
{
	largest_alloc = n > largest_alloc ? n : largest_alloc;
	return realloc(p, n);
}

static void
t_free(void *p)
{
	free(p);
}

static void
t_interrupt(void)
{
	interrupts++;
}

/*
 * Interrupts in the grouped assignment: one group of 2^18 rows (a large table whose declared
 * column has one value) lets a cancel in at least once per 65,536 rows of each of its sort's 18
 * passes, not only in the passes of a width over 65,536.
 */
static void
test_assign_grouped_interrupts(void)
{
	const dp_handlers counting = {t_alloc, t_realloc, t_free, NULL, t_interrupt, NULL, NULL};
	double		hist[4] = {0, 0, 0, 1};
	uint64_t	nrows = (uint64_t) 1 << 18,
				npos,
			   *order;
	int64_t    *unit,
				units;
	uint16_t   *g0 = calloc(nrows, sizeof(uint16_t));
	const uint16_t *gcols[1] = {g0};
	dp_prng		rng;

	dp_prng_seed(&rng, 21);
	dp_set_handlers(&counting);
	interrupts = 0;
	units = dp_unit_assign_grouped(hist, 3, nrows, gcols, 1, &rng, &order, &unit, &npos);
	dp_set_handlers(NULL);
	unit_check(units > 0 && npos + 2 >= nrows && npos <= nrows + 2, "one group of %llu rows: %lld units", (unsigned long long) nrows,
			   (long long) units);
	unit_check(interrupts >= 18 * (long) (nrows / 65536),
			   "a cancel gets in at least once per 65,536 rows of every sort pass (%ld checks)", interrupts);
	free(order);
	free(unit);
	free(g0);
}

/*
 * Memory of the grouped assignment: 60,000 rows each in a group of its own (a declared column of
 * many values), units of up to 32 rows: the positions grow as the draws need them, rather than
 * being reserved for k - 1 more rows per group (32 times the rows); every position is still a
 * row of its own group, in units of sizes with a positive cell.
 */
static void
test_assign_grouped_memory(void)
{
	const dp_handlers counting = {t_alloc, t_realloc, t_free, NULL, NULL, NULL, NULL};
	double		hist[33] = {0};
	uint64_t	nrows = 60000,
				npos,
			   *order;
	int64_t    *unit,
				units;
	uint16_t   *g0 = malloc(sizeof(uint16_t) * nrows),
			   *g1 = malloc(sizeof(uint16_t) * nrows);
	const uint16_t *gcols[2] = {g0, g1};
	dp_prng		rng;
	bool		own_group = true;

	for (uint64_t i = 0; i < nrows; i++)
	{
		g0[i] = (uint16_t) (i % 60000 / 1000);
		g1[i] = (uint16_t) (i % 1000);
	}
	hist[1] = 1;
	hist[32] = 1;
	dp_prng_seed(&rng, 23);
	dp_set_handlers(&counting);
	largest_alloc = 0;
	units = dp_unit_assign_grouped(hist, 32, nrows, gcols, 2, &rng, &order, &unit, &npos);
	dp_set_handlers(NULL);
	unit_check(units > 0 && npos > nrows / 2 && npos < 2 * nrows, "60,000 groups of one row: %lld units, %llu positions",
			   (long long) units, (unsigned long long) npos);
	for (uint64_t p = 1; p < npos; p++)
		if (unit[p] == unit[p - 1] && order[p] != order[p - 1])
			own_group = false;
	unit_check(own_group, "a unit repeats the one row of its group");
	unit_check(largest_alloc <= 4 * sizeof(uint64_t) * nrows,
			   "no allocation over 4 x 8 bytes per row (largest: %zu bytes for %llu rows)", largest_alloc,
			   (unsigned long long) nrows);
	free(order);
	free(unit);
	free(g0);
	free(g1);
}

/*
 * dp_unit_hist_any_above and dp_unit_hist_combine: whether a release of the rows-per-unit
 * histogram has a cell to weigh (males at epsilon 0.3: 363 units of 8 rows, sd 99, released at
 * 250: none above 3 sd), and the precision-weighted mean of two releases, with its variance.
 */
static void
test_hist_topup(void)
{
	int64_t		a[33] = {0},
				b[33] = {0},
				out[33];
	double		v;

	for (int j = 1; j <= 32; j++)
		a[j] = (j % 2 ? -151 : 121);
	a[8] = 250;
	unit_check(!dp_unit_hist_any_above(a, 32, 3 * 99.0), "no cell above 3 sd (297)");
	a[8] = 363;
	unit_check(dp_unit_hist_any_above(a, 32, DP_UNIT_LEARN_Z * 99.0) &&
			   !dp_unit_hist_any_above(a, 32, DP_UNIT_LEARN_TOPUP_Z * 99.0),
			   "males' 363 units released as they are: above 3 sd, not above 6 sd (a second release is drawn)");
	a[8] = 250;
	unit_check(dp_unit_pick_k(a, 32, 0.99, 3 * 99.0) == 1, "... where k falls to 1");
	unit_check(dp_unit_hist_any_above(a, 32, 249.0) && !dp_unit_hist_any_above(a, 32, 250.0),
			   "a cell above the shrink counts, one at it does not (as dp_unit_pick_k counts it)");
	unit_check(!dp_unit_hist_any_above(a, 7, 249.0), "cells beyond kmax are not read");
	/* the second release at 3 times the rho: variance 99^2 / 3 */
	for (int j = 1; j <= 32; j++)
		b[j] = (j % 2 ? 41 : -31);
	b[8] = 350;
	v = dp_unit_hist_combine(a, 99.0 * 99.0, b, 99.0 * 99.0 / 3, 32, out);
	unit_check(fabs(v - 99.0 * 99.0 / 4) < 1e-9, "the mean's variance: sd halved (got %g)", v);
	unit_check(out[0] == 0 && out[8] == 325 && out[1] == -7 && out[2] == 7,
			   "cells weighted 1 : 3 (got %lld %lld %lld)", (long long) out[8], (long long) out[1],
			   (long long) out[2]);
	unit_check(dp_unit_hist_any_above(out, 32, 3 * 99.0 / 2) && dp_unit_pick_k(out, 32, 0.99, 3 * 99.0 / 2) == 8,
			   "combined: cell 8 above 3 sd of the mean, k = 8");
	v = dp_unit_hist_combine(a, 99.0 * 99.0, b, 99.0 * 99.0, 32, a);
	unit_check(v == 99.0 * 99.0 / 2 && a[8] == 300 && a[1] == -55 && a[2] == 45, "equal variances: the plain mean, in place");
	unit_check(dp_unit_hist_combine(a, 0, b, 1, 32, out) == -1 && dp_unit_hist_combine(a, 1, b, INFINITY, 32, out) == -1 &&
			   dp_unit_hist_combine(a, NAN, b, 1, 32, out) == -1, "a variance not positive and finite: -1");
}

int
main(void)
{
	if (dp_random_init() != 0)
	{
		printf("Bail out! libsodium\n");
		return 1;
	}
	test_bound();
	test_keep_reference();
	test_keep_memory();
	test_uniform();
	test_assign();
	test_assign_grouped();
	test_assign_grouped_interrupts();
	test_assign_grouped_memory();
	test_pick_k();
	test_pick_k_weighed();
	test_pick_k_covid();
	test_fold_hist();
	test_hist_topup();
	test_noise_drawable();
	return unit_done();
}
