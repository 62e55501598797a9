/*
 * test_marg.c - unit tests of src/core/dp_marg.c (the marginal type of the synthesis pipeline).
 *
 * init (attribute sorting, sizes, row-major strides, zeroed cells, every refusal), index / code
 * round trips, counting against dp_codes_count and a naive count, projection onto every subset
 * against a naive sum (and of counts onto counts), L1 by hand, copy, total, contains, and the
 * allocator hooks (balance of a counting allocator, failures of a failing one).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"

static const uint64_t NROWS = 20000;

/* ---------- counting / failing allocator ---------- */

static long live_blocks = 0,
			nallocs = 0,
			fail_after = -1;	/* allocations left before failing; -1: never */

static void *
count_alloc(size_t n)
{
	void	   *p;

	if (fail_after == 0)
		return NULL;
	if (fail_after > 0)
		fail_after--;
	p = malloc(n);
	if (p)
	{
		live_blocks++;
		nallocs++;
	}
	return p;
}

static void
count_free(void *p)
{
	if (p)
		live_blocks--;
	free(p);
}

/* ---------- init ---------- */

static void
test_init(void)
{
	uint32_t	col_sizes[10] = {5, 6, 3, 7, 9, 4, 8, 2, 11, 13};
	dp_marg		m;
	bool		zero = true;

	unit_check(dp_marg_init(&m, 3, (uint32_t[]) {5, 2, 7}, col_sizes) == 0, "init over {5,2,7}: 0");
	unit_check(m.nattrs == 3 && m.attrs[0] == 2 && m.attrs[1] == 5 && m.attrs[2] == 7,
			   "init sorts the attributes: {2,5,7}");
	unit_check(m.sizes[0] == 3 && m.sizes[1] == 4 && m.sizes[2] == 2, "init sizes from col_sizes: 3,4,2");
	unit_check(m.strides[0] == 8 && m.strides[1] == 2 && m.strides[2] == 1, "row-major strides 8,2,1");
	unit_check(m.ncells == 24 && m.cells != NULL && m.rho == 0, "24 cells, rho 0");
	for (uint64_t c = 0; c < m.ncells; c++)
		zero &= m.cells[c] == 0;
	unit_check(zero, "cells zeroed");
	unit_check(dp_marg_total(&m) == 0, "total of an empty marginal: 0");
	dp_marg_free(&m);
	unit_check(m.cells == NULL && m.ncells == 0, "free clears cells and ncells");
	dp_marg_free(&m);			/* twice is harmless */

	/* the largest: 8 attributes */
	unit_check(dp_marg_init(&m, 8, (uint32_t[]) {9, 8, 7, 6, 5, 4, 3, 2}, col_sizes) == 0 &&
			   m.ncells == 3ULL * 7 * 9 * 4 * 8 * 2 * 11 * 13 && m.strides[7] == 1 && m.strides[6] == 13 &&
			   m.strides[0] == m.ncells / 3,
			   "8 attributes: %lu cells, strides consistent", (unsigned long) m.ncells);
	dp_marg_free(&m);

	/* refusals; after each the marginal owns nothing */
	unit_check(dp_marg_init(&m, 0, (uint32_t[]) {0}, col_sizes) == -1 && m.cells == NULL, "0 attributes: -1");
	unit_check(dp_marg_init(&m, 9, (uint32_t[]) {0, 1, 2, 3, 4, 5, 6, 7, 8}, col_sizes) == -1 && m.cells == NULL,
			   "9 attributes: -1");
	unit_check(dp_marg_init(&m, 3, (uint32_t[]) {4, 1, 4}, col_sizes) == -1 && m.cells == NULL,
			   "repeated attribute: -1");
	{
		uint32_t	zs[3] = {2, 0, 3};

		unit_check(dp_marg_init(&m, 2, (uint32_t[]) {0, 1}, zs) == -1 && m.cells == NULL, "empty domain: -1");
	}
	{
		uint32_t	big[8] = {65536, 65536, 65536, 65536, 65536, 65536, 65536, 65536};

		unit_check(dp_marg_init(&m, 8, (uint32_t[]) {0, 1, 2, 3, 4, 5, 6, 7}, big) == -1 && m.cells == NULL,
				   "2^128 cells: -1 (overflow)");
		unit_check(dp_marg_init(&m, 4, (uint32_t[]) {0, 1, 2, 3}, big) == -1 && m.cells == NULL,
				   "2^64 cells: -1 (overflow)");
	}
	dp_marg_free(&m);
}

/* ---------- index / code ---------- */

