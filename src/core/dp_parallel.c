/*
 * dp_parallel.c - the core's thread pool for one pass: dp_run_parallel (declared in
 * dp_internal.h), used by GUM's visits (dp_gum_update.c), the adaptive method's exact counts and
 * scores (dp_adaptive.c) and the chunks of a big table's sub-model draw (dp_jtree_draw_chunked);
 * and dp_task, one job on a helper thread beside the caller's own work (the decoding of the next
 * chunk of synthetic rows while the caller writes the current one: dp_rowdec in dp_decode.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE			/* pthread_tryjoin_np */
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>

#include "dp_env.h"
#include "dp_internal.h"

/*
 * Runs fn(arg + i * argsize) for i = 0..T-1: i = 0 in this thread, the others on threads of their
 * own, all joined before it returns.  A helper thread runs pure computation on memory allocated
 * beforehand, with every signal blocked; no thread outlives the call, so a cancel raised later
 * by the progress callback (a longjmp, inside PostgreSQL) never leaves one behind.  A thread
 * that cannot be started, or one past DP_MAX_THREADS, has its share done here: the work of
 * each i is independent of the others, and of which thread does it.
 */
void
dp_run_parallel(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T)
{
	pthread_t	th[DP_MAX_THREADS];
	bool		started[DP_MAX_THREADS] = {false};
	uint32_t	nthreads = T < DP_MAX_THREADS ? T : DP_MAX_THREADS;

	if (nthreads > 1)
	{
		sigset_t	all,
					saved;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		for (uint32_t t = 1; t < nthreads; t++)
			started[t] = pthread_create(&th[t], NULL, fn, (char *) arg + t * argsize) == 0;
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
	}
	fn(arg);
	for (uint32_t t = 1; t < T; t++)
	{
		if (t < nthreads && started[t])
			pthread_join(th[t], NULL);
		else
			fn((char *) arg + t * argsize);
	}
}

/* a task's thread: runs the job unless the caller claimed it first */
static void *
task_thread(void *arg)
{
	dp_task    *t = arg;
	int			unclaimed = 0;

	if (__atomic_compare_exchange_n(&t->claim, &unclaimed, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
	{
		t->fn(t->arg);
		__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

void
dp_task_start(dp_task *t, void *(*fn) (void *), void *arg, bool thread)
{
	t->fn = fn;
	t->arg = arg;
	t->claim = 0;
	t->done = 0;
	t->started = false;
	if (thread)
	{
		sigset_t	all,
					saved;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		t->started = pthread_create(&t->th, NULL, task_thread, t) == 0;
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
	}
}

void
dp_task_wait(dp_task *t)
{
	int			unclaimed = 0;

	if (__atomic_compare_exchange_n(&t->claim, &unclaimed, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		t->fn(t->arg);			/* no thread began it: here (a started thread ends at once) */
	else
	{
		/*
		 * The thread runs it: wait for its end runnable (yielding), not asleep in a join, so that
		 * on a busy machine the caller goes on as soon as the job is done rather than after its
		 * own wait for a core; the thread is joined by dp_task_reap.
		 */
		while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE))
			sched_yield();
	}
}

void
dp_task_reap(dp_task *t)
{
	if (t->started)
		pthread_join(t->th, NULL);
	t->started = false;
}

bool
dp_task_try_reap(dp_task *t)
{
	if (t->started && pthread_tryjoin_np(t->th, NULL) == 0)
		t->started = false;
	return !t->started;
}

void
dp_task_abandon(dp_task *t)
{
	int			unclaimed = 0;

	(void) __atomic_compare_exchange_n(&t->claim, &unclaimed, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	dp_task_reap(t);
}
