/*
 * log_guard.c - LOG and DEBUG messages kept from the clients of roles that may not read
 * statistics (docs/PRIVACY.md, "Side channels"; README, "Hardening").
 *
 * PostgreSQL plans a query before it checks the query's privileges, with the table's statistics
 * (its row count, its most common values and their frequencies, its histogram), and any role may
 * set debug_print_plan and client_min_messages = log: the plan, with its row estimates, then
 * reaches the client before "permission denied".  An analyst without SELECT on a protected table
 * would read its counts that way for free; dpsynth's own statements, planned inside a release,
 * would print the costs of a foreign partition's row estimate the same way.  So while this
 * library is loaded (README's hardening preloads it in every session), a message below INFO goes
 * to no client whose role is not a superuser (pg_read_all_stats grants the statistics views, not
 * pg_statistic, whose most common values a plan's estimates show); the server log gets it as
 * before.  PostgreSQL calls emit_log_hook only for a message the server logs: that
 * is every LOG message (debug_print_parse, _rewritten and _plan, trace_sort, RAISE LOG) while
 * log_min_messages is at its default or any level up to ERROR (fatal and panic log no LOG
 * message, and the hook then sees none: README's hardening says so), and a DEBUG one only where
 * log_min_messages logs it; a DEBUG message the server does not log still reaches a client that
 * asks for it (none known to carry statistics).
 * Warnings, notices, INFO and errors are untouched.
 *
 * The role is the session's outer one (GetOuterUserId: SET ROLE's, not a SECURITY DEFINER
 * function's nor dpsynth's own switch to the extension owner), so the plans of statements dpsynth
 * runs as the owner inside an analyst's release stay hidden too.  Whether that role is privileged
 * needs the catalog, which an error report may not read: it is looked up after each statement's
 * parse analysis (post_parse_analyze_hook, inside a transaction) and again when a statement is
 * planned (planner_hook: a prepared statement's custom plan has no parse analysis of its own), and
 * remembered with the role; a message under any other role, or before the first lookup, is hidden.
 */
#include "dpsynth.h"
#include "log_guard.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "utils/elog.h"
#include "utils/guc.h"

static bool restrict_client_messages = true;
static Oid	known_role = InvalidOid;
static bool known_privileged = false;
static emit_log_hook_type prev_emit_log_hook = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

static void
refresh_verdict(void)
{
	if (IsTransactionState() && IsNormalProcessingMode())
	{
		Oid			role = GetOuterUserId();

		known_privileged = superuser_arg(role);
		known_role = role;
	}
}

static void
note_role(ParseState *pstate, Query *query, JumbleState *jstate)
{
	refresh_verdict();
	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);
}

/*
 * Planning, too: the extended protocol plans a prepared statement again at each execution (a
 * custom plan) without a new parse analysis, and debug_print_plan prints that plan under the
 * verdict of the statement's parse, which a superuser demoted since would still pass.
 */
static PlannedStmt *
note_role_planner(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	refresh_verdict();
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

static void
guard_message(ErrorData *edata)
{
	if (restrict_client_messages && edata->output_to_client && edata->elevel < INFO &&
		!(IsNormalProcessingMode() && known_privileged && GetOuterUserId() == known_role))
		edata->output_to_client = false;
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

void
dpsynth_log_guard_init(void)
{
	DefineCustomBoolVariable("dpsynth.restrict_client_messages",
							 "Keeps LOG messages (and DEBUG ones the server logs) from the clients of roles that are not "
							 "superusers.",
							 "On by default: debug_print_plan and client_min_messages = log would show such a "
							 "role the planner's estimates of a table it may not read (its row count, its most "
							 "common values' counts).  The server log keeps the messages.  Effective in the "
							 "sessions that have loaded dpsynth (README, \"Hardening\": session_preload_libraries).",
							 &restrict_client_messages,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = guard_message;
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = note_role;
	prev_planner_hook = planner_hook;
	planner_hook = note_role_planner;
}
