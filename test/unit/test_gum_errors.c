/*
 * test_gum_errors.c - unit tests of src/core/dp_gum.c's failures: cancellation through the
 * progress callback, invalid input, and every allocation failure (through the installed
 * handlers), on small synthetic tables.  The small cases themselves are test_gum.c's.
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
#include "unit_gum.h"


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
	dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, NULL, NULL, NULL});
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
		dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, NULL, NULL, NULL});
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

int
main(void)
{
	test_cancel_and_errors();
	test_alloc_failures();
	test_alloc_failures_wide();
	return unit_done();
}
