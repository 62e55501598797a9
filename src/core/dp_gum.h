/*
 * dp_gum.h - GUM, the "gradually update method" of PrivSyn (PRIVSYN.md step 9): turns published
 * marginals (already consistent and non-negative) into n synthetic rows whose marginals match them.
 *
 * Pure post-processing: it reads only released marginals and draws its randomness from the seedable
 * post-processing generator (dp_prng), so it spends no budget and the same seed and inputs give the
 * same rows.  Pure C: no PostgreSQL headers.
 *
 * What dp_gum_run does, in order:
 *   1. The marginal graph (columns as nodes, an edge between two columns that share a target of two
 *      or more attributes) is peeled layer by layer: every column of degree 1 is set aside together
 *      with its one 2-way target, the graph is updated and the next layer peeled, until no column of
 *      degree 1 is left (of an isolated pair, the column with the larger index is peeled and the
 *      other kept).  What remains are the "core" columns.
 *   2. Every core column is filled independently from its 1-way distribution: deterministic counts
 *      (largest remainder of p * n), then shuffled.
 *   3. GUM iterations t = 0..T-1 over the targets whose attributes are all core columns (the 1-way
 *      targets are not iterated: consistent 2-way targets imply them, and a column of degree 0 keeps
 *      its exact initial 1-way counts).  alpha_t = alpha0 * 0.84^floor(t/20); the marginals are
 *      visited in decreasing order of current L1 error; a visit moves rows from over-full to
 *      under-full cells exactly as PRIVSYN.md describes (gains min(a-s, alpha*s)*n or alpha*a*n for
 *      empty cells; losses min(s-a, beta*s)*n with beta found by bisection; rounding residues fixed
 *      by cumulative rounding so that rows lost = rows gained exactly; the lost rows, drawn uniformly
 *      without replacement inside each over-full cell, are shuffled into a pool; empty cells take
 *      pool rows by "replace", other under-full cells take round(r * gain) by "duplicate" and the
 *      rest by "replace", r = 0.5 on even and 1.0 on odd iterations).
 *      "Duplicate" copies the source row's values of the columns of the marginal's connected
 *      component (of the core graph), not of the whole row: the components are thereby synthesized
 *      independently of each other (PRIVSYN.md allows this), and a column of another component, or
 *      of degree 0, keeps its own distribution.  Components are interleaved in one loop here (not in
 *      parallel).
 *      Early stop: when the mean L1 error (sum |s - a| over the cells of a target, averaged over the
 *      iterated targets) has not dropped by more than `tolerance` below its best value for 10
 *      iterations (half an alpha step); tolerance < 0 never stops early.  Iterations past the
 *      early stop did not buy fidelity on the development tables (train-on-synthetic AUC and the
 *      distances), and a patience of 10 spends half the iterations of 20 proving it.
 *      The table GUM hands on is the best one it reached (lowest mean L1 at the end of an
 *      iteration), not the last: GUM's error oscillates, and the last table is often worse.  A copy of the iterated marginals' columns is kept for it (n bytes
 *      per column with 8-bit codes, 2 * n with 16-bit).
 *   4. The peeled columns are appended, last peeled layer first, each from its 2-way target
 *      conditioned on its (already synthesized) neighbour: for each neighbour value v, the rows
 *      holding v receive the column's codes in counts apportioned by largest remainder from
 *      target(v, .), in random order (a stratified form of sampling from target(v, .) normalised);
 *      where target(v, .) is all zero, the column's 1-way distribution is used instead.
 *
 * Targets: any number of dp_marg over 1 to DP_MARG_MAX_ATTRS columns (< ncols), with
 * sizes[k] == sizes[attrs[k]] and at most 2^32 - 1 cells; each is normalised to a distribution
 * (negative cells are read as 0; a target with no positive cell is an error).  The 1-way target of
 * every column is used for initialisation; if a column has none, the projection of the first target
 * containing it is used, and a column in no target at all is an error.  n must be < 2^32.
 *
 * Memory: every work array, and the growth of `out`, go through the installed handlers (dp_env.h;
 * inside PostgreSQL: palloc in a memory context, so that an error thrown by the progress callback
 * leaks nothing beyond that context).  Work memory, counted from the allocations of
 * dp_gum*.c: 17 * n bytes for the visits (wanted ordinals and then the rows found, 2n uint32; the
 * moves' arguments, n uint32, also the sort scratch of the sampling; their kinds, n bytes; the
 * moves split by part, n uint32 over all parts), plus 2 * n bytes per column of the iterated
 * marginals (8-bit codes: a working copy and the best table's copy; 16-bit: the best table's
 * copy), plus per cell of an iterated marginal 8 bytes of target and 4 * threads bytes of counts (threads: dp_threads()),
 * plus per part 24 KB of histograms for the recounts of small marginals,
 * plus per thread four batch buffers of 2 * batch * columns bytes (batch = 32768 / columns,
 * clamped to 256..4096: 64 KB each, 256 KB per thread, for 8 to 128 columns in a component),
 * 8 * batch bytes of cell indexes and 512 KB for lazy counting's moves of a chunk, besides the
 * 2 * n bytes per column of the output.  With 8-bit working columns, the output's 16-bit
 * columns of the iterated marginals are freed while GUM works on the copies and allocated again
 * at the end, after the best table's copies and the moves' arrays (9 * n bytes, 13 * n with a
 * visit's kept cells) are freed, so
 * that the peak holds one of the two.  A component of 24 columns or more with 8-bit
 * codes is stored in groups of S <= 32 columns (dp_gum_store.c, "Grouped layout"): the working copy and
 * the best table's copy take n * S bytes per group (padding: fewer bytes a row than there are
 * groups, over all of them), 4 * n bytes keep a visit's cells (unless counting is incremental;
 * column-major, the same 4 * n bytes when counting is LAZY), and at the end a group's 16-bit columns are allocated before the group is freed (n * S bytes
 * at that moment instead of one column's n).
 */
