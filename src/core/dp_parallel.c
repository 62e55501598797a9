/*
 * dp_parallel.c - the core's helper threads: dp_run_parallel (declared in dp_internal.h), used by
 * GUM's visits (dp_gum_update.c) and the adaptive method's exact counts and scores
 * (dp_adaptive.c), and the pool that keeps the helpers alive from one dp_run_parallel to the next
 * (dp_pool_open / dp_pool_close).
 *
 * Why a pool.  A thread's start and join cost 60-110 microseconds on a shared 2-core machine; a
 * pass of GUM over a round's estimate (8,192 or 16,384 rows) costs about as much, so a thread per
 * pass would eat what it saves.  Inside an open pool the helpers wait for the next pass instead
 * of ending: first spinning for a short while (the serial work between two passes of one visit is
 * shorter than a thread's wake-up), then asleep on a condition variable.
 *
 * Safety, the same guarantees as a thread per pass.  A helper runs pure computation on memory
 * allocated beforehand, with every signal blocked; it never calls a handler nor a progress
 * callback.  No helper is alive while a handler or a progress callback runs: dp_alloc,
 * dp_realloc, dp_free, dp_notice, dp_check_interrupts (dp_env.c) and dp_report (dp_env.h) close
 * the pool first, joining its helpers.  Inside PostgreSQL those are the only ways out of the
 * core by longjmp (an ERROR, a cancel), so no helper survives a cancel, and none touches memory
 * that an aborted transaction frees.  A pool closed that way stays closed (later passes start
 * threads of their own, as without a pool) until its owner opens it again, so an owner that never
 * gets control back (the longjmp) leaves nothing open; an owner that does closes it before it
 * returns.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "dp_env.h"
#include "dp_internal.h"

/* how long a helper, or the caller, spins before it sleeps (seconds) */
#ifndef POOL_SPIN_SECONDS
#define POOL_SPIN_SECONDS 50e-6
#endif

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * The pool: one per process (the core runs on the thread that entered it; helpers never open
 * one).  A pass's jobs 1..T-1 are claimed one at a time by the helpers and by the caller, once it
 * has done job 0: a helper that wakes late (the machine's other core busy) leaves its job to the
 * caller instead of making it wait.  A claim is a compare-and-swap of ticket, which holds the
 * pass's T and its next job: a job is claimed only from the pass that is current, and that pass's
 * fields (fn, arg, argsize), written before its ticket, stay as they are until the claimed job is
 * done (the caller waits for pending to reach zero before the next pass).
 */
static struct
{
	pthread_mutex_t mu;
	pthread_cond_t wake;		/* helpers asleep: a new pass, or stop */
	pthread_cond_t done;		/* the caller asleep: the pass's last job finished */
	pthread_t	th[DP_MAX_THREADS];
	uint32_t	nhelpers;		/* helpers alive: ids 1..nhelpers */
	bool		open;			/* dp_run_parallel may start helpers that outlive it */
	void	   *(*fn) (void *);
	char	   *arg;
	size_t		argsize;
	atomic_uint_fast64_t gen;	/* passes published (and the stop) */
	atomic_uint_fast64_t ticket;	/* (T << 32) | the pass's next job to claim */
	atomic_uint pending;		/* the pass's jobs past 0 not finished (or helpers not started) */
	atomic_uint sleepers;		/* helpers asleep on wake */
	atomic_uint caller_asleep;	/* the caller asleep on done */
	atomic_bool stop;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* Spins until gen differs from old, or the spin's time is up; whether it changed. */
static bool
spin_gen_change(uint64_t old)
{
	double		t0 = dp_now();

	for (uint32_t i = 1;; i++)
	{
		if (atomic_load(&pool.gen) != old)
			return true;
		cpu_relax();
		if ((i & 63) == 0 && dp_now() - t0 > POOL_SPIN_SECONDS)
			return false;
	}
}

static bool
spin_pending_zero(void)
{
	double		t0 = dp_now();

	for (uint32_t i = 1;; i++)
	{
		if (atomic_load(&pool.pending) == 0)
			return true;
		cpu_relax();
		if ((i & 63) == 0 && dp_now() - t0 > POOL_SPIN_SECONDS)
			return false;
	}
}

/* One count of pending down; the last one wakes the caller if it sleeps. */
static void
count_down(void)
{
	if (atomic_fetch_sub(&pool.pending, 1) == 1 && atomic_load(&pool.caller_asleep))
	{
		pthread_mutex_lock(&pool.mu);
		pthread_cond_signal(&pool.done);
		pthread_mutex_unlock(&pool.mu);
	}
}

/* Claims and runs the pass's jobs until none is left (the helpers and the caller alike). */
static void
run_claimed(void)
{
	uint64_t	t = atomic_load(&pool.ticket);

	while ((uint32_t) t < (uint32_t) (t >> 32))
	{
		if (atomic_compare_exchange_weak(&pool.ticket, &t, t + 1))
		{
			pool.fn(pool.arg + (uint32_t) t * pool.argsize);
			count_down();
			t = atomic_load(&pool.ticket);
		}
	}
}

/* A helper: waits for passes (gen past the one it was started at) until stop. */
static void *
helper_main(void *unused)
{
	uint64_t	seen = atomic_load(&pool.gen);

	(void) unused;
	/*
	 * seen is read after the thread starts, but dp_run_parallel publishes a pass only after every
	 * new helper has counted its start down, so none is missed.
	 */
	count_down();
	for (;;)
	{
		if (!spin_gen_change(seen))
		{
			pthread_mutex_lock(&pool.mu);
			atomic_fetch_add(&pool.sleepers, 1);
			while (atomic_load(&pool.gen) == seen)
				pthread_cond_wait(&pool.wake, &pool.mu);
			atomic_fetch_sub(&pool.sleepers, 1);
			pthread_mutex_unlock(&pool.mu);
		}
		seen = atomic_load(&pool.gen);
		if (atomic_load(&pool.stop))
			break;
		run_claimed();
	}
	return NULL;
}

/* Bumps gen (a pass or the stop) and wakes the helpers asleep. */
static void
publish(void)
{
	atomic_fetch_add(&pool.gen, 1);
	if (atomic_load(&pool.sleepers) > 0)
	{
		pthread_mutex_lock(&pool.mu);
		pthread_cond_broadcast(&pool.wake);
		pthread_mutex_unlock(&pool.mu);
	}
}

/* Waits until pending is zero. */
static void
wait_pending(void)
{
	if (spin_pending_zero())
		return;
	pthread_mutex_lock(&pool.mu);
	atomic_store(&pool.caller_asleep, 1);
	while (atomic_load(&pool.pending) != 0)
		pthread_cond_wait(&pool.done, &pool.mu);
	atomic_store(&pool.caller_asleep, 0);
	pthread_mutex_unlock(&pool.mu);
}

/*
 * Starts helpers up to id want - 1 (with every signal blocked) and waits until each new one runs;
 * returns the helpers alive (fewer when a thread cannot be started).
 */
static uint32_t
start_helpers(uint32_t want)
{
	sigset_t	all,
				saved;
	uint32_t	first = pool.nhelpers + 1,
				started = 0;

	if (want <= first)
		return pool.nhelpers;
	atomic_store(&pool.ticket, 0);	/* no job to claim while they start */
	atomic_store(&pool.pending, want - first);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (uint32_t h = first; h < want; h++)
	{
		if (pthread_create(&pool.th[h], NULL, helper_main, NULL) != 0)
			break;
		pool.nhelpers = h;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	/* the ones not started will never count down */
	atomic_fetch_sub(&pool.pending, (want - first) - started);
	wait_pending();
	return pool.nhelpers;
}

void
dp_pool_open(void)
{
	pool.open = true;
}

void
dp_pool_close(void)
{
	pool.open = false;
	if (pool.nhelpers == 0)
		return;
	atomic_store(&pool.stop, true);
	publish();
	for (uint32_t h = 1; h <= pool.nhelpers; h++)
		pthread_join(pool.th[h], NULL);
	pool.nhelpers = 0;
	atomic_store(&pool.stop, false);
}

uint32_t
dp_pool_helpers(void)
{
	return pool.nhelpers;
}

/* One pass with a thread per job past the first, joined before it returns. */
static void
run_threads(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T)
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

/*
 * Runs fn(arg + i * argsize) for i = 0..T-1: i = 0 in this thread, the others on helper threads
 * or here, all done before it returns.  With the pool open, the helpers are the pool's (started
 * at the first pass that needs them, kept for the next), and a job no helper has claimed when this
 * thread is done with its own is done here; with the pool closed, threads of this call (one per
 * job past the first, at most DP_MAX_THREADS in all), joined before it returns, and a job whose
 * thread cannot be started is done here.  The work of each i is independent of the others, and of
 * which thread does it.
 */
void
dp_run_parallel(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T)
{
	uint32_t	nthreads = T < DP_MAX_THREADS ? T : DP_MAX_THREADS;

	if (nthreads <= 1)
	{
		for (uint32_t t = 0; t < T; t++)
			fn((char *) arg + t * argsize);
		return;
	}
	if (!pool.open || start_helpers(nthreads) == 0)
	{
		run_threads(fn, arg, argsize, T);
		return;
	}
	pool.fn = fn;
	pool.arg = arg;
	pool.argsize = argsize;
	atomic_store(&pool.pending, T - 1);
	atomic_store(&pool.ticket, ((uint64_t) T << 32) | 1);
	publish();
	fn(arg);
	run_claimed();
	wait_pending();
}
