/*
 * test_codes.c - unit tests of src/core/dp_codes.c (the column-major encoded table).
 *
 * A table of NROWS rows (10^6) is appended row by row, its codes
 * a deterministic function of (row, column); marginals of 0 to 3 columns counted by
 * dp_codes_count are compared cell by cell with a naive row-by-row count.  Growth and memory are
 * checked through counting allocator hooks, and allocation failures through a failing one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "unit.h"

static const uint64_t NROWS = 1000000;

#define NC 6
static const uint32_t ncodes_of[NC] = {2, 7, 300, 65536, 1, 13};

/* code of column j in row i: skewed and correlated across columns, always < ncodes_of[j] */
static uint16_t
code_at(uint64_t i, uint32_t j)
{
	uint64_t	h = (i + 1) * 0x9E3779B97F4A7C15ULL;

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	switch (j)
	{
		case 0:
			return (uint16_t) (h & 1);
		case 1:
			return (uint16_t) ((h & 1) ? (h >> 8) % 7 : (h >> 8) % 3);	/* depends on column 0 */
		case 2:
			return (uint16_t) (((h >> 16) % 300) * ((h >> 40) % 300) / 300);	/* skewed */
		case 3:
			return (uint16_t) (h >> 48);
		case 4:
			return 0;
		default:
			return (uint16_t) (((h >> 8) % 7 + (h >> 24) % 7) % 13);	/* depends on column 1 */
	}
}

/* ---------- counting / failing allocator ---------- */

static size_t live_bytes = 0,
			peak_bytes = 0;
static long live_blocks = 0,
			reallocs = 0,
			fail_after = -1;	/* allocations (incl. reallocs) left before failing; -1: never */

static bool
should_fail(void)
{
	if (fail_after < 0)
		return false;
	if (fail_after == 0)
		return true;
	fail_after--;
	return false;
}

static void *
t_alloc(size_t n)
{
	size_t	   *p;

	if (should_fail() || (p = malloc(n + 16)) == NULL)
		return NULL;
	p[0] = n;
	live_bytes += n;
	live_blocks++;
	if (live_bytes > peak_bytes)
		peak_bytes = live_bytes;
	return (char *) p + 16;
}

static void *
t_realloc(void *q, size_t n)
{
	size_t	   *p = (size_t *) ((char *) q - 16),
				old = p[0];

	if (q == NULL)
	{
		fprintf(stderr, "realloc of NULL (repalloc would crash)\n");
		abort();
	}
	if (should_fail() || (p = realloc(p, n + 16)) == NULL)
		return NULL;
	p[0] = n;
	live_bytes += n - old;
	reallocs++;
	if (live_bytes > peak_bytes)
		peak_bytes = live_bytes;
	return (char *) p + 16;
}

static void
t_free(void *q)
{
	size_t	   *p;

	if (q == NULL)
	{
		fprintf(stderr, "free of NULL (pfree would crash)\n");
		abort();
	}
	p = (size_t *) ((char *) q - 16);
	live_bytes -= p[0];
	live_blocks--;
	free(p);
}

/* ---------- marginals ---------- */

static int64_t *
naive_count(const uint32_t *cols, uint32_t k, uint64_t *ncells)
{
	uint64_t	cells = 1;
	int64_t    *c;

	for (uint32_t a = 0; a < k; a++)
		cells *= ncodes_of[cols[a]];
	c = calloc(cells, sizeof(int64_t));
	for (uint64_t i = 0; i < NROWS; i++)
	{
		uint64_t	idx = 0;

		for (uint32_t a = 0; a < k; a++)
			idx = idx * ncodes_of[cols[a]] + code_at(i, cols[a]);	/* row-major, last fastest */
		c[idx]++;
	}
	*ncells = cells;
	return c;
}

static bool
marginal_matches(const dp_codes *t, const uint32_t *cols, uint32_t k)
{
	uint32_t	nc[3];
	uint64_t	cells;
	int64_t    *want = naive_count(cols, k, &cells);
	int64_t    *got = calloc(cells, sizeof(int64_t));
	bool		ok;

	for (uint32_t a = 0; a < k; a++)
		nc[a] = ncodes_of[cols[a]];
	dp_codes_count(t, cols, k, nc, got);
	ok = memcmp(want, got, cells * sizeof(int64_t)) == 0;
	free(want);
	free(got);
	return ok;
}

static const dp_handlers counting = {t_alloc, t_realloc, t_free, NULL, NULL, NULL, NULL};

