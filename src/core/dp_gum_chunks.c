/*
 * dp_gum_chunks.c - GUM warm from a table's rows in independent chunks (dp_gum.h,
 * dp_gum_run_chunked), and the chunks' shares of the exact one-way counts (dp_gum_chunk_counts).
 *
 * Why chunks: one GUM run over all the rows on two threads forks and joins its helper for every
 * pass over the rows and does the work between passes (the visits' plans, the sorts, the pool's
 * shuffle) on the calling thread alone.  Chunks that are GUM runs of their own need no
 * synchronisation: each thread does its own serial work.  Each chunk fits the targets scaled to
 * its rows, so the chunks together fit them scaled to the whole; each chunk's exact one-way counts
 * are its share of the whole's (dp_gum_chunk_counts), so the whole's one-way counts are those one
 * run over all the rows would set.
 */
#include "dp_gum.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "dp_internal.h"

/* a code's remainder, for the largest-remainder order (remainder descending, code ascending) */
typedef struct rem_code
{
	uint64_t	rem;
	uint32_t	code;
} rem_code;

static int
cmp_rem_desc(const void *a, const void *b)
{
	const rem_code *x = a,
			   *y = b;

	if (x->rem != y->rem)
		return x->rem < y->rem ? 1 : -1;
	return (x->code > y->code) - (x->code < y->code);
}

int
dp_gum_chunk_next(uint64_t *left, uint32_t m, uint64_t rows_left, uint64_t nj, uint32_t *out)
{
	rem_code   *ord;
	uint64_t	given = 0,
				extra;
	uint32_t	nord = 0;

	if (m == 0 || nj == 0 || nj > rows_left || rows_left >= ((uint64_t) 1 << 32))
	{
		dp_fail(DP_ERR_INVALID, "a chunk of %llu rows of %llu left over %u codes does not fit",
				(unsigned long long) nj, (unsigned long long) rows_left, m);
		return -2;
	}
	ord = dp_alloc(sizeof(rem_code) * m);
	if (ord == NULL)
		return dp_nomem("could not allocate the chunk's one-way shares");
	for (uint32_t v = 0; v < m; v++)
	{
		/* left[v] * nj < 2^64: both below 2^32 */
		uint64_t	x = left[v] * nj;

		out[v] = (uint32_t) (x / rows_left);
		given += out[v];
		if (x % rows_left > 0)
		{
			ord[nord].rem = x % rows_left;
			ord[nord++].code = v;
		}
	}
	/* extra < the codes with a positive remainder: the remainders sum to extra * rows_left */
	extra = nj - given;
	if (extra > 0)
	{
		/* the extra rows to the largest remainders, ties to the lower code */
		qsort(ord, nord, sizeof(rem_code), cmp_rem_desc);
		for (uint64_t e = 0; e < extra && e < nord; e++)
			out[ord[e].code]++;
	}
	for (uint32_t v = 0; v < m; v++)
		left[v] -= out[v];
	dp_free(ord);
	return 0;
}

int
dp_gum_chunk_counts(const uint32_t *whole_counts, uint32_t m, uint64_t whole, uint64_t chunk,
					uint32_t index, uint32_t *out)
{
	uint64_t   *left,
				rows_left = whole,
				sum = 0;
	int			rc = 0;

	if (m == 0 || chunk == 0 || (uint64_t) index * chunk >= whole || whole >= ((uint64_t) 1 << 32))
	{
		dp_fail(DP_ERR_INVALID, "chunk %u of %llu rows of a table of %llu rows over %u codes does not exist",
				index, (unsigned long long) chunk, (unsigned long long) whole, m);
		return -2;
	}
	for (uint32_t v = 0; v < m; v++)
		sum += whole_counts[v];
	if (sum != whole)
	{
		dp_fail(DP_ERR_INVALID, "the one-way counts sum to %llu, not to the table's %llu rows",
				(unsigned long long) sum, (unsigned long long) whole);
		return -2;
	}
	left = dp_alloc(sizeof(uint64_t) * m);
	if (left == NULL)
		return dp_nomem("could not allocate the chunks' one-way counts left");
	for (uint32_t v = 0; v < m; v++)
		left[v] = whole_counts[v];
	for (uint32_t j = 0; j <= index && rc == 0; j++)
	{
		uint64_t	nj = rows_left < chunk ? rows_left : chunk;

		rc = dp_gum_chunk_next(left, m, rows_left, nj, out);
		rows_left -= nj;
	}
	dp_free(left);
	return rc;
}

/*
 * A chunk's progress: each iteration's mean L1 error recorded (err[t - 1] for iteration t; the
 * calling thread reports them once every chunk has run); heartbeats passed on to the caller's
 * callback when `forward` (the calling thread, no helper running).  Otherwise the round's stop
 * flag: the calling thread raises it when an interrupt waits (dp_interrupt_pending, which never
 * calls the embedder's interrupt handler), and every chunk of the round stops at its next report
 * once it is raised (GUM returns -1), so that the calling thread can join its helpers and let the
 * interrupt in about one pass over a chunk's rows after it came.  Pure C: safe on a helper.
 */