#ifndef DP_GUM_H
#define DP_GUM_H

#include <stdint.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_marg.h"
#include "dp_prng.h"

/* A chunked run handing its chunks over as they finish (dp_gum_params.chunk_sink). */
typedef struct dp_gum_stream dp_gum_stream;

typedef struct dp_gum_params
{
	uint32_t	iterations;		/* T, default 200 */
	double		alpha0;			/* initial step, default 1.0 (alpha_t = alpha0 * 0.84^floor(t/20)) */
	double		tolerance;		/* early stop (see above); default 1e-4; < 0: never */
	/*
	 * How the marginals' counts follow the row changes (dp_gum_internal.h, gum.lazy): AUTO (the
	 * default) picks, iteration by iteration, the cheaper of INCREMENTAL and LAZY.  The rows
	 * produced do not depend on it (both keep exact counts); it exists for tests and benchmarks.
	 */
	int			counting;
	/*
	 * Where the working table keeps a wide component's codes (dp_gum_store.c, "Grouped layout"): AUTO
	 * (the default) groups them when the component is wide; COLUMN_MAJOR never does.  The rows
	 * produced do not depend on it; it exists so that the tests compare the two layouts.
	 */
	int			layout;
	/*
	 * A warm start (NULL: none): when it has ncols columns and 0 < m < 2^32 rows, the core
	 * columns start from its rows instead of the independent fill of step 2 (the peeled ones are
	 * appended as always).  With m == n row i is start row i (dp_adaptive.c re-estimates after
	 * every round from the previous round's rows); with m < n every start row is copied
	 * floor(n / m) or ceil(n / m) times, in random order (dp_privsyn_sample's coarse-to-fine
	 * levels); with m > n, n of them drawn uniformly without replacement, in random order (the
	 * adaptive method's final rows from its last estimate).  Any other start is ignored (a cold
	 * start).
	 */
	const dp_codes *start;
	/*
	 * Read by dp_privsyn_sample, not by dp_gum_run (0, the default: never): when the model's
	 * joint domain over merged codes has at most this many cells, the rows are drawn from the
	 * maximum-entropy distribution of its marginals (dp_maxent.h) instead of by GUM, and `start`
	 * is not used.  The adaptive method sets it (dp_adaptive.h, step 5); PrivSyn does not.
	 */
	uint64_t	maxent_cells;
	/*
	 * Read by dp_privsyn_sample likewise (0, the default: never): when the joint domain exceeds
	 * maxent_cells but the junction tree of the model's marginals (dp_jtree.h) holds at most
	 * this many cells, the rows are drawn from the same maximum-entropy distribution, held on
	 * the tree.  The adaptive method sets it (dp_adaptive.h, step 5).
	 */
	uint64_t	jtree_cells;

	/*
	 * When true (default false), after the iterations every core column's 1-way counts are set
	 * exactly to the largest-remainder counts of its 1-way distribution (the initial fill's), by
	 * moving surplus rows, drawn at random in each over-full cell, to the under-full cells (only
	 * that column's code changes; dp_gum.c, gum_exact_one_way).  The adaptive method sets it for
	 * its final rows (dp_adaptive.h, step 5); sample_gum's coarser levels do not use it.
	 */
	bool		one_way_exact;

	/*
	 * When true (default false), a marginal's error, which orders the next iteration's visits and
	 * makes the iteration's mean (early stop, best table, progress), is taken right after its own
	 * visit: its counts then are those before the visit less the rows its over-full cells lost plus
	 * those its under-full cells gained, exact, and known without a pass over the rows.  The
	 * counts are then not brought up to date at each iteration's end: under lazy counting that
	 * recount of every marginal is one of a visit's three passes over the rows.  The errors are
	 * stale by the visits after their own (at most one iteration), so the visit order and the
	 * rows differ from the default's.  The adaptive method sets it for its final rows after a
	 * sub-model (dp_adaptive.h, step 5), where the rows are many and the iterations few.
	 */
	bool		visit_errors;

	/*
	 * Called (dp_env.h; phase DP_PHASE_GUM) after every iteration (done = iter = 1..iters, total =
	 * iters, err = mean L1 of the iterated targets; not called so when no target is iterated, e.g.
	 * a tree of 2-way targets, which is all appended).  A non-zero return cancels: dp_gum_run
	 * returns -1.  It is also called as a heartbeat (done = iterations done so far, total = iters,
	 * err = -1) after every column filled at the start or
	 * appended at the end, after every marginal visit, and between chunks of a visit's moves, so
	 * that a cancel never waits for more than about one pass over the rows.
	 */
	dp_progress_fn progress;
	void	   *progress_arg;

	/*
	 * The threads of a run's passes (0, the default: dp_threads()).  dp_gum_run_chunked sets 1
	 * for each chunk's run.  The rows produced do not depend on it.
	 */
	uint32_t	threads;

	/*
	 * A chunk of a bigger table (dp_gum_run_chunked sets it; NULL, the default: none): with
	 * one_way_exact, column c's exact counts are chunk_counts[c][0..sizes[c]) (they must sum to
	 * n), this chunk's share of the whole table's (dp_gum_chunk_next), so that the chunks'
	 * counts add up to the whole's exactly.
	 */
	const uint32_t *const *chunk_counts;

	/*
	 * Read by dp_privsyn_sample, not by dp_gum_run (0, the default: never): with a warm `start`
	 * of exactly the n rows asked for, GUM runs on chunks of this many rows independently
	 * (dp_gum_run_chunked) instead of once on all of them.
	 */
	uint64_t	independent_chunk;

	/*
	 * Read by dp_gum_run_chunked only (NULL, the default: none).  chunk_post runs on each chunk's
	 * rows once its GUM has run, on the thread that ran it (a helper in its arena: pure
	 * computation, no handler, no allocation it cannot do without), with the chunk's own
	 * generator as GUM left it; 0, or -2 (the chunk then runs again on the calling thread).
	 * dp_privsyn_sample sets it to split the chunk's merged codes back to their members.
	 */
	int			(*chunk_post) (void *arg, dp_codes *rows, dp_prng *rng);
	void	   *chunk_post_arg;

	/*
	 * Read by dp_gum_run_chunked only (NULL, the default: none): each chunk's finished rows
	 * (after chunk_post), handed over on the calling thread in row order, while helpers may still
	 * run GUM on later chunks (dp_gum_run_chunked).  rows: a view of the chunk's rows (valid
	 * during the call; they are out's rows first .. first + rows->nrows); total: the rows of the
	 * whole run.  A non-zero return stops the run (it returns -1).  The sink may call the
	 * embedder's handlers and may not return (an ERROR): before it unwinds it must call
	 * dp_gum_stream_abort(stream), which stops and joins the helpers.  Last, once the helpers are
	 * joined and before the stream's memory goes, it is called with rows NULL (first 0): the
	 * stream ends, whatever the run returns (unless a sink call unwound); it may not raise then,
	 * and dp_gum_stream_abort(stream) is not valid after it (an embedder that must stop the
	 * helpers when its process exits, at a FATAL inside the sink, forgets the stream there).
	 */
	int			(*chunk_sink) (void *arg, const dp_codes *rows, uint64_t first, uint64_t total,
							   struct dp_gum_stream *stream);
	void	   *chunk_sink_arg;
} dp_gum_params;