static void
test_big_table(void)
{
	dp_codes	t;
	uint16_t	row[NC];
	int			fails = 0;
	int			nbad;
	long		tested;

	unit_check(dp_codes_init(&t, NC, 0) == 0, "init with default capacity");
	for (uint64_t i = 0; i < NROWS; i++)
	{
		for (uint32_t j = 0; j < NC; j++)
			row[j] = code_at(i, j);
		fails += dp_codes_append(&t, row) != 0;
	}
	unit_check(fails == 0 && t.nrows == NROWS, "appended %llu rows", (unsigned long long) NROWS);

	{
		bool		same = true;

		for (uint64_t i = 0; i < NROWS && same; i += 997)
			for (uint32_t j = 0; j < NC; j++)
				same &= t.col[j][i] == code_at(i, j);
		same &= t.col[3][NROWS - 1] == code_at(NROWS - 1, 3);
		unit_check(same, "stored codes read back as col[j][i]");
	}

	/* growth and memory */
	unit_check(t.cap >= t.nrows && t.cap < 2 * t.nrows,
			   "capacity %llu for %llu rows: < 2x rows (growth factor 1.5)",
			   (unsigned long long) t.cap, (unsigned long long) t.nrows);
	unit_check(live_bytes == 2 * t.cap * NC + sizeof(uint16_t *) * NC,
			   "live memory is exactly 2 bytes x capacity x columns + the column table (%zu bytes)",
			   live_bytes);
	unit_check((double) live_bytes / (t.nrows * NC) < 3.0,
			   "%.3f bytes per cell", (double) live_bytes / (t.nrows * NC));
	unit_check(reallocs / NC < 40, "%ld reallocations per column (geometric growth)", reallocs / NC);

	/* marginals of 0, 1, 2 and 3 columns against the naive count */
	{
		int64_t		all = 0;

		dp_codes_count(&t, NULL, 0, NULL, &all);
		unit_check(all == (int64_t) NROWS, "0-way marginal is the row count");
	}
	nbad = 0;
	for (uint32_t a = 0; a < NC; a++)
		nbad += !marginal_matches(&t, &a, 1);
	unit_check(nbad == 0, "all %d 1-way marginals match the naive count", NC);

	nbad = 0;
	tested = 0;
	for (uint32_t a = 0; a < NC; a++)
		for (uint32_t b = 0; b < NC; b++)
		{
			uint32_t	cols[2] = {a, b};

			if ((uint64_t) ncodes_of[a] * ncodes_of[b] > 20000000)
				continue;
			nbad += !marginal_matches(&t, cols, 2);
			tested++;
		}
	unit_check(nbad == 0, "%ld ordered 2-way marginals (incl. a column with itself) match", tested);

	nbad = 0;
	tested = 0;
	{
		static const uint32_t triples[][3] = {
			{0, 1, 2}, {2, 1, 0}, {0, 1, 5}, {5, 4, 1}, {1, 3, 0}, {4, 0, 3}, {2, 5, 1}, {0, 0, 0}
		};

		for (size_t q = 0; q < sizeof(triples) / sizeof(triples[0]); q++)
		{
			nbad += !marginal_matches(&t, triples[q], 3);
			tested++;
		}
	}
	unit_check(nbad == 0, "%ld 3-way marginals match", tested);

	/* counts accumulate */
	{
		uint32_t	cols[1] = {1};
		int64_t		c[7] = {0},
					c2[7] = {0};
		bool		ok = true;

		dp_codes_count(&t, cols, 1, &ncodes_of[1], c);
		dp_codes_count(&t, cols, 1, &ncodes_of[1], c2);
		dp_codes_count(&t, cols, 1, &ncodes_of[1], c2);
		for (int i = 0; i < 7; i++)
			ok &= c2[i] == 2 * c[i];
		unit_check(ok, "dp_codes_count adds to counts (caller zeroes)");
	}

	dp_codes_free(&t);
	unit_check(live_bytes == 0 && live_blocks == 0, "free releases everything");
	dp_codes_free(&t);
	unit_check(live_blocks == 0, "a second free is harmless");
}

