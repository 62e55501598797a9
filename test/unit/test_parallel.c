/*
 * test_parallel.c - unit tests of the core's helper threads (src/core/dp_parallel.c): dp_run_parallel
 * with a thread per pass and inside the pool (dp_pool_open / dp_pool_close), and the pool's safety
 * rule (dp_env.h, POOL): no helper is alive while a handler or a progress callback runs.
 *
 * - many small passes (2, 3 and 4 jobs, every job writing its own slot) inside an open pool give
 *   the serial run's results, the pool's helpers are started once and kept from pass to pass;
 * - a pass with more jobs than DP_MAX_THREADS runs every job once;
 * - a progress callback that longjmps out of the core (as PostgreSQL's cancel does) finds no helper
 *   alive, and after the longjmp the process has one thread (/proc/self/task), and the next pass
 *   outside a new dp_pool_open starts no helper that outlives it;
 * - an allocation handler that longjmps (PostgreSQL's out-of-memory ERROR) likewise;
 * - a GUM run on 2 threads whose progress callback longjmps at its k-th call, for every k until a
 *   run gets through, leaves one thread each time, and the rows of a run with the pool equal the
 *   rows on one thread.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_internal.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_gum.h"

/* the threads of this process, from /proc/self/task */
static int
count_threads(void)
{
	DIR		   *d = opendir("/proc/self/task");
	struct dirent *e;
	int			n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* a job: a small sum over its own slice, written to its own slot, and the thread that ran it */
typedef struct job
{
	uint32_t	pass,
				index;
	uint64_t	out;
	pthread_t	who;
} job;

static void *
job_fn(void *arg)
{
	job		   *j = arg;
	uint64_t	s = 0;

	for (uint32_t i = 0; i < 2000 + j->index * 37; i++)
		s = s * 6364136223846793005ULL + (uint64_t) (j->pass + 1) * (i ^ j->index);
	j->out = s;
	j->who = pthread_self();
	return NULL;
}

static uint64_t
serial_value(uint32_t pass, uint32_t index)
{
	job			j = {pass, index, 0, 0};

	job_fn(&j);
	return j.out;
}

static void
test_many_small_passes(void)
{
	enum {PASSES = 20000};
	job			jobs[DP_MAX_THREADS + 3];
	bool		equal = true,
				helped = false,
				kept = true;
	int			before = count_threads(),
				during = 0;

	dp_set_threads(DP_MAX_THREADS);
	dp_pool_open();
	for (uint32_t p = 0; p < PASSES; p++)
	{
		uint32_t	T = 2 + p % (DP_MAX_THREADS - 1);

		for (uint32_t i = 0; i < T; i++)
			jobs[i] = (job) {p, i, 0, 0};
		dp_run_parallel(job_fn, jobs, sizeof(job), T);
		for (uint32_t i = 0; i < T; i++)
		{
			equal &= jobs[i].out == serial_value(p, i);
			helped |= !pthread_equal(jobs[i].who, pthread_self());
		}
		if (p == PASSES / 2)
			during = count_threads();
		/* started as the passes need them (2 jobs: one helper), then kept */
		kept &= p < DP_MAX_THREADS - 2 || dp_pool_helpers() == DP_MAX_THREADS - 1;
	}
	dp_pool_close();
	unit_check(equal, "%d passes of 2..%d small jobs in the pool: every job's result is the serial run's",
			   PASSES, DP_MAX_THREADS);
	unit_check(kept && during == before + DP_MAX_THREADS - 1,
			   "the pool's %d helpers are started once and kept from pass to pass (threads %d before, %d during)",
			   DP_MAX_THREADS - 1, before, during);
	unit_diag("a helper took some jobs: %s (the caller takes the jobs no helper has claimed)", helped ? "yes" : "no");
	unit_check(dp_pool_helpers() == 0 && count_threads() == before,
			   "dp_pool_close joins them: %d threads after, as before", count_threads());

	/* more jobs than threads, with and without the pool: each runs once, with the serial result */
	for (int pooled = 0; pooled <= 1; pooled++)
	{
		enum {T = DP_MAX_THREADS + 3};
		bool		ok = true;

		if (pooled)
			dp_pool_open();
		for (uint32_t i = 0; i < T; i++)
			jobs[i] = (job) {7, i, 0, 0};
		dp_run_parallel(job_fn, jobs, sizeof(job), T);
		for (uint32_t i = 0; i < T; i++)
			ok &= jobs[i].out == serial_value(7, i);
		dp_pool_close();
		unit_check(ok && count_threads() == before, "%d jobs on %d threads %s: every job done once, no thread left",
				   T, DP_MAX_THREADS, pooled ? "in the pool" : "with a thread per job");
	}
	dp_set_threads(1);
}

/* ---- the cancel paths: a callback or a handler that longjmps ---- */

static jmp_buf escape;
static int	helpers_seen = -1;

static int
longjmp_progress(void *arg, const dp_progress *p)
{
	(void) arg;
	(void) p;
	helpers_seen = (int) dp_pool_helpers();
	longjmp(escape, 1);
}

static bool alloc_escapes = false;

static void *
longjmp_alloc(size_t n)
{
	if (alloc_escapes)
	{
		helpers_seen = (int) dp_pool_helpers();
		longjmp(escape, 1);
	}
	return malloc(n);
}

static void *
plain_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void
plain_free(void *p)
{
	free(p);
}

/* a few passes in an open pool, so that its helpers run */
static void
some_pool_passes(void)
{
	job			jobs[2];

	dp_pool_open();
	for (uint32_t p = 0; p < 50; p++)
	{
		jobs[0] = (job) {p, 0, 0, 0};
		jobs[1] = (job) {p, 1, 0, 0};
		dp_run_parallel(job_fn, jobs, sizeof(job), 2);
	}
}

static void
test_escapes(void)
{
	int			before = count_threads(),
				after = -1;
	volatile int alive = -1;	/* set between setjmp and longjmp */
	job			jobs[2] = {{1, 0, 0, 0}, {1, 1, 0, 0}};

	dp_set_threads(2);

	/* a progress callback that longjmps */
	helpers_seen = -1;
	if (setjmp(escape) == 0)
	{
		some_pool_passes();
		alive = (int) dp_pool_helpers();
		dp_report(longjmp_progress, NULL, DP_PHASE_GUM, 1, 2, -1);
	}
	after = count_threads();
	unit_check(alive == 1 && helpers_seen == 0 && after == before,
			   "a progress callback that longjmps runs with no helper alive (%d before it, %d in it) and leaves "
			   "%d threads (%d before)", alive, helpers_seen, after, before);
	/* the pool stays closed: a pass after the longjmp starts threads of its own, joined */
	dp_run_parallel(job_fn, jobs, sizeof(job), 2);
	unit_check(dp_pool_helpers() == 0 && count_threads() == before && jobs[1].out == serial_value(1, 1),
			   "after it, a pass without dp_pool_open leaves no helper behind");

	/* an allocation handler that longjmps */
	dp_set_handlers(&(dp_handlers) {longjmp_alloc, plain_realloc, plain_free, NULL, NULL});
	helpers_seen = -1;
	alive = -1;
	if (setjmp(escape) == 0)
	{
		some_pool_passes();
		alive = (int) dp_pool_helpers();
		alloc_escapes = true;
		(void) dp_alloc(16);
	}
	alloc_escapes = false;
	dp_set_handlers(NULL);
	after = count_threads();
	unit_check(alive == 1 && helpers_seen == 0 && after == before,
			   "an allocation handler that longjmps runs with no helper alive (%d before it, %d in it) and leaves "
			   "%d threads (%d before)", alive, helpers_seen, after, before);
	dp_set_threads(1);
}

/* ---- GUM on 2 threads, cancelled by a longjmp at each progress call in turn ---- */

static int	cancel_at_call,
			calls;

static int
gum_escape(void *arg, const dp_progress *p)
{
	(void) arg;
	(void) p;
	if (++calls == cancel_at_call)
	{
		helpers_seen = (int) dp_pool_helpers();
		longjmp(escape, 1);
	}
	return 0;
}

/* an allocator that keeps its live blocks, freed all at once after a longjmp (a memory context) */
enum {MAX_LIVE = 1 << 16};
static void *live[MAX_LIVE];
static uint32_t nlive;

static void *
ctx_alloc(size_t n)
{
	void	   *p;

	if (nlive == MAX_LIVE || (p = malloc(n)) == NULL)
		return NULL;
	live[nlive++] = p;
	return p;
}

static void
ctx_forget(void *p)
{
	for (uint32_t i = nlive; i-- > 0;)
		if (live[i] == p)
		{
			live[i] = live[--nlive];
			return;
		}
}

static void *
ctx_realloc(void *p, size_t n)
{
	void	   *q = realloc(p, n);

	if (q != NULL)
	{
		ctx_forget(p);
		live[nlive++] = q;
	}
	return q;
}

static void
ctx_free(void *p)
{
	ctx_forget(p);
	free(p);
}

static void
ctx_reset(void)
{
	while (nlive > 0)
		free(live[--nlive]);
}

/*
 * One GUM run whose k-th progress call longjmps: 1 when it did, 0 when the run got through, -1 when
 * it failed.  Its blocks are freed after a longjmp as the embedder's memory context would be.
 */
static int
escape_run(int k, const dp_marg *tg, uint32_t nt, uint32_t ncols, const uint32_t *sizes, uint64_t n,
		   const dp_gum_params *prm)
{
	static dp_codes out;
	static dp_prng rng;

	dp_codes_init(&out, ncols, 0);
	dp_prng_seed(&rng, 5);
	cancel_at_call = k;
	calls = 0;
	helpers_seen = -1;
	if (setjmp(escape) != 0)
	{
		ctx_reset();
		return 1;
	}
	if (dp_gum_run(tg, nt, ncols, sizes, n, prm, &rng, &out) != 0)
		return -1;
	dp_codes_free(&out);
	return 0;
}

static void
test_gum_cancels(void)
{
	enum {W = 6};
	const uint64_t n = 6000;
	uint32_t	sizes[W] = {3, 5, 4, 7, 2, 6};
	dp_marg		tg[3 * W];
	uint32_t	nt = 0;
	dp_codes	src,
				one,
				two;
	dp_prng		rng;
	dp_gum_params prm;
	int			before = count_threads(),
				runs = 0;
	bool		clean = true,
				got_through = false;

	make_source(&src, W, sizes, n, 11);
	/* pairs (j-1, j) and (j-2, j): no leaf to peel, so every column is iterated */
	for (uint32_t j = 1; j < W; j++)
		for (uint32_t back = 1; back <= 2 && back <= j; back++)
		{
			uint32_t	pr[2] = {j - back, j};

			exact_marg(&tg[nt++], &src, 2, pr, sizes);
		}
	add_one_ways(tg, &nt, &src, sizes);
	dp_gum_default_params(&prm);
	prm.iterations = 4;

	/* the rows on one thread (one part), then on two threads (two parts, the pool) */
	dp_gum_test_par_min_rows(2048);
	dp_set_threads(1);
	dp_codes_init(&one, W, 0);
	dp_prng_seed(&rng, 5);
	clean &= dp_gum_run(tg, nt, W, sizes, n, &prm, &rng, &one) == 0;
	dp_set_threads(2);
	dp_codes_init(&two, W, 0);
	dp_prng_seed(&rng, 5);
	clean &= dp_gum_run(tg, nt, W, sizes, n, &prm, &rng, &two) == 0;
	clean &= one.nrows == two.nrows;
	for (uint32_t j = 0; j < W && clean; j++)
		clean &= memcmp(one.col[j], two.col[j], sizeof(uint16_t) * one.nrows) == 0;
	unit_check(clean, "GUM on 2 threads with the pool draws the rows it draws on 1 thread (%llu rows)",
			   (unsigned long long) one.nrows);
	dp_codes_free(&one);
	dp_codes_free(&two);

	/* a longjmp out of the k-th progress call, for every k until a run gets through */
	clean = true;
	prm.progress = gum_escape;
	dp_set_handlers(&(dp_handlers) {ctx_alloc, ctx_realloc, ctx_free, NULL, NULL});
	for (int k = 1; k < 2000 && !got_through; k++)
	{
		int			rc = escape_run(k, tg, nt, W, sizes, n, &prm);

		got_through = rc == 0;
		runs += rc == 1;
		if (!(rc >= 0 && count_threads() == before && (got_through || helpers_seen == 0)))
		{
			unit_diag("call %d: rc %d, %d threads, %d helpers in the callback", k, rc, count_threads(), helpers_seen);
			clean = false;
		}
	}
	dp_set_handlers(NULL);
	unit_check(clean && got_through && runs > 20,
			   "GUM on 2 threads cancelled by a longjmp at each of its %d progress calls in turn: no helper alive "
			   "in the callback, %d threads after each (as before)", runs, before);
	dp_gum_test_par_min_rows(0);
	dp_set_threads(1);
	dp_codes_free(&src);
	free_targets(tg, nt);
}

static void *
nothing(void *arg)
{
	return arg;
}

int
main(void)
{
	pthread_t	th;

	/* a thread started and joined first: a sanitizer's own thread, if any, starts with the first */
	if (pthread_create(&th, NULL, nothing, NULL) == 0)
		pthread_join(th, NULL);
	test_many_small_passes();
	test_escapes();
	test_gum_cancels();
	return unit_done();
}