static void
test_index_code(void)
{
	uint32_t	col_sizes[6] = {3, 5, 2, 4, 7, 6};
	dp_marg		m;
	dp_codes	t;
	bool		ok = true;

	dp_marg_init(&m, 4, (uint32_t[]) {4, 0, 3, 1}, col_sizes);	/* {0,1,3,4}: 3x5x4x7 */
	dp_codes_init(&t, 6, 0);
	/* one table row per cell, its codes decoded from the cell */
	for (uint64_t c = 0; c < m.ncells; c++)
	{
		uint16_t	row[6] = {0, 0, 1, 0, 0, 5};

		for (uint32_t k = 0; k < m.nattrs; k++)
			row[m.attrs[k]] = (uint16_t) dp_marg_code(&m, c, k);
		dp_codes_append(&t, row);
	}
	for (uint64_t c = 0; c < m.ncells; c++)
	{
		uint64_t	idx = 0;

		if (dp_marg_index(&m, &t, c) != c)
			ok = false;
		/* row-major by hand: ((c0 * 5 + c1) * 4 + c3) * 7 + c4 */
		idx = ((uint64_t) t.col[0][c] * 5 + t.col[1][c]) * 4;
		idx = (idx + t.col[3][c]) * 7 + t.col[4][c];
		if (idx != c)
			ok = false;
	}
	unit_check(ok, "code / index round trip over all %lu cells, last attribute fastest", (unsigned long) m.ncells);
	unit_check(dp_marg_code(&m, 7 * 4 * 5 + 7 * 4 + 7 + 1, 0) == 1 && dp_marg_code(&m, 7 * 4 * 5 + 7 * 4 + 7 + 1, 1) == 1 &&
			   dp_marg_code(&m, 7 * 4 * 5 + 7 * 4 + 7 + 1, 2) == 1 && dp_marg_code(&m, 7 * 4 * 5 + 7 * 4 + 7 + 1, 3) == 1,
			   "cell 140+28+7+1 = codes (1,1,1,1)");
	dp_codes_free(&t);
	dp_marg_free(&m);
}

/* ---------- count ---------- */

#define NC 6
static const uint32_t csz[NC] = {4, 7, 2, 5, 3, 9};

static void
make_table(dp_codes *t, dp_prng *p)
{
	dp_codes_init(t, NC, NROWS);
	for (uint64_t i = 0; i < NROWS; i++)
	{
		uint16_t	row[NC];

		row[0] = (uint16_t) dp_prng_below(p, csz[0]);
		for (uint32_t j = 1; j < NC; j++)
			row[j] = dp_prng_unit(p) < 0.6 ? (uint16_t) ((row[j - 1] * 3 + 1) % csz[j])
				: (uint16_t) dp_prng_below(p, csz[j]);
		dp_codes_append(t, row);
	}
}

static void
test_count(void)
{
	static const uint32_t sets[][6] = {
		{1, 0}, {1, 5}, {2, 1, 3}, {2, 5, 0}, {3, 0, 2, 4}, {3, 5, 3, 1}, {4, 0, 1, 2, 3}, {5, 5, 4, 3, 2, 1}
	};
	dp_prng		p;
	dp_codes	t;
	bool		ok_codes = true,
				ok_naive = true,
				ok_total = true,
				ok_acc = true;

	dp_prng_seed(&p, 11);
	make_table(&t, &p);
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
	{
		dp_marg		m;
		uint32_t	n = sets[s][0];
		uint32_t	ncodes[DP_MARG_MAX_ATTRS];
		int64_t    *ref;
		double	   *naive;

		dp_marg_init(&m, n, &sets[s][1], csz);
		dp_marg_count(&m, &t);

		/* dp_codes_count over the same (sorted) columns */
		for (uint32_t k = 0; k < m.nattrs; k++)
			ncodes[k] = m.sizes[k];
		ref = calloc(m.ncells, sizeof(int64_t));
		dp_codes_count(&t, m.attrs, m.nattrs, ncodes, ref);
		for (uint64_t c = 0; c < m.ncells; c++)
			if (m.cells[c] != (double) ref[c])
				ok_codes = false;

		/* naive: every row's cell computed by hand */
		naive = calloc(m.ncells, sizeof(double));
		for (uint64_t i = 0; i < t.nrows; i++)
		{
			uint64_t	idx = 0;

			for (uint32_t k = 0; k < m.nattrs; k++)
				idx = idx * m.sizes[k] + t.col[m.attrs[k]][i];
			naive[idx] += 1;
		}
		for (uint64_t c = 0; c < m.ncells; c++)
			if (m.cells[c] != naive[c])
				ok_naive = false;
		if (dp_marg_total(&m) != (double) t.nrows)
			ok_total = false;

		/* counting adds */
		dp_marg_count(&m, &t);
		for (uint64_t c = 0; c < m.ncells; c++)
			if (m.cells[c] != 2 * naive[c])
				ok_acc = false;
		free(ref);
		free(naive);
		dp_marg_free(&m);
	}
	unit_check(ok_codes, "count = dp_codes_count on 8 attribute sets (1 to 5 attributes, given unsorted)");
	unit_check(ok_naive, "count = naive row-major count");
	unit_check(ok_total, "count: total = %lu rows", (unsigned long) t.nrows);
	unit_check(ok_acc, "count adds to the cells (twice = double)");
	dp_codes_free(&t);
}

