/*
 * dp_env.c - the handler table and the failure slot (see dp_env.h).
 */
#include "dp_env.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *
default_alloc(size_t n)
{
	return malloc(n);
}

static void *
default_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void
default_free(void *p)
{
	free(p);
}

static const dp_handlers defaults = {default_alloc, default_realloc, default_free, NULL, NULL, NULL,
default_alloc};
static dp_handlers handlers = {default_alloc, default_realloc, default_free, NULL, NULL, NULL, default_alloc};

/* the thread count (dp_env.h, THREAD COUNT) */
static uint32_t nthreads = 1;

/*
 * A helper thread's arena (dp_env.h, HELPER ARENAS): while set on a thread, that thread's
 * dp_alloc / dp_realloc / dp_free take from it and never call a handler.
 */
static _Thread_local dp_arena *thread_arena = NULL;

/*
 * Every block of an arena starts on this boundary, after a header of this size that holds its
 * capacity (the size asked for, rounded up to the boundary).  A block given back is reused: the
 * last one by moving the arena's end back, any other through the arena's free list (its first
 * bytes link to the next), which an allocation searches first for a block that holds it without
 * wasting more than half of it.  GUM frees and allocates again columns of its rows' size, so
 * that an arena's peak stays about its run's.
 */
#define ARENA_ALIGN 16
#define ARENA_ROUND(n) (((n) + ARENA_ALIGN - 1) & ~(size_t) (ARENA_ALIGN - 1))

static void *
arena_alloc(dp_arena *a, size_t n)
{
	size_t		cap = ARENA_ROUND(n),
				need = ARENA_ALIGN + cap,
				pad;
	char	   *p,
			  **link;

	if (a->base == NULL || cap < n || need < cap)
	{
		a->failed = 1;
		return NULL;
	}
	for (link = (char **) &a->free_list; *link != NULL; link = (char **) *link)
	{
		size_t		have = *(size_t *) (*link - ARENA_ALIGN);

		if (have >= cap && have / 2 <= cap)
		{
			p = *link;
			*link = *(char **) p;
			return p;
		}
	}
	/* every block a multiple of ARENA_ALIGN: only the first is padded (base itself may not be) */
	pad = (ARENA_ALIGN - ((uintptr_t) (a->base + a->used) & (ARENA_ALIGN - 1))) & (ARENA_ALIGN - 1);
	if (a->used > a->size || a->size - a->used < pad || a->size - a->used - pad < need)
	{
		a->failed = 1;
		return NULL;
	}
	a->used += pad;
	p = a->base + a->used;
	*(size_t *) p = cap;
	a->used += need;
	if (a->used > a->peak)
		a->peak = a->used;
	return p + ARENA_ALIGN;
}

static void
arena_free(dp_arena *a, void *p)
{
	char	   *h = (char *) p - ARENA_ALIGN;

	if (h + ARENA_ALIGN + *(size_t *) h == a->base + a->used)
		a->used = (size_t) (h - a->base);
	else
	{
		*(void **) p = a->free_list;
		a->free_list = p;
	}
}

static void *
arena_realloc(dp_arena *a, void *p, size_t n)
{
	size_t		old = *(size_t *) ((char *) p - ARENA_ALIGN);
	void	   *q;

	if (ARENA_ROUND(n) <= old && n > 0)
		return p;				/* it fits where it is */
	q = arena_alloc(a, n);
	if (q)
	{
		memcpy(q, p, old < n ? old : n);
		arena_free(a, p);
	}
	return q;
}

void
dp_arena_enter(dp_arena *a)
{
	thread_arena = a;
}

void
dp_arena_leave(void)
{
	thread_arena = NULL;
}

/* one failure at a time: written on the calling thread only (dp_env.h, THREADS) */
static dp_error_kind last_kind = DP_ERR_NONE;
static char last_msg[512];

void
dp_set_handlers(const dp_handlers *h)
{
	handlers = h && h->alloc ? *h : defaults;
}

void
dp_set_threads(uint32_t n)
{
	nthreads = n < 1 ? 1 : n > DP_MAX_THREADS ? DP_MAX_THREADS : n;
}

uint32_t
dp_threads(void)
{
	return nthreads;
}

void *
dp_alloc(size_t n)
{
	if (thread_arena)
		return arena_alloc(thread_arena, n ? n : 1);
	return handlers.alloc(n ? n : 1);
}

void *
dp_try_alloc(size_t n)
{
	if (thread_arena)
		return arena_alloc(thread_arena, n ? n : 1);
	return (handlers.try_alloc ? handlers.try_alloc : handlers.alloc) (n ? n : 1);
}

void *
dp_zalloc(size_t n)
{
	void	   *p = dp_alloc(n);

	if (p)
		memset(p, 0, n ? n : 1);
	return p;
}

void *
dp_realloc(void *p, size_t n)
{
	if (thread_arena)
		return p ? arena_realloc(thread_arena, p, n ? n : 1) : dp_alloc(n);
	/* palloc's repalloc refuses NULL: the core's growth from nothing goes through alloc */
	return p ? handlers.realloc_fn(p, n ? n : 1) : dp_alloc(n);
}

void
dp_free(void *p)
{
	/* pfree refuses NULL; the core's cleanup paths free what may not have been allocated */
	if (p && thread_arena)
		arena_free(thread_arena, p);
	else if (p)
		handlers.free_fn(p);
}

void
dp_notice(const char *fmt,...)
{
	char		msg[512];
	va_list		ap;

	if (!handlers.notice || thread_arena)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	handlers.notice(msg);
}

void
dp_check_interrupts(void)
{
	if (handlers.interrupt && !thread_arena)
		handlers.interrupt();
}

int
dp_interrupt_pending(void)
{
	return handlers.pending && (!thread_arena || thread_arena->caller) ? handlers.pending() : 0;
}

void
dp_fail(dp_error_kind kind, const char *fmt,...)
{
	va_list		ap;

	if (thread_arena || last_kind != DP_ERR_NONE)
		return;					/* a helper says nothing (and reads no shared state); a callee
								 * said it more precisely */
	last_kind = kind;
	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
}

void
dp_clear_error(void)
{
	last_kind = DP_ERR_NONE;
	last_msg[0] = '\0';
}

const char *
dp_last_error(void)
{
	return last_msg;
}

dp_error_kind
dp_last_error_kind(void)
{
	return last_kind;
}
