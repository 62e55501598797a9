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
"consistency", "GUM synthesis"};

void
synth_report(SynthProgress *pr, const char *phase, int percent)
{
	char	   *msg = psprintf("%s: %s, %d%%", pr->label, phase, percent);

	pgstat_report_activity(STATE_RUNNING, msg);
	if (pr->verbose)
		ereport(NOTICE, (errmsg("%s", msg)));
	pfree(msg);
}

void
synth_progress_init(SynthProgress *pr, const char *label, bool verbose)
{
	pr->label = label;
	pr->verbose = verbose;
	pr->last_percent = -100;
	pr->last_phase = DP_PHASE_COUNT;
}

/* Called by the pipeline: reports progress, and lets cancel and statement_timeout in. */
int
synth_pipeline_progress(void *arg, dp_privsyn_phase phase, double done)
{
	SynthProgress   *pr = arg;
	int			percent = (int) (done * 100);

	CHECK_FOR_INTERRUPTS();
	if (phase != pr->last_phase || percent >= pr->last_percent + 10)
	{
		pr->last_phase = phase;
		pr->last_percent = percent;
		synth_report(pr, phase_names[phase], percent);
	}
	return 0;
}

int
synth_gum_progress(void *arg, uint32_t iter, uint32_t iters, double err)
{
	(void) err;
	return synth_pipeline_progress(arg, DP_PHASE_GUM, iters ? (double) iter / iters : 1);
}

/* Allocation hooks for the core: palloc in the current context, huge allocations allowed, so
 * that an error or a cancel (longjmp out of the core) leaks nothing. */
void *
dpsynth_core_alloc(Size n)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, n);
}

void *
dpsynth_core_realloc(void *p, size_t n)
{
	return repalloc_huge(p, n);
}

void
dpsynth_core_free(void *p)
{
	pfree(p);
}

double
synth_now(void)
{
	return (double) GetCurrentTimestamp() / 1e6;
}
