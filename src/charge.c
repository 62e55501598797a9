/*
 * charge.c - durable, serialized charging of a table's privacy budget.
 *
 * PRIVACY.md: a call charges its whole rho before it draws any noise, in a transaction of its
 * own that nothing the caller does later can undo (ROLLBACK, a later error, cancel, crash).
 *
 * How: the caller puts the request in a dynamic shared memory segment and starts a dynamic
 * background worker.  The worker connects to the same database as the extension owner, runs
 * dpsynth._charge() (which locks the table's budget row FOR NO KEY UPDATE, so concurrent charges
 * serialize, checks the allowance and the role limits, appends the ledger row and adds to
 * rho_spent), commits with synchronous_commit = on, and only then sets `committed` in the
 * segment (and sets the caller's latch).  The caller waits until `committed` is set or the worker
 * has exited, and proceeds only if `committed` is set and the status is "charged": a committed
 * charge is durable, so the caller need not wait for the worker's exit.  Any other outcome
 * raises: fail closed, nothing is released.
 *
 * The worker's transaction is not the caller's, so it may wait for a lock the caller's open
 * transaction holds (the budget row, changed or locked earlier in that transaction), while the
 * caller waits for the worker: a deadlock the lock manager cannot see, since the caller waits on
 * its latch.  The caller checks, while it waits, whether the worker waits for one of its locks;
 * if so it cancels the worker, whose transaction then commits nothing, and raises: nothing is
 * charged or released.  A wait for another session's lock ends at dpsynth.charge_timeout.
 * (Rows the caller inserted into tables that reference the budget row, such as a domain
 * discovered earlier in the transaction, hold only a key-share lock on it, which the charge's
 * FOR NO KEY UPDATE does not wait for.)
 *
 * If the caller is cancelled while it waits, it cancels the worker too and raises; nothing is
 * released.  A charge the worker committed before the cancel reached it stays (the safe
 * direction).
 *
 * A refused attempt releases nothing, so its record (the first of its kind a ledger row, the
 * others a counter in dpsynth.refusals) is committed without waiting for the WAL flush: a loop
 * of refused calls costs bounded disk and no synchronous I/O.
 */
#include "dpsynth.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

PGDLLEXPORT void dpsynth_charge_worker_main(Datum main_arg);

/* How long a caller waits for a free background worker slot before giving up. */
#define CHARGE_REGISTER_TIMEOUT_MS	30000
/* How often a caller checks whether the charging worker waits for one of the caller's locks. */
#define CHARGE_POLL_MS				100

typedef enum ChargeStatus
{
	CHARGE_NOT_RUN = 0,
	CHARGE_CHARGED,
	CHARGE_OVER_BUDGET,
	CHARGE_OVER_ROLE_LIMIT,
	CHARGE_UNPROTECTED
} ChargeStatus;

typedef struct ChargeRequest
{
	/* input, written by the caller */
	Oid			dboid;
	Oid			runas;			/* the extension owner */
	Oid			caller;
	Oid			session_user;
	Oid			relid;
	double		epsilon;
	double		delta;
	int64		rho_units;		/* rho in units of 1e-12 */
	double		delta_add;		/* additive delta of approximate-DP mechanisms */
	int			lock_timeout_ms;
	PGPROC	   *caller_proc;	/* whose latch the worker sets once committed */
	char		function[NAMEDATALEN];
	Size		columns_off;	/* NUL-terminated text[] literal after the struct, or 0 */
	Size		details_off;	/* NUL-terminated JSON after the struct */
	/* output, written by the worker */
	int			status;
	bool		committed;
	int64		ledger_id;
	Oid			limit_role;
	char		rho_charged[64];
	char		rho_remaining[64];
	char		errmsg[512];
	int			errcode;		/* the worker's error's SQLSTATE, with errmsg */
} ChargeRequest;

static const char *
request_string(ChargeRequest *req, Size off)
{
	return off == 0 ? NULL : (const char *) req + off;
}

/* Whether the worker with this pid waits for a heavyweight lock that this backend holds. */
static bool
worker_waits_for_us(pid_t pid)
{
	PGPROC	   *proc = BackendPidGetProc(pid);
	ArrayType  *blockers;
	int32	   *pids;
	int			n;

	if (proc == NULL || (proc->wait_event_info & 0xFF000000) != PG_WAIT_LOCK)
		return false;
	blockers = DatumGetArrayTypeP(DirectFunctionCall1(pg_blocking_pids, Int32GetDatum(pid)));
	pids = (int32 *) ARR_DATA_PTR(blockers);
	n = ArrayGetNItems(ARR_NDIM(blockers), ARR_DIMS(blockers));
	for (int i = 0; i < n; i++)
		if (pids[i] == MyProcPid)
			return true;
	return false;
}

