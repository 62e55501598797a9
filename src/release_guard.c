/*
 * release_guard.c - errors after the charge reach the server log, never the caller
 * (release_guard.h; docs/DISTRIBUTED.md, "What a failure costs").
 *
 * Rule: no message, detail, hint or context that reaches a caller after the charge may carry
 * text that the rows or a remote server produced.  A cast that fails on a value ("invalid input
 * syntax for type bigint: ..."), a shard's RAISE, a remote error's CONTEXT: each would show a
 * protected value to an analyst who paid for a noisy count.  So the work after the charge runs in
 * one PG_TRY block; its catch copies the error, flushes the error state, writes the original to the
 * server log (LOG_SERVER_ONLY: never sent to the client, whatever client_min_messages says) and
 * raises a fixed error.  Nothing else runs in the catch: the transaction is aborted by the error
 * raised there, which releases locks, buffers, SPI connections and the user switch as any error
 * does, and the charge stays (the charging worker committed it).
 *
 * The SQLSTATE is replaced by ERRCODE_DPSYNTH_RELEASE_FAILED, except for the classes that say
 * nothing about the data and that a client must see to retry or stop: cancel and timeouts (57),
 * insufficient resources (53), serialization failure and deadlock (40001, 40P01).  A remote server
 * chooses its errors' SQLSTATEs, so a hostile one can pick among these few codes: at most about 3
 * bits per paid call, from a server whose owner holds its rows anyway.
 *
 * A cancel or timeout of this server's own (error_is_local_interrupt) keeps its words: they are
 * PostgreSQL's fixed text, and a client needs them.
 *
 * Errors before the charge are not touched: they are about the arguments, and the caller needs
 * them.  Errors of a remote server before the charge go through dpsynth_error_to_log too
 * (foreign.c), with a refusal of dpsynth's own.
 */
#include "dpsynth.h"
#include "release_guard.h"

#include "lib/stringinfo.h"
#include "utils/elog.h"
#include "utils/memutils.h"

bool
dpsynth_errcode_is_public(int sqlerrcode)
{
	return ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION ||
		ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_INSUFFICIENT_RESOURCES ||
		sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
		sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED;
}

int
dpsynth_error_to_log(MemoryContext mcxt, const char *what)
{
	ErrorData  *edata;
	StringInfoData b;

	MemoryContextSwitchTo(mcxt);
	edata = CopyErrorData();
	FlushErrorState();

	initStringInfo(&b);
	if (edata->detail)
		appendStringInfo(&b, "\nDETAIL: %s", edata->detail);
	if (edata->hint)
		appendStringInfo(&b, "\nHINT: %s", edata->hint);
	if (edata->context)
		appendStringInfo(&b, "\nCONTEXT: %s", edata->context);
	ereport(LOG_SERVER_ONLY,
			(errcode(edata->sqlerrcode),
			 errmsg_internal("dpsynth: %s; the caller was sent dpsynth's own error instead of: [%s] %s%s",
							 what, unpack_sql_state(edata->sqlerrcode),
							 edata->message ? edata->message : "(no message)", b.data),
			 errhidestmt(true),
			 errhidecontext(true)));
	return edata->sqlerrcode;
}

/*
 * Whether the current error is a cancel, a statement or lock timeout, or a termination that this
 * server's interrupt handler raised (ProcessInterrupts, in this backend or in a parallel worker of
 * this call).  Its words are PostgreSQL's own fixed text, nothing of the rows or of a remote
 * server (a remote error is raised here by postgres_fdw's reporting function, whatever its
 * SQLSTATE), and they are how a client tells a timeout from a cancel, so such an error reaches
 * the caller as it is.
 */
static bool
error_is_local_interrupt(MemoryContext mcxt)
{
	MemoryContext old = MemoryContextSwitchTo(mcxt);
	ErrorData  *edata = CopyErrorData();
	bool		local;

	local = (ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION ||
			 edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE) &&
		edata->funcname != NULL && strcmp(edata->funcname, "ProcessInterrupts") == 0;
	FreeErrorData(edata);
	MemoryContextSwitchTo(old);
	return local;
}

void
dpsynth_release_failed(DpReleaseGuard *guard)
{
	int			code;

	if (error_is_local_interrupt(guard->mcxt))
		PG_RE_THROW();
	code = dpsynth_error_to_log(guard->mcxt,
											psprintf("%s failed after its charge (ledger row " INT64_FORMAT ")",
													 guard->function, guard->ledger_id));

	ereport(ERROR,
			(errcode(dpsynth_errcode_is_public(code) ? code : ERRCODE_DPSYNTH_RELEASE_FAILED),
			 errmsg("%s failed after its charge; nothing was released", guard->function),
			 errdetail("The charge stays (ledger row " INT64_FORMAT "). The cause is in the server log only: an error at this stage may carry values of the rows or text of a remote server.",
					   guard->ledger_id),
			 errhint("Ask the administrator, who can read the server log.")));
	pg_unreachable();
}
