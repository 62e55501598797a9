/*
 * test_gum.c - unit tests of src/core/dp_gum.c (PrivSyn's GUM: marginals -> synthetic rows).
 *
 * - two columns, one 2-way target (an isolated pair: the second column is appended to the first);
 * - a triangle of three 2-way targets (no leaf: the GUM loop itself), a 3-way target with a tail;
 * - attribute appending on a chain (every column peeled, layer by layer) and a leaf on a triangle;
 * - 16-bit codes (a column of 300 codes in a triangle) with 1, 2 and 3 threads, and a degree-0
 *   column of 400 codes beside 8-bit ones;
 * - determinism under a seed, cancellation through the progress callback, invalid input;
 * - the grouped layout of a wide component: the same rows with every counting mode and thread count;
 * - the bar: exact 1-way and 2-way marginals of the real UCI Adult table (data/adult, 32,561
 *   rows) fed to GUM with n = 32,561; the mean normalised 2-way L1 error after GUM is reported and
 *   asserted below a measured bar, and the run time is reported.
 *
 * GUM's speed on a million rows is bench/gum_bench's (bench/gum.sh), not this test's.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"


static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* exact marginal of table t over attrs */
static void
exact_marg(dp_marg *m, const dp_codes *t, uint32_t nattrs, const uint32_t *attrs, const uint32_t *sizes)
{
	if (dp_marg_init(m, nattrs, attrs, sizes) != 0)
	{
		fprintf(stderr, "dp_marg_init failed\n");
		exit(2);
	}
	dp_marg_count(m, t);
}

/* normalised L1 between target m and the same marginal of table t */
static double
l1_of(const dp_marg *m, const dp_codes *t, const uint32_t *sizes)
{
	dp_marg		s;
	double		e;

	exact_marg(&s, t, m->nattrs, m->attrs, sizes);
	e = dp_marg_l1(m, &s, true);
	dp_marg_free(&s);
	return e;
}

/* adds every 1-way marginal of t (ncols columns) to targets[*nt] */
static void
add_one_ways(dp_marg *targets, uint32_t *nt, const dp_codes *t, const uint32_t *sizes)
{
	for (uint32_t c = 0; c < t->ncols; c++)
		exact_marg(&targets[(*nt)++], t, 1, &c, sizes);
}

static void
free_targets(dp_marg *targets, uint32_t nt)
{
	for (uint32_t i = 0; i < nt; i++)
		dp_marg_free(&targets[i]);
}

static uint64_t
hash64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* a correlated source table: column j depends on column j-1 (and on column 0 for j >= 2) */
static void
make_source(dp_codes *t, uint32_t ncols, const uint32_t *sizes, uint64_t nrows, uint64_t salt)
{
	uint16_t	row[64];

	dp_codes_init(t, ncols, nrows);
	for (uint64_t i = 0; i < nrows; i++)
	{
		uint64_t	h = hash64(i * 7919 + salt);

		for (uint32_t j = 0; j < ncols; j++)
		{
			uint64_t	hh = hash64(h + j);
			uint32_t	v;

			if (j == 0)
				v = (uint32_t) ((hh % 100) * (hh % 100) / 10000.0 * sizes[0]);	/* skewed */
			else if (hh % 10 < 7)
				v = (row[j - 1] + (j >= 2 ? row[0] : 0)) % sizes[j];
			else
				v = (uint32_t) ((hh >> 20) % sizes[j]);
			row[j] = (uint16_t) (v % sizes[j]);
		}
		dp_codes_append(t, row);
	}
}

/* ---------- small cases ---------- */

static void
test_two_columns(void)
{
	uint32_t	sizes[2] = {3, 4};
	uint32_t	attrs[2] = {0, 1};
	double		cells[12] = {10, 0, 30, 5, 0, 20, 0, 15, 8, 2, 0, 10};
	dp_marg		tg[3];
	dp_codes	out;
	dp_prng		rng;
	int			rc;
	double		e;

	/* a 2-way target, its 1-way projections */
	dp_marg_init(&tg[0], 2, attrs, sizes);
	memcpy(tg[0].cells, cells, sizeof(cells));
	dp_marg_init(&tg[1], 1, &attrs[0], sizes);
	dp_marg_init(&tg[2], 1, &attrs[1], sizes);
	dp_marg_project(&tg[0], &tg[1]);
	dp_marg_project(&tg[0], &tg[2]);

	dp_prng_seed(&rng, 1);
	dp_codes_init(&out, 2, 0);
	rc = dp_gum_run(tg, 3, 2, sizes, 1000, NULL, &rng, &out);
	unit_check(rc == 0 && out.nrows == 1000, "two columns: runs, 1000 rows (rc %d)", rc);
	e = l1_of(&tg[0], &out, sizes);
	unit_diag("two columns: 2-way L1 %.5f", e);
	unit_check(e >= 0 && e < 0.01, "two columns: 2-way L1 %.5f < 0.01", e);
	{
		dp_marg		s;
		bool		zeros_ok = true;

		exact_marg(&s, &out, 2, attrs, sizes);
		for (int k = 0; k < 12; k++)
			if (cells[k] == 0 && s.cells[k] != 0)
				zeros_ok = false;
		unit_check(zeros_ok, "two columns: no row in a cell whose target is 0");
		dp_marg_free(&s);
	}
	dp_codes_free(&out);
	free_targets(tg, 3);
}

static double
max_l1(const dp_marg *tg, uint32_t from, uint32_t to, const dp_codes *t, const uint32_t *sizes)
{
	double		mx = 0;

	for (uint32_t i = from; i < to; i++)
	{
		double		e = l1_of(&tg[i], t, sizes);

		if (e > mx || e < 0)
			mx = e < 0 ? 99 : e;
	}
	return mx;
}

