/*
 * test_gum_chunks.c - unit tests of src/core/dp_gum_chunks.c: GUM warm from a table's rows in
 * independent chunks (dp_gum_run_chunked) and the chunks' shares of the exact one-way counts
 * (dp_gum_chunk_counts).
 *
 * - the shares (dp_gum_chunk_counts; dp_gum_chunk_next at 65,536 codes and 8 chunks): every chunk's counts sum to its rows, every code's counts over the chunks to the
 *   whole's, no chunk gives a code more than it has left, each count within one row of the rows
 *   left's proportional share; arguments that do not match are refused;
 * - the chunked run: the same rows on 1, 2 and 3 threads, and with helpers whose arenas are too
 *   small (their chunks run again on the calling thread); the whole's one-way counts those of one
 *   run over all the rows with one_way_exact; each chunk's rows fit the targets; the iterations
 *   reported once each; a cancel between rounds; an interrupt waiting while helpers run (the
 *   round stopped, the chunks run again when it does not cancel, the same rows).
 */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_gum.h"

/* the shares of `whole` (m codes, random counts with zeros) over chunks of `chunk` rows */
static bool
shares_hold(uint32_t m, uint64_t whole, uint64_t chunk, uint64_t seed, char *why, size_t whylen)
{
	uint32_t   *cnt = calloc(m, sizeof(uint32_t)),
			   *left = calloc(m, sizeof(uint32_t)),
			   *out = calloc(m, sizeof(uint32_t));
	uint64_t	nchunks = (whole + chunk - 1) / chunk,
				given = 0,
				rows_left = whole;
	dp_prng		r;
	bool		ok = true;

	dp_prng_seed(&r, seed);
	/* counts: a third of the codes empty, the rest random, summing to whole */
	for (uint64_t i = 0; i < whole; i++)
	{
		uint32_t	v = (uint32_t) dp_prng_below(&r, m);

		if (v % 3 == 1)
			v = (v + 1) % m;
		cnt[v]++;
	}
	memcpy(left, cnt, sizeof(uint32_t) * m);
	for (uint32_t j = 0; j < nchunks && ok; j++)
	{
		uint64_t	nj = rows_left < chunk ? rows_left : chunk,
					sum = 0;

		if (dp_gum_chunk_counts(cnt, m, whole, chunk, j, out) != 0)
		{
			snprintf(why, whylen, "chunk %u refused", j);
			ok = false;
			break;
		}
		for (uint32_t v = 0; v < m && ok; v++)
		{
			double		share = (double) left[v] * (double) nj / (double) rows_left;

			sum += out[v];
			if (out[v] > left[v] || fabs((double) out[v] - share) >= 1.0)
			{
				snprintf(why, whylen, "chunk %u code %u: %u of %u left (share %.3f)", j, v, out[v], left[v], share);
				ok = false;
			}
			left[v] -= out[v];
		}
		if (ok && sum != nj)
		{
			snprintf(why, whylen, "chunk %u sums to %llu, not %llu", j, (unsigned long long) sum,
					 (unsigned long long) nj);
			ok = false;
		}
		given += sum;
		rows_left -= nj;
	}
	for (uint32_t v = 0; v < m && ok; v++)
		if (left[v] != 0)
		{
			snprintf(why, whylen, "code %u: %u left after the last chunk", v, left[v]);
			ok = false;
		}
	if (ok && given != whole)
	{
		snprintf(why, whylen, "the chunks give %llu rows", (unsigned long long) given);
		ok = false;
	}
	free(cnt);
	free(left);
	free(out);
	return ok;
}

static void
test_chunk_counts(void)
{
	const struct
	{
		uint32_t	m;
		uint64_t	whole,
					chunk;
	}			cases[] = {
		{1, 10, 3}, {2, 7, 7}, {5, 100, 7}, {30, 100003, 25000}, {300, 50000, 4999},
		{70, 1000001, 500001}, {7, 12, 1}, {1000, 3000, 1024}
	};
	uint32_t	c2[3] = {5, 0, 5},
				out[3];
	char		why[200] = "";
	bool		ok = true;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (uint64_t s = 1; s <= 3 && ok; s++)
			if (!shares_hold(cases[i].m, cases[i].whole, cases[i].chunk, s, why, sizeof(why)))
			{
				unit_diag("shares: m %u, whole %llu, chunk %llu, seed %llu: %s", cases[i].m,
						  (unsigned long long) cases[i].whole, (unsigned long long) cases[i].chunk,
						  (unsigned long long) s, why);
				ok = false;
			}
	unit_check(ok, "dp_gum_chunk_counts: every chunk's counts sum to its rows, every code's to the whole's, "
			   "within one row of the share of what is left");
	/* the last of 2 chunks of 5 rows over {5, 0, 5}: what is left, exactly */
	unit_check(dp_gum_chunk_counts(c2, 3, 10, 5, 0, out) == 0 && out[0] + out[2] == 5 && out[1] == 0 &&
			   dp_gum_chunk_counts(c2, 3, 10, 5, 1, out) == 0 && out[1] == 0 && out[0] + out[2] == 5,
			   "dp_gum_chunk_counts: an empty code gets nothing");
	unit_check(dp_gum_chunk_counts(c2, 3, 10, 5, 2, out) == -2 &&
			   dp_gum_chunk_counts(c2, 3, 11, 5, 0, out) == -2 &&
			   dp_gum_chunk_counts(c2, 3, 10, 0, 0, out) == -2 && dp_gum_chunk_counts(c2, 0, 10, 5, 0, out) == -2,
			   "dp_gum_chunk_counts: an index past the last chunk, counts that do not sum to the whole, "
			   "no chunk or no code: refused");
}