/*
 * Stops a chunked run's helpers and joins them (every signal blocked there, their memory
 * arenas'): for a chunk_sink that is about to unwind (dp_gum_params.chunk_sink).  After it the
 * run's state is dead; its memory is the embedder's to drop (inside PostgreSQL, the memory
 * context).  Idempotent.
 */
void		dp_gum_stream_abort(struct dp_gum_stream *stream);

#define DP_GUM_COUNT_AUTO			0
#define DP_GUM_COUNT_INCREMENTAL	1
#define DP_GUM_COUNT_LAZY			2

#define DP_GUM_LAYOUT_AUTO			0
#define DP_GUM_LAYOUT_COLUMN_MAJOR	1

void		dp_gum_default_params(dp_gum_params *p);

/*
 * Chunk `index`'s share (out[0..m)) of integer counts whole_counts[0..m) over a table of `whole`
 * rows (their sum) cut into chunks of `chunk` rows, the last one the rest: chunks are taken in
 * order, and each apportions its rows n_j among the codes by largest remainder of
 * R_v * n_j / R, R_v being code v's count not yet given to an earlier chunk and R their sum (the
 * rows left), in exact integer arithmetic, ties to the lower code.  So every chunk's counts sum
 * to its rows, no code is given more than it has left (the remainder of a code with nothing
 * left is 0: it never gets one of the extra rows), each count is within one of the rows left's
 * proportional share, and the last chunk takes what is left: over the chunks, every code's
 * counts sum to whole_counts exactly.  A function of its arguments only.  Returns 0, or -2
 * (allocation failure, or arguments that do not match: index past the last chunk, counts that
 * do not sum to whole).
 */
