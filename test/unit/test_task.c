/*
 * test_task.c - dp_task (src/core/dp_parallel.c): one job on a helper thread beside the caller's
 * work, which the caller runs itself when no thread has begun it.  Whichever side runs it, the
 * job runs exactly once and is done when dp_task_wait returns; a job left to dp_task_wait
 * (no thread) runs on the caller's thread; dp_task_abandon never lets a job start after it
 * returns; dp_task_try_reap joins ended threads without waiting, dp_task_reap the rest.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dp_internal.h"
#include "unit.h"

#define ROUNDS 2000

typedef struct job
{
	int			runs;			/* atomic */
	pthread_t	ran_on;
	int			done;			/* set by the job at its end */
} job;

static void *
job_fn(void *arg)
{
	job		   *j = arg;

	j->ran_on = pthread_self();
	__atomic_add_fetch(&j->runs, 1, __ATOMIC_SEQ_CST);
	j->done = 1;
	return NULL;
}

int
main(void)
{
	static dp_task tasks[ROUNDS];
	static job	jobs[ROUNDS];
	bool		once = true,
				finished = true;
	int			here = 0;
	dp_task		t;
	job			j;

	/* no thread: the job runs in dp_task_wait, on this thread */
	memset(&j, 0, sizeof(j));
	dp_task_start(&t, job_fn, &j, false);
	unit_check(j.runs == 0, "task: a job without a thread does not run at start");
	dp_task_wait(&t);
	unit_check(j.runs == 1 && pthread_equal(j.ran_on, pthread_self()), "task: ... and runs once in dp_task_wait, on the caller's thread");
	dp_task_reap(&t);

	/* a thread each, waited for at once (the caller often claims the job) or after some work */
	for (int i = 0; i < ROUNDS; i++)
	{
		volatile double x = 0;

		dp_task_start(&tasks[i], job_fn, &jobs[i], true);
		if (i % 2)
			for (int k = 0; k < 20000; k++)
				x += k;
		dp_task_wait(&tasks[i]);
		finished &= jobs[i].done == 1;
		here += pthread_equal(jobs[i].ran_on, pthread_self()) != 0;
	}
	{
		int			left = ROUNDS;

		/* dp_task_try_reap joins the threads as they end, and never waits */
		for (int tries = 0; tries < 10000 && left > 0; tries++)
		{
			left = 0;
			for (int i = 0; i < ROUNDS; i++)
				left += !dp_task_try_reap(&tasks[i]);
			if (left > 0)
				sched_yield();
		}
		unit_check(left == 0, "task: dp_task_try_reap joined every thread (%d left)", left);
	}
	for (int i = 0; i < ROUNDS; i++)
	{
		dp_task_reap(&tasks[i]);
		once &= jobs[i].runs == 1;
	}
	unit_check(finished, "task: the job is done when dp_task_wait returns (%d rounds)", ROUNDS);
	unit_check(once, "task: each job ran exactly once, %d of %d on the caller's thread", here, ROUNDS);

	/* abandoned: the job runs at most once, never after dp_task_abandon returns */
	memset(jobs, 0, sizeof(jobs));
	{
		static int	before[ROUNDS];
		bool		same = true;
		int			ran = 0;

		for (int i = 0; i < ROUNDS; i++)
		{
			dp_task_start(&tasks[i], job_fn, &jobs[i], true);
			dp_task_abandon(&tasks[i]);
			before[i] = __atomic_load_n(&jobs[i].runs, __ATOMIC_SEQ_CST);
		}
		for (int i = 0; i < ROUNDS; i++)
		{
			dp_task_reap(&tasks[i]);
			same &= jobs[i].runs == before[i] && before[i] <= 1;
			ran += before[i];
		}
		unit_check(same, "task: an abandoned job runs at most once, and not after dp_task_abandon (%d of %d had begun)",
				   ran, ROUNDS);
	}
	return unit_done();
}
