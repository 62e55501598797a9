/*
 * evaluate.h - the owner's quality report (dp_evaluate, dp_report): shared by evaluate.c, which
 * checks and reads the tables, and report.c, which draws the HTML page.
 */
#ifndef DPSYNTH_EVALUATE_H
#define DPSYNTH_EVALUATE_H

#include "postgres.h"

#include "fmgr.h"

#include "dp_eval.h"

/* What was compared, for the page's headline. */
typedef struct DpEvalTables
{
	Oid			relid[DP_EVAL_NTABLES];	/* InvalidOid: no holdout */
	char	   *target;			/* NULL: none */
} DpEvalTables;

/*
 * Reads the tables named by arguments 0-3 (real, synthetic, holdout, target) with the caller's
 * privileges and fills *res (allocated in the current memory context).  Raises, before reading a
 * row, for a NULL argument, different column sets, an unknown target or a missing SELECT
 * privilege; and for an empty table.
 */
extern void dpsynth_evaluate_tables(FunctionCallInfo fcinfo, dp_eval_result *res, DpEvalTables *tables);

#endif
