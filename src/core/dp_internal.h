/*
 * dp_internal.h - small helpers shared by the pipelines' .c files (dp_privsyn.c, dp_adaptive.c);
 * not part of the core's interface.
 */
#ifndef DP_INTERNAL_H
#define DP_INTERNAL_H

#include <stddef.h>
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

#endif
