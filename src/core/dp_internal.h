/*
 * dp_internal.h - small helpers shared by the pipelines' .c files (dp_privsyn.c, dp_adaptive.c);
 * not part of the core's interface.
 */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dp_env.h"

/*
 * A failure recorded in words (dp_fail, dp_env.h), as the pipelines' return code: DP_FAILED for
 * an allocation failure or an invalid input, DP_CANCELLED for a cancel.  msg is a whole message.
 */
static inline int
dp_nomem(const char *msg)
{
	dp_fail(DP_ERR_NOMEM, "%s", msg);
	return DP_FAILED;
}

static inline int
dp_invalid(const char *msg)
{
	dp_fail(DP_ERR_INVALID, "%s", msg);
	return DP_FAILED;
}

static inline int
dp_cancelled(void)
{
	dp_fail(DP_ERR_CANCELLED, "the synthesis was cancelled by its progress callback");
	return DP_CANCELLED;
}

/* Monotonic seconds, for the phases' timings. */
static inline double
dp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * fn(arg + t * argsize) for t = 0..T-1: t = 0 on the calling thread, the others on helper threads
 * that block every signal and are joined before it returns (a helper that cannot be started has
 * its share run here).  fn must not call a handler (dp_env.h: allocation, notice, interrupt,
 * dp_fail) nor a progress callback: inside PostgreSQL those may longjmp, and palloc is not thread
 * safe.  fn must only touch memory allocated beforehand.  The callers take T from the thread
 * count (dp_threads(), dp_env.h), or 1 for a small job; past DP_MAX_THREADS the rest runs here.
 * Defined in dp_parallel.c.
 */
void		dp_run_parallel(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T);

/*
 * One job on a helper thread while the calling thread does other work, which the caller takes
 * back if the thread has not begun it when the caller needs it done (a thread that a busy
 * machine has not scheduled yet never makes the caller wait).  dp_task_start starts fn(arg) on a
 * thread that blocks every signal (thread false, or a thread that cannot start: the job is left
 * to dp_task_wait).  dp_task_wait returns once the job is done: it claims a job no thread has
 * begun and runs it here, else waits (runnable, yielding) for the thread to finish it.  A thread
 * that lost the claim touches nothing but its task and ends; dp_task_reap joins the task's
 * thread, whichever ran the job.
 * dp_task_abandon, for a caller unwinding from an error: claims the job if no thread has begun it
 * (then it never runs), and joins the thread.  After dp_task_reap or dp_task_abandon no thread
 * touches the task or the job's memory.  One start per task: a task is not reused.  The same rules
 * as dp_run_parallel's for fn.  Defined in dp_parallel.c.
 */
typedef struct dp_task
{
	int			claim;			/* 0 unclaimed, 1 the thread's, 2 the caller's (atomic) */
	int			done;			/* the thread has run the job (atomic) */
	bool		started;		/* a thread was started and is not joined yet */
	pthread_t	th;
	void	   *(*fn) (void *);
	void	   *arg;
} dp_task;

void		dp_task_start(dp_task *t, void *(*fn) (void *), void *arg, bool thread);
void		dp_task_wait(dp_task *t);
void		dp_task_reap(dp_task *t);
/* dp_task_reap if the task's thread has ended, without waiting; true when no thread is left. */
bool		dp_task_try_reap(dp_task *t);
void		dp_task_abandon(dp_task *t);

/* The population count of a AND b over w 64-bit words (bit sets: dp_jtree.c's cliques, the
 * adaptive method's candidates). */
static inline uint64_t
dp_popcount_and(const uint64_t *a, const uint64_t *b, uint64_t w)
{
	uint64_t	n = 0;

	for (uint64_t i = 0; i < w; i++)
		n += (uint64_t) __builtin_popcountll(a[i] & b[i]);
	return n;
}

#endif