/* a model of 5 columns: a triangle and a tail of 2-way targets, noisy, and the 1-way ones */
typedef struct model
{
	uint32_t	sizes[5];
	dp_marg		tg[12];
	uint32_t	nt;
	dp_codes	src;
} model;

static void
make_model(model *md, uint64_t n)
{
	uint32_t	pairs[4][2] = {{0, 1}, {1, 2}, {0, 2}, {2, 3}};
	uint32_t	sizes[5] = {6, 9, 40, 5, 300};
	uint32_t	c4[2] = {1, 4};
	dp_prng		nz;

	memcpy(md->sizes, sizes, sizeof(sizes));
	md->nt = 0;
	make_source(&md->src, 5, md->sizes, n, 77);
	for (int i = 0; i < 4; i++)
		exact_marg(&md->tg[md->nt++], &md->src, 2, pairs[i], md->sizes);
	exact_marg(&md->tg[md->nt++], &md->src, 2, c4, md->sizes);
	add_one_ways(md->tg, &md->nt, &md->src, md->sizes);
	dp_prng_seed(&nz, 3);
	for (uint32_t k = 0; k < md->nt; k++)
		for (uint64_t q = 0; q < md->tg[k].ncells; q++)
			md->tg[k].cells[q] = fmax(0, md->tg[k].cells[q] + 30 * (dp_prng_unit(&nz) - 0.5));
}

static int
count_reports(void *arg, const dp_progress *p)
{
	uint32_t   *c = arg;

	if (p->err >= 0)
		c[0]++;
	else
		c[1]++;
	return 0;
}

static int
cancel_at_first(void *arg, const dp_progress *p)
{
	(void) arg;
	(void) p;
	return 1;
}

/*
 * dp_env's pending handler: says an interrupt waits at its pending_at-th call, once, or at every
 * pending_every-th call when that is set; the interrupt handler counts its calls
 */
static long pending_calls,
			pending_at,
			pending_every,
			pending_said,
			interrupts;

static void
t_interrupt(void)
{
	interrupts++;
}

static int
t_pending(void)
{
	if (++pending_calls == pending_at || (pending_every > 0 && pending_calls % pending_every == 0))
	{
		pending_said++;
		return 1;
	}
	return 0;
}

static void *
t_alloc(size_t n)
{
	return malloc(n);
}

static void *
t_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

static void
t_free(void *p)
{
	free(p);
}

/* a try_alloc that never has the memory, and an alloc that has none of 4 MB or more */
static long try_refused,
			big_refused;

static void *
t_try_refuse(size_t n)
{
	(void) n;
	try_refused++;
	return NULL;
}

static void *
t_alloc_small(size_t n)
{
	if (n >= ((size_t) 4 << 20))
	{
		big_refused++;
		return NULL;
	}
	return malloc(n);
}

static int
cancel_if(void *arg, const dp_progress *p)
{
	long	   *c = arg;

	(void) p;
	c[0]++;
	return (int) c[1];
}

static long handler_allocs;

static void *
t_count_alloc(size_t n)
{
	handler_allocs++;
	return malloc(n);
}

/*
 * The shares of a column with 65,536 codes (the most `sizes` allows) at 4,194,304 rows in 8 chunks
 * of 2^19, as dp_gum_run_chunked takes them (dp_gum_chunk_next, chunks in order): every chunk's
 * counts sum to its rows, no code gets more than it has left, each count within one row of the
 * share of what is left, every code's counts to the whole's; the last chunk's the same as
 * dp_gum_chunk_counts gives for it.  (The selection this replaced took 23 s of CPU here.)
 */
static void
test_chunk_next_large(void)
{
	const uint32_t m = 65536;
	const uint64_t whole = (uint64_t) 1 << 22,
				chunk = (uint64_t) 1 << 19;
	uint32_t   *cnt = calloc(m, sizeof(uint32_t)),
			   *out = calloc(m, sizeof(uint32_t)),
			   *last = calloc(m, sizeof(uint32_t));
	uint64_t   *left = calloc(m, sizeof(uint64_t)),
				rows_left = whole;
	dp_prng		r;
	bool		ok = true,
				same_last;
	char		why[200] = "";

	dp_prng_seed(&r, 5);
	for (uint64_t i = 0; i < whole; i++)
		cnt[dp_prng_below(&r, m / 2) * 2 + (i % 7 == 0)]++;	/* even codes mostly, odd ones few */
	for (uint32_t v = 0; v < m; v++)
		left[v] = cnt[v];
	for (uint32_t j = 0; j < whole / chunk && ok; j++)
	{
		uint64_t	nj = chunk,
					sum = 0;

		if (dp_gum_chunk_next(left, m, rows_left, nj, out) != 0)
		{
			snprintf(why, sizeof(why), "chunk %u refused", j);
			ok = false;
			break;
		}
		for (uint32_t v = 0; v < m && ok; v++)
		{
			/* left[v] is now what is left after this chunk: the share was of left[v] + out[v] */
			double		had = (double) (left[v] + out[v]),
						share = had * (double) nj / (double) rows_left;

			sum += out[v];
			if (left[v] > (uint64_t) UINT32_MAX || fabs((double) out[v] - share) >= 1.0)
			{
				snprintf(why, sizeof(why), "chunk %u code %u: %u (share %.3f)", j, v, out[v], share);
				ok = false;
			}
		}
		if (ok && sum != nj)
		{
			snprintf(why, sizeof(why), "chunk %u sums to %llu", j, (unsigned long long) sum);
			ok = false;
		}
		rows_left -= nj;
	}
	for (uint32_t v = 0; v < m && ok; v++)
		if (left[v] != 0)
		{
			snprintf(why, sizeof(why), "code %u: %llu left", v, (unsigned long long) left[v]);
			ok = false;
		}
	if (!ok)
		unit_diag("%s", why);
	unit_check(ok && rows_left == 0, "dp_gum_chunk_next, 65536 codes, 8 chunks: every chunk sums to its rows, "
			   "within one row of its share, every code's counts to the whole's");
	same_last = dp_gum_chunk_counts(cnt, m, whole, chunk, 7, last) == 0 &&
		memcmp(last, out, sizeof(uint32_t) * m) == 0;
	unit_check(same_last, "dp_gum_chunk_next: the last chunk's counts those dp_gum_chunk_counts gives it");
	free(cnt);
	free(out);
	free(last);
	free(left);
}

