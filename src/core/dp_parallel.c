/*
 * dp_parallel.c - the core's thread pool for one pass: dp_run_parallel (declared in
 * dp_internal.h), used by GUM's visits (dp_gum_update.c), the adaptive method's exact counts and
 * scores (dp_adaptive.c) and the chunks of a big table's sub-model draw (dp_jtree_draw_chunked).
 */
#include <pthread.h>
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
