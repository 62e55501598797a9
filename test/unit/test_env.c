/*
 * test_env.c - unit tests of the contract between the core and its embedder (src/core/dp_env.c):
 * one handler table, installed once, through which every allocation of a synthesis goes, and
 * failures that say what failed.
 *
 * - with counting handlers installed, dp_privsyn_run and dp_adaptive_run on a small table
 *   allocate through them only, and dp_privsyn_result_free returns every block (nothing else is
 *   left: the consistency step's scratch, once plain malloc, is counted too);
 * - the interrupt handler is called during a run (PostgreSQL's CHECK_FOR_INTERRUPTS goes there);
 * - an allocator that fails at the k-th allocation, for every k a run makes: the run returns -2,
 *   dp_last_error_kind() is DP_ERR_NOMEM, dp_last_error() names what could not be allocated, and
 *   every block allocated before the failure has been freed;
 * - an invalid input is an invalid-input error with a message; notices reach the notice handler;
 *   dp_realloc of NULL and dp_free of NULL never reach the handlers (repalloc and pfree refuse NULL).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_adaptive.h"
#include "dp_codes.h"
#include "dp_env.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "unit.h"

#define NCOLS 5
#define NROWS 3000

static const uint32_t sizes[NCOLS] = {3, 5, 12, 4, 2};

static long live_blocks = 0,
			nallocs = 0,
			interrupts = 0,
			null_calls = 0,
			fail_after = -1;	/* allocations left before failing; -1: never */
static bool injected = false;	/* an allocation was failed on purpose */
static char last_notice[128];