static void
test_triangle(void)
{
	uint32_t	sizes[3] = {4, 5, 3};
	uint32_t	pairs[3][2] = {{0, 1}, {1, 2}, {0, 2}};
	dp_marg		tg[6];
	uint32_t	nt = 0;
	dp_codes	src,
				out,
				out2;
	dp_prng		rng;
	int			rc;
	double		e,
				e0;
	bool		same = true;

	make_source(&src, 3, sizes, 5000, 11);
	for (int i = 0; i < 3; i++)
		exact_marg(&tg[nt++], &src, 2, pairs[i], sizes);
	add_one_ways(tg, &nt, &src, sizes);

	/* before GUM: independent columns */
	{
		dp_gum_params p;

		dp_gum_default_params(&p);
		p.iterations = 0;
		dp_prng_seed(&rng, 5);
		dp_codes_init(&out, 3, 0);
		dp_gum_run(tg, nt, 3, sizes, 5000, &p, &rng, &out);
		e0 = max_l1(tg, 0, 3, &out, sizes);
		dp_codes_free(&out);
	}

	dp_prng_seed(&rng, 5);
	dp_codes_init(&out, 3, 0);
	rc = dp_gum_run(tg, nt, 3, sizes, 5000, NULL, &rng, &out);
	e = max_l1(tg, 0, 3, &out, sizes);
	unit_diag("triangle: max 2-way L1 %.5f after GUM (%.5f with independent columns)", e, e0);
	unit_check(rc == 0 && out.nrows == 5000, "triangle: runs (rc %d)", rc);
	unit_check(e < 0.02 && e < e0 / 10, "triangle: max 2-way L1 %.5f < 0.02 and < 1/10 of %.4f", e, e0);
	e = max_l1(tg, 3, 6, &out, sizes);
	unit_check(e < 0.01, "triangle: max 1-way L1 %.5f < 0.01", e);

	/* same seed, same rows */
	dp_prng_seed(&rng, 5);
	dp_codes_init(&out2, 3, 0);
	dp_gum_run(tg, nt, 3, sizes, 5000, NULL, &rng, &out2);
	for (uint32_t j = 0; j < 3; j++)
		same &= memcmp(out.col[j], out2.col[j], sizeof(uint16_t) * 5000) == 0;
	unit_check(same, "triangle: same seed, same synthetic rows");
	dp_codes_free(&out2);

	/* a different n: the targets are scaled */
	dp_codes_free(&out);
	dp_prng_seed(&rng, 6);
	dp_codes_init(&out, 3, 0);
	rc = dp_gum_run(tg, nt, 3, sizes, 2000, NULL, &rng, &out);
	e = max_l1(tg, 0, 3, &out, sizes);
	unit_check(rc == 0 && out.nrows == 2000 && e < 0.03,
			   "triangle: n = 2000 from 5000-row targets, max 2-way L1 %.5f < 0.03", e);
	dp_codes_free(&out);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

/* a 3-way target over {0,1,2} and a tail column 3 hanging from column 2 */
static void
test_three_way_and_tail(void)
{
	uint32_t	sizes[4] = {3, 4, 5, 6};
	uint32_t	a3[3] = {0, 1, 2},
				a2[2] = {2, 3};
	dp_marg		tg[6];
	uint32_t	nt = 0;
	dp_codes	src,
				out;
	dp_prng		rng;
	int			rc;
	double		e3,
				e2;

	make_source(&src, 4, sizes, 8000, 23);
	exact_marg(&tg[nt++], &src, 3, a3, sizes);
	exact_marg(&tg[nt++], &src, 2, a2, sizes);
	add_one_ways(tg, &nt, &src, sizes);
	dp_prng_seed(&rng, 9);
	dp_codes_init(&out, 4, 0);
	rc = dp_gum_run(tg, nt, 4, sizes, 8000, NULL, &rng, &out);
	e3 = l1_of(&tg[0], &out, sizes);
	e2 = l1_of(&tg[1], &out, sizes);
	unit_diag("3-way + tail: 3-way L1 %.5f, tail 2-way L1 %.5f", e3, e2);
	unit_check(rc == 0 && e3 < 0.03, "3-way target: L1 %.5f < 0.03", e3);
	unit_check(e2 < 0.03, "tail appended to a 3-way clique: 2-way L1 %.5f < 0.03", e2);
	dp_codes_free(&out);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

/* chain 0-1-2-3-4: peeled in layers; and a triangle 0,1,2 with a leaf 3 on column 2 */
static void
test_appending(void)
{
	uint32_t	sizes[5] = {5, 4, 6, 7, 3};
	dp_marg		tg[10];
	uint32_t	nt = 0;
	dp_codes	src,
				out;
	dp_prng		rng;
	int			rc;
	double		e,
				eind;

	make_source(&src, 5, sizes, 6000, 31);
	for (uint32_t j = 0; j + 1 < 5; j++)
	{
		uint32_t	a[2] = {j, j + 1};

		exact_marg(&tg[nt++], &src, 2, a, sizes);
	}
	add_one_ways(tg, &nt, &src, sizes);
	dp_prng_seed(&rng, 3);
	dp_codes_init(&out, 5, 0);
	rc = dp_gum_run(tg, nt, 5, sizes, 6000, NULL, &rng, &out);
	e = max_l1(tg, 0, 4, &out, sizes);
	unit_diag("chain of 5: max 2-way L1 %.5f", e);
	unit_check(rc == 0 && e < 0.02, "chain of 5 (all appended): max 2-way L1 %.5f < 0.02", e);
	dp_codes_free(&out);
	free_targets(tg, nt);

	/* triangle + leaf: the leaf's 2-way with its neighbour is matched */
	nt = 0;
	{
		uint32_t	pairs[4][2] = {{0, 1}, {1, 2}, {0, 2}, {2, 3}};

		for (int i = 0; i < 4; i++)
			exact_marg(&tg[nt++], &src, 2, pairs[i], sizes);
	}
	add_one_ways(tg, &nt, &src, sizes);		/* column 4: in no 2-way, degree 0 */
	dp_prng_seed(&rng, 4);
	dp_codes_init(&out, 5, 0);
	rc = dp_gum_run(tg, nt, 5, sizes, 6000, NULL, &rng, &out);
	e = l1_of(&tg[3], &out, sizes);
	{
		/* the same pair under independence, for scale */
		dp_marg		ind;
		dp_marg	   *m1 = &tg[4 + 2],
				   *m2 = &tg[4 + 3];
		uint32_t	a[2] = {2, 3};

		dp_marg_init(&ind, 2, a, sizes);
		for (uint32_t x = 0; x < sizes[2]; x++)
			for (uint32_t y = 0; y < sizes[3]; y++)
				ind.cells[x * sizes[3] + y] = m1->cells[x] * m2->cells[y];
		eind = dp_marg_l1(&tg[3], &ind, true);
		dp_marg_free(&ind);
	}
	unit_diag("leaf on a triangle: leaf 2-way L1 %.5f (independence: %.4f)", e, eind);
	unit_check(rc == 0 && e < 0.02 && e < eind / 10, "leaf on a triangle: 2-way L1 %.5f < 0.02", e);
	e = max_l1(tg, 0, 3, &out, sizes);
	unit_check(e < 0.03, "leaf on a triangle: triangle max 2-way L1 %.5f < 0.03", e);
	e = l1_of(&tg[4 + 4], &out, sizes);
	unit_check(e < 0.002, "degree-0 column keeps its exact 1-way counts: L1 %.5f", e);
	dp_codes_free(&out);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

/*
 * 16-bit codes: a triangle whose column 0 has 300 codes (so the iterations run the uint16_t
 * kernels; every other test has at most 42 codes per column, which runs the 8-bit ones), plus a
 * column of degree 0 with 400 codes, on 150,000 rows (several parts) with 1, 2 and 3 threads: the
 * rows must be the same, the triangle's marginals matched and the degree-0 column keep its exact
 * 1-way counts.  Then the same triangle with a small column 0 (8-bit codes) and the 400-code
 * degree-0 column: that column is no column of an iterated marginal, so it keeps its initial
 * fill whatever width the working table has.
 */
static void
test_wide_codes(void)
{
	const uint64_t n = 150000;
	uint32_t	sizes[4] = {300, 7, 12, 400};
	uint32_t	pairs[3][2] = {{0, 1}, {1, 2}, {0, 2}};
	dp_marg		tg[7];
	uint32_t	nt = 0;
	dp_codes	src,
				out[3];
	double		e0 = 0;
	bool		same = true;

	for (uint32_t pass = 0; pass < 2; pass++)
	{
		const char *label = pass == 0 ? "16-bit codes" : "8-bit codes, 400-code degree-0 column";

		if (pass == 1)
			sizes[0] = 30;
		nt = 0;
		make_source(&src, 4, sizes, n, 41);
		for (int i = 0; i < 3; i++)
			exact_marg(&tg[nt++], &src, 2, pairs[i], sizes);
		add_one_ways(tg, &nt, &src, sizes);
		{
			dp_gum_params p;
			dp_prng		rng;

			dp_gum_default_params(&p);
			dp_set_threads(1);
			p.iterations = 0;
			dp_prng_seed(&rng, 13);
			dp_codes_init(&out[0], 4, 0);
			dp_gum_run(tg, nt, 4, sizes, n, &p, &rng, &out[0]);
			e0 = max_l1(tg, 0, 3, &out[0], sizes);
			dp_codes_free(&out[0]);
		}
		for (uint32_t t = 0; t < (pass == 0 ? 3u : 1u); t++)
		{
			dp_gum_params p;
			dp_prng		rng;
			int			rc;
			double		e,
						e1;

			dp_gum_default_params(&p);
			dp_set_threads(t + 1);
			dp_prng_seed(&rng, 13);
			dp_codes_init(&out[t], 4, 0);
			rc = dp_gum_run(tg, nt, 4, sizes, n, &p, &rng, &out[t]);
			e = max_l1(tg, 0, 3, &out[t], sizes);
			e1 = l1_of(&tg[3 + 3], &out[t], sizes);
			unit_diag("%s, %u thread(s): max 2-way L1 %.5f (%.5f with independent columns), "
					  "degree-0 1-way L1 %.5f", label, t + 1, e, e0, e1);
			unit_check(rc == 0 && out[t].nrows == n && e < 0.02 && e < e0 / 10,
					   "%s, %u thread(s): %llu rows (rc %d), max 2-way L1 %.5f < 0.02 and < 1/10 of %.4f",
					   label, t + 1, (unsigned long long) n, rc, e, e0);
			unit_check(e1 < 0.002, "%s, %u thread(s): degree-0 column keeps its exact 1-way counts: "
					   "L1 %.5f", label, t + 1, e1);
		}
		if (pass == 0)
		{
			for (uint32_t t = 1; t < 3; t++)
				for (uint32_t j = 0; j < 4 && same; j++)
					same = out[t].nrows == n &&
						memcmp(out[0].col[j], out[t].col[j], sizeof(uint16_t) * n) == 0;
			unit_check(same, "%s: 1, 2 and 3 threads give the same rows under the same seed", label);
			for (uint32_t t = 1; t < 3; t++)
				dp_codes_free(&out[t]);
		}
		dp_codes_free(&out[0]);
		dp_codes_free(&src);
		free_targets(tg, nt);
	}
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

static int	cancel_calls = 0;

static int
cancel_at_3(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) arg;
	(void) iters;
	if (err < 0)
		return 0;				/* a heartbeat within an iteration */
	cancel_calls++;
	return iter >= 3;
}

static int
cancel_at_first_heartbeat(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) arg;
	(void) iter;
	(void) iters;
	return err < 0;
}

static int
count_progress(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	uint32_t   *st = arg;

	if (err < 0)
		return 0;				/* a heartbeat within an iteration */
	st[0]++;
	if (iter != st[0] || iters != st[1] || !(err >= 0))
		st[2]++;
	return 0;
}

static void
test_cancel_and_errors(void)
{
	uint32_t	sizes[3] = {4, 5, 3};
	uint32_t	pairs[3][2] = {{0, 1}, {1, 2}, {0, 2}};
	dp_marg		tg[6];
	uint32_t	nt = 0;
	dp_codes	src,
				out;
	dp_prng		rng;
	dp_gum_params p;
	int			rc;
	double		t0;
	uint32_t	st[3] = {0, 0, 0};

	make_source(&src, 3, sizes, 20000, 41);
	for (int i = 0; i < 3; i++)
		exact_marg(&tg[nt++], &src, 2, pairs[i], sizes);
	add_one_ways(tg, &nt, &src, sizes);

	dp_gum_default_params(&p);
	unit_check(p.iterations == 200 && p.alpha0 == 1.0 && p.tolerance > 0 && p.progress == NULL,
			   "defaults: T = 200, alpha0 = 1.0, tolerance %g", p.tolerance);
	p.progress = cancel_at_3;
	p.tolerance = -1;
	dp_prng_seed(&rng, 1);
	dp_codes_init(&out, 3, 0);
	t0 = now_s();
	rc = dp_gum_run(tg, nt, 3, sizes, 20000, &p, &rng, &out);
	unit_check(rc == -1 && cancel_calls == 3 && out.nrows == 0,
			   "cancel: -1 after the 3rd progress call (rc %d, calls %d, %.3f s)", rc, cancel_calls,
			   now_s() - t0);

	/* progress reports every iteration, 1..T; tolerance < 0 runs them all */
	p.progress = count_progress;
	p.progress_arg = st;
	p.iterations = 50;
	st[1] = 50;
	rc = dp_gum_run(tg, nt, 3, sizes, 20000, &p, &rng, &out);
	unit_check(rc == 0 && st[0] == 50 && st[2] == 0, "progress: 50 calls, iter 1..50 (rc %d, %u calls)",
			   rc, st[0]);
	/* early stop with a large tolerance */
	st[0] = st[2] = 0;
	p.iterations = 200;
	st[1] = 200;
	p.tolerance = 0.5;
	rc = dp_gum_run(tg, nt, 3, sizes, 20000, &p, &rng, &out);
	unit_check(rc == 0 && st[0] == 11, "early stop: tolerance 0.5 stops after 11 iterations (%u): the first, then 10 without improvement", st[0]);
	/* heartbeats within an iteration let a cancel in before the iteration ends */
	p.progress = cancel_at_first_heartbeat;
	p.tolerance = -1;
	rc = dp_gum_run(tg, nt, 3, sizes, 20000, &p, &rng, &out);
	unit_check(rc == -1 && out.nrows == 0, "cancel at the first heartbeat of the first iteration (rc %d)", rc);

	/* invalid input */
	rc = dp_gum_run(tg, 3, 3, sizes, 100, NULL, &rng, &out);	/* 2-ways only: fine (projection) */
	unit_check(rc == 0, "no 1-way targets: projected from the 2-ways (rc %d)", rc);
	{
		dp_codes	o4;
		uint32_t	s4[4] = {4, 5, 3, 2};

		dp_codes_init(&o4, 4, 0);
		rc = dp_gum_run(tg, nt, 4, s4, 100, NULL, &rng, &o4);
		unit_check(rc == -2 && o4.nrows == 0, "a column in no target: -2 (rc %d)", rc);
		dp_codes_free(&o4);
	}
	{
		uint32_t	bad[3] = {4, 6, 3};

		rc = dp_gum_run(tg, nt, 3, bad, 100, NULL, &rng, &out);
		unit_check(rc == -2, "sizes disagreeing with a target: -2 (rc %d)", rc);
	}
	rc = dp_gum_run(tg, nt, 2, sizes, 100, NULL, &rng, &out);
	unit_check(rc == -2, "ncols disagreeing with out: -2 (rc %d)", rc);
	{
		double		save = tg[0].cells[0];

		for (uint64_t k = 0; k < tg[0].ncells; k++)
			tg[0].cells[k] = -1;
		rc = dp_gum_run(tg, nt, 3, sizes, 100, NULL, &rng, &out);
		unit_check(rc == -2, "a target with no positive cell: -2 (rc %d)", rc);
		dp_marg_free(&tg[0]);
		exact_marg(&tg[0], &src, 2, pairs[0], sizes);
		(void) save;
	}
	rc = dp_gum_run(tg, nt, 3, sizes, 0, NULL, &rng, &out);
	unit_check(rc == 0 && out.nrows == 0, "n = 0: no rows (rc %d)", rc);
	dp_codes_free(&out);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

/* ---------- allocation failures (through the installed handlers) ---------- */

static long live_blocks = 0,
			fail_after = -1;

static void *
t_alloc(size_t n)
{
	void	   *p;

	if (fail_after == 0)
		return NULL;
	if (fail_after > 0)
		fail_after--;
	p = malloc(n);
	if (p)
		live_blocks++;
	return p;
}

static void *
t_realloc(void *p, size_t n)
{
	if (fail_after == 0)
		return NULL;
	if (fail_after > 0)
		fail_after--;
	return realloc(p, n);
}

static void
t_free(void *p)
{
	live_blocks--;
	free(p);
}

/*
 * One GUM run whose allocation number k fails (k past the last: none fails): returns its rc and
 * clears *clean unless it returned 0 or -2 with nothing leaked and out emptied on failure.  A
 * failure may leave some of out's columns freed (GUM frees the 16-bit columns it works on in
 * 8-bit copies, and allocates them again at the end): fewer blocks, never more.
 */
static int
alloc_fail_run(const dp_marg *tg, uint32_t nt, uint32_t ncols, const uint32_t *sizes, uint64_t n,
			   const dp_gum_params *prm, uint64_t seed, long k, bool *clean)
{
	dp_codes	out;
	dp_prng		rng;
	long		base;
	int			rc;

	fail_after = -1;
	dp_codes_init(&out, ncols, 0);
	base = live_blocks;
	fail_after = k;
	dp_prng_seed(&rng, seed);
	rc = dp_gum_run(tg, nt, ncols, sizes, n, prm, &rng, &out);
	fail_after = -1;
	*clean &= (rc == -2 || rc == 0) && (rc == 0 ? live_blocks == base : live_blocks <= base) &&
		(rc == 0 || out.nrows == 0);
	dp_codes_free(&out);
	*clean &= live_blocks == 0;
	return rc;
}

static void
test_alloc_failures(void)
{
	uint32_t	sizes[4] = {4, 5, 3, 6};
	uint32_t	pairs[4][2] = {{0, 1}, {1, 2}, {0, 2}, {2, 3}};
	dp_marg		tg[8];
	uint32_t	nt = 0;
	dp_codes	src;
	int			fails = 0,
				oks = 0;
	bool		clean = true;

	make_source(&src, 4, sizes, 3000, 51);
	for (int i = 0; i < 4; i++)
		exact_marg(&tg[nt++], &src, 2, pairs[i], sizes);
	add_one_ways(tg, &nt, &src, sizes);
	dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, NULL});
	for (long k = 0; k < 200; k++)
	{
		int			rc = alloc_fail_run(tg, nt, 4, sizes, 3000, NULL, 1, k, &clean);

		if (rc == -2)
			fails++;
		else if (rc == 0)
			oks++;
	}
	dp_set_handlers(NULL);
	unit_check(clean && fails > 10 && oks > 0,
			   "allocation failures: -2 and nothing leaked (%d failures, %d successes)", fails, oks);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

/* cancels at its cancel_at-th call (counted in *calls) */
typedef struct cancel_at
{
	int			calls,
				cancel_at;
} cancel_at;

static int
cancel_progress(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	cancel_at  *c = arg;

	(void) iter, (void) iters, (void) err;
	return ++c->calls == c->cancel_at;
}

/*
 * The same on a component wide enough for the grouped layout (26 columns of 8-bit codes, each
 * paired with the two before it: one component, GUM_GROUP_MIN_COLS 24): every allocation made
 * to fail in turn, then every progress call made to cancel in turn, on 1 thread and on 2 threads
 * (two parts), 3,000 rows each.  A table that small is one part (GUM_PAR_MIN_ROWS), so on 2
 * threads dp_gum.h's test seam lowers the split to 2,048 rows: the run then makes the same
 * allocations, from the same call sites in the same order, and the same progress calls as a
 * 70,000-row table split by GUM_PAR_MIN_ROWS (356 allocations and 154 progress calls; 292 and
 * 154 on 1 thread), at a twentieth of the cost.
 * Each returns -2 or -1 with nothing leaked and out emptied.
 */
static void
test_alloc_failures_wide(void)
{
	enum {W = 26};
	uint32_t	sizes[W];
	dp_marg		tg[3 * W];
	uint32_t	nt = 0;
	dp_codes	src,
				out;
	dp_prng		rng;
	dp_gum_params prm;
	int			fails = 0,
				oks = 0,
				cancels = 0,
				fails_on[3] = {0, 0, 0},
				cancels_on[3] = {0, 0, 0};
	bool		clean = true;

	for (uint32_t j = 0; j < W; j++)
		sizes[j] = 3 + j % 4;
	dp_gum_default_params(&prm);
	prm.iterations = 2;
	for (uint32_t threads = 1; threads <= 2; threads++)
	{
		const uint64_t n = 3000;

		/* one part on 1 thread; two parts on 2 (the seam: tables of 2,048 rows or more split) */
		dp_gum_test_par_min_rows(threads == 1 ? 0 : 2048);
		make_source(&src, W, sizes, n, 77);
		/* pairs (j-1, j) and (j-2, j): no leaf to peel, so all 26 columns are iterated together */
		nt = 0;
		for (uint32_t j = 1; j < W; j++)
			for (uint32_t back = 1; back <= 2 && back <= j; back++)
			{
				uint32_t	pr[2] = {j - back, j};

				exact_marg(&tg[nt++], &src, 2, pr, sizes);
			}
		add_one_ways(tg, &nt, &src, sizes);
		dp_set_threads(threads);
		prm.progress = NULL;
		dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, NULL});
		oks = 0;
		for (long k = 0; k < 2000 && oks < 2; k++)
		{
			int			rc = alloc_fail_run(tg, nt, W, sizes, n, &prm, 3, k, &clean);

			if (rc == -2)
				fails++, fails_on[threads]++;
			else if (rc == 0)
				oks++;
		}
		clean &= oks == 2;
		/* every progress call cancels in turn, until a run gets through */
		for (int c = 1; c < 5000; c++)
		{
			cancel_at	ca = {0, c};
			int			rc;

			prm.progress = cancel_progress;
			prm.progress_arg = &ca;
			dp_codes_init(&out, W, 0);
			dp_prng_seed(&rng, 3);
			rc = dp_gum_run(tg, nt, W, sizes, n, &prm, &rng, &out);
			clean &= (rc == -1 && out.nrows == 0) || (rc == 0 && ca.calls < c);
			dp_codes_free(&out);
			clean &= live_blocks == 0;
			if (rc == 0)
				break;
			cancels++, cancels_on[threads]++;
		}
		dp_set_handlers(NULL);
		dp_gum_test_par_min_rows(0);
		dp_codes_free(&src);
		free_targets(tg, nt);
	}
	unit_check(clean && fails > 40 && cancels > 10,
			   "grouped layout (26 columns, %s): every allocation failure returns -2 and every cancel -1, "
			   "nothing leaked (%d failures, %d cancels)", "1 and 2 threads", fails, cancels);
	/* two parts allocate more than one (each its scratch): the 2-thread sweep ran on two parts */
	unit_check(fails_on[2] > fails_on[1] && cancels_on[2] == cancels_on[1],
			   "grouped layout: 2 threads split the rows in two parts (%d allocations against %d on 1 thread; %d progress calls on both)",
			   fails_on[2], fails_on[1], cancels_on[2]);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/* ---------- the real Adult table ---------- */

#include "adult_data.h"

/* pairs by column name */
static const char *adult_pairs[][2] = {
	{"income", "age"}, {"income", "education"}, {"income", "marital_status"},
	{"income", "occupation"}, {"income", "relationship"}, {"income", "sex"},
	{"income", "hours_per_week"}, {"income", "capital_gain"}, {"income", "workclass"},
	{"education", "education_num"}, {"education", "occupation"}, {"education", "age"},
	{"age", "marital_status"}, {"age", "relationship"}, {"age", "hours_per_week"},
	{"sex", "relationship"}, {"sex", "occupation"}, {"sex", "hours_per_week"},
	{"relationship", "marital_status"}, {"race", "native_country"}, {"occupation", "workclass"},
};
#define NPAIRS ((uint32_t) (sizeof(adult_pairs) / sizeof(adult_pairs[0])))

static uint32_t
col_of(const acol *cols, const char *name)
{
	for (uint32_t j = 0; j < ADULT_COLS; j++)
		if (strcmp(cols[j].name, name) == 0)
			return j;
	fprintf(stderr, "no column %s\n", name);
	exit(2);
}

static int
count_iters(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) iters;
	((uint32_t *) arg)[0] = iter;
	((double *) ((uint32_t *) arg + 2))[0] = err;
	return 0;
}

