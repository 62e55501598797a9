/*
 * test_parallel.c - dp_run_parallel (src/core/dp_parallel.c): every item runs exactly once,
 * item 0 on the calling thread, and a helper's item that its thread has not begun when the
 * calling thread is done with its own is run by the calling thread (a busy machine's helper
 * waiting for a core), the late helper then returning without running it.
 */
#include <pthread.h>
#include <string.h>

#include "dp_internal.h"
#include "unit.h"

typedef struct item
{
	int			runs;			/* times fn ran this item (atomic) */
	pthread_t	by;				/* the thread that ran it last */
	uint64_t	sum;			/* a little work, checked */
	uint32_t	i;
} item;

static void *
work(void *arg)
{
	item	   *it = arg;
	uint64_t	s = 0;

	for (uint32_t k = 0; k < 1000 + 100 * it->i; k++)
		s += (uint64_t) k * (it->i + 1);
	it->sum = s;
	it->by = pthread_self();
	__atomic_fetch_add(&it->runs, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static uint64_t
want_sum(uint32_t i)
{
	uint64_t	s = 0;

	for (uint32_t k = 0; k < 1000 + 100 * i; k++)
		s += (uint64_t) k * (i + 1);
	return s;
}

/* every item of T run once, with its sum; returns how many ran on this thread */
static int
run_once(uint32_t T, int *ok)
{
	item		its[DP_MAX_THREADS + 3];
	int			here = 0;

	memset(its, 0, sizeof(its));
	for (uint32_t i = 0; i < T; i++)
		its[i].i = i;
	dp_run_parallel(work, its, sizeof(item), T);
	*ok = 1;
	for (uint32_t i = 0; i < T; i++)
	{
		if (its[i].runs != 1 || its[i].sum != want_sum(i))
			*ok = 0;
		here += pthread_equal(its[i].by, pthread_self()) != 0;
	}
	if (!pthread_equal(its[0].by, pthread_self()))
		*ok = 0;
	return here;
}

static void
test_once(void)
{
	for (uint32_t T = 1; T <= DP_MAX_THREADS + 3; T++)
	{
		int			all = 1;

		for (int rep = 0; rep < 300; rep++)
		{
			int			ok;

			run_once(T, &ok);
			all &= ok;
		}
		unit_check(all, "T = %u: every item runs exactly once, item 0 on the calling thread (300 calls)", T);
	}
	(void) dp_parallel_test_taken_back();
}

static void
test_taken_back(void)
{
	int			ok,
				here;
	unsigned long back;

	/* helpers that wait half a second before they take their items: the calling thread is done with item 0 long before */
	dp_parallel_test_helper_delay(500000);
	(void) dp_parallel_test_taken_back();
	here = run_once(2, &ok);
	back = dp_parallel_test_taken_back();
	unit_check(ok && here == 2 && back == 1,
			   "a late helper's item runs on the calling thread, once (ran here %d of 2, taken back %lu)", here, back);
	here = run_once(DP_MAX_THREADS, &ok);
	back = dp_parallel_test_taken_back();
	unit_check(ok && here == DP_MAX_THREADS && back == DP_MAX_THREADS - 1,
			   "every late helper's item runs on the calling thread (ran here %d of %d, taken back %lu)",
			   here, DP_MAX_THREADS, back);
	dp_parallel_test_helper_delay(0);
}

int
main(void)
{
	test_once();
	test_taken_back();
	return unit_done();
}