/* ---------- project ---------- */

static void
test_project(void)
{
	uint32_t	col_sizes[8] = {3, 2, 4, 5, 2, 6, 3, 2};
	uint32_t	attrs[4] = {1, 3, 5, 6};	/* 2 x 5 x 6 x 3 = 180 cells */
	dp_marg		m;
	dp_prng		p;
	bool		ok = true;
	int			nsub = 0;

	dp_prng_seed(&p, 5);
	dp_marg_init(&m, 4, attrs, col_sizes);
	for (uint64_t c = 0; c < m.ncells; c++)
		m.cells[c] = dp_prng_unit(&p) * 10 - 2;

	/* every non-empty subset, the whole set included */
	for (uint32_t mask = 1; mask < 16; mask++)
	{
		uint32_t	sub[4],
					ns = 0;
		dp_marg		out;
		double	   *naive;

		for (uint32_t k = 0; k < 4; k++)
			if (mask >> k & 1)
				sub[ns++] = attrs[k];
		dp_marg_init(&out, ns, sub, col_sizes);
		out.cells[0] = 123;		/* overwritten, not added to */
		if (dp_marg_project(&m, &out) != 0)
			ok = false;
		naive = calloc(out.ncells, sizeof(double));
		for (uint64_t c = 0; c < m.ncells; c++)
		{
			uint64_t	o = 0;

			for (uint32_t j = 0; j < ns; j++)
				for (uint32_t k = 0; k < 4; k++)
					if (m.attrs[k] == sub[j])
						o = o * m.sizes[k] + dp_marg_code(&m, c, k);
			naive[o] += m.cells[c];
		}
		for (uint64_t o = 0; o < out.ncells; o++)
			if (fabs(out.cells[o] - naive[o]) > 1e-12)
				ok = false;
		if (fabs(dp_marg_total(&out) - dp_marg_total(&m)) > 1e-9)
			ok = false;
		if (mask == 15)
			for (uint64_t c = 0; c < m.ncells; c++)
				if (out.cells[c] != m.cells[c])
					ok = false;
		free(naive);
		dp_marg_free(&out);
		nsub++;
	}
	unit_check(ok, "project onto all %d non-empty subsets = naive sums (itself: identity)", nsub);

	/* refusals */
	{
		dp_marg		out;
		uint32_t	other_sizes[8] = {3, 2, 4, 7, 2, 6, 3, 2};

		dp_marg_init(&out, 2, (uint32_t[]) {1, 2}, col_sizes);
		unit_check(dp_marg_project(&m, &out) == -1, "project onto a non-subset: -1");
		dp_marg_free(&out);
		dp_marg_init(&out, 1, (uint32_t[]) {3}, other_sizes);
		unit_check(dp_marg_project(&m, &out) == -1, "project with a different domain size: -1");
		dp_marg_free(&out);
	}
	dp_marg_free(&m);

	/* projection of counts = counts of the subset */
	{
		dp_prng		q;
		dp_codes	t;
		dp_marg		big,
					small,
					proj;
		bool		same = true;

		dp_prng_seed(&q, 3);
		make_table(&t, &q);
		dp_marg_init(&big, 4, (uint32_t[]) {0, 2, 3, 5}, csz);
		dp_marg_init(&small, 2, (uint32_t[]) {5, 2}, csz);
		dp_marg_init(&proj, 2, (uint32_t[]) {2, 5}, csz);
		dp_marg_count(&big, &t);
		dp_marg_count(&small, &t);
		dp_marg_project(&big, &proj);
		for (uint64_t c = 0; c < small.ncells; c++)
			if (proj.cells[c] != small.cells[c])
				same = false;
		unit_check(same, "projection of the counts of {0,2,3,5} onto {2,5} = counts of {2,5}");
		dp_marg_free(&big);
		dp_marg_free(&small);
		dp_marg_free(&proj);
		dp_codes_free(&t);
	}
}

/* ---------- l1, copy, total, contains ---------- */

