/*
 * dp_internal.h - small helpers shared by the pipelines' .c files (dp_privsyn.c, dp_adaptive.c);
 * not part of the core's interface.
 */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The allocation hooks a pipeline was given (inside PostgreSQL: palloc / pfree). */
typedef struct dp_ctx
{
	void	   *(*alloc) (size_t);
	void		(*free_fn) (void *);
} dp_ctx;

/* n zeroed bytes (at least one) from c's allocator, NULL on failure. */
static inline void *
dp_zalloc(const dp_ctx *c, size_t n)
{
	void	   *p = c->alloc(n ? n : 1);

	if (p)
		memset(p, 0, n ? n : 1);
	return p;
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
 * its share run here).  fn must not call back into the caller's hooks (allocation, progress:
 * inside PostgreSQL those may longjmp) and must only touch memory allocated beforehand.
 * Defined in dp_gum.c.
 */
void		dp_run_parallel(void *(*fn) (void *), void *arg, size_t argsize, uint32_t T);

#endif