/*
 * dp_env's arenas: allocations inside one never reach the handler; a block given back is reused
 * (the last one, or one in the middle that a later allocation fits); an allocation that does not
 * fit fails and marks the arena; a helper's arena answers no
 * for a pending interrupt without asking, the calling thread's own asks the handler
 */
static void
test_arena(void)
{
	char		buf[4096];
	dp_arena	a = {.base = buf + 1, .size = sizeof(buf) - 1};	/* a base not aligned */
	void	   *p,
			   *q,
			   *r;
	int			pending_helper,
				pending_caller;

	dp_set_handlers(&(dp_handlers) {t_count_alloc, t_realloc, t_free, NULL, NULL, t_pending, NULL});
	handler_allocs = 0;
	pending_calls = pending_said = 0;
	pending_at = 1;
	dp_arena_enter(&a);
	p = dp_alloc(100);
	if (p)
		memset(p, 7, 100);
	q = dp_alloc(100);
	dp_free(q);
	r = dp_alloc(50);
	pending_helper = dp_interrupt_pending();
	q = dp_realloc(p, 200);
	unit_check(p != NULL && r != NULL && r == (char *) p + 16 + 112 && q != NULL &&
			   memchr(q, 0, 100) == NULL && ((char *) q)[0] == 7 && ((char *) q)[99] == 7 &&
			   ((uintptr_t) p & 15) == 0 && ((uintptr_t) q & 15) == 0 && dp_alloc(sizeof(buf)) == NULL &&
			   a.failed && handler_allocs == 0,
			   "arena: blocks 16-byte aligned, the last one given back reused, realloc copies, one too big "
			   "fails and marks it, no handler called");
	/* a block given back that is not the last: taken again by an allocation it holds */
	{
		void	   *m = dp_alloc(300),
				   *e = dp_alloc(20),
				   *m2;

		dp_free(m);
		m2 = dp_alloc(290);
		unit_check(m != NULL && e != NULL && m2 == m && handler_allocs == 0,
				   "arena: a block given back in the middle is taken again by an allocation it holds");
	}
	a.caller = 1;
	pending_caller = dp_interrupt_pending();
	dp_arena_leave();
	unit_check(pending_helper == 0 && pending_caller == 1 && pending_calls == 1,
			   "arena: a helper's does not ask for a pending interrupt, the calling thread's own asks the handler");
	p = dp_alloc(10);
	unit_check(handler_allocs == 1, "arena: left, the handler allocates again");
	dp_free(p);
	dp_set_handlers(NULL);
}

/*
 * test_chunked_run's interrupts and arena failures, on its model and parameters: every run must
 * give the reference rows (out[0] there) or stop with no rows
 */