static void
test_small(void)
{
	dp_codes	t;
	uint16_t	row[3];
	int64_t		counts[12];
	uint32_t	cols[2] = {0, 2};
	uint32_t	nc[2] = {3, 4};
	bool		ok = true;

	/* default allocator, capacity 1: grows from the smallest size */
	unit_check(dp_codes_init(&t, 3, 1) == 0, "init with malloc, capacity 1");
	for (int i = 0; i < 100; i++)
	{
		row[0] = i % 3;
		row[1] = 9;
		row[2] = (i / 3) % 4;
		ok &= dp_codes_append(&t, row) == 0;
	}
	unit_check(ok && t.nrows == 100 && t.cap >= 100, "100 rows from capacity 1");
	memset(counts, 0, sizeof(counts));
	dp_codes_count(&t, cols, 2, nc, counts);
	ok = true;
	for (int i = 0; i < 100; i++)
		counts[(i % 3) * 4 + (i / 3) % 4]--;
	for (int c = 0; c < 12; c++)
		ok &= counts[c] == 0;
	unit_check(ok, "2-way marginal of a hand-made table, strides 4 and 1");

	/* an out-of-range code (caller bug) is skipped, not written out of bounds */
	row[0] = 3;					/* ncodes 3 */
	row[2] = 0;
	dp_codes_append(&t, row);
	memset(counts, 0, sizeof(counts));
	dp_codes_count(&t, cols, 2, nc, counts);
	{
		int64_t		total = 0;

		for (int c = 0; c < 12; c++)
			total += counts[c];
		unit_check(total == 100, "a row with a code >= ncodes is not counted");
	}
	dp_codes_free(&t);

	/* no columns: rows are still counted */
	dp_set_handlers(&counting);
	unit_check(dp_codes_init(&t, 0, 0) == 0 && live_blocks == 0,
			   "a table of no columns allocates nothing");
	for (int i = 0; i < 5000; i++)
		dp_codes_append(&t, NULL);
	memset(counts, 0, sizeof(counts));
	dp_codes_count(&t, NULL, 0, NULL, counts);
	unit_check(t.nrows == 5000 && counts[0] == 5000 && live_blocks == 0, "... and counts its rows");
	dp_codes_free(&t);
	dp_set_handlers(NULL);
}

static void
test_failures(void)
{
	dp_codes	t;
	uint16_t	row[4] = {1, 2, 3, 4};
	int			rc;
	bool		ok = true;

	/* init fails at each of its 5 allocations: nothing is left allocated */
	for (int k = 0; k < 5; k++)
	{
		fail_after = k;
		ok &= dp_codes_init(&t, 4, 8) == -1 && live_blocks == 0;
		dp_codes_free(&t);
	}
	fail_after = -1;
	unit_check(ok && live_bytes == 0, "a failed init leaves nothing allocated");

	/* growth fails at the third column: -1, table unchanged and usable */
	unit_check(dp_codes_init(&t, 4, 8) == 0, "init 4 columns, capacity 8");
	for (int i = 0; i < 8; i++)
	{
		row[0] = i;
		dp_codes_append(&t, row);
	}
	fail_after = 2;
	rc = dp_codes_append(&t, row);
	fail_after = -1;
	unit_check(rc == -1 && t.nrows == 8 && t.cap == 8, "append fails when growth fails; rows and capacity unchanged");
	ok = true;
	for (int i = 0; i < 8; i++)
		ok &= t.col[0][i] == i && t.col[3][i] == 4;
	unit_check(ok, "the rows already appended are intact");
	row[0] = 42;
	unit_check(dp_codes_append(&t, row) == 0 && t.nrows == 9 && t.col[0][8] == 42 && t.col[1][8] == 2,
			   "append succeeds once memory is available again");
	dp_codes_free(&t);
	unit_check(live_blocks == 0 && live_bytes == 0, "free after a failed growth releases everything");
}

/* dp_codes_keep: the scratch columns after the kept ones are released, the kept ones intact */
static void
test_keep(void)
{
	dp_codes	t;
	uint16_t	row[5];
	bool		ok = true;
	size_t		before;

	unit_check(dp_codes_init(&t, 5, 4) == 0, "init 5 columns");
	for (int i = 0; i < 100; i++)
	{
		for (int j = 0; j < 5; j++)
			row[j] = (uint16_t) (i * 5 + j);
		dp_codes_append(&t, row);
	}
	before = live_bytes;
	dp_codes_keep(&t, 7);
	unit_check(t.ncols == 5 && live_bytes == before, "keeping more columns than the table has changes nothing");
	dp_codes_keep(&t, 2);
	unit_check(t.ncols == 2 && t.nrows == 100 && live_bytes < before, "keep 2 of 5: three columns released");
	for (int i = 0; i < 100; i++)
		ok &= t.col[0][i] == i * 5 && t.col[1][i] == i * 5 + 1;
	unit_check(ok, "the kept columns' rows are intact");
	row[0] = 7;
	row[1] = 9;
	unit_check(dp_codes_append(&t, row) == 0 && t.nrows == 101 && t.col[1][100] == 9,
			   "rows append to the kept columns");
	dp_codes_free(&t);
	unit_check(live_blocks == 0 && live_bytes == 0, "free after keep releases everything");
}

int
main(void)
{
	dp_set_handlers(&counting);
	test_big_table();
	dp_set_handlers(NULL);		/* malloc: the counters see only what the tests below install */
	test_small();
	dp_set_handlers(&counting);
	test_failures();
	test_keep();
	dp_set_handlers(NULL);
	return unit_done();
}