static void *
t_alloc(size_t n)
{
	void	   *p;

	if (fail_after == 0)
	{
		injected = true;
		return NULL;
	}
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

static void *
t_realloc(void *p, size_t n)
{
	if (p == NULL)
		null_calls++;
	if (fail_after == 0)
	{
		injected = true;
		return NULL;
	}
	if (fail_after > 0)
		fail_after--;
	return realloc(p, n);
}

static void
t_free(void *p)
{
	if (p == NULL)
		null_calls++;
	live_blocks--;
	free(p);
}

static void
t_notice(const char *msg)
{
	snprintf(last_notice, sizeof(last_notice), "%s", msg);
}

static void
t_interrupt(void)
{
	interrupts++;
}

static const dp_handlers counting = {t_alloc, t_realloc, t_free, t_notice, t_interrupt, NULL, NULL};

/* dependent columns, with rare values in column 2 (so that the rare-value merge has work) */
static void
make_table(dp_codes *t)
{
	dp_prng		p;
	uint16_t	row[NCOLS];

	dp_prng_seed(&p, 11);
	dp_codes_init(t, NCOLS, NROWS);
	for (uint32_t i = 0; i < NROWS; i++)
	{
		row[0] = (uint16_t) dp_prng_below(&p, 3);
		row[1] = (uint16_t) ((row[0] * 2 + dp_prng_below(&p, 2)) % 5);
		row[2] = i < 7 ? (uint16_t) (5 + i) : (uint16_t) dp_prng_below(&p, 5);
		row[3] = (uint16_t) ((row[1] + (row[2] % 2)) % 4);
		row[4] = (uint16_t) (row[0] == 2);
		dp_codes_append(t, row);
	}
}

static int
run(int method, const dp_codes *data, dp_privsyn_result *res)
{
	dp_privsyn_params p;
	dp_prng		rng;

	dp_privsyn_default_params(&p);
	p.rho = 0.5;
	p.rows = 500;
	p.gum.iterations = 10;
	dp_prng_seed(&rng, 5);
	return method == 0 ? dp_privsyn_run(data, sizes, &p, &rng, res) :
		dp_adaptive_run(data, sizes, &p, &rng, res, NULL);
}

static void
test_balanced(int method, const char *name, const dp_codes *data)
{
	dp_privsyn_result res;
	long		before = live_blocks;
	int			rc;

	nallocs = interrupts = 0;
	rc = run(method, data, &res);
	unit_check(rc == 0 && res.synth.nrows == 500 && nallocs > 0,
			   "%s through the handlers: 0, 500 rows, %ld allocations", name, nallocs);
	unit_check(interrupts > 0, "%s checks for interrupts through the handler (%ld calls)", name, interrupts);
	dp_privsyn_result_free(&res);
	unit_check(live_blocks == before, "%s: every allocation is freed once the result is (%ld left)",
			   name, live_blocks - before);
}

/*
 * The run fails at every one of its allocations in turn (a sample when there are many).  The
 * adaptive method's number of allocations depends on the noise (its rounds), so a run may end
 * before the k-th: it then succeeds, and is not counted.
 */
static void
test_failing(int method, const char *name, const dp_codes *data, long total)
{
	long		step = total > 400 ? total / 400 : 1;
	long		tried = 0,
				bad_rc = 0,
				leaks = 0,
				wrong_kind = 0,
				no_message = 0;
	char		example[256] = "";
	long		example_k = -1;

	for (long k = 0; k < total; k += step)
	{
		dp_privsyn_result res;
		long		before = live_blocks;
		int			rc;

		fail_after = k;
		injected = false;
		rc = run(method, data, &res);
		fail_after = -1;
		if (rc == 0)
			dp_privsyn_result_free(&res);
		if (!injected)
			continue;			/* the run made fewer than k + 1 allocations */
		tried++;
		if (rc != -2)
			bad_rc++;
		else
		{
			wrong_kind += dp_last_error_kind() != DP_ERR_NOMEM;
			no_message += strstr(dp_last_error(), "could not allocate") == NULL;
			if (example_k < 0 && k >= total / 2)
			{
				example_k = k;
				snprintf(example, sizeof(example), "%s", dp_last_error());
			}
		}
		leaks += live_blocks != before;
	}
	unit_check(tried > 0 && bad_rc == 0, "%s fails with -2 at each of %ld allocations tried (%ld did not)", name, tried, bad_rc);
	unit_check(wrong_kind == 0 && no_message == 0,
			   "%s: each failure is an out-of-memory error naming what could not be allocated (%ld wrong kind, %ld without)",
			   name, wrong_kind, no_message);
	unit_diag("%s, failing at allocation %ld of about %ld: \"%s\"", name, example_k, total, example);
	unit_check(leaks == 0, "%s: a failed run frees everything it allocated (%ld runs leaked)", name, leaks);
}

static void
test_misc(const dp_codes *data)
{
	dp_privsyn_result res;
	dp_privsyn_params p;
	dp_prng		rng;
	dp_codes	empty;
	void	   *q;

	dp_privsyn_default_params(&p);
	p.rho = 0;
	dp_prng_seed(&rng, 1);
	unit_check(dp_privsyn_run(data, sizes, &p, &rng, &res) == -2 && dp_last_error_kind() == DP_ERR_INVALID &&
			   strstr(dp_last_error(), "rho") != NULL,
			   "rho 0: an invalid-input error that names rho (\"%s\")", dp_last_error());
	dp_codes_init(&empty, 0, 1);
	unit_check(dp_adaptive_run(&empty, sizes, &p, &rng, &res, NULL) == -2 && dp_last_error_kind() == DP_ERR_INVALID &&
			   strstr(dp_last_error(), "column") != NULL,
			   "no column: an invalid-input error that says so (\"%s\")", dp_last_error());
	dp_clear_error();
	unit_check(dp_last_error_kind() == DP_ERR_NONE && dp_last_error()[0] == '\0', "dp_clear_error forgets the failure");
	dp_fail(DP_ERR_NOMEM, "inner %d", 1);
	dp_fail(DP_ERR_INVALID, "outer");
	unit_check(strcmp(dp_last_error(), "inner 1") == 0 && dp_last_error_kind() == DP_ERR_NOMEM,
			   "the first failure recorded (the innermost) is kept");
	dp_clear_error();

	dp_notice("%u marginals", 7u);
	unit_check(strcmp(last_notice, "7 marginals") == 0, "dp_notice reaches the notice handler, formatted");
	null_calls = 0;
	q = dp_realloc(NULL, 16);
	dp_free(q);
	dp_free(NULL);
	unit_check(q != NULL && null_calls == 0, "dp_realloc(NULL) and dp_free(NULL) never pass NULL to the handlers");
}

/*
 * The thread count is a setting of the core (dp_env.h, THREAD COUNT): 1 until set, clamped into
 * 1..DP_MAX_THREADS, and read by the adaptive method when it starts.  Every helper scoring thread
 * of dp_adaptive_run has three buffers of its own (an estimate's cells, their counts, a lane
 * buffer; thread 0 shares the rounds' own), so under the same noise (the test library's fixed
 * stream, reset before each run) a run with 3 threads makes exactly 2 * 3 allocations more than
 * one with 1.  Small jobs run on one thread, so the rows are the same.
 */
static void
test_threads(const dp_codes *data)
{
	long		allocs[2];
	dp_privsyn_result res[2];
	bool		same = true;

	unit_check(dp_threads() == 1, "the thread count is 1 until set (%u)", dp_threads());
	dp_set_threads(0);
	unit_check(dp_threads() == 1, "dp_set_threads(0) is clamped to 1 (%u)", dp_threads());
	dp_set_threads(DP_MAX_THREADS + 5);
	unit_check(dp_threads() == DP_MAX_THREADS, "dp_set_threads(DP_MAX_THREADS + 5) is clamped to %u (%u)",
			   (unsigned) DP_MAX_THREADS, dp_threads());
	for (int i = 0; i < 2; i++)
	{
		dp_set_threads(i == 0 ? 1 : 3);
		dp_random_test_seed(UNIT_TEST_SEED);
		nallocs = 0;
		unit_check(run(1, data, &res[i]) == 0, "dp_adaptive_run on %u threads", dp_threads());
		allocs[i] = nallocs;
	}
	dp_set_threads(1);
	unit_check(allocs[1] - allocs[0] == 2 * 3,
			   "dp_adaptive_run reads the thread count: 3 threads allocate 2 scorers' 3 buffers more than 1 (%ld against %ld)",
			   allocs[1], allocs[0]);
	for (uint32_t c = 0; c < NCOLS && res[0].synth.nrows == res[1].synth.nrows; c++)
		same = same && memcmp(res[0].synth.col[c], res[1].synth.col[c], sizeof(uint16_t) * res[0].synth.nrows) == 0;
	unit_check(same && res[0].synth.nrows == res[1].synth.nrows, "1 and 3 threads give the same rows under the same noise");
	dp_privsyn_result_free(&res[0]);
	dp_privsyn_result_free(&res[1]);
}

int
main(void)
{
	dp_codes	data;
	long		total_privsyn,
				total_adaptive;
	dp_privsyn_result res;

	make_table(&data);			/* malloc: the handlers below count the runs only */
	dp_set_handlers(&counting);
	test_balanced(0, "dp_privsyn_run", &data);
	total_privsyn = nallocs;
	test_balanced(1, "dp_adaptive_run", &data);
	total_adaptive = nallocs;
	test_failing(0, "dp_privsyn_run", &data, total_privsyn);
	test_failing(1, "dp_adaptive_run", &data, total_adaptive);
	test_misc(&data);
	test_threads(&data);
	dp_set_handlers(NULL);
	nallocs = 0;
	unit_check(run(0, &data, &res) == 0 && nallocs == 0, "dp_set_handlers(NULL): back to malloc");
	dp_privsyn_result_free(&res);
	dp_codes_free(&data);
	return unit_done();
}