typedef struct chunk_log
{
	const dp_gum_params *prm;
	bool		forward;
	int		   *stop;			/* the round's, read and raised atomically */
	uint32_t	cap,
				n;
	double	   *err;
} chunk_log;

static int
chunk_progress(void *arg, const dp_progress *p)
{
	chunk_log  *l = arg;

	if (p->err >= 0)
	{
		uint32_t	t = p->done >= 1 && p->done <= l->cap ? (uint32_t) p->done : 0;

		if (t > 0)
		{
			l->err[t - 1] = p->err;
			if (t > l->n)
				l->n = t;
		}
	}
	else if (l->forward)
		return dp_report(l->prm->progress, l->prm->progress_arg, p->phase, p->done, p->total, -1);
	if (l->forward)
		return 0;
	if (dp_interrupt_pending())	/* 0 on a helper */
		__atomic_store_n(l->stop, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(l->stop, __ATOMIC_SEQ_CST);
}

/* One chunk's run: from an arena (on a helper, or the calling thread while helpers run), or not. */
typedef struct chunk_run
{
	const dp_marg *targets;
	uint32_t	ntargets,
				ncols;
	const uint32_t *sizes;
	const dp_codes *start;
	uint64_t	n,
				chunk,
				seed;
	uint32_t	index;
	const uint32_t *const *counts;	/* with one_way_exact: the chunk's share of every column's */
	const dp_gum_params *prm;
	dp_arena	arena;
	uint16_t  **view;			/* the start's columns at the chunk's first row */
	dp_codes	out;
	chunk_log	log;
	dp_prng		rng;			/* the chunk's generator: GUM's, then chunk_post's */
	bool		on_arena;		/* out is arena memory (the calling thread never frees it) */
	int			rc;
} chunk_run;

static int
run_one(chunk_run *c, bool with_progress)
{
	uint64_t	b = (uint64_t) c->index * c->chunk,
				rows = c->n - b < c->chunk ? c->n - b : c->chunk;
	dp_codes	view;
	dp_gum_params g = *c->prm;

	memset(&c->out, 0, sizeof(c->out));
	c->view = dp_alloc(sizeof(uint16_t *) * c->ncols);
	if (c->view == NULL)
		return -2;
	for (uint32_t j = 0; j < c->ncols; j++)
		c->view[j] = c->start->col[j] + b;
	view.ncols = c->ncols;
	view.nrows = view.cap = rows;
	view.col = c->view;
	g.start = &view;
	g.threads = 1;
	g.chunk_counts = c->counts;
	g.independent_chunk = 0;
	c->log.prm = c->prm;
	c->log.forward = with_progress;
	c->log.n = 0;
	g.progress = chunk_progress;
	g.progress_arg = &c->log;
	g.chunk_post = NULL;
	g.chunk_sink = NULL;
	dp_prng_seed(&c->rng, c->seed);
	if (dp_codes_init(&c->out, c->ncols, rows) != 0)
		return -2;
	return dp_gum_run(c->targets, c->ntargets, c->ncols, c->sizes, rows, &g, &c->rng, &c->out);
}

#ifdef DPSYNTH_TEST_RNG
static int test_arena_tolerates = 0;	/* dp_gum.h's seam */

void
dp_gum_test_arena_tolerates(int on)
{
	test_arena_tolerates = on;
}
#endif

/*
 * A chunk's run in its arena (a helper's, or the calling thread's while helpers run).  A run
 * whose arena refused an allocation is not used even if it returned 0 (dp_env.h, HELPER
 * ARENAS): code that got by without the memory might have drawn other rows than with it, so the
 * chunk runs again out of the arena.
 */
static void
run_in_arena(chunk_run *c)
{
	dp_arena_enter(&c->arena);
	c->rc = run_one(c, false);
	dp_arena_leave();
	c->on_arena = true;
#ifdef DPSYNTH_TEST_RNG
	if (test_arena_tolerates && c->rc == 0 && c->out.nrows > 0)
	{
		c->out.col[0][0] ^= 1;
		c->arena.failed = 1;
	}
#endif
	if (c->arena.failed && c->rc == 0)
		c->rc = -2;
}

/* dp_run_parallel's item: one chunk of the round to run in its arena */
typedef struct chunk_job
{
	chunk_run  *c;
} chunk_job;

static void *
chunk_job_run(void *arg)
{
	run_in_arena(((chunk_job *) arg)->c);
	return NULL;
}

/*
 * The round's chunks marked in todo[], each in its arena, on the call's threads (dp_run_parallel:
 * the first on the calling thread, whose arena asks dp_interrupt_pending; a thread that cannot
 * be started has its chunk run here, in its arena too).  No handler and no callback runs until
 * every one is joined.
 */
static void
round_parallel(chunk_run *runs, uint32_t cnt, const bool *todo)
{
	chunk_job	jobs[DP_MAX_THREADS];
	uint32_t	k = 0;

	for (uint32_t t = 0; t < cnt; t++)
		if (todo[t])
		{
			runs[t].arena.caller = k == 0;
			jobs[k++].c = &runs[t];
		}
	dp_run_parallel(chunk_job_run, jobs, sizeof(chunk_job), k);
}

/* A stopped chunk's arena emptied for its run again (its rows were arena memory). */
static void
arena_reset(chunk_run *c)
{
	c->arena.used = 0;
	c->arena.free_list = NULL;
	c->arena.failed = 0;
	memset(&c->out, 0, sizeof(c->out));
	c->view = NULL;
	c->on_arena = false;
}

/* a round an interrupt stopped this many times runs its stopped chunks on the calling thread */
#define CHUNK_STOPS 2

#ifdef DPSYNTH_TEST_RNG
static unsigned long test_serial_runs = 0;

unsigned long
dp_gum_test_serial_runs(void)
{
	unsigned long r = test_serial_runs;

	test_serial_runs = 0;
	return r;
}
#endif

/* What the calling thread frees of a chunk's run (an arena's blocks go with the arena). */
static void
chunk_release(chunk_run *c)
{
	if (!c->on_arena)
	{
		dp_codes_free(&c->out);
		dp_free(c->view);
	}
	dp_free(c->arena.base);
	memset(&c->arena, 0, sizeof(c->arena));
	memset(&c->out, 0, sizeof(c->out));
	c->view = NULL;
	c->on_arena = false;
}

/*
 * A helper's arena for a chunk of `rows` rows: GUM's work memory as dp_gum.h counts it (17 bytes
 * a row, and 4 for a visit's kept cells unless counting is incremental, which keeps none (auto
 * counting keeps them in a grouped layout, decided inside the run, so it is counted); 2 bytes
 * a row per column for the working and best tables, taken as 4 on purpose as headroom, and 2 for
 * the output's; 12 a cell of every target plus its counts), doubled: the arena reuses a block
 * given back only where a later one fits it.  Pages never touched are never resident, but
 * under strict overcommit the whole arena is commit charge (dp_try_alloc: when it cannot be had,
 * no helpers that round); one too small costs a run of its chunk again on the calling thread.
 */
static size_t
arena_bytes(const dp_marg *targets, uint32_t ntargets, uint32_t ncols, uint64_t rows, int counting)
{
	double		cells = 0,
				per_row = 17.0 + 6.0 * ncols + (counting == DP_GUM_COUNT_INCREMENTAL ? 0.0 : 4.0),
				b;

	for (uint32_t i = 0; i < ntargets; i++)
		cells += (double) targets[i].ncells;
	b = 2.0 * ((double) rows * per_row + 12.0 * cells) + (double) (4u << 20);
	return b < (double) SIZE_MAX / 2 ? (size_t) b : SIZE_MAX / 2;
}

#ifdef DPSYNTH_TEST_RNG
static size_t test_arena_bytes = 0;	/* dp_gum.h's seam; 0: arena_bytes */

void
dp_gum_test_arena_bytes(size_t bytes)
{
	test_arena_bytes = bytes;
}
size_t
dp_gum_test_arena_size(const dp_marg *targets, uint32_t ntargets, uint32_t ncols, uint64_t rows, int counting)
{
	return arena_bytes(targets, ntargets, ncols, rows, counting);
}
#define ARENA_BYTES(t, nt, d, rows, cnt) (test_arena_bytes ? test_arena_bytes : arena_bytes(t, nt, d, rows, cnt))
#else
#define ARENA_BYTES(t, nt, d, rows, cnt) arena_bytes(t, nt, d, rows, cnt)
#endif

/* A chunked run's state (dp_gum_run_chunked), shared by its stages below. */
typedef struct chunked
{
	const dp_marg *targets;
	const uint32_t *sizes;
	const dp_gum_params *prm;
	uint32_t	ntargets,
				ncols,
				nthreads,
				iters,
				nlog;			/* the most iterations a chunk logged */
	uint64_t	n,
				chunk,
				nchunks,
				rows_left;		/* the rows of the chunks whose shares are not taken yet */
	uint64_t   *seeds,			/* every chunk's generator's, drawn in chunk order */
			   *left;			/* with one_way_exact: every column's codes' counts not yet given */
	uint32_t   *shares;			/* the round's chunks' shares: nthreads x codes */
	const uint32_t **sharep;	/* the same, a pointer a column: nthreads x ncols */
	size_t		codes;			/* the columns' codes together */
	double	   *errs,			/* each iteration's error summed over the chunks, weighted by rows */
			   *wsum;
	int			stop;			/* the round's stop flag (chunk_log) */
	chunk_run	runs[DP_MAX_THREADS];
} chunked;

/*
 * Every chunk's generator seeded first, in chunk order (the rows do not depend on the threads);
 * with one_way_exact, the whole's exact one-way counts, once (each chunk's share is taken on this
 * thread before its round: O(codes log codes) a column and chunk).  Returns 0 or -2.
 */
static int
chunked_begin(chunked *k, dp_prng *rng)
{
	k->seeds = dp_alloc(sizeof(uint64_t) * k->nchunks);
	k->errs = dp_zalloc(sizeof(double) * (k->iters + 1));
	k->wsum = dp_zalloc(sizeof(double) * (k->iters + 1));
	if (k->seeds == NULL || k->errs == NULL || k->wsum == NULL)
		return dp_nomem("could not allocate GUM's chunks' seeds");
	for (uint64_t j = 0; j < k->nchunks; j++)
		k->seeds[j] = dp_prng_next(rng);
	if (!k->prm->one_way_exact)
		return 0;
	for (uint32_t c = 0; c < k->ncols; c++)
		k->codes += k->sizes[c];
	k->left = dp_alloc(sizeof(uint64_t) * k->codes);
	k->shares = dp_alloc(sizeof(uint32_t) * k->codes * k->nthreads);
	k->sharep = dp_alloc(sizeof(uint32_t *) * (size_t) k->ncols * k->nthreads);
	if (k->left == NULL || k->shares == NULL || k->sharep == NULL)
		return dp_nomem("could not allocate GUM's chunks' one-way counts");
	for (uint32_t c = 0, off = 0; c < k->ncols; off += k->sizes[c], c++)
	{
		if (dp_gum_one_way_counts(k->targets, k->ntargets, c, k->sizes[c], k->n, k->shares) != 0)
			return -2;
		for (uint32_t v = 0; v < k->sizes[c]; v++)
			k->left[off + v] = k->shares[v];
	}
	return 0;
}

/*
 * Round chunk t's run set up: its fields, its shares of the one-way counts (the next chunk's), its
 * log, and with helpers (cnt > 1) its arena (*par false when one cannot be had: no helpers this
 * round).  Returns 0 or -2.
 */
static int
round_setup(chunked *k, uint64_t r0, uint32_t t, uint32_t cnt, bool *par)
{
	chunk_run  *c = &k->runs[t];
	uint64_t	rows = k->n - (r0 + t) * k->chunk < k->chunk ? k->n - (r0 + t) * k->chunk : k->chunk;

	c->targets = k->targets;
	c->ntargets = k->ntargets;
	c->ncols = k->ncols;
	c->sizes = k->sizes;
	c->start = k->prm->start;
	c->n = k->n;
	c->chunk = k->chunk;
	c->index = (uint32_t) (r0 + t);
	c->seed = k->seeds[r0 + t];
	c->prm = k->prm;
	c->counts = NULL;
	c->rc = -2;
	c->log.cap = k->iters;
	c->log.stop = &k->stop;
	c->log.err = dp_zalloc(sizeof(double) * (k->iters + 1));
	if (c->log.err == NULL)
		return dp_nomem("could not allocate GUM's chunks' logs");
	if (k->left != NULL)
	{
		for (uint32_t j = 0, off = 0; j < k->ncols; off += k->sizes[j], j++)
		{
			uint32_t   *o = k->shares + (size_t) t * k->codes + off;

			if (dp_gum_chunk_next(k->left + off, k->sizes[j], k->rows_left, rows, o) != 0)
				return -2;
			k->sharep[(size_t) t * k->ncols + j] = o;
		}
		k->rows_left -= rows;
		c->counts = k->sharep + (size_t) t * k->ncols;
	}
	/*
	 * With helpers, every chunk of the round takes its memory from an arena, the calling thread's
	 * too: while a helper runs, the calling thread may not call the allocation handler either
	 * (inside PostgreSQL it may not return: dp_env.h, LONGJMP)
	 */
	if (cnt > 1)
	{
		c->arena.size = ARENA_BYTES(k->targets, k->ntargets, k->ncols, rows, k->prm->counting);
		c->arena.base = dp_try_alloc(c->arena.size);	/* NULL, never an ERROR */
		if (c->arena.base == NULL)
			*par = false;
	}
	return 0;
}

/*
 * The round's chunks run.  With helpers (par): no progress callback and no handler until they
 * are joined (they may not return: dp_env.h, LONGJMP).  When an interrupt stopped the round, it
 * is let in with no helper running (the interrupt handler, then the callback); if neither
 * cancels, the chunks that finished are kept and the stopped ones run again in parallel, each
 * from its own generator (the same rows), up to CHUNK_STOPS stops a round.  Then each chunk that
 * did not finish, anew on this thread, with the handlers' memory and the caller's callback: a
 * chunk whose arena was too small (whose failure, if it was something else, this run reports),
 * every chunk with no helpers (par false), and a chunk an interrupt stopped CHUNK_STOPS times.
 * Returns 0, -1 (cancelled) or -2.
 */
static int
round_run(chunked *k, uint64_t r0, uint32_t cnt, bool par)
{
	chunk_run  *runs = k->runs;
	bool		todo[DP_MAX_THREADS];
	int			rc = 0;

	for (uint32_t t = 0; t < cnt; t++)
		todo[t] = true;
	for (uint32_t stops = 0; par;)
	{
		uint32_t	left = 0;

		round_parallel(runs, cnt, todo);
		if (!__atomic_load_n(&k->stop, __ATOMIC_SEQ_CST))
			break;
		dp_check_interrupts();
		if (dp_report(k->prm->progress, k->prm->progress_arg, DP_PHASE_GUM, (double) r0,
					  (double) k->nchunks, -1) != 0)
			return -1;
		__atomic_store_n(&k->stop, 0, __ATOMIC_SEQ_CST);
		for (uint32_t t = 0; t < cnt; t++)
			left += todo[t] = runs[t].rc == -1;
		if (++stops >= CHUNK_STOPS || left == 0)
			break;
		for (uint32_t t = 0; t < cnt; t++)
			if (todo[t])
				arena_reset(&runs[t]);
	}
	for (uint32_t t = 0; t < cnt && rc == 0; t++)
		if (runs[t].rc != 0)
		{
			chunk_release(&runs[t]);
			runs[t].rc = rc = run_one(&runs[t], true);
#ifdef DPSYNTH_TEST_RNG
			if (par)
				test_serial_runs++;
#endif
		}
	return rc;
}

/* The round's rows copied into out (rc 0), their iterations' errors summed; its runs released. */
static void
round_collect(chunked *k, uint32_t cnt, int rc, dp_codes *out)
{
	for (uint32_t t = 0; t < cnt; t++)
	{
		chunk_run  *c = &k->runs[t];
		uint64_t	b = (uint64_t) c->index * k->chunk;

		if (rc == 0)
		{
			for (uint32_t j = 0; j < k->ncols; j++)
				memcpy(out->col[j] + b, c->out.col[j], sizeof(uint16_t) * (size_t) c->out.nrows);
			for (uint32_t i = 0; i < c->log.n; i++)
			{
				k->errs[i] += c->log.err[i] * (double) c->out.nrows;
				k->wsum[i] += (double) c->out.nrows;
			}
			if (c->log.n > k->nlog)
				k->nlog = c->log.n;
		}
		chunk_release(c);
		dp_free(c->log.err);
		c->log.err = NULL;
	}
}

/*
 * STREAMING.  With a chunk_post or a chunk_sink (dp_gum_params), the chunks are not run in rounds:
 * a queue of chunks, taken lowest first by the helpers and by the calling thread, each run (GUM,
 * then chunk_post, in its thread's arena) and its rows copied into out, and a chunk handed to
 * the sink on the calling thread as soon as it and every chunk before it are done.  The calling
 * thread hands over the next chunk when it is done, else runs the next chunk no one took (when
 * more are left than helpers run: otherwise they will take them, and it stays free to hand over
 * the next chunk as soon as it is done), else waits, polling dp_interrupt_pending.  Each chunk's rows are a function of its generator's seed
 * and its share of the one-way counts, both fixed (in chunk order) before any chunk runs: the
 * rows depend neither on the threads nor on which thread ran which chunk, nor when.
 */
enum
{
	CH_TODO, CH_TAKEN, CH_DONE, CH_STOPPED, CH_FAILED
};

typedef struct stream_worker
{
	struct dp_gum_stream *s;
	dp_arena	arena;			/* reused chunk after chunk: emptied once a chunk's rows are out */
} stream_worker;

struct dp_gum_stream
{
	chunked    *k;
	dp_codes   *out;
	int		   *state;			/* a chunk's CH_*, read and set atomically */
	chunk_log  *logs;			/* a chunk's iterations' errors */
	const uint32_t **counts;	/* with one_way_exact: nchunks x ncols, each chunk's shares */
	uint32_t   *shares;
	uint16_t  **viewcols;		/* the sink's view of a chunk's rows in out */
	stream_worker w[DP_MAX_THREADS];	/* w[0]: the calling thread's */
	pthread_t	th[DP_MAX_THREADS];
	bool		started[DP_MAX_THREADS];
};

/* the next chunk no one took, marked taken; -1: none */
static int64_t
stream_take(struct dp_gum_stream *s)
{
	for (uint64_t j = 0; j < s->k->nchunks; j++)
	{
		int			want = CH_TODO;

		if (__atomic_load_n(&s->state[j], __ATOMIC_SEQ_CST) == CH_TODO &&
			__atomic_compare_exchange_n(&s->state[j], &want, CH_TAKEN, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return (int64_t) j;
	}
	return -1;
}

/*
 * Chunk j run: in arena a (a helper's, or the calling thread's while helpers run: no handler) or,
 * a NULL, with the handlers and the caller's callback (no helper running).  GUM, chunk_post, its
 * rows copied into out; its state set last.
 */
static void
stream_chunk(struct dp_gum_stream *s, uint64_t j, dp_arena *a)
{
	chunked    *k = s->k;
	chunk_run	c;
	int			rc;

	memset(&c, 0, sizeof(c));
	c.targets = k->targets;
	c.ntargets = k->ntargets;
	c.ncols = k->ncols;
	c.sizes = k->sizes;
	c.start = k->prm->start;
	c.n = k->n;
	c.chunk = k->chunk;
	c.index = (uint32_t) j;
	c.seed = k->seeds[j];
	c.prm = k->prm;
	c.counts = s->counts ? s->counts + (size_t) j * k->ncols : NULL;
	c.log = s->logs[j];
	if (a)
		dp_arena_enter(a);
	rc = run_one(&c, a == NULL);
	/* a post returns 0 or -2 (out of memory); anything else fails the chunk too, never stops it */
	if (rc == 0 && k->prm->chunk_post && k->prm->chunk_post(k->prm->chunk_post_arg, &c.out, &c.rng) != 0)
		rc = -2;
	if (a)
	{
		dp_arena_leave();
		if (a->failed && rc == 0)
			rc = -2;
	}
	s->logs[j].n = c.log.n;
	if (rc == 0)
		for (uint32_t col = 0; col < k->ncols; col++)
			memcpy(s->out->col[col] + (uint64_t) j * k->chunk, c.out.col[col],
				   sizeof(uint16_t) * (size_t) c.out.nrows);
	if (a)
	{
		/* the chunk's memory was the arena's: emptied for the next chunk */
		a->used = 0;
		a->free_list = NULL;
		a->failed = 0;
	}
	else
	{
		dp_codes_free(&c.out);
		dp_free(c.view);
	}
	__atomic_store_n(&s->state[j], rc == 0 ? CH_DONE : rc == -1 ? CH_STOPPED : CH_FAILED, __ATOMIC_SEQ_CST);
}

/* a helper: chunks taken and run in its arena until none is left or the run stops */
static void *
stream_helper(void *arg)
{
	stream_worker *w = arg;
	struct dp_gum_stream *s = w->s;

	while (!__atomic_load_n(&s->k->stop, __ATOMIC_SEQ_CST))
	{
		int64_t		j = stream_take(s);

		if (j < 0)
			break;
		stream_chunk(s, (uint64_t) j, &w->arena);
	}
	return NULL;
}

/* the helpers started, every signal blocked on them (one that cannot start leaves its chunks to the others) */
static void
stream_start(struct dp_gum_stream *s)
{
	sigset_t	all,
				saved;

	__atomic_store_n(&s->k->stop, 0, __ATOMIC_SEQ_CST);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (uint32_t t = 1; t < s->k->nthreads; t++)
		s->started[t] = pthread_create(&s->th[t], NULL, stream_helper, &s->w[t]) == 0;
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* the helpers stopped (at their chunks' next report) and joined; their stopped chunks to do again */
static void
stream_join(struct dp_gum_stream *s, bool stop)
{
	if (stop)
		__atomic_store_n(&s->k->stop, 1, __ATOMIC_SEQ_CST);
	for (uint32_t t = 1; t < s->k->nthreads; t++)
		if (s->started[t])
		{
			pthread_join(s->th[t], NULL);
			s->started[t] = false;
		}
	for (uint64_t j = 0; j < s->k->nchunks; j++)
		if (__atomic_load_n(&s->state[j], __ATOMIC_SEQ_CST) == CH_STOPPED)
			__atomic_store_n(&s->state[j], CH_TODO, __ATOMIC_SEQ_CST);
}

void
dp_gum_stream_abort(struct dp_gum_stream *s)
{
	if (s)
		stream_join(s, true);
}

/* the chunks no one took yet */
static uint64_t
stream_todo(struct dp_gum_stream *s)
{
	uint64_t	todo = 0;

	for (uint64_t j = 0; j < s->k->nchunks; j++)
		todo += __atomic_load_n(&s->state[j], __ATOMIC_SEQ_CST) == CH_TODO;
	return todo;
}

/* the helpers running */
static uint64_t
stream_helpers(struct dp_gum_stream *s)
{
	uint64_t	n = 0;

	for (uint32_t t = 1; t < s->k->nthreads; t++)
		n += s->started[t];
	return n;
}

/* the calling thread waits a little for a helper's chunk */
static void
stream_wait(void)
{
	struct timespec ts = {0, 200000};

	nanosleep(&ts, NULL);
}

/*
 * Everything the queue needs, on the calling thread before any helper starts: each chunk's
 * state, log and share of the one-way counts (in chunk order), and with helpers an arena for each
 * thread (par false when one cannot be had).  Returns 0 or -2.
 */
static int
stream_setup(chunked *k, struct dp_gum_stream *s, dp_codes *out, bool *par)
{
	s->k = k;
	s->out = out;
	s->state = dp_zalloc(sizeof(int) * k->nchunks);
	s->logs = dp_zalloc(sizeof(chunk_log) * k->nchunks);
	s->viewcols = dp_alloc(sizeof(uint16_t *) * k->ncols);
	if (s->state == NULL || s->logs == NULL || s->viewcols == NULL)
		return dp_nomem("could not allocate GUM's chunks' states");
	for (uint64_t j = 0; j < k->nchunks; j++)
	{
		s->logs[j].cap = k->iters;
		s->logs[j].stop = &k->stop;
		s->logs[j].err = dp_zalloc(sizeof(double) * (k->iters + 1));
		if (s->logs[j].err == NULL)
			return dp_nomem("could not allocate GUM's chunks' logs");
	}
	if (k->left != NULL)
	{
		s->shares = dp_alloc(sizeof(uint32_t) * k->codes * k->nchunks);
		s->counts = dp_alloc(sizeof(uint32_t *) * (size_t) k->ncols * k->nchunks);
		if (s->shares == NULL || s->counts == NULL)
			return dp_nomem("could not allocate GUM's chunks' one-way counts");
		for (uint64_t j = 0; j < k->nchunks; j++)
		{
			uint64_t	rows = k->n - j * k->chunk < k->chunk ? k->n - j * k->chunk : k->chunk;

			for (uint32_t c = 0, off = 0; c < k->ncols; off += k->sizes[c], c++)
			{
				uint32_t   *o = s->shares + (size_t) j * k->codes + off;

				if (dp_gum_chunk_next(k->left + off, k->sizes[c], k->rows_left, rows, o) != 0)
					return -2;
				s->counts[(size_t) j * k->ncols + c] = o;
			}
			k->rows_left -= rows;
		}
	}
	for (uint32_t t = 0; t < k->nthreads && *par; t++)
	{
		stream_worker *w = &s->w[t];

		w->s = s;
		w->arena.caller = t == 0;
		w->arena.size = ARENA_BYTES(k->targets, k->ntargets, k->ncols, k->chunk, k->prm->counting);
		w->arena.base = dp_try_alloc(w->arena.size);	/* NULL, never an ERROR */
		if (w->arena.base == NULL)
			*par = false;
	}
	return 0;
}

/*
 * The queue run to its end (STREAMING above).  An interrupt that dp_interrupt_pending reports
 * while helpers run raises the stop flag: every running chunk stops at its next report, the
 * helpers are joined, the interrupt is let in (dp_check_interrupts, then the progress callback);
 * if neither cancels, the stopped chunks are taken again (the same rows), and after CHUNK_STOPS
 * such stops the rest run on the calling thread alone.  A chunk that failed in its arena runs
 * again on the calling thread with the helpers joined.  Returns 0, -1 (cancelled) or -2.
 */
static int
stream_run(chunked *k, struct dp_gum_stream *s, bool par)
{
	const dp_gum_params *prm = k->prm;
	uint64_t	w = 0;
	uint32_t	stops = 0;
	int			rc = 0;

	if (par)
		stream_start(s);
	while (w < k->nchunks && rc == 0)
	{
		int			st = __atomic_load_n(&s->state[w], __ATOMIC_SEQ_CST);

		if (st == CH_DONE)
		{
			uint64_t	b = w * k->chunk;
			dp_codes	view;

			if (prm->chunk_sink)
			{
				/* a view of the chunk's rows in out */
				view.ncols = k->ncols;
				view.nrows = view.cap = (k->n - b < k->chunk ? k->n - b : k->chunk);
				view.col = s->viewcols;
				for (uint32_t c = 0; c < k->ncols; c++)
					view.col[c] = s->out->col[c] + b;
				if (prm->chunk_sink(prm->chunk_sink_arg, &view, b, k->n, s) != 0)
					rc = -1;
			}
			w++;
			continue;
		}
		if (par && __atomic_load_n(&k->stop, __ATOMIC_SEQ_CST))
		{
			/* an interrupt waits: the helpers joined, then it is let in */
			stream_join(s, true);
			dp_check_interrupts();
			if (dp_report(prm->progress, prm->progress_arg, DP_PHASE_GUM, (double) w,
						  (double) k->nchunks, -1) != 0)
			{
				rc = -1;
				break;
			}
			if (++stops >= CHUNK_STOPS)
				par = false;
			else
				stream_start(s);
			continue;
		}
		if (st == CH_FAILED || (!par && st == CH_TODO))
		{
			/* anew on this thread, with the handlers: the helpers joined first */
			if (par)
				stream_join(s, true);
			__atomic_store_n(&s->state[w], CH_TAKEN, __ATOMIC_SEQ_CST);
			stream_chunk(s, w, NULL);
			st = __atomic_load_n(&s->state[w], __ATOMIC_SEQ_CST);
			if (st == CH_STOPPED)
				rc = -1;
			else if (st != CH_DONE)
				rc = -2;
#ifdef DPSYNTH_TEST_RNG
			if (par)
				test_serial_runs++;
#endif
			if (rc == 0 && par)
				stream_start(s);
			continue;
		}
		if (par)
		{
			/*
			 * a chunk no one took, unless the helpers will get to them all as soon as they
			 * are free: then this thread stays free to write the next chunk when it is done
			 */
			int64_t		j = stream_todo(s) > stream_helpers(s) ? stream_take(s) : -1;

			if (j >= 0)
				stream_chunk(s, (uint64_t) j, &s->w[0].arena);
			else if (dp_interrupt_pending())
				__atomic_store_n(&k->stop, 1, __ATOMIC_SEQ_CST);
			else
				stream_wait();
		}
	}
	if (par)
		stream_join(s, rc != 0);
	return rc;
}

static void
stream_free(chunked *k, struct dp_gum_stream *s)
{
	for (uint64_t j = 0; s->logs && j < k->nchunks; j++)
	{
		for (uint32_t i = 0; i < s->logs[j].n; i++)
		{
			uint64_t	rows = k->n - j * k->chunk < k->chunk ? k->n - j * k->chunk : k->chunk;

			k->errs[i] += s->logs[j].err[i] * (double) rows;
			k->wsum[i] += (double) rows;
		}
		if (s->logs[j].n > k->nlog)
			k->nlog = s->logs[j].n;
		dp_free(s->logs[j].err);
	}
	for (uint32_t t = 0; t < DP_MAX_THREADS; t++)
		dp_free(s->w[t].arena.base);
	dp_free(s->logs);
	dp_free(s->viewcols);
	dp_free(s->state);
	dp_free(s->shares);
	dp_free(s->counts);
}

int
dp_gum_run_chunked(const dp_marg *targets, uint32_t ntargets, uint32_t ncols, const uint32_t *sizes,
				   uint64_t n, uint64_t chunk, const dp_gum_params *params, dp_prng *rng, dp_codes *out)
{
	chunked		k;
	int			rc;

	if (out == NULL || rng == NULL || params == NULL || params->start == NULL || chunk == 0 ||
		params->start->nrows != n || params->start->ncols != ncols || out->ncols != ncols ||
		n >= UINT32_MAX || sizes == NULL || (ntargets > 0 && targets == NULL))
		return -2;
	for (uint32_t c = 0; c < ncols; c++)
		if (sizes[c] == 0 || sizes[c] > 65536)
			return -2;
	out->nrows = 0;
	if (n == 0)
		return 0;
	memset(&k, 0, sizeof(k));
	k.targets = targets;
	k.ntargets = ntargets;
	k.ncols = ncols;
	k.sizes = sizes;
	k.prm = params;
	k.iters = params->iterations;
	k.n = k.rows_left = n;
	k.chunk = chunk;
	k.nchunks = (n + chunk - 1) / chunk;
	k.nthreads = dp_threads();
	if (k.nthreads > k.nchunks)
		k.nthreads = (uint32_t) k.nchunks;
	if (k.nthreads > DP_MAX_THREADS)
		k.nthreads = DP_MAX_THREADS;
	if (out->cap < n)
		for (uint32_t j = 0; j < ncols; j++)
		{
			uint16_t   *p = dp_realloc(out->col[j], sizeof(uint16_t) * (size_t) n);

			if (p == NULL)
				return dp_nomem("could not allocate the rows of GUM's chunks");
			out->col[j] = p;
			if (j + 1 == ncols)
				out->cap = n;
		}
	rc = chunked_begin(&k, rng);
	if (rc == 0 && (params->chunk_post || params->chunk_sink))
	{
		struct dp_gum_stream s;
		bool		par = k.nthreads > 1;

		memset(&s, 0, sizeof(s));
		rc = stream_setup(&k, &s, out, &par);
		if (rc == 0)
			rc = stream_run(&k, &s, par);
		/* the sink told the stream ends (its helpers joined), before its memory goes */
		if (params->chunk_sink)
			(void) params->chunk_sink(params->chunk_sink_arg, NULL, 0, n, &s);
		stream_free(&k, &s);
	}
	/* otherwise in rounds of dp_threads() chunks */
	for (uint64_t r0 = 0; r0 < k.nchunks && rc == 0 && !params->chunk_post && !params->chunk_sink;
		 r0 += k.nthreads)
	{
		uint32_t	cnt = k.nchunks - r0 < k.nthreads ? (uint32_t) (k.nchunks - r0) : k.nthreads;
		bool		par = cnt > 1;	/* false: no helpers this round */

		k.stop = 0;
		for (uint32_t t = 0; t < cnt && rc == 0; t++)
			rc = round_setup(&k, r0, t, cnt, &par);
		if (rc == 0)
			rc = round_run(&k, r0, cnt, par);
		round_collect(&k, cnt, rc, out);
		if (rc == 0 && dp_report(params->progress, params->progress_arg, DP_PHASE_GUM, (double) (r0 + cnt),
								 (double) k.nchunks, -1) != 0)
			rc = -1;
	}
	/* each iteration's mean L1 error over the chunks that ran it, weighted by their rows */
	for (uint32_t i = 0; rc == 0 && i < k.nlog; i++)
		if (dp_report(params->progress, params->progress_arg, DP_PHASE_GUM, i + 1, k.iters,
					  k.errs[i] / k.wsum[i]) != 0)
			rc = -1;
	dp_free(k.seeds);
	dp_free(k.errs);
	dp_free(k.wsum);
	dp_free(k.left);
	dp_free(k.shares);
	dp_free(k.sharep);
	if (rc == 0)
		out->nrows = n;
	return rc;
}
