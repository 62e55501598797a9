/*
 * release_guard.h - what a caller may read of an error raised after the charge (release_guard.c).
 *
 * Every release entry point (dp_marginal, dp_synthesize, dp_discover) runs the work after its
 * charge between DPSYNTH_AFTER_CHARGE and DPSYNTH_AFTER_CHARGE_END.  An error raised there (by the
 * scan, a foreign partition's server, discovery, the noise, the write) is written to the server
 * log only, and the caller receives one fixed message with the fixed SQLSTATE
 * ERRCODE_DPSYNTH_RELEASE_FAILED: no message, detail, hint or context that the rows or a remote
 * server produced reaches the caller.  The charge stays (it was committed by the charging worker).
 *
 * The region is a PG_TRY block: no return, break or goto may leave it, and a local variable
 * assigned inside it and read after it must be volatile.
 */
#ifndef DPSYNTH_RELEASE_GUARD_H
#define DPSYNTH_RELEASE_GUARD_H

#include "postgres.h"

#include "compat.h"
#include "executor/instrument.h"

/* an error after the charge: its text went to the server log only */
#define ERRCODE_DPSYNTH_RELEASE_FAILED		MAKE_SQLSTATE('Y','D','0','0','4')

typedef struct DpReleaseGuard
{
	const char *function;		/* "dp_marginal", ... (a constant) */
	int64		ledger_id;
	MemoryContext mcxt;			/* the caller's, for the copy of the error */
} DpReleaseGuard;

/*
 * In a PG_CATCH block: copies the current error, flushes the error state, writes the original
 * (message, detail, hint, context, SQLSTATE) to the server log only, prefixed by what, and returns
 * its SQLSTATE.  The caller must then raise an error of its own.
 */
extern int	dpsynth_error_to_log(MemoryContext mcxt, const char *what);

/*
 * Whether a SQLSTATE carries no fact of the data and may be shown as it is: cancel and timeouts
 * (class 57), insufficient resources (class 53), serialization failure and deadlock (40001,
 * 40P01).  Their text is still replaced.
 */
extern bool dpsynth_errcode_is_public(int sqlerrcode);

/* The catch of DPSYNTH_AFTER_CHARGE: logs the error and raises the fixed one. */
pg_noreturn extern void dpsynth_release_failed(DpReleaseGuard *guard);

/*
 * The region also hides its buffer counts: the backend's pgBufferUsage, which EXPLAIN (ANALYZE,
 * BUFFERS) and pg_stat_statements difference, is put back as it was when the region began, on
 * an error too (a caller may catch the fixed error and go on to EXPLAIN's report).  The
 * scan's counts would tell the caller the table's pages, and its "dirtied" ones how many pages
 * rows were inserted or deleted on since the last reader (the hint bits the scan sets); nothing
 * else reads these counters as running totals.  (pgWalUsage is left alone: the cumulative WAL
 * statistics difference it.)
 */
#define DPSYNTH_AFTER_CHARGE(fn, ledger) \
	do { \
		DpReleaseGuard dp_guard_ = {(fn), (ledger), CurrentMemoryContext}; \
		BufferUsage dp_buffers_ = pgBufferUsage; \
		PG_TRY()

#define DPSYNTH_AFTER_CHARGE_END() \
		PG_CATCH(); \
		{ \
			pgBufferUsage = dp_buffers_; \
			dpsynth_release_failed(&dp_guard_); \
		} \
		PG_END_TRY(); \
		pgBufferUsage = dp_buffers_; \
	} while (0)

#endif