static void
test_chunked_stops(const model *mdp, uint64_t n, uint64_t chunk, dp_gum_params *pp, const dp_codes *ref)
{
	model		md = *mdp;
	dp_gum_params p = *pp;
	dp_prng		rng;
	int			rc;
	dp_codes	out[1];

	out[0] = *ref;
	/*
	 * an interrupt waiting while a helper runs (dp_interrupt_pending, on the calling thread's
	 * chunk): the round stops, the callback is called with no helper running; when it does not
	 * cancel, the stopped chunks run again here, and the rows are the same
	 */
	for (uint32_t t = 2; t <= 3; t++)
	{
		dp_codes	c;
		long		calls[2] = {0, 0};
		bool		same_again = true;

		unsigned long serial;

		dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, t_interrupt, t_pending, NULL});
		dp_set_threads(t);
		pending_calls = pending_said = interrupts = 0;
		pending_at = 3;
		p.progress = cancel_if;
		p.progress_arg = calls;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		(void) dp_gum_test_serial_runs();
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		serial = dp_gum_test_serial_runs();
		for (uint32_t j = 0; rc == 0 && j < 5; j++)
			same_again = same_again && memcmp(out[0].col[j], c.col[j], sizeof(uint16_t) * n) == 0;
		unit_check(rc == 0 && pending_said == 1 && same_again && calls[0] > 1 && interrupts == 1 && serial == 0,
				   "chunked, %u threads: an interrupt that does not cancel stops the round, the interrupt handler "
				   "and the callback let it in after the join, the stopped chunks run again on the threads (none "
				   "on the calling thread alone), the same rows (rc %d, %ld pending, %ld interrupts, %ld callbacks, "
				   "%lu serial runs)", t, rc, pending_said, interrupts, calls[0], serial);
		dp_codes_free(&c);

		/*
		 * one that keeps coming (every 4th poll, as client_connection_check_interval's timer
		 * might): each round stops at most CHUNK_STOPS (2) times, then runs what is left on the
		 * calling thread; it ends, with the same rows
		 */
		pending_calls = pending_said = interrupts = 0;
		pending_at = 0;
		pending_every = 4;
		calls[0] = 0;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		serial = dp_gum_test_serial_runs();
		pending_every = 0;
		same_again = true;
		for (uint32_t j = 0; rc == 0 && j < 5; j++)
			same_again = same_again && memcmp(out[0].col[j], c.col[j], sizeof(uint16_t) * n) == 0;
		unit_check(rc == 0 && same_again && pending_said >= 2 && interrupts == pending_said &&
				   pending_said <= 2 * (long) ((5 + t - 1) / t),
				   "chunked, %u threads: an interrupt every 4th poll that never cancels: at most 2 stops a round, "
				   "each let in, the same rows (rc %d, %ld stops, %ld interrupts, %lu serial runs)",
				   t, rc, pending_said, interrupts, serial);
		dp_codes_free(&c);
		pending_at = 3;

		/* ... and one that cancels: -1, no rows */
		pending_calls = pending_said = 0;
		calls[0] = 0;
		calls[1] = 1;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == -1 && c.nrows == 0 && pending_said == 1 && calls[0] == 1,
				   "chunked, %u threads: an interrupt that cancels: -1 at the first callback, no rows "
				   "(rc %d, %ld callbacks)", t, rc, calls[0]);
		dp_codes_free(&c);
		dp_set_handlers(NULL);
	}
	/*
	 * a run in an arena that returned 0 although its arena refused an allocation (the seam
	 * changes a code of its rows and marks the arena failed): not used, its chunk runs again out
	 * of the arena, the same rows
	 */
	for (uint32_t t = 2; t <= 3; t++)
	{
		dp_codes	c;
		bool		same_tol = true;

		dp_set_threads(t);
		dp_gum_test_arena_tolerates(1);
		p.progress = NULL;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		dp_gum_test_arena_tolerates(0);
		for (uint32_t j = 0; rc == 0 && j < 5; j++)
			same_tol = same_tol && memcmp(out[0].col[j], c.col[j], sizeof(uint16_t) * n) == 0;
		unit_check(rc == 0 && same_tol, "chunked, %u threads: a run whose arena refused an allocation is not "
				   "used even when it returned 0, the same rows (rc %d)", t, rc);
		dp_codes_free(&c);
	}
	/*
	 * a helper's arena that cannot be had: asked of the try_alloc handler (which returns NULL
	 * instead of raising), or of alloc without one; no helpers that round, the calling thread
	 * runs the chunks, the same rows
	 */
	for (int k = 0; k < 2; k++)
	{
		dp_codes	c;
		bool		same_fb = true;

		dp_set_handlers(k == 0 ? &(dp_handlers) {t_alloc, t_realloc, t_free, NULL, NULL, NULL, t_try_refuse}
						: &(dp_handlers) {t_alloc_small, t_realloc, t_free, NULL, NULL, NULL, NULL});
		dp_set_threads(2);
		try_refused = big_refused = 0;
		p.progress = NULL;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		for (uint32_t j = 0; rc == 0 && j < 5; j++)
			same_fb = same_fb && memcmp(out[0].col[j], c.col[j], sizeof(uint16_t) * n) == 0;
		unit_check(rc == 0 && same_fb && (k == 0 ? try_refused >= 3 : big_refused >= 3),
				   "chunked, 2 threads: arenas that cannot be had (%s) fall back to the calling thread, the "
				   "same rows (rc %d, %ld refused)", k == 0 ? "try_alloc says NULL" : "alloc says NULL",
				   rc, k == 0 ? try_refused : big_refused);
		dp_codes_free(&c);
		dp_set_handlers(NULL);
	}
}


/*
 * STREAMING (dp_gum_params.chunk_post, chunk_sink): a post on each chunk's rows (counted, on
 * whichever thread ran the chunk; with `change`, codes of column 0 redrawn from the chunk's
 * generator; with `nap`, a 20 ms sleep, the chunks in it counted as running), and a sink that
 * checks the chunks come in order, each once, and that their rows are `ref`'s at that place.
 */
typedef struct post_arg
{
	bool		change,
				nap;
	uint32_t	size0;
	long		calls,			/* atomic */
				running;		/* atomic */
} post_arg;

static int
t_post(void *arg, dp_codes *rows, dp_prng *rng)
{
	post_arg   *a = arg;

	__atomic_fetch_add(&a->calls, 1, __ATOMIC_SEQ_CST);
	if (a->nap)
	{
		struct timespec ts = {0, 20000000};

		__atomic_fetch_add(&a->running, 1, __ATOMIC_SEQ_CST);
		nanosleep(&ts, NULL);
		__atomic_fetch_sub(&a->running, 1, __ATOMIC_SEQ_CST);
	}
	if (a->change)
		for (uint64_t i = 0; i < rows->nrows; i++)
			if (dp_prng_below(rng, 3) == 0)
				rows->col[0][i] = (uint16_t) dp_prng_below(rng, a->size0);
	return 0;
}

