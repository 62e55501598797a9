/*
 * dp_env.h - the one contract between the core and whoever embeds it: a handler table
 * (allocation, notices, interrupt checks) installed once; the number of threads a computation
 * may use; the one progress callback a long computation is given; the one return-code
 * convention; and the failure that a core function reports with its return code, said in words.
 *
 * Pure C: no PostgreSQL headers.  Without dp_set_handlers (unit tests, fuzzers, benchmarks) the
 * core uses malloc / realloc / free, prints no notice and never checks for interrupts.  Inside
 * PostgreSQL, _PG_init installs palloc in the current memory context and CHECK_FOR_INTERRUPTS
 * (src/synth_progress.c), and the dpsynth.synthesis_threads setting sets the thread count
 * (dp_set_threads, from the setting's assign hook in src/dpsynth.c).
 *
 * THREADS.  Handlers are called on the calling thread only.  Helper threads (dp_run_parallel in
 * dp_parallel.c, used by GUM and dp_adaptive.c) must never call a handler, nor any dp_* function that
 * allocates or fails: inside PostgreSQL a handler may longjmp (palloc's out-of-memory ERROR, a
 * cancel), which is only safe on the thread that entered the core, and palloc is not thread
 * safe.  Helpers touch memory allocated before they start, and are joined before any handler
 * runs again; one that must allocate does so from an arena given it (HELPER ARENAS below), and
 * while it runs the calling thread calls no handler either.  One exception: a chunked GUM run's
 * chunk_sink (dp_gum.h) is the embedder's own code, called while helpers run; it stops and joins
 * them (dp_gum_stream_abort) before it unwinds, and before its process exits.
 *
 * LONGJMP.  alloc and interrupt may not return (PostgreSQL's ERROR): the core keeps no state
 * outside the memory it got from alloc, so unwinding past it loses nothing once the embedder
 * frees that memory (PostgreSQL: the memory context).
 */
#ifndef DP_ENV_H
#define DP_ENV_H

#include <stddef.h>
#include <stdint.h>

typedef struct dp_handlers
{
	void	   *(*alloc) (size_t n);	/* NULL on failure, or does not return */
	void	   *(*realloc_fn) (void *p, size_t n);	/* p from alloc, never NULL */
	void		(*free_fn) (void *p);	/* p from alloc, never NULL */
	void		(*notice) (const char *msg);	/* a message for the user (may be NULL) */
	void		(*interrupt) (void);	/* lets a cancel in: may not return (may be NULL) */
	/*
	 * Whether an interrupt waits that interrupt() would act on (may be NULL: never).  Must
	 * return, and must be safe to call on the calling thread while helpers run: the core reads it
	 * where it may not call interrupt() or a progress callback yet, stops its helpers when it
	 * says so, and only then calls those (dp_gum_run_chunked).
	 */
	int			(*pending) (void);
	/*
	 * Like alloc, but must return: NULL when the memory cannot be had (may be NULL: alloc is
	 * used).  The core asks it for memory it can do without (a helper's arena, dp_try_alloc),
	 * so that a failure there costs speed, not the call; the block goes to free_fn.
	 */
	void	   *(*try_alloc) (size_t n);
} dp_handlers;

/*
 * Installs the handlers (copied).  NULL, or a NULL alloc, restores the defaults; realloc and free
 * must be given with alloc.  Called once at load time: not while the core runs.
 */
void		dp_set_handlers(const dp_handlers *h);

/* n bytes (at least one), NULL on failure. */
void	   *dp_alloc(size_t n);

/*
 * n bytes (at least one) that the caller can do without: from the try_alloc handler, which
 * returns NULL rather than raising (alloc without one).  NULL on failure, with no failure
 * recorded.  Released by dp_free.
 */
void	   *dp_try_alloc(size_t n);

/* n zeroed bytes (at least one), NULL on failure. */
void	   *dp_zalloc(size_t n);

/* p grown or shrunk to n bytes (p NULL: dp_alloc), NULL on failure (p is then still valid). */
void	   *dp_realloc(void *p, size_t n);

/* Releases p; NULL is harmless. */
void		dp_free(void *p);