int			dp_gum_chunk_counts(const uint32_t *whole_counts, uint32_t m, uint64_t whole, uint64_t chunk,
								uint32_t index, uint32_t *out);

/*
 * The next chunk's share, as dp_gum_chunk_counts apportions it: nj of the rows_left rows (0 < nj
 * <= rows_left < 2^32) apportioned among m codes by largest remainder of left[v] * nj /
 * rows_left (left[0..m): the codes' counts not yet given to an earlier chunk, summing to
 * rows_left; each code's share is taken from it).  O(m log m).  Returns 0, or -2 (dp_fail).
 * Called for the chunks in order, from the whole's counts, it gives each chunk's counts.
 */
int			dp_gum_chunk_next(uint64_t *left, uint32_t m, uint64_t rows_left, uint64_t nj, uint32_t *out);

/*
 * Column c's exact one-way counts over `total` rows as dp_gum_run's one_way_exact sets them
 * (its 1-way distribution from the targets, apportioned by largest remainder): out[0..size).
 * Returns 0, or -2 (dp_fail: no target holds c, no positive mass, out of memory).
 */
int			dp_gum_one_way_counts(const dp_marg *targets, uint32_t ntargets, uint32_t c, uint32_t size,
								  uint64_t total, uint32_t *out);

/*
 * GUM warm from start (exactly n rows, row i starting as start row i) in independent chunks of
 * `chunk` rows (the last one the rest): chunk j is one dp_gum_run of its rows on one thread,
 * from its own generator (seeded, in chunk order, from rng's next outputs), its targets scaled to
 * its rows, with the params' iterations, and with one_way_exact each core column's counts
 * dp_gum_chunk_counts' share of the whole's.  The chunks run dp_threads() at a time, the calling
 * thread taking the first of each round and helper threads (every signal blocked) the others,
 * each chunk's memory from an arena the calling thread allocated before they started (the
 * calling thread's too: no handler is called while a helper runs, dp_env.h HELPER ARENAS); a
 * chunk that failed there (its arena too small) runs again on the calling thread once the
 * helpers are joined, from the same generator.  So the rows depend on the chunk size, never on
 * the threads.  While helpers run, the calling thread polls dp_interrupt_pending at its chunk's
 * every report; when it says yes, every chunk of the round stops at its next report, the round
 * is joined and the interrupt is let in (dp_check_interrupts, then the progress callback); if
 * neither cancels, the chunks that finished are kept and the stopped ones run again on the
 * threads (the same rows), and after a round's second stop on the calling thread alone.  The progress callback is otherwise called (a
 * heartbeat) between rounds, and within a chunk's run when a round has one chunk; each
 * iteration's mean L1 error over the chunks (weighted by their rows) is reported at the end.
 * With a chunk_post or a chunk_sink (dp_gum_params), the chunks are a queue instead of rounds
 * (dp_gum_chunks.c, STREAMING): the helpers and the calling thread take the next chunk no one
 * took, each run followed by chunk_post on its thread, its rows copied into out; the calling
 * thread hands each chunk to the sink, in order, as soon as it and the chunks before it are done,
 * and otherwise runs a chunk itself (while more are left than helpers run) or waits, polling
 * dp_interrupt_pending (an interrupt is let in
 * as above, with the helpers joined; after two such stops the rest run on the calling thread
 * alone).  The rows are the rounds' (chunk_post aside), whatever the threads.
 * Returns as dp_gum_run.
 */