/*
 * Waits until the charging worker has committed the charge (req->committed, the worker then only
 * exits) or has exited.  Returns true if it had to cancel the worker because
 * the worker waited for a lock this backend holds: this backend holds it until its transaction
 * ends, which cannot happen while it waits here, so the worker was still waiting when cancelled
 * and its transaction committed nothing.  If this backend is cancelled (or the wait fails) it
 * cancels the worker too, so that a charge not yet committed is not committed for nothing.
 */
static bool
wait_for_charge(BackgroundWorkerHandle *handle, const ChargeRequest *req)
{
	volatile bool cancelled = false;

	PG_TRY();
	{
		for (;;)
		{
			BgwHandleStatus st;
			pid_t		pid = 0;

			CHECK_FOR_INTERRUPTS();
			if (((const volatile ChargeRequest *) req)->committed)
				break;
			st = GetBackgroundWorkerPid(handle, &pid);
			if (st == BGWH_STOPPED)
				break;
			if (st == BGWH_POSTMASTER_DIED)
				ereport(ERROR,
						(errcode(ERRCODE_DPSYNTH_CHARGE_FAILED),
						 errmsg("could not record the privacy charge"),
						 errdetail("The postmaster died; nothing was released.")));
			if (st == BGWH_STARTED && !cancelled && worker_waits_for_us(pid))
			{
				cancelled = true;
				if (kill(pid, SIGINT) != 0 && errno != ESRCH)
					elog(ERROR, "could not cancel the charging worker: %m");
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, CHARGE_POLL_MS,
							 WAIT_EVENT_BGWORKER_SHUTDOWN);
			ResetLatch(MyLatch);
		}
	}
	PG_CATCH();
	{
		pid_t		pid = 0;
		BgwHandleStatus st = GetBackgroundWorkerPid(handle, &pid);

		/* asked now, not from the last poll: a worker that started since is cancelled too */
		if (st == BGWH_STARTED)
			(void) kill(pid, SIGINT);
		else if (st == BGWH_NOT_YET_STARTED)
			TerminateBackgroundWorker(handle);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return cancelled;
}

int64
dpsynth_charge(Oid relid, const char *function, const char *columns_literal, double epsilon,
			   double delta, int64 rho_units, double delta_add, const char *details_json)
{
	Size		ncol = columns_literal ? strlen(columns_literal) + 1 : 0;
	Size		ndet = strlen(details_json) + 1;
	dsm_segment *seg;
	ChargeRequest *req;
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle = NULL;
	int			waited = 0;
	bool		deadlocked;
	int64		ledger_id;

	seg = dsm_create(sizeof(ChargeRequest) + ncol + ndet, 0);
	req = dsm_segment_address(seg);
	memset(req, 0, sizeof(ChargeRequest));
	req->dboid = MyDatabaseId;
	req->runas = dpsynth_extension_owner();
	req->caller = GetUserId();
	req->session_user = GetSessionUserId();
	req->relid = relid;
	req->epsilon = epsilon;
	req->delta = delta;
	req->rho_units = rho_units;
	req->delta_add = delta_add;
	req->lock_timeout_ms = dpsynth_charge_timeout_ms;
	req->caller_proc = MyProc;
	strlcpy(req->function, function, NAMEDATALEN);
	if (columns_literal)
	{
		req->columns_off = sizeof(ChargeRequest);
		memcpy((char *) req + req->columns_off, columns_literal, ncol);
	}
	req->details_off = sizeof(ChargeRequest) + ncol;
	memcpy((char *) req + req->details_off, details_json, ndet);

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "dpsynth");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "dpsynth_charge_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "dpsynth charge for PID %d", MyProcPid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "dpsynth charge");
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	worker.bgw_notify_pid = MyProcPid;

	/* Worker slots are shared with parallel query and other extensions: wait for one. */
	while (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		if (waited >= CHARGE_REGISTER_TIMEOUT_MS)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start the dpsynth charging worker"),
					 errdetail("No background worker slot became free within %d seconds; nothing was charged or released.",
							   CHARGE_REGISTER_TIMEOUT_MS / 1000),
					 errhint("Raise max_worker_processes.")));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		waited += 50;
	}

	deadlocked = wait_for_charge(handle, req);
	pg_read_barrier();
	if (deadlocked && !req->committed)
		ereport(ERROR,
				(errcode(ERRCODE_DPSYNTH_CHARGE_FAILED),
				 errmsg("could not record the privacy charge: it waits for a lock this transaction holds"),
				 errdetail("The charge of table \"%s\" is committed in a transaction of its own, which waited for a lock on dpsynth's catalog that this transaction took earlier (for example by changing the table's protection). Nothing was charged, computed or released.",
						   get_rel_name(relid)),
				 errhint("Commit that change first, then call again.")));

	/*
	 * A charge refused as a serialization failure (dpsynth._charge: the privacy unit changed while
	 * the call ran) keeps its SQLSTATE, 40001, so that a client's retry loop sees it; any other
	 * failure of the worker is YD003.
	 */
	if (!req->committed)
		ereport(ERROR,
				(errcode(req->errcode == ERRCODE_T_R_SERIALIZATION_FAILURE ?
						 ERRCODE_T_R_SERIALIZATION_FAILURE : ERRCODE_DPSYNTH_CHARGE_FAILED),
				 errmsg("could not record the privacy charge; nothing was computed or released"),
				 req->errmsg[0] ? errdetail("The charging worker reported: %s", req->errmsg) : 0,
				 req->errcode == ERRCODE_T_R_SERIALIZATION_FAILURE ?
				 errhint("Call again: the table's privacy unit changed while this call ran.") :
				 errhint("Check the server log; the charge runs in a background worker as the extension owner, which must be able to log in.")));

	switch ((ChargeStatus) req->status)
	{
		case CHARGE_CHARGED:
			break;
		case CHARGE_OVER_BUDGET:
			ereport(ERROR,
					(errcode(ERRCODE_DPSYNTH_BUDGET_EXHAUSTED),
					 errmsg("privacy budget of table \"%s\" is exhausted", get_rel_name(relid)),
					 req->delta_add > 0 ?
					 errdetail("This call needs rho %s and selection delta %g; the table has rho %s left, or not enough selection delta. The attempt is recorded in dp_refusals.",
							   req->rho_charged, req->delta_add, req->rho_remaining) :
					 errdetail("This call needs rho %s; the table has rho %s left. The attempt is recorded in dp_refusals.",
							   req->rho_charged, req->rho_remaining),
					 errhint("Ask for a smaller epsilon, or ask the table's owner to raise the budget with dp_protect.")));
			break;
		case CHARGE_OVER_ROLE_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_DPSYNTH_ROLE_LIMIT),
					 errmsg("role limit on table \"%s\" is exhausted", get_rel_name(relid)),
					 errdetail("This call needs rho %s, more than the limit set on role \"%s\" leaves. The attempt is recorded in dp_refusals.",
							   req->rho_charged, GetUserNameFromId(req->limit_role, true)),
					 errhint("Ask the table's owner to raise the limit with dp_limit_role.")));
			break;
		case CHARGE_UNPROTECTED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("table \"%s\" is not protected by dpsynth", get_rel_name(relid)),
					 errdetail("The charge, committed in a transaction of its own, finds no committed protection of the table. Nothing was charged or released."),
					 errhint("A table protected in the current transaction can be released once that transaction has committed.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DPSYNTH_CHARGE_FAILED),
					 errmsg("could not record the privacy charge; nothing was computed or released")));
	}
	ledger_id = req->ledger_id;
	dsm_detach(seg);
	return ledger_id;
}

