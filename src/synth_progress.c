/*
 * synth_progress.c - how the synthesis core calls back into PostgreSQL during dp_synthesize and
 * dp_sample: progress (pg_stat_activity, and NOTICEs with verbose => true), interrupts (cancel,
 * statement_timeout: CHECK_FOR_INTERRUPTS at every report), and allocation (palloc in the
 * current memory context, so that an error or a cancel that longjmps out of the core leaks
 * nothing).
 */
#include "synthesize.h"

#include "pgstat.h"

static const char *const phase_names[] = {"one-way marginals", "marginal selection", "publication",
"consistency", "row synthesis"};

void
synth_report(SynthProgress *pr, const char *phase, int percent)
{
	char	   *msg = psprintf("%s: %s, %d%%", pr->label, phase, percent);

	pgstat_report_activity(STATE_RUNNING, msg);
	pfree(msg);
	if (pr->verbose)
		ereport(NOTICE,
				(errmsg("phase \"%s\" is %d%% done", phase, percent),
				 errcontext("%s", pr->label)));
}

void
synth_progress_init(SynthProgress *pr, const char *label, bool verbose)
{
	pr->label = label;
	pr->verbose = verbose;
	pr->last_percent = -100;
	pr->last_phase = DP_PHASE_COUNT;
}

/*
 * Called by the pipeline (done a fraction, total 1) and by GUM (done iterations of total; a
 * heartbeat without a total counts as done): reports progress, and lets cancel and
 * statement_timeout in.
 */
int
synth_pipeline_progress(void *arg, const dp_progress *p)
{
	SynthProgress   *pr = arg;
	dp_phase	phase = p->phase;
	int			percent = (int) ((p->total > 0 ? p->done / p->total : 1) * 100);

	CHECK_FOR_INTERRUPTS();
	if (phase != pr->last_phase || percent >= pr->last_percent + 10)
	{
		pr->last_phase = phase;
		pr->last_percent = percent;
		synth_report(pr, phase_names[phase], percent);
	}
	return 0;
}

/*
 * The core's handlers (src/core/dp_env.h), installed once by _PG_init: palloc in the current
 * memory context, huge allocations allowed, so that an error or a cancel that longjmps out of the
 * core leaks nothing; NOTICEs; CHECK_FOR_INTERRUPTS.  palloc never returns NULL (it raises ERROR
 * with SQLSTATE 53200), so inside the server the core's own out-of-memory paths are not taken.
 * None of these may run on a helper thread: the core calls them on the backend's thread only.
 */
static void *
core_alloc(size_t n)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, n);
}

/* memory the core can do without (a helper's arena): NULL instead of the out-of-memory ERROR */
static void *
core_try_alloc(size_t n)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, n, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void *
core_realloc(void *p, size_t n)
{
	return repalloc_huge(p, n);
}

static void
core_free(void *p)
{
	pfree(p);
}

static void
core_notice(const char *msg)
{
	ereport(NOTICE, (errmsg_internal("%s", msg)));
}

static void
core_interrupt(void)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * Whether CHECK_FOR_INTERRUPTS would act now: it only reads the backend's flags (set by its
 * signal handlers), so the core may call it while its helper threads run.
 */
static int
core_pending(void)
{
	return INTERRUPTS_PENDING_CONDITION() && INTERRUPTS_CAN_BE_PROCESSED();
}

void
dpsynth_install_core_handlers(void)
{
	static const dp_handlers handlers = {core_alloc, core_realloc, core_free, core_notice, core_interrupt,
	core_pending, core_try_alloc};

	dp_set_handlers(&handlers);
}

/* The SQLSTATE of the core's last failure (dp_last_error_kind). */
int
dpsynth_core_errcode(void)
{
	switch (dp_last_error_kind())
	{
		case DP_ERR_NOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case DP_ERR_CANCELLED:
			return ERRCODE_QUERY_CANCELED;
		default:
			return ERRCODE_INTERNAL_ERROR;
	}
}

double
synth_now(void)
{
	return (double) GetCurrentTimestamp() / 1e6;
}
