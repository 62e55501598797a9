/*
 * dp_internal.h - small helpers shared by the core's .c files (the pipelines' return codes, a qsort
 * comparison of doubles);
 * not part of the core's interface.
 */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

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

/* qsort's comparison of doubles, ascending (NaNs compare equal to everything). */
static inline int
dp_cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
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
