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

static const dp_handlers defaults = {default_alloc, default_realloc, default_free, NULL, NULL};
static dp_handlers handlers = {default_alloc, default_realloc, default_free, NULL, NULL};

/* the thread count (dp_env.h, THREAD COUNT) */
static uint32_t nthreads = 1;

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
	return handlers.alloc(n ? n : 1);
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
	/* palloc's repalloc refuses NULL: the core's growth from nothing goes through alloc */
	return p ? handlers.realloc_fn(p, n ? n : 1) : dp_alloc(n);
}

void
dp_free(void *p)
{
	/* pfree refuses NULL; the core's cleanup paths free what may not have been allocated */
	if (p)
		handlers.free_fn(p);
}

void
dp_notice(const char *fmt,...)
{
	char		msg[512];
	va_list		ap;

	if (!handlers.notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	handlers.notice(msg);
}

void
dp_check_interrupts(void)
{
	if (handlers.interrupt)
		handlers.interrupt();
}

void
dp_fail(dp_error_kind kind, const char *fmt,...)
{
	va_list		ap;

	if (last_kind != DP_ERR_NONE)
		return;					/* a callee said it more precisely */
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