static void
run_adult(const dp_codes *src, const acol *cols, const uint32_t *sizes, uint64_t n, const char *label)
{
	dp_marg		tg[ADULT_COLS + NPAIRS];
	uint32_t	nt = 0;
	dp_codes	out;
	dp_prng		rng;
	dp_gum_params p;
	double		t0,
				dt,
				sum2 = 0,
				max2 = 0,
				sum1 = 0,
				ind = 0;
	int			rc;
	uint32_t	st[4] = {0, 0, 0, 0};

	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		uint32_t	a[2] = {col_of(cols, adult_pairs[i][0]), col_of(cols, adult_pairs[i][1])};

		exact_marg(&tg[nt++], src, 2, a, sizes);
	}
	add_one_ways(tg, &nt, src, sizes);

	/* baseline for scale: 0 iterations (core columns independent, leaves still appended) */
	dp_gum_default_params(&p);
	p.iterations = 0;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	for (uint32_t i = 0; i < NPAIRS; i++)
		ind += l1_of(&tg[i], &out, sizes) / NPAIRS;
	dp_codes_free(&out);

	dp_gum_default_params(&p);
	p.progress = count_iters;
	p.progress_arg = st;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	t0 = now_s();
	rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	dt = now_s() - t0;
	unit_check(rc == 0 && out.nrows == n, "%s: GUM runs, %llu rows (rc %d)", label,
			   (unsigned long long) n, rc);
	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		double		e = l1_of(&tg[i], &out, sizes);

		sum2 += e;
		if (e > max2)
			max2 = e;
	}
	for (uint32_t i = NPAIRS; i < nt; i++)
		sum1 += l1_of(&tg[i], &out, sizes);
	unit_diag("%s: %llu rows, %u 2-way + %u 1-way exact targets, %u iterations (last mean L1 of "
			  "iterated targets %.5f), %.3f s", label, (unsigned long long) n, NPAIRS, ADULT_COLS,
			  st[0], *(double *) (st + 2), dt);
	unit_diag("%s: 2-way L1 mean %.5f, max %.5f (0 iterations: mean %.4f); 1-way L1 mean %.5f",
			  label, sum2 / NPAIRS, max2, ind, sum1 / ADULT_COLS);
	/*
	 * Measured (seed 2024, full table, default parameters: early stop after ~40 iterations):
	 * mean 2-way L1 0.0045 (seeds 1..8: 0.0044 - 0.0052; 200 iterations without early stop:
	 * 0.0056), max 0.022, mean 1-way 0.0007; independent columns give a mean of ~0.31.  The
	 * bars are about 1.5 times the measured values.
	 */
	unit_check(sum2 / NPAIRS < 0.007, "%s: mean 2-way L1 %.5f < 0.007", label, sum2 / NPAIRS);
	unit_check(max2 < 0.035, "%s: max 2-way L1 %.5f < 0.035", label, max2);
	unit_check(sum1 / ADULT_COLS < 0.002, "%s: mean 1-way L1 %.5f < 0.002", label, sum1 / ADULT_COLS);
	unit_diag("%s: GUM time %.3f s (timed in bench/gum.sh, not here)", label, dt);
	dp_codes_free(&out);

	/* all 200 iterations (no early stop): the time the brief asks about */
	p.tolerance = -1;
	dp_prng_seed(&rng, 2024);
	dp_codes_init(&out, ADULT_COLS, 0);
	t0 = now_s();
	rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out);
	dt = now_s() - t0;
	sum2 = 0;
	for (uint32_t i = 0; i < NPAIRS; i++)
		sum2 += l1_of(&tg[i], &out, sizes);
	unit_diag("%s: without early stop, %u iterations: 2-way L1 mean %.5f, %.3f s", label, st[0],
			  sum2 / NPAIRS, dt);
	unit_check(rc == 0 && st[0] == 200 && sum2 / NPAIRS < 0.009,
			   "%s: 200 iterations, mean 2-way L1 %.5f < 0.009 (%.3f s)", label,
			   sum2 / NPAIRS, dt);
	dp_codes_free(&out);
	free_targets(tg, nt);
}