typedef struct sink_rec
{
	const dp_codes *ref;		/* NULL: the rows are not compared */
	uint64_t	n,
				next;
	uint32_t	calls,
				cancel_at,		/* the sink returns 1 at this call (0: never) */
				abort_at;		/* dp_gum_stream_abort then longjmp at this call (0: never) */
	bool		ordered,
				same;
	jmp_buf    *jb;
	uint32_t	ended,			/* calls with rows NULL (the stream's end) */
				after_end;		/* chunks after it */
} sink_rec;

static int
t_sink(void *arg, const dp_codes *rows, uint64_t first, uint64_t total, dp_gum_stream *s)
{
	sink_rec   *r = arg;

	if (rows == NULL)
	{
		r->ended++;
		return 0;
	}
	r->after_end += r->ended > 0;
	r->calls++;
	if (first != r->next || total != r->n || rows->nrows == 0 || first + rows->nrows > r->n)
		r->ordered = false;
	for (uint32_t j = 0; r->ref && r->ordered && j < rows->ncols; j++)
		r->same = r->same && memcmp(rows->col[j], r->ref->col[j] + first, sizeof(uint16_t) * rows->nrows) == 0;
	r->next = first + rows->nrows;
	if (r->cancel_at && r->calls == r->cancel_at)
		return 1;
	if (r->abort_at && r->calls == r->abort_at)
	{
		dp_gum_stream_abort(s);
		longjmp(*r->jb, 1);
	}
	return 0;
}

/* an allocator that keeps what it gave out, so that a run left by longjmp can be freed after */
#define TRACK_MAX 8192
static void *tracked[TRACK_MAX];
static int	ntracked;

static void *
t_track_alloc(size_t n)
{
	void	   *p = malloc(n);

	if (p && ntracked < TRACK_MAX)
		tracked[ntracked++] = p;
	return p;
}

static void
t_track_free(void *p)
{
	for (int i = 0; i < ntracked; i++)
		if (tracked[i] == p)
		{
			tracked[i] = tracked[--ntracked];
			break;
		}
	free(p);
}

static void *
t_track_realloc(void *p, size_t n)
{
	void	   *q = realloc(p, n);

	for (int i = 0; q && i < ntracked; i++)
		if (tracked[i] == p)
			tracked[i] = q;
	return q;
}

static void
track_free_all(void)
{
	while (ntracked > 0)
		free(tracked[--ntracked]);
}

static bool
same_rows(const dp_codes *a, const dp_codes *b, uint64_t n)
{
	bool		same = a->nrows == n && b->nrows == n;

	for (uint32_t j = 0; same && j < 5; j++)
		same = memcmp(a->col[j], b->col[j], sizeof(uint16_t) * n) == 0;
	return same;
}

static void
test_streamed(const model *mdp, uint64_t n, uint64_t chunk, const dp_gum_params *pp, const dp_codes *ref)
{
	model		md = *mdp;
	dp_gum_params p = *pp;
	dp_prng		rng;
	dp_codes	post1 = {0};
	uint64_t	nchunks = (n + chunk - 1) / chunk;
	int			rc;

	p.progress = NULL;
	/*
	 * a post that changes nothing: the rows of the rounds (ref) on 1, 2 and 3 threads, with and
	 * without a sink, and with arenas too small; the sink sees every chunk once, in order, its
	 * rows those of out
	 */
	for (int k = 0; k < 8; k++)
	{
		uint32_t	t = 1 + k % 3;
		bool		with_sink = k != 3,
					small = k >= 6;
		post_arg	pa = {false, false, md.sizes[0], 0, 0};
		sink_rec	sr = {ref, n, 0, 0, 0, 0, true, true, NULL, 0, 0};
		dp_codes	c;

		dp_set_threads(t);
		dp_gum_test_arena_bytes(small ? 4096 : 0);
		p.chunk_post = t_post;
		p.chunk_post_arg = &pa;
		p.chunk_sink = with_sink ? t_sink : NULL;
		p.chunk_sink_arg = &sr;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		(void) dp_gum_test_serial_runs();
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == 0 && same_rows(&c, ref, n) && pa.calls == (long) nchunks &&
				   (!with_sink || (sr.ordered && sr.same && sr.calls == nchunks && sr.next == n &&
								   sr.ended == 1 && sr.after_end == 0)),
				   "streamed, %u threads%s%s: the rows of the rounds; the post once a chunk (%ld); %s (rc %d)",
				   t, with_sink ? ", a sink" : "", small ? ", arenas too small" : "", pa.calls,
				   with_sink ? "the sink has every chunk once, in order, its rows out's, then the end once" : "no sink", rc);
		if (small && t > 1)
			unit_check(dp_gum_test_serial_runs() > 0, "streamed, %u threads, arenas too small: chunks run "
					   "again on the calling thread", t);
		dp_codes_free(&c);
	}
	dp_gum_test_arena_bytes(0);

	/* a post that draws: the same rows on 1, 2, 3 and 4 threads, with a sink or not */
	for (uint32_t t = 1; t <= 4; t++)
	{
		post_arg	pa = {true, false, md.sizes[0], 0, 0};
		sink_rec	sr = {NULL, n, 0, 0, 0, 0, true, true, NULL, 0, 0};
		dp_codes	c;

		dp_set_threads(t);
		p.chunk_post = t_post;
		p.chunk_post_arg = &pa;
		p.chunk_sink = t % 2 ? t_sink : NULL;
		p.chunk_sink_arg = &sr;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		if (t == 1)
		{
			post1 = c;
			unit_check(rc == 0 && !same_rows(&c, ref, n), "streamed: a post that draws changes the rows (rc %d)", rc);
			continue;
		}
		unit_check(rc == 0 && same_rows(&c, &post1, n) && (t % 2 == 0 || (sr.ordered && sr.calls == nchunks)),
				   "streamed, %u threads, a post that draws: the rows of 1 thread (rc %d)", t, rc);
		dp_codes_free(&c);
	}

	/* a sink that stops the run: -1, no rows, no helper left (every post done) */
	for (uint32_t t = 1; t <= 3; t++)
	{
		post_arg	pa = {false, true, md.sizes[0], 0, 0};
		sink_rec	sr = {ref, n, 0, 0, 2, 0, true, true, NULL, 0, 0};
		dp_codes	c;

		dp_set_threads(t);
		p.chunk_post = t_post;
		p.chunk_post_arg = &pa;
		p.chunk_sink = t_sink;
		p.chunk_sink_arg = &sr;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == -1 && c.nrows == 0 && sr.calls == 2 && sr.ended == 1 &&
				   __atomic_load_n(&pa.running, __ATOMIC_SEQ_CST) == 0,
				   "streamed, %u threads: a sink that returns 1 at the second chunk: -1, no rows, no post running, "
				   "the end told (rc %d, %u sink calls)", t, rc, sr.calls);
		dp_codes_free(&c);
	}

	dp_codes_free(&post1);
}