/*
 * Marks the call's ledger row completed, in the caller's transaction.  The row was committed by
 * the charging worker after this transaction's snapshot may have been taken (REPEATABLE READ,
 * SERIALIZABLE), so it is updated under the latest snapshot: nobody else updates it.
 */
void
dpsynth_complete(int64 ledger_id)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(ledger_id)};
	SPIPlanPtr	plan;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare("UPDATE dpsynth.ledger SET status = 'completed', completed_at = pg_catalog.clock_timestamp() "
					   "WHERE id = $1 AND status = 'charged'", 1, argtypes);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, values, NULL, GetLatestSnapshot(), InvalidSnapshot, false, true, 1) != SPI_OK_UPDATE ||
		SPI_processed != 1)
		elog(ERROR, "could not mark ledger row " INT64_FORMAT " completed", ledger_id);
	SPI_finish();
	dpsynth_restore_user(&sw);
}

static ChargeStatus
status_from_text(const char *s)
{
	if (strcmp(s, "charged") == 0)
		return CHARGE_CHARGED;
	if (strcmp(s, "over_budget") == 0)
		return CHARGE_OVER_BUDGET;
	if (strcmp(s, "over_role_limit") == 0)
		return CHARGE_OVER_ROLE_LIMIT;
	if (strcmp(s, "unprotected") == 0)
		return CHARGE_UNPROTECTED;
	return CHARGE_NOT_RUN;
}