/*
 * The rows do not depend on the number of threads (parts): Adult tiled to 120,000 rows (above the
 * size at which GUM cuts the table into parts), 12 iterations, seed 7, with 1, 2 and 3 threads.
 * Also heartbeats between chunks of moves: in the first iteration over 600,000 rows, visits move
 * more rows than one chunk, so there are more heartbeats than columns filled plus visits.
 */
static int
count_beats_then_cancel(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	(void) iter;
	(void) iters;
	if (err < 0)
	{
		++*(int *) arg;
		return 0;
	}
	return 1;					/* the end of the first iteration */
}

static void
test_threads(const dp_codes *src, const acol *cols, const uint32_t *sizes)
{
	const uint64_t n = 120000;
	dp_marg		tg[ADULT_COLS + NPAIRS];
	uint32_t	nt = 0;
	dp_codes	out[3];
	bool		same = true;
	int			beats = 0,
				rc;

	for (uint32_t i = 0; i < NPAIRS; i++)
	{
		uint32_t	a[2] = {col_of(cols, adult_pairs[i][0]), col_of(cols, adult_pairs[i][1])};

		exact_marg(&tg[nt++], src, 2, a, sizes);
	}
	add_one_ways(tg, &nt, src, sizes);
	for (uint32_t t = 0; t < 3; t++)
	{
		dp_gum_params p;
		dp_prng		rng;

		dp_gum_default_params(&p);
		p.iterations = 12;
		dp_set_threads(t + 1);
		dp_prng_seed(&rng, 7);
		dp_codes_init(&out[t], ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[t]);
		unit_check(rc == 0 && out[t].nrows == n, "threads %u: GUM runs on %llu rows (rc %d)", t + 1,
				   (unsigned long long) n, rc);
	}
	for (uint32_t t = 1; t < 3; t++)
		for (uint32_t j = 0; j < ADULT_COLS && same; j++)
			same = out[t].nrows == n && memcmp(out[0].col[j], out[t].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "1, 2 and 3 threads give the same rows under the same seed");
	for (uint32_t t = 0; t < 3; t++)
		dp_codes_free(&out[t]);

	/*
	 * A coarse warm start (dp_privsyn_sample's levels): Adult's 32,561 rows as the start of
	 * 120,000, each copied 3 or 4 times.  Without iterations the rows keep the start's one-way
	 * shares (appended columns follow their targets, here the same table's); with 5 iterations,
	 * 1 and 2 threads give the same rows.
	 */
	for (uint32_t t = 0; t < 3; t++)
	{
		dp_gum_params p;
		dp_prng		rng;

		dp_gum_default_params(&p);
		p.iterations = t == 0 ? 0 : 5;
		dp_set_threads(t == 2 ? 2 : 1);
		p.start = src;
		dp_prng_seed(&rng, 7);
		dp_codes_init(&out[t], ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[t]);
		unit_check(rc == 0 && out[t].nrows == n, "coarse start, %u iterations, %u threads: %llu rows (rc %d)",
				   p.iterations, dp_threads(), (unsigned long long) n, rc);
	}
	{
		double		worst = 0;

		for (uint32_t j = 0; j < ADULT_COLS && out[0].nrows == n; j++)
		{
			double		l1 = 0;

			for (uint32_t v = 0; v < sizes[j]; v++)
			{
				uint64_t	a = 0,
							b = 0;

				for (uint64_t i = 0; i < src->nrows; i++)
					a += src->col[j][i] == v;
				for (uint64_t i = 0; i < n; i++)
					b += out[0].col[j][i] == v;
				l1 += fabs((double) a / src->nrows - (double) b / n);
			}
			worst = fmax(worst, l1);
		}
		unit_check(out[0].nrows == n && worst < 0.01,
				   "coarse start without iterations: one-way shares of the start, L1 at most %.5f < 0.01", worst);
	}
	same = true;
	for (uint32_t j = 0; j < ADULT_COLS && same; j++)
		same = out[1].nrows == n && out[2].nrows == n &&
			memcmp(out[1].col[j], out[2].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "coarse start: 1 and 2 threads give the same rows under the same seed");
	for (uint32_t t = 0; t < 3; t++)
		dp_codes_free(&out[t]);

	/*
	 * A start with more rows than asked for (the adaptive method's final rows from its last
	 * estimate): 20,000 of Adult's 32,561, drawn without replacement.  Without iterations the
	 * rows keep the start's joint up to the draw; a cold start without iterations fills the
	 * core columns independently, so its 2-way shares are far from the start's.
	 */
	{
		const uint64_t few = 20000;
		double		tvd[2] = {0, 0};	/* mean 2-way L1 against src: warm, cold */
		int			rcs[2];
		dp_codes	o[2];

		for (int w = 0; w < 2; w++)
		{
			dp_gum_params p;
			dp_prng		rng;
			uint32_t	pairs = 0;

			dp_gum_default_params(&p);
			dp_set_threads(1);
			p.iterations = 0;
			p.start = w == 0 ? src : NULL;
			dp_prng_seed(&rng, 9);
			dp_codes_init(&o[w], ADULT_COLS, 0);
			rcs[w] = dp_gum_run(tg, nt, ADULT_COLS, sizes, few, &p, &rng, &o[w]);
			for (uint32_t a = 0; a < ADULT_COLS && rcs[w] == 0 && o[w].nrows == few; a++)
				for (uint32_t b = a + 1; b < ADULT_COLS; b++)
				{
					double	   *x = calloc((size_t) sizes[a] * sizes[b], sizeof(double)),
							   *y = calloc((size_t) sizes[a] * sizes[b], sizeof(double)),
								l1 = 0;

					for (uint64_t i = 0; i < src->nrows; i++)
						x[src->col[a][i] * sizes[b] + src->col[b][i]] += 1.0 / src->nrows;
					for (uint64_t i = 0; i < few; i++)
						y[o[w].col[a][i] * sizes[b] + o[w].col[b][i]] += 1.0 / few;
					for (uint32_t q = 0; q < sizes[a] * sizes[b]; q++)
						l1 += fabs(x[q] - y[q]);
					tvd[w] += l1;
					pairs++;
					free(x);
					free(y);
				}
			tvd[w] /= pairs ? pairs : 1;
		}
		unit_check(rcs[0] == 0 && rcs[1] == 0 && o[0].nrows == few && tvd[0] < 0.05 && tvd[0] < 0.5 * tvd[1],
				   "a start of more rows than asked for: %llu rows keep its joint, mean 2-way L1 %.4f (cold start %.4f)",
				   (unsigned long long) o[0].nrows, tvd[0], tvd[1]);
		dp_codes_free(&o[0]);
		dp_codes_free(&o[1]);
	}

	{
		dp_gum_params p;
		dp_prng		rng;
		dp_codes	o;

		dp_gum_default_params(&p);
		dp_set_threads(2);
		p.progress = count_beats_then_cancel;
		p.progress_arg = &beats;
		dp_prng_seed(&rng, 7);
		dp_codes_init(&o, ADULT_COLS, 0);
		rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, 600000, &p, &rng, &o);
		/* without heartbeats inside visits there would be at most one per column filled and one
		 * per visit: ADULT_COLS + NPAIRS */
		unit_check(rc == -1 && o.nrows == 0 && beats > (int) (ADULT_COLS + NPAIRS),
				   "heartbeats within visits: %d by the end of the first iteration over 600,000 rows, > %u "
				   "columns + targets; cancelled (rc %d)", beats, ADULT_COLS + NPAIRS, rc);
		dp_codes_free(&o);
	}
	free_targets(tg, nt);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/*
 * Counting modes (dp_gum.h): incremental, lazy and automatic counting give the same rows, on a
 * wide workload (every pair of Adult's 15 columns: 105 marginals in one component, where every
 * duplicate touches them all) with 1 and 2 threads, and with 2 threads on 70,000 rows (two parts).
 * The times show why the automatic mode goes lazy there (informational, not asserted).
 */