/* A message for the user, formatted as printf. */
void		dp_notice(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* Lets a cancel in (a long loop calls this at least every few milliseconds; a draw of a big
 * table's rows in chunks on threads, dp_jtree_draw_chunked, between its rounds of chunks: about
 * 0.1 s apart at 2^19 rows a chunk). */
void		dp_check_interrupts(void);
/* The pending handler's answer (0 without one, and on a helper thread in its arena). */
int			dp_interrupt_pending(void);

/*
 * HELPER ARENAS.  A helper thread that must run code which allocates (a whole GUM run on a chunk
 * of rows, dp_gum_run_chunked) is given an arena: a block the calling thread allocated before
 * the helper started.  Between dp_arena_enter and dp_arena_leave on that thread, dp_alloc,
 * dp_zalloc and dp_realloc take from the arena (16-byte aligned; NULL, and failed set, once it
 * is exhausted), dp_free gives a block back for the arena's later allocations, and dp_fail,
 * dp_notice and dp_check_interrupts do nothing: no handler runs on the helper.  The calling
 * thread enters an arena of its own (caller set) while its helpers run, so that no allocation
 * handler, which may not return, runs then either; there dp_interrupt_pending still asks the
 * pending handler, which must return.  Code in an arena reports failure by return code only;
 * the calling thread then does the work again itself, out of the arena.  The calling thread
 * takes an arena from dp_try_alloc (the try_alloc handler, which returns NULL rather than raise):
 * when none can be had, it does the work itself with no helper.  An arena is reserved whole, so
 * where memory is not overcommitted its whole size is committed, used or not.  Memory from an arena is
 * never given to dp_free out of it: the calling thread drops the arena as one block once its
 * helpers are joined.
 */
typedef struct dp_arena
{
	char	   *base;
	size_t		size,
				used,
				peak;			/* the most used at once */
	int			failed;			/* an allocation did not fit: the run in it is not used, whatever it returned */
	int			caller;			/* the calling thread's own, while its helpers run: dp_interrupt_pending still asks */
	void	   *free_list;		/* blocks given back, not at the end (dp_env.c) */
} dp_arena;
void		dp_arena_enter(dp_arena *a);
void		dp_arena_leave(void);

/*
 * THREAD COUNT.  How many threads (1..DP_MAX_THREADS, default 1) one computation of the core
 * may run at once: the calling thread and helpers started by dp_run_parallel (dp_parallel.c).
 * Read when a computation starts by its users: GUM (dp_gum_run: the parts its rows are cut into;
 * a small table is one part whatever the setting) and the adaptive method (dp_adaptive_run: its
 * candidates' exact counts and its rounds' scores; small jobs run on one thread), and the rows of
 * a big table's sub-model (dp_jtree_draw_chunked: its chunks, from 2^19 rows).  The rows
 * produced do not depend on it.  The embedder sets it whenever its own setting changes (not while
 * the core runs); a value outside 1..DP_MAX_THREADS is clamped into it.
 */
#define DP_MAX_THREADS 4

void		dp_set_threads(uint32_t n);

/* The thread count set (1 if dp_set_threads was never called). */
uint32_t	dp_threads(void);

/*
 * PROGRESS.  A long computation (a synthesis, a model's fit or draw, an evaluation) is given one
 * callback of this type with its argument, and calls it on the calling thread between blocks of
 * work with where it is.  A non-zero return cancels: the computation returns DP_CANCELLED.
 * Inside PostgreSQL the callback may also longjmp (a cancel), as a handler may.
 */
typedef enum dp_phase
{
	DP_PHASE_NONE = -1,			/* a computation with no phases (dp_evaluate's) */
	DP_PHASE_ONEWAY,			/* a synthesis' one-way marginals */
	DP_PHASE_SELECT,			/* its selection of marginals */
	DP_PHASE_PUBLISH,			/* its noisy marginals */
	DP_PHASE_CONSIST,			/* their consistency */
	DP_PHASE_GUM,				/* the rows: the model's fit and draw (GUM, or a maximum-entropy fit) */
	DP_PHASE_COUNT
} dp_phase;

typedef struct dp_progress
{
	dp_phase	phase;
	double		done;			/* work done: a fraction, iterations, or sweeps */
	double		total;			/* what done counts up to; 0: a heartbeat, no measure of the way */
	double		err;			/* a fit's error after an iteration (mean L1 of its targets), or -1 */
} dp_progress;

typedef int (*dp_progress_fn) (void *arg, const dp_progress *p);

/* Calls progress (NULL: none, 0) with the four fields; its return value. */
static inline int
dp_report(dp_progress_fn progress, void *arg, dp_phase phase, double done, double total, double err)
{
	dp_progress p;

	if (progress == NULL)
		return 0;
	p.phase = phase;
	p.done = done;
	p.total = total;
	p.err = err;
	return progress(arg, &p);
}

/*
 * RETURN CODES.  A core function that can fail returns an int: >= 0 on success (0, or a count
 * where its comment says so), negative on failure, so that rc < 0 always means it failed.  A
 * function given a progress callback tells the two ways of failing apart: DP_CANCELLED when the
 * callback asked to stop, DP_FAILED on invalid input or a failed allocation, with dp_fail having
 * recorded which (dp_last_error_kind) and why, in words (dp_last_error).  A function without one
 * cannot be cancelled, and returns -1 (its header says when).  A function that returns a pointer
 * returns NULL on failure; a predicate returns bool.
 */
#define DP_CANCELLED	(-1)
#define DP_FAILED		(-2)

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