static void
test_misc(void)
{
	uint32_t	col_sizes[4] = {3, 3, 2, 4};
	dp_marg		a,
				b,
				c;

	dp_marg_init(&a, 1, (uint32_t[]) {0}, col_sizes);
	dp_marg_init(&b, 1, (uint32_t[]) {0}, col_sizes);
	memcpy(a.cells, (double[]) {1, 2, 3}, sizeof(double) * 3);
	memcpy(b.cells, (double[]) {2, 2, 1}, sizeof(double) * 3);
	/* |1-2| + |2-2| + |3-1| = 3 */
	unit_check(dp_marg_l1(&a, &b, false) == 3, "l1 [1,2,3] vs [2,2,1] = 3");
	/* |1/6-2/5| + |2/6-2/5| + |3/6-1/5| = 7/30 + 2/30 + 9/30 = 0.6 */
	unit_check(fabs(dp_marg_l1(&a, &b, true) - 0.6) < 1e-15, "l1 normalized = 18/30 = 0.6");
	unit_check(dp_marg_l1(&a, &a, true) == 0 && dp_marg_l1(&b, &a, false) == 3, "l1 is 0 to itself, symmetric");
	unit_check(dp_marg_total(&a) == 6 && dp_marg_total(&b) == 5, "totals 6 and 5");

	/* mismatches */
	dp_marg_init(&c, 1, (uint32_t[]) {1}, col_sizes);	/* same size 3, other attribute */
	unit_check(dp_marg_l1(&a, &c, false) == -1, "l1 over different attributes: -1");
	dp_marg_free(&c);
	{
		uint32_t	other[4] = {4, 3, 2, 4};

		dp_marg_init(&c, 1, (uint32_t[]) {0}, other);
		unit_check(dp_marg_l1(&a, &c, false) == -1, "l1 over different sizes: -1");
		dp_marg_free(&c);
	}
	dp_marg_init(&c, 1, (uint32_t[]) {0}, col_sizes);
	unit_check(dp_marg_l1(&a, &c, true) == -1 && dp_marg_l1(&a, &c, false) == 6,
			   "l1 normalized against a zero total: -1 (unnormalized: 6)");
	dp_marg_free(&c);

	/* copy is deep and keeps everything */
	a.rho = 0.25;
	unit_check(dp_marg_copy(&c, &a) == 0 && c.cells != a.cells && c.rho == 0.25 && c.nattrs == 1 &&
			   c.attrs[0] == 0 && c.ncells == 3 && dp_marg_l1(&a, &c, false) == 0, "copy: equal, own cells, rho kept");
	c.cells[0] = 100;
	unit_check(a.cells[0] == 1, "copy: independent cells");
	dp_marg_free(&c);

	/* contains */
	dp_marg_init(&c, 3, (uint32_t[]) {3, 0, 2}, col_sizes);
	unit_check(dp_marg_contains(&c, 2, (uint32_t[]) {2, 0}) && dp_marg_contains(&c, 0, NULL) &&
			   dp_marg_contains(&c, 3, (uint32_t[]) {0, 2, 3}), "contains: {0,2}, {}, {0,2,3} in {0,2,3}");
	unit_check(!dp_marg_contains(&c, 1, (uint32_t[]) {1}) && !dp_marg_contains(&c, 2, (uint32_t[]) {0, 1}),
			   "does not contain {1} or {0,1}");
	dp_marg_free(&c);
	dp_marg_free(&a);
	dp_marg_free(&b);
}

/* ---------- allocator hooks ---------- */

static void
test_allocator(void)
{
	uint32_t	col_sizes[3] = {4, 5, 6};
	dp_marg		a,
				b;

	dp_set_handlers(&(dp_handlers) {count_alloc, realloc, count_free, NULL, NULL, NULL, NULL});
	unit_check(dp_marg_init(&a, 2, (uint32_t[]) {0, 2}, col_sizes) == 0 && nallocs == 1 && live_blocks == 1,
			   "init allocates one block through the hook");
	unit_check(dp_marg_copy(&b, &a) == 0 && nallocs == 2 && live_blocks == 2, "copy allocates one block");
	dp_marg_free(&a);
	dp_marg_free(&b);
	unit_check(live_blocks == 0, "free returns both through the hook");

	fail_after = 0;
	unit_check(dp_marg_init(&a, 2, (uint32_t[]) {0, 2}, col_sizes) == -1 && a.cells == NULL,
			   "init with a failing allocator: -1, no cells");
	dp_marg_free(&a);
	fail_after = 1;
	dp_marg_init(&a, 2, (uint32_t[]) {0, 2}, col_sizes);
	unit_check(dp_marg_copy(&b, &a) == -1 && b.cells == NULL, "copy with a failing allocator: -1, no cells");
	dp_marg_free(&b);
	dp_marg_free(&a);
	fail_after = -1;
	unit_check(live_blocks == 0, "nothing leaked through the hook");

	dp_set_handlers(NULL);		/* back to malloc / free */
	nallocs = 0;
	dp_marg_init(&a, 1, (uint32_t[]) {1}, col_sizes);
	unit_check(nallocs == 0 && a.cells != NULL, "NULL handlers: back to malloc");
	dp_marg_free(&a);
}

int
main(void)
{
	test_init();
	test_index_code();
	test_count();
	test_project();
	test_misc();
	test_allocator();
	return unit_done();
}