/* The streamed run's stops (test_streamed's model and chunks): a sink that unwinds, interrupts. */
static void
test_streamed_stops(const model *mdp, uint64_t n, uint64_t chunk, const dp_gum_params *pp, const dp_codes *ref)
{
	model		md = *mdp;
	dp_gum_params p = *pp;
	dp_prng		rng;
	uint64_t	nchunks = (n + chunk - 1) / chunk;
	int			rc;

	p.progress = NULL;
	/*
	 * a sink that unwinds (as an ERROR inside PostgreSQL): dp_gum_stream_abort first; then no
	 * chunk runs any more (the helpers joined: their 20 ms posts neither running nor started
	 * after), and the run's memory is the embedder's to free.  Chunks of 2,000 rows (36 of them,
	 * at least 0.36 s of posts on 2 helpers), so that chunks are left when the first one is in.
	 */
	for (volatile uint32_t t = 2; t <= 3; t++)	/* volatile: read after the longjmp */
	{
		const uint64_t small = 2000,
					nsmall = (n + small - 1) / small;

		post_arg	pa = {false, true, md.sizes[0], 0, 0};
		jmp_buf		jb;
		sink_rec	sr = {NULL, n, 0, 0, 0, 1, true, true, &jb, 0, 0};
		static dp_codes c_abort;
		dp_codes   *c = &c_abort;
		volatile long running_after = -1,
					calls_after = -1,
					calls_later = -2;

		dp_set_handlers(&(dp_handlers) {t_track_alloc, t_track_realloc, t_track_free, NULL, NULL, NULL, NULL});
		dp_set_threads(t);
		p.chunk_post = t_post;
		p.chunk_post_arg = &pa;
		p.chunk_sink = t_sink;
		p.chunk_sink_arg = &sr;
		dp_prng_seed(&rng, 11);
		dp_codes_init(c, 5, 0);
		if (setjmp(jb) == 0)
			(void) dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, small, &p, &rng, c);
		else
		{
			struct timespec ts = {0, 60000000};

			running_after = __atomic_load_n(&pa.running, __ATOMIC_SEQ_CST);
			calls_after = __atomic_load_n(&pa.calls, __ATOMIC_SEQ_CST);
			nanosleep(&ts, NULL);
			calls_later = __atomic_load_n(&pa.calls, __ATOMIC_SEQ_CST);
		}
		dp_set_handlers(NULL);
		track_free_all();
		memset(c, 0, sizeof(*c));
		unit_check(running_after == 0 && calls_after >= 1 && calls_later == calls_after && calls_after < (long) nsmall,
				   "streamed, %u threads: a sink that aborts and unwinds at the first chunk leaves no chunk running "
				   "(%ld running, %ld posts, %ld 60 ms later, of %llu chunks)", t, running_after, calls_after,
				   calls_later, (unsigned long long) nsmall);
	}

	/*
	 * an interrupt waiting while helpers run: every chunk stops, the helpers are joined, the
	 * interrupt handler and the callback let it in; when neither cancels, the stopped chunks run
	 * again (the same rows); one every 4th poll ends, the same rows; one that cancels: -1
	 */
	for (uint32_t t = 2; t <= 3; t++)
	{
		long		calls[2] = {0, 0};
		post_arg	pa = {false, false, md.sizes[0], 0, 0};
		sink_rec	sr = {ref, n, 0, 0, 0, 0, true, true, NULL, 0, 0};
		dp_codes	c;

		dp_set_handlers(&(dp_handlers) {t_alloc, t_realloc, t_free, NULL, t_interrupt, t_pending, NULL});
		dp_set_threads(t);
		p.chunk_post = t_post;
		p.chunk_post_arg = &pa;
		p.chunk_sink = t_sink;
		p.chunk_sink_arg = &sr;
		p.progress = cancel_if;
		p.progress_arg = calls;
		pending_calls = pending_said = interrupts = 0;
		pending_at = 3;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == 0 && pending_said == 1 && interrupts == 1 && calls[0] >= 1 && same_rows(&c, ref, n) &&
				   sr.ordered && sr.same && sr.calls == nchunks,
				   "streamed, %u threads: an interrupt that does not cancel stops the chunks, is let in after the "
				   "join, the same rows, every chunk to the sink once (rc %d, %ld pending, %ld interrupts)",
				   t, rc, pending_said, interrupts);
		dp_codes_free(&c);

		pending_calls = pending_said = interrupts = 0;
		pending_at = 0;
		pending_every = 2;
		memset(&sr, 0, sizeof(sr));
		sr.ref = ref;
		sr.n = n;
		sr.ordered = sr.same = true;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		pending_every = 0;
		unit_check(rc == 0 && same_rows(&c, ref, n) && pending_said >= 1 && interrupts == pending_said &&
				   pending_said <= 2 && sr.ordered && sr.same && sr.calls == nchunks,
				   "streamed, %u threads: an interrupt every 2nd poll: at most 2 stops, then the calling thread "
				   "alone, the same rows (rc %d, %ld stops, %ld polls)", t, rc, pending_said, pending_calls);
		dp_codes_free(&c);

		pending_calls = pending_said = interrupts = 0;
		pending_at = 3;
		calls[0] = 0;
		calls[1] = 1;
		memset(&sr, 0, sizeof(sr));
		sr.n = n;
		sr.ordered = sr.same = true;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == -1 && c.nrows == 0 && calls[0] == 1,
				   "streamed, %u threads: an interrupt that cancels: -1 at the first callback, no rows (rc %d)", t, rc);
		dp_codes_free(&c);
		dp_set_handlers(NULL);
	}
}

