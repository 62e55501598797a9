/*
 * dp_env.h - the one contract between the core and whoever embeds it: a handler table
 * (allocation, notices, interrupt checks) installed once, and the failure that a core function
 * reports with its return code, said in words.
 *
 * Pure C: no PostgreSQL headers.  Without dp_set_handlers (unit tests, fuzzers, benchmarks) the
 * core uses malloc / realloc / free, prints no notice and never checks for interrupts.  Inside
 * PostgreSQL, _PG_init installs palloc in the current memory context and CHECK_FOR_INTERRUPTS
 * (src/synth_progress.c).
 *
 * THREADS.  Handlers are called on the calling thread only.  Helper threads (dp_run_parallel in
 * dp_parallel.c, used by GUM and dp_adaptive.c) must never call a handler, nor any dp_* function that
 * allocates or fails: inside PostgreSQL a handler may longjmp (palloc's out-of-memory ERROR, a
 * cancel), which is only safe on the thread that entered the core, and palloc is not thread
 * safe.  Helpers touch memory allocated before they start, and are joined before any handler
 * runs again.
 *
 * LONGJMP.  alloc and interrupt may not return (PostgreSQL's ERROR): the core keeps no state
 * outside the memory it got from alloc, so unwinding past it loses nothing once the embedder
 * frees that memory (PostgreSQL: the memory context).
 */
#ifndef DP_ENV_H
#define DP_ENV_H

#include <stddef.h>

typedef struct dp_handlers
{
	void	   *(*alloc) (size_t n);	/* NULL on failure, or does not return */
	void	   *(*realloc_fn) (void *p, size_t n);	/* p from alloc, never NULL */
	void		(*free_fn) (void *p);	/* p from alloc, never NULL */
	void		(*notice) (const char *msg);	/* a message for the user (may be NULL) */
	void		(*interrupt) (void);	/* lets a cancel in: may not return (may be NULL) */
} dp_handlers;

/*
 * Installs the handlers (copied).  NULL, or a NULL alloc, restores the defaults; realloc and free
 * must be given with alloc.  Called once at load time: not while the core runs.
 */
void		dp_set_handlers(const dp_handlers *h);

/* n bytes (at least one), NULL on failure. */
void	   *dp_alloc(size_t n);

/* n zeroed bytes (at least one), NULL on failure. */
void	   *dp_zalloc(size_t n);

/* p grown or shrunk to n bytes (p NULL: dp_alloc), NULL on failure (p is then still valid). */
void	   *dp_realloc(void *p, size_t n);

/* Releases p; NULL is harmless. */
void		dp_free(void *p);

/* A message for the user, formatted as printf. */
void		dp_notice(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* Lets a cancel in (a long loop calls this at least every few milliseconds). */
void		dp_check_interrupts(void);

/* What a failure was: how the embedder should classify it (PostgreSQL: the SQLSTATE). */
typedef enum dp_error_kind
{
	DP_ERR_NONE = 0,
	DP_ERR_NOMEM,				/* an allocation failed */
	DP_ERR_INVALID,				/* the input broke a documented limit or invariant */
	DP_ERR_CANCELLED			/* a progress callback asked to stop */
} dp_error_kind;

/*
 * Records a failure where it happens, in words ("could not allocate the candidates' counts (67108864
 * bytes)"), lower case and without a final period (PostgreSQL's message style).  A failure
 * already recorded since the last dp_clear_error is kept: the innermost, most precise one wins.
 * Calling thread only (see THREADS).
 */
void		dp_fail(dp_error_kind kind, const char *fmt,...) __attribute__((format(printf, 2, 3)));

/* Forgets the recorded failure; the pipelines' entry points call it. */
void		dp_clear_error(void);

/* The recorded failure's message ("" if none) and kind (DP_ERR_NONE if none). */
const char *dp_last_error(void);
dp_error_kind dp_last_error_kind(void);

#endif
