/*
 * dp_parallel.c - the core's thread pool for one pass: dp_run_parallel (declared in
 * dp_internal.h), used by GUM's visits (dp_gum_update.c), the adaptive method's exact counts and
 * scores (dp_adaptive.c) and the chunks of a big table's sub-model draw (dp_jtree_draw_chunked).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

#include "dp_env.h"
#include "dp_internal.h"

#ifdef DPSYNTH_TEST_RNG
/* test seams (dp_internal.h): a delay before each helper takes its item; items taken back */
static unsigned long par_test_helper_delay_us = 0;
static unsigned long par_test_taken_back = 0;

void
dp_parallel_test_helper_delay(unsigned long us)
{
	par_test_helper_delay_us = us;
}

unsigned long
dp_parallel_test_taken_back(void)
{
	return __atomic_exchange_n(&par_test_taken_back, 0, __ATOMIC_RELAXED);
}
#endif

/* a helper's start: its item, run unless the calling thread took it first */
typedef struct par_item
{
	void	   *(*fn) (void *);
	void	   *arg;
	int			taken;			/* 0, then 1 for whichever thread takes the item (atomic) */
} par_item;

static bool
par_take(par_item *it)
{
	int			want = 0;

	return __atomic_compare_exchange_n(&it->taken, &want, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void *
par_helper(void *arg)
{
	par_item   *it = arg;

#ifdef DPSYNTH_TEST_RNG
	if (par_test_helper_delay_us > 0)
	{
		struct timespec ts = {par_test_helper_delay_us / 1000000, (par_test_helper_delay_us % 1000000) * 1000};

		nanosleep(&ts, NULL);
	}
#endif
	if (par_take(it))
		it->fn(it->arg);
	return NULL;
}

/*
 * Runs fn(arg + i * argsize) for i = 0..T-1: i = 0 in this thread, the others on threads of their
 * own, all joined before it returns.  A helper thread runs pure computation on memory allocated
 * beforehand, with every signal blocked; no thread outlives the call, so a cancel raised later
 * by the progress callback (a longjmp, inside PostgreSQL) never leaves one behind.  A thread
 * that cannot be started, or one past DP_MAX_THREADS, has its share done here; so does a helper's
 * item that its thread has not begun by the time this thread is done with its own (on a busy
 * machine a helper may wait for a core while this one is free: the item is taken by whichever
 * thread comes first, atomically, and the late helper finds it taken and returns).  The work of
 * each i is independent of the others, and of which thread does it.  Item 0 is always this
 * thread's.
 */
void
dp_run_parallel(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T)
{
	pthread_t	th[DP_MAX_THREADS];
	bool		started[DP_MAX_THREADS] = {false};
	par_item	items[DP_MAX_THREADS];
	uint32_t	nthreads = T < DP_MAX_THREADS ? T : DP_MAX_THREADS;

	if (nthreads > 1)
	{
		sigset_t	all,
					saved;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		for (uint32_t t = 1; t < nthreads; t++)
		{
			items[t].fn = fn;
			items[t].arg = (char *) arg + t * argsize;
			items[t].taken = 0;
			started[t] = pthread_create(&th[t], NULL, par_helper, &items[t]) == 0;
		}
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
	}
	fn(arg);
	/* the helpers' items none has begun, here */
	for (uint32_t t = 1; t < nthreads; t++)
		if (started[t] && par_take(&items[t]))
		{
#ifdef DPSYNTH_TEST_RNG
			__atomic_fetch_add(&par_test_taken_back, 1, __ATOMIC_RELAXED);
#endif
			fn(items[t].arg);
		}
	for (uint32_t t = 1; t < T; t++)
	{
		if (t < nthreads && started[t])
			pthread_join(th[t], NULL);
		else
			fn((char *) arg + t * argsize);
	}
}