static void
test_chunked_run(void)
{
	const uint64_t n = 70001,
				chunk = 16000;	/* 5 chunks: rounds of 1, 2 and 3 with a short last one */
	model		md;
	dp_codes	start,
				whole,
				out[5];
	dp_gum_params p;
	dp_prng		rng;
	uint32_t	rep[2] = {0, 0};
	bool		same = true,
				onew = true;
	double		worst = 0;
	int			rc;

	make_model(&md, n);
	/* the start: a cold GUM run of n rows (what the chunks fit anew) */
	dp_gum_default_params(&p);
	p.iterations = 2;
	dp_prng_seed(&rng, 1);
	dp_codes_init(&start, 5, 0);
	unit_check(dp_gum_run(md.tg, md.nt, 5, md.sizes, n, &p, &rng, &start) == 0, "chunked: the start runs");
	p.iterations = 6;
	p.tolerance = -1;
	p.one_way_exact = true;
	p.start = &start;
	for (int k = 0; k < 5; k++)
	{
		dp_set_threads(k == 0 ? 1 : k == 1 || k == 3 ? 2 : 3);
		/* k 3, 4: every helper's arena too small, so their chunks run again on the calling thread */
		dp_gum_test_arena_bytes(k >= 3 ? 4096 : 0);
		p.progress = k == 0 ? count_reports : NULL;
		p.progress_arg = rep;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&out[k], 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &out[k]);
		unit_check(rc == 0 && out[k].nrows == n, "chunked, %u threads%s: runs (rc %d)", dp_threads(),
				   k >= 3 ? ", helpers' arenas too small" : "", rc);
	}
	dp_gum_test_arena_bytes(0);
	for (int k = 1; k < 5; k++)
		for (uint32_t j = 0; j < 5; j++)
			same = same && memcmp(out[0].col[j], out[k].col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "chunked: the same rows on 1, 2 and 3 threads, with helpers and without");
	unit_check(rep[0] == 6 && rep[1] >= 5, "chunked: each iteration reported once (%u), heartbeats (%u)",
			   rep[0], rep[1]);

	/* one run over all the rows with one_way_exact: the same one-way counts of the core columns
	 * (0, 1, 2; the peeled 3 and 4 are appended from their 2-way targets, chunk by chunk) */
	dp_set_threads(1);
	p.progress = NULL;
	dp_prng_seed(&rng, 11);
	dp_codes_init(&whole, 5, 0);
	unit_check(dp_gum_run(md.tg, md.nt, 5, md.sizes, n, &p, &rng, &whole) == 0,
			   "chunked: one run over all the rows");
	for (uint32_t c = 0; c < 3; c++)
	{
		dp_marg		a,
					b;

		exact_marg(&a, &whole, 1, &c, md.sizes);
		exact_marg(&b, &out[0], 1, &c, md.sizes);
		for (uint64_t v = 0; v < a.ncells; v++)
			onew = onew && a.cells[v] == b.cells[v];
		dp_marg_free(&a);
		dp_marg_free(&b);
	}
	unit_check(onew, "chunked: every core column's one-way counts those of one run over all the rows");

	/*
	 * every full chunk's own rows fit the 2-way targets (scaled to its rows) about as well as one
	 * run over all the rows: its L1 within twice that run's (a chunk has a fifth of the rows, so
	 * its cells' counts are coarser)
	 */
	for (uint64_t b = 0; b < n; b += chunk)
	{
		dp_codes	v = out[0];
		uint16_t   *cols[5];

		for (uint32_t j = 0; j < 5; j++)
			cols[j] = out[0].col[j] + b;
		v.col = cols;
		v.nrows = v.cap = n - b < chunk ? n - b : chunk;
		for (uint32_t k = 0; k < 5; k++)
		{
			double		e = l1_of(&md.tg[k], &v, md.sizes),
						w = l1_of(&md.tg[k], &whole, md.sizes);

			unit_diag("chunked: rows %llu.., target %u: L1 %.4f (one run over all the rows %.4f)",
					  (unsigned long long) b, k, e, w);
			if (v.nrows == chunk)	/* the last chunk's 6,001 rows: reported, not held to it */
				worst = fmax(worst, e - 2 * w);
		}
	}
	unit_check(worst < 0.01, "chunked: every chunk fits every 2-way target within twice one run's L1 "
			   "(worst excess %.4f)", worst);

	/* a cancel: at the first report, between rounds or in a lone chunk */
	for (uint32_t t = 1; t <= 2; t++)
	{
		dp_codes	c;

		dp_set_threads(t);
		p.progress = cancel_at_first;
		dp_prng_seed(&rng, 11);
		dp_codes_init(&c, 5, 0);
		rc = dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c);
		unit_check(rc == -1 && c.nrows == 0, "chunked, %u threads: a cancel returns -1, no rows (rc %d)", t, rc);
		dp_codes_free(&c);
	}
	test_chunked_stops(&md, n, chunk, &p, &out[0]);
	test_streamed(&md, n, chunk, &p, &out[0]);
	test_streamed_stops(&md, n, chunk, &p, &out[0]);
	dp_set_threads(1);
	p.progress = NULL;
	p.start = NULL;
	{
		dp_codes	c;

		dp_codes_init(&c, 5, 0);
		unit_check(dp_gum_run_chunked(md.tg, md.nt, 5, md.sizes, n, chunk, &p, &rng, &c) == -2,
				   "chunked: no start refused");
		dp_codes_free(&c);
	}
	for (int k = 0; k < 5; k++)
		dp_codes_free(&out[k]);
	dp_codes_free(&whole);
	dp_codes_free(&start);
	dp_codes_free(&md.src);
	free_targets(md.tg, md.nt);
}