void
dpsynth_charge_worker_main(Datum main_arg)
{
	dsm_segment *seg;
	ChargeRequest *req;
	ChargeStatus status = CHARGE_NOT_RUN;
	int64		ledger_id = 0;
	Oid			limit_role = InvalidOid;
	char		rho_charged[64] = "";
	char		rho_remaining[64] = "";

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* No resource owner yet: the mapping lasts until we detach or exit. */
	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		proc_exit(0);			/* the caller is gone: charge nothing */
	req = dsm_segment_address(seg);

	BackgroundWorkerInitializeConnectionByOid(req->dboid, req->runas, 0);

	PG_TRY();
	{
		Oid			argtypes[10] = {OIDOID, OIDOID, OIDOID, TEXTOID, TEXTOID, FLOAT8OID, FLOAT8OID, INT8OID,
		FLOAT8OID, TEXTOID};
		Datum		values[10];
		char		nulls[10] = "          ";
		const char *columns = request_string(req, req->columns_off);
		HeapTuple	tup;
		TupleDesc	desc;
		bool		isnull;
		Datum		d;

		values[0] = ObjectIdGetDatum(req->relid);
		values[1] = ObjectIdGetDatum(req->caller);
		values[2] = ObjectIdGetDatum(req->session_user);
		values[3] = CStringGetTextDatum(req->function);
		values[4] = columns ? CStringGetTextDatum(columns) : (Datum) 0;
		nulls[4] = columns ? ' ' : 'n';
		values[5] = Float8GetDatum(req->epsilon);
		values[6] = Float8GetDatum(req->delta);
		values[7] = Int64GetDatum(req->rho_units);
		values[8] = Float8GetDatum(req->delta_add);
		values[9] = CStringGetTextDatum(request_string(req, req->details_off));

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "dpsynth: charging a privacy budget");

		/*
		 * The commit must be durable before the caller releases anything.  Another session
		 * that holds the budget row may hold it for long, hence the lock timeout
		 * (dpsynth.charge_timeout); a wait for the caller's own lock is ended by the caller
		 * (wait_for_charge).
		 */
		if (SPI_execute(psprintf("SET LOCAL search_path = pg_catalog, pg_temp; "
								 "SET LOCAL synchronous_commit = on; SET LOCAL lock_timeout = %d; "
								 "SET LOCAL statement_timeout = 0", req->lock_timeout_ms),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not configure the charging transaction");
		if (SPI_execute_with_args("SELECT status, ledger_id, rho_charged::text, rho_remaining::text, limit_role "
								  "FROM dpsynth._charge($1, $2, $3, $4, $5::text[], $6, $7, $8, $9, $10::jsonb)",
								  10, argtypes, values, nulls, false, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "dpsynth._charge did not return a row");
		tup = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		status = status_from_text(SPI_getvalue(tup, desc, 1));
		d = SPI_getbinval(tup, desc, 2, &isnull);
		ledger_id = isnull ? 0 : DatumGetInt64(d);
		if (SPI_getvalue(tup, desc, 3))
			strlcpy(rho_charged, SPI_getvalue(tup, desc, 3), sizeof(rho_charged));
		if (SPI_getvalue(tup, desc, 4))
			strlcpy(rho_remaining, SPI_getvalue(tup, desc, 4), sizeof(rho_remaining));
		d = SPI_getbinval(tup, desc, 5, &isnull);
		limit_role = isnull ? InvalidOid : DatumGetObjectId(d);
		/* nothing is released after a refusal: its record need not be flushed synchronously */
		if (status != CHARGE_CHARGED &&
			SPI_execute("SET LOCAL synchronous_commit = off", false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not configure the refusal's transaction");

		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		pgstat_report_activity(STATE_IDLE, NULL);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		strlcpy(req->errmsg, edata->message ? edata->message : "unknown error", sizeof(req->errmsg));
		req->errcode = edata->sqlerrcode;
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* Only now, after the commit, may the caller go on. */
	req->status = status;
	req->ledger_id = ledger_id;
	req->limit_role = limit_role;
	strlcpy(req->rho_charged, rho_charged, sizeof(req->rho_charged));
	strlcpy(req->rho_remaining, rho_remaining, sizeof(req->rho_remaining));
	pg_write_barrier();
	req->committed = true;
	/* the caller goes on now: its charge is durable (a caller gone: a spurious wakeup at most) */
	SetLatch(&req->caller_proc->procLatch);
	dsm_detach(seg);
	proc_exit(0);
}