static void
test_counting_modes(const dp_codes *src, const uint32_t *sizes)
{
	const uint32_t npairs = ADULT_COLS * (ADULT_COLS - 1) / 2;
	dp_marg    *tg = calloc(npairs + ADULT_COLS, sizeof(dp_marg));
	uint32_t	nt = 0;
	const uint64_t ns[2] = {src->nrows, 70000};

	for (uint32_t a = 0; a < ADULT_COLS; a++)
		for (uint32_t b = a + 1; b < ADULT_COLS; b++)
		{
			uint32_t	at[2] = {a, b};

			exact_marg(&tg[nt++], src, 2, at, sizes);
		}
	add_one_ways(tg, &nt, src, sizes);
	for (int v = 0; v < 3; v++)
	{
		uint32_t	threads = v == 0 ? 1 : 2;
		uint64_t	n = ns[v == 2];
		dp_codes	out[3];
		double		secs[3];
		bool		same = true;

		for (int mode = 0; mode < 3; mode++)
		{
			dp_gum_params p;
			dp_prng		rng;
			double		t0 = now_s();
			int			rc;

			dp_gum_default_params(&p);
			p.iterations = 8;
			dp_set_threads(threads);
			p.counting = mode == 0 ? DP_GUM_COUNT_INCREMENTAL : mode == 1 ? DP_GUM_COUNT_LAZY : DP_GUM_COUNT_AUTO;
			dp_prng_seed(&rng, 11);
			dp_codes_init(&out[mode], ADULT_COLS, 0);
			rc = dp_gum_run(tg, nt, ADULT_COLS, sizes, n, &p, &rng, &out[mode]);
			secs[mode] = now_s() - t0;
			unit_check(rc == 0 && out[mode].nrows == n, "counting mode %d, %u thread(s), %llu rows: GUM runs (rc %d)",
					   mode, threads, (unsigned long long) n, rc);
		}
		for (int mode = 1; mode < 3; mode++)
			for (uint32_t j = 0; j < ADULT_COLS && same; j++)
				same = out[mode].nrows == n && memcmp(out[0].col[j], out[mode].col[j], sizeof(uint16_t) * n) == 0;
		unit_check(same, "105 pairs, %u thread(s), %llu rows: incremental, lazy and automatic counting give the same rows",
				   threads, (unsigned long long) n);
		printf("# 105 pairs, %u thread(s), %llu rows, 8 iterations: incremental %.2f s, lazy %.2f s, auto %.2f s\n",
			   threads, (unsigned long long) n, secs[0], secs[1], secs[2]);
		for (int mode = 0; mode < 3; mode++)
			dp_codes_free(&out[mode]);
	}
	free_targets(tg, nt);
	free(tg);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

/*
 * The grouped layout (dp_gum.c: a component of 24 columns or more keeps its 8-bit codes in groups,
 * several bytes to a row): three copies of Adult's 15 columns (the second and third shifted by one
 * and two rows), 45 columns in one component (two groups), pairs (j, j + 1) and (j, j + 2) within
 * each copy and (j, j + 15) across copies, 70,000 rows (two parts).  Incremental, lazy and
 * automatic counting with 1 and 2 threads give the same rows, the column-major layout
 * (dp_gum_params.layout) gives them too, and the iterations bring the pairs close to their
 * targets.
 */
#define GROUPED_ROWS_HASH 0x09cb9e9866203c07ULL

static void
test_grouped(const dp_codes *src, const uint32_t *sizes)
{
	const uint32_t ncols = 3 * ADULT_COLS;
	const uint64_t n = 70000;
	uint32_t	wsizes[3 * ADULT_COLS];
	dp_codes	wide;
	dp_marg    *tg = calloc(6 * ncols, sizeof(dp_marg));
	uint32_t	nt = 0,
				npairs;
	uint16_t	row[3 * ADULT_COLS];
	dp_codes	out[8];
	bool		same = true,
				same_cm = true;
	double		l1 = 0,
				l1_0 = 0;

	for (uint32_t j = 0; j < ncols; j++)
		wsizes[j] = sizes[j % ADULT_COLS];
	dp_codes_init(&wide, ncols, src->nrows);
	for (uint64_t i = 0; i < src->nrows; i++)
	{
		for (uint32_t j = 0; j < ncols; j++)
			row[j] = src->col[j % ADULT_COLS][(i + j / ADULT_COLS) % src->nrows];
		dp_codes_append(&wide, row);
	}
	for (uint32_t c = 0; c < 3; c++)
		for (uint32_t j = 0; j < ADULT_COLS; j++)
			for (uint32_t d = 1; d <= 2; d++)
				if (j + d < ADULT_COLS)
				{
					uint32_t	at[2] = {c * ADULT_COLS + j, c * ADULT_COLS + j + d};

					exact_marg(&tg[nt++], &wide, 2, at, wsizes);
				}
	for (uint32_t j = 0; j + ADULT_COLS < ncols; j++)
	{
		uint32_t	at[2] = {j, j + ADULT_COLS};

		exact_marg(&tg[nt++], &wide, 2, at, wsizes);
	}
	npairs = nt;
	add_one_ways(tg, &nt, &wide, wsizes);
	/*
	 * v 0-5: the grouped layout (3 counting modes x 1 and 2 threads); 6: no iteration; 7, 8: the
	 * column-major layout, 1 and 2 threads
	 */
	for (int v = 0; v < 9; v++)
	{
		dp_gum_params p;
		dp_prng		rng;
		dp_codes	o;
		int			rc;

		dp_gum_default_params(&p);
		p.iterations = v == 6 ? 0 : 6;
		p.tolerance = -1;
		dp_set_threads(v % 2 == 0 ? 1 : 2);
		p.counting = v / 2 == 0 ? DP_GUM_COUNT_INCREMENTAL : v / 2 == 1 ? DP_GUM_COUNT_LAZY : DP_GUM_COUNT_AUTO;
		if (v >= 7)
		{
			dp_set_threads(v == 7 ? 1 : 2);
			p.counting = DP_GUM_COUNT_AUTO;
			p.layout = DP_GUM_LAYOUT_COLUMN_MAJOR;
		}
		dp_prng_seed(&rng, 23);
		dp_codes_init(&o, ncols, 0);
		rc = dp_gum_run(tg, nt, ncols, wsizes, n, &p, &rng, &o);
		unit_check(rc == 0 && o.nrows == n, "%s layout, %u iterations, counting %d, %u thread(s): GUM runs (rc %d)",
				   v >= 7 ? "column-major" : "grouped", p.iterations, p.counting, dp_threads(), rc);
		for (uint32_t i = 0; i < npairs && (v == 0 || v == 6); i++)
			*(v == 6 ? &l1_0 : &l1) += l1_of(&tg[i], &o, wsizes) / npairs;
		if (v == 6)
			dp_codes_free(&o);
		else
			out[v < 6 ? v : v - 1] = o;
	}
	for (int v = 1; v < 6; v++)
		for (uint32_t j = 0; j < ncols && same; j++)
			same = out[v].nrows == n && memcmp(out[0].col[j], out[v].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "grouped layout, %u columns, %u pairs: the three counting modes with 1 and 2 threads give the same rows",
			   ncols, npairs);
	for (int v = 6; v < 8; v++)
		for (uint32_t j = 0; j < ncols && same_cm; j++)
			same_cm = out[v].nrows == n && memcmp(out[0].col[j], out[v].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same_cm, "the column-major layout (1 and 2 threads) gives the grouped layout's rows");
	{
		/*
		 * The rows of this run, pinned (first derived 2026-11-26 from a build with the grouped
		 * layout off): a change to GUM's arithmetic or random stream changes this value, and must
		 * be deliberate; re-derive it with GUM_PRINT_HASH=1 once the test above passes.
		 */
		uint64_t	h = 1469598103934665603ULL;

		for (uint32_t j = 0; j < ncols; j++)
			for (uint64_t i = 0; i < out[0].nrows; i++)
				h = (h ^ out[0].col[j][i]) * 1099511628211ULL;
		if (getenv("GUM_PRINT_HASH"))
			fprintf(stderr, "grouped hash %016llx\n", (unsigned long long) h);
		unit_check(h == GROUPED_ROWS_HASH, "grouped layout: the pinned rows (hash %016llx)", (unsigned long long) h);
	}
	unit_check(l1 < l1_0 / 3, "grouped layout: mean 2-way L1 %.5f after 6 iterations < 1/3 of 0 iterations' %.4f",
			   l1, l1_0);
	for (int v = 0; v < 8; v++)
		dp_codes_free(&out[v]);
	free_targets(tg, nt);
	free(tg);
	dp_codes_free(&wide);
	dp_set_threads(1);		/* the default again, for the tests after this one */
}

static void
test_adult(void)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS];
	dp_codes	src;

	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		unit_check(false, "Adult: data/adult/adult_train.csv and domain.json found and parsed");
		dp_codes_free(&src);
		free(cols);
		return;
	}
	unit_check(src.nrows == 32561, "Adult: %llu rows loaded", (unsigned long long) src.nrows);
	run_adult(&src, cols, sizes, src.nrows, "Adult");
	test_threads(&src, cols, sizes);
	test_counting_modes(&src, sizes);
	test_grouped(&src, sizes);
	dp_codes_free(&src);
	free(cols);
}

int
main(int argc, char **argv)
{
	(void) argc;
	argv0 = argv[0];
	test_two_columns();
	test_triangle();
	test_three_way_and_tail();
	test_appending();
	test_wide_codes();
	test_cancel_and_errors();
	test_alloc_failures();
	test_alloc_failures_wide();
	test_adult();
	return unit_done();
}