/* the shares' failures say why (dp_last_error), as the rest of the core's do */
static void
test_chunk_counts_errors(void)
{
	uint32_t	c2[3] = {5, 0, 5},
				out[3];
	uint64_t	left[3] = {5, 0, 5};
	int			rc;
	bool		nomem,
				nomem_next;

	dp_clear_error();
	rc = dp_gum_chunk_counts(c2, 3, 11, 5, 0, out);
	unit_check(rc == -2 && dp_last_error_kind() == DP_ERR_INVALID && dp_last_error()[0] != '\0',
			   "dp_gum_chunk_counts: counts that do not sum to the whole: DP_ERR_INVALID, with a message (%s)",
			   dp_last_error());
	dp_clear_error();
	rc = dp_gum_chunk_next(left, 3, 10, 11, out);
	unit_check(rc == -2 && dp_last_error_kind() == DP_ERR_INVALID && dp_last_error()[0] != '\0',
			   "dp_gum_chunk_next: a chunk bigger than the rows left: DP_ERR_INVALID, with a message");
	dp_set_handlers(&(dp_handlers) {t_try_refuse, t_realloc, t_free, NULL, NULL, NULL, NULL});
	dp_clear_error();
	nomem = dp_gum_chunk_counts(c2, 3, 10, 5, 1, out) == -2 && dp_last_error_kind() == DP_ERR_NOMEM &&
		dp_last_error()[0] != '\0';
	dp_clear_error();
	nomem_next = dp_gum_chunk_next(left, 3, 10, 5, out) == -2 && dp_last_error_kind() == DP_ERR_NOMEM &&
		dp_last_error()[0] != '\0';
	dp_set_handlers(NULL);
	unit_check(nomem && nomem_next, "dp_gum_chunk_counts, dp_gum_chunk_next: no memory: DP_ERR_NOMEM, with a message");
	dp_clear_error();
}

/*
 * A chunk's arena counts a visit's kept cells (4 bytes a row, doubled) only where they can be
 * kept: not under incremental counting, which keeps none
 */
static void
test_arena_size(void)
{
	uint32_t	attrs[2] = {0, 1};
	double		cells[6] = {1, 2, 3, 4, 5, 6};
	dp_marg		tg = {.nattrs = 2, .ncells = 6, .cells = cells};
	const uint64_t rows = 250000;
	size_t		lazy,
				incr,
				autoc;

	tg.attrs[0] = attrs[0];
	tg.attrs[1] = attrs[1];
	lazy = dp_gum_test_arena_size(&tg, 1, 5, rows, DP_GUM_COUNT_LAZY);
	incr = dp_gum_test_arena_size(&tg, 1, 5, rows, DP_GUM_COUNT_INCREMENTAL);
	autoc = dp_gum_test_arena_size(&tg, 1, 5, rows, DP_GUM_COUNT_AUTO);
	unit_check(lazy == autoc && lazy - incr == 2 * 4 * rows,
			   "arena: 4 bytes a row (doubled) for kept cells under lazy and auto counting, none under "
			   "incremental (%zu, %zu, %zu)", lazy, autoc, incr);
}

int
main(void)
{
	test_chunk_counts();
	test_arena_size();
	test_chunk_next_large();
	test_chunk_counts_errors();
	test_arena();
	test_chunked_run();
	return unit_done();
}