int			dp_gum_run_chunked(const dp_marg *targets, uint32_t ntargets, uint32_t ncols,
							   const uint32_t *sizes, uint64_t n, uint64_t chunk,
							   const dp_gum_params *params, dp_prng *rng, dp_codes *out);

#ifdef DPSYNTH_TEST_RNG
/* The unit tests' seam (dp_random.h's): every helper's arena of this many bytes (0: as sized). */
void		dp_gum_test_arena_bytes(size_t bytes);
/* The same seam: the arena a chunk of `rows` rows is given under that counting mode. */
size_t		dp_gum_test_arena_size(const dp_marg *targets, uint32_t ntargets, uint32_t ncols,
								   uint64_t rows, int counting);
/*
 * The same seam: on, every chunk run in an arena that returns 0 has one of its codes changed
 * and its arena marked failed (as a run that got by without memory it asked for might), so
 * that a test sees such a run is not used.
 */
void		dp_gum_test_arena_tolerates(int on);
/* The same seam: the chunks of rounds with helpers run again on the calling thread (out of an
 * arena) since the last call. */
unsigned long dp_gum_test_serial_runs(void);
/* The same seam: the marginals brought up to date by a recount (of all the rows) since the last call. */
unsigned long dp_gum_test_recounts(void);
/* The same seam: the runs that gave back their best table at the end (an earlier iteration's) since the last call. */
unsigned long dp_gum_test_restores(void);
#endif

/*
 * Fills `out` (initialised by dp_codes_init with ncols columns, nrows == 0) with n synthetic rows
 * whose marginals on each target approximate the target scaled to n.  sizes[col] = number of codes
 * of column col (1..65536).  params NULL means the defaults.  Returns 0; -1 when the progress
 * callback cancelled (out->nrows is then 0); -2 on invalid input or allocation failure (out->nrows
 * 0).  `out` may have grown in either case; dp_codes_free releases it.
 *
 * Threads: dp_threads() (dp_env.h), read when the run starts, carry out a visit's pass over the
 * rows and its row moves.  The rows produced do not depend on it.  Helper threads block every
 * signal, touch only memory allocated beforehand, and live for one pass: they are started and
 * joined by dp_run_parallel (dp_parallel.c), once for a visit's scan of the rows and once for
 * every chunk of its moves, so that none runs when the progress callback does (see visit in
 * dp_gum_update.c).
 */
int			dp_gum_run(const dp_marg *targets, uint32_t ntargets, uint32_t ncols,
					   const uint32_t *sizes, uint64_t n, const dp_gum_params *params,
					   dp_prng *rng, dp_codes *out);

/*
 * The unit tests' seam, compiled only into their library (the Makefile's -DDPSYNTH_TEST_RNG, as
 * dp_random.h's): a table of this many rows or more is split into parts (one per thread), from
 * the next dp_gum_run on; 0 restores GUM_PAR_MIN_ROWS.  test_gum's failure sweeps split a small
 * table so that its every allocation and progress call on 2 threads costs a small run.
 */
#ifdef DPSYNTH_TEST_RNG
extern void dp_gum_test_par_min_rows(uint32_t rows);
#endif

#endif							/* DP_GUM_H */
