/*
 * dpsynth.c - module entry, privilege checks and calls into the catalog as the extension owner.
 *
 * The public owner functions (dp_protect, dp_declare, dp_limit_role) are all the C entry point
 * dpsynth_admin_call: it captures the invoking role, becomes the extension owner and calls the
 * SQL implementation dpsynth._<name>(invoker, args...), which checks ownership.  Nobody but the
 * extension owner may execute the implementations, so the invoker they are told is the truth.
 */
#include "dpsynth.h"
#include "synthesize.h"
#include "log_guard.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "dp_accounting.h"
#include "dp_gum.h"
#include "dp_random.h"
#include "dp_sampler.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

int			dpsynth_charge_timeout_ms = 30000;
int			dpsynth_synthesis_threads = 2;
int			dpsynth_max_sample_rows = 10000000;
int			dpsynth_max_model_cells = DPSYNTH_MODEL_MAX_CELLS;
int			dpsynth_discovery_scans = DPSYNTH_DISCOVERY_SCANS_ONE;

static const struct config_enum_entry discovery_scans_options[] = {
	{"one", DPSYNTH_DISCOVERY_SCANS_ONE, false},
	{"two", DPSYNTH_DISCOVERY_SCANS_TWO, false},
	{"check", DPSYNTH_DISCOVERY_SCANS_CHECK, false},
	{NULL, 0, false}
};
bool		dpsynth_write_pages = true;
static bool dpsynth_allow_drop_extension = false;

/*
 * dpsynth.synthesis_threads is the core's thread count (dp_env.h, THREAD COUNT): the GUC
 * machinery calls this on every change of the value (SET, RESET, a transaction's end, the
 * configuration file), never while the core runs.
 */
static void
assign_synthesis_threads(int newval, void *extra)
{
	(void) extra;
	dp_set_threads((uint32_t) newval);
}

void
_PG_init(void)
{
	dpsynth_install_core_handlers();	/* the core's one contract (src/core/dp_env.h) */
	DefineCustomIntVariable("dpsynth.charge_timeout",
							"How long the charging worker waits for a table's budget row lock.",
							"A charge that cannot take the lock in time fails, and nothing is released.",
							&dpsynth_charge_timeout_ms,
							30000, 1, 3600 * 1000,
							PGC_SUSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("dpsynth.synthesis_threads",
							"Threads one dp_synthesize or dp_sample call uses for counting, scoring and synthesis (GUM, and the sub-model draw of big tables).",
							"A superuser setting, as max_parallel_workers is: it bounds the cores one call takes. "
							"The synthetic rows do not depend on it (a seeded dp_sample gives the same rows); "
							"small tables use one thread.  Helper threads only compute, with "
							"every signal blocked, and end before the call does.",
							&dpsynth_synthesis_threads,
							2, 1, DP_MAX_THREADS,
							PGC_SUSET, 0,
							NULL, assign_synthesis_threads, NULL);
	DefineCustomIntVariable("dpsynth.scan_workers",
							"Parallel workers that help one release read a big table.",
							"A superuser setting.  Used when the table has at least "
							"min_parallel_table_scan_size of pages; bounded by max_parallel_workers and "
							"max_worker_processes, as a parallel query's workers are.  0: the calling backend "
							"reads alone.  The release does not depend on it: only the order in which rows are "
							"counted changes.",
							&dpsynth_scan_workers,
							2, 0, 64,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomEnumVariable("dpsynth.discovery_scans",
							 "How dp_synthesize reads a table whose quantile bins it learns.",
							 "A superuser setting.  'one': the rows are read once, discovery counting them "
							 "while they are encoded, where the learned columns are integers inside declared "
							 "bounds and the offsets the table's pages could hold fit in 4 x maintenance_work_mem "
							 "(else two scans); "
							 "'two': discovery reads the table, then the encoding scan; 'check': one scan, then "
							 "both of the others, with an internal error if their counts or encoded rows "
							 "differ (a test setting).  The release does not depend on it.",
							 &dpsynth_discovery_scans,
							 DPSYNTH_DISCOVERY_SCANS_ONE, discovery_scans_options,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("dpsynth.max_model_cells",
							"The largest released model dp_synthesize stores, in cells over all its marginals.",
							"A larger release still writes its table, with a WARNING, and returns a NULL "
							"model_id.  At most 8,000,000 (one jsonb value holds 256 MB).",
							&dpsynth_max_model_cells,
							DPSYNTH_MODEL_MAX_CELLS, 0, DPSYNTH_MODEL_MAX_CELLS,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("dpsynth.max_sample_rows",
							"The most rows one dp_synthesize or dp_sample call may write.",
							"Bounds rows => of both, and their default row count; checked before any work "
							"(a synthetic table is built in memory).",
							&dpsynth_max_sample_rows,
							10000000, 0, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("dpsynth.write_pages",
							 "Writes a new synthetic table as heap pages, a megabyte at a time (PostgreSQL 15).",
							 "On by default: PostgreSQL 15 extends a table one page at a time through shared "
							 "buffers, a large part of the cost of writing a big synthetic table.  Off, the rows "
							 "go through table_multi_insert, as on 16 and later, into temporary tables, and at "
							 "wal_level logical.  The rows are the same either way.",
							 &dpsynth_write_pages,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("dpsynth.allow_drop_extension",
							 "Lets DROP EXTENSION dpsynth delete every privacy budget and the whole ledger.",
							 "Off by default: dropping the extension (also through DROP SCHEMA ... CASCADE or "
							 "DROP OWNED) is refused.  Only a superuser can set it.",
							 &dpsynth_allow_drop_extension,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	dpsynth_log_guard_init();
	MarkGUCPrefixReserved("dpsynth");
	if (dp_random_init() != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("dpsynth could not initialize libsodium's random number generator")));
	/* the samplers' exact 128/256-bit arithmetic, checked against fixed answers */
	if (dp_sampler_selftest() != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("dpsynth's noise sampler failed its self-test; refusing to load")));
}

/* The extension's owner and schema, read from pg_extension directly (no SQL, so no search_path). */
static Oid
read_extension(Oid *nspid)
{
	Oid			extoid = get_extension_oid("dpsynth", true);
	Oid			owner = InvalidOid;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	if (!OidIsValid(extoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"dpsynth\" is not installed in this database")));
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
		*nspid = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(owner))
		elog(ERROR, "could not find the owner of extension dpsynth");
	return owner;
}

Oid
dpsynth_extension_owner(void)
{
	Oid			nspid;

	return read_extension(&nspid);
}

/*
 * Becomes the extension owner to read and write the catalog.  As in PostgreSQL's own
 * maintenance commands: a security-restricted operation, and search_path pinned to pg_catalog
 * so that no object of the caller's (an operator, a function, a type) can be resolved while we
 * run as the owner.  An error aborts the (sub)transaction, which restores both by itself.
 */
void
dpsynth_become_owner(DpOwnerSwitch *sw)
{
	Oid			owner = dpsynth_extension_owner();

	GetUserIdAndSecContext(&sw->save_userid, &sw->save_sec_context);
	SetUserIdAndSecContext(owner, sw->save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	sw->save_nestlevel = dpsynth_pin_search_path();
}

int
dpsynth_pin_search_path(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

int
dpsynth_pin_output_settings(void)
{
	static const char *const settings[][2] = {
		{"DateStyle", "ISO, YMD"},
		{"IntervalStyle", "postgres"},
		{"TimeZone", "UTC"},
		{"extra_float_digits", "1"},
		{"bytea_output", "hex"},
	};
	int			nestlevel = NewGUCNestLevel();

	for (int i = 0; i < (int) lengthof(settings); i++)
		(void) set_config_option(settings[i][0], settings[i][1], PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

void
dpsynth_restore_user(const DpOwnerSwitch *sw)
{
	AtEOXact_GUC(false, sw->save_nestlevel);
	SetUserIdAndSecContext(sw->save_userid, sw->save_sec_context);
}

Relation
dpsynth_open_source(Oid relid, bool foreign_ok)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel))));
	/* dp_protect refuses them; a protection made before it did must not be used either */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("temporary table \"%s\" cannot be released", RelationGetRelationName(rel)),
				 errdetail("dpsynth protects only permanent and unlogged tables. Nothing was charged.")));
	dpsynth_check_tree(rel, foreign_ok);
	return rel;
}

/*
 * The lock that serializes changes of a table's domains and policies with DP discovery: an
 * object lock whose class is the dpsynth extension itself, so that nothing else (and no SQL
 * function a user can call) takes it.  Held to the end of the transaction.
 */
void
dpsynth_lock_domains(Oid relid)
{
	Oid			extoid = get_extension_oid("dpsynth", false);

	LockDatabaseObject(extoid, relid, 0, ExclusiveLock);
}

PG_FUNCTION_INFO_V1(dpsynth_lock_domains_sql);
Datum
dpsynth_lock_domains_sql(PG_FUNCTION_ARGS)
{
	dpsynth_lock_domains(PG_GETARG_OID(0));
	PG_RETURN_VOID();
}

/* Whether a DROP command would take the extension dpsynth with it. */
static bool
drop_takes_dpsynth(Node *stmt)
{
	Oid			extoid = get_extension_oid("dpsynth", true);
	ListCell   *lc;

	if (!OidIsValid(extoid))
		return false;
	if (IsA(stmt, DropStmt))
	{
		DropStmt   *d = (DropStmt *) stmt;

		if (d->removeType == OBJECT_EXTENSION)
		{
			foreach(lc, d->objects)
				if (strcmp(strVal(lfirst(lc)), "dpsynth") == 0)
					return true;
		}
		else if (d->removeType == OBJECT_SCHEMA && d->behavior == DROP_CASCADE)
		{
			Oid			extschema;

			(void) read_extension(&extschema);

			foreach(lc, d->objects)
			{
				Oid			nsp = get_namespace_oid(strVal(lfirst(lc)), true);

				if (nsp == extschema || strcmp(strVal(lfirst(lc)), "dpsynth") == 0)
					return true;
			}
		}
	}
	else if (IsA(stmt, DropOwnedStmt))
	{
		Oid			owner = dpsynth_extension_owner();

		foreach(lc, ((DropOwnedStmt *) stmt)->roles)
			if (get_rolespec_oid(lfirst(lc), true) == owner)
				return true;
	}
	return false;
}

/* Runs a dpsynth.* call with OID, OID[], text arguments as the extension owner. */
static void
call_as_owner(const char *sql, int nargs, Oid *argtypes, Datum *values, const char *nulls)
{
	DpOwnerSwitch sw;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "%s failed", sql);
	SPI_finish();
	dpsynth_restore_user(&sw);
}

/*
 * dpsynth._guard_tree(rel, parents, false, created): refuses (55000) a table (rel, or the table
 * named created, not yet there) joining the parents if a row would then count under two
 * protected tables.  Parents that do not exist are left to PostgreSQL to report.
 */
static void
guard_join(Oid rel, const char *created, List *parents)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(parents), 1));
	int			n = 0;
	ListCell   *lc;
	Oid			argtypes[3] = {OIDOID, OIDARRAYOID, TEXTOID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};

	foreach(lc, parents)
		if (OidIsValid(lfirst_oid(lc)))
			elems[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	if (n == 0 || (!OidIsValid(rel) && created == NULL))
		return;
	values[0] = ObjectIdGetDatum(rel);
	nulls[0] = OidIsValid(rel) ? ' ' : 'n';
	values[1] = PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	values[2] = created ? CStringGetTextDatum(created) : (Datum) 0;
	nulls[2] = created ? ' ' : 'n';
	call_as_owner("SELECT dpsynth._guard_tree($1, $2, false, $3)", 3, argtypes, values, nulls);
}

/*
 * Whether a table or one of its ancestors has a budget (dpsynth._on_detach's donor), as the owner:
 * its descendants' and siblings' budgets are not the tree's a child leaves.  The ancestors are
 * read from pg_inherits here (a recursive query's estimate would cross jit_above_cost).  latest:
 * the budgets as committed now (GetLatestSnapshot), else as the transaction's snapshot sees them.
 */
static bool
in_protected_tree(Oid rel, bool latest)
{
	DpOwnerSwitch sw;
	List	   *todo = list_make1_oid(rel),
			   *seen = NIL;
	ListCell   *lc;
	Datum	   *elems;
	int			n = 0;
	Relation	inh = table_open(InheritsRelationId, AccessShareLock);
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		values[1];
	bool		isnull,
				found;

	while (todo != NIL)
	{
		Oid			r = linitial_oid(todo);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		todo = list_delete_first(todo);
		if (list_member_oid(seen, r))
			continue;
		seen = lappend_oid(seen, r);
		ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(r));
		scan = systable_beginscan(inh, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
			todo = lappend_oid(todo, ((Form_pg_inherits) GETSTRUCT(tup))->inhparent);
		systable_endscan(scan);
	}
	table_close(inh, AccessShareLock);
	elems = palloc(sizeof(Datum) * list_length(seen));
	foreach(lc, seen)
		elems[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* read-only SPI runs under the active snapshot: the latest one, or the transaction's */
	PushActiveSnapshot(latest ? GetLatestSnapshot() : GetTransactionSnapshot());
	if (SPI_execute_with_args("SELECT EXISTS (SELECT 1 FROM dpsynth.budgets b WHERE b.relid = ANY ($1) "
							  "AND dpsynth._identifies(b.relid, b.relname))",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read whether table %u is protected", rel);
	found = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) && !isnull;
	PopActiveSnapshot();
	SPI_finish();
	dpsynth_restore_user(&sw);
	return found;
}

/*
 * Whether a table leaving the tree of parent (DETACH PARTITION, NO INHERIT) leaves a protected
 * tree.  First, SHARE UPDATE EXCLUSIVE on parent: dp_protect takes it on the table it protects and
 * on every table below (dpsynth_lock_tree_sql), so a protection either commits before the check (and
 * is seen: the budgets are read as committed now, not as the statement's snapshot saw them) or
 * waits until the table has left.  mode: ACCESS EXCLUSIVE for a plain DETACH PARTITION (the
 * lock PostgreSQL takes on the parent anyway, so never an upgrade), SHARE UPDATE EXCLUSIVE for
 * CONCURRENTLY or FINALIZE (theirs) and for NO INHERIT (then ACCESS EXCLUSIVE in a protected
 * tree, call_detach).  Nothing is locked, and false returned, unless the role owns the table the
 * statement alters (owner_rel; PostgreSQL checks before it locks, and refuses anyone else's
 * statement itself) and, for NO INHERIT (child), parent is child's parent.  A transaction whose snapshot predates the protection (REPEATABLE READ or
 * SERIALIZABLE) would copy the budget as it saw it, none: refused as a serialization failure.
 */
static bool
leaves_protected_tree(Oid parent, Oid owner_rel, Oid child, LOCKMODE mode)
{
	if (!OidIsValid(parent) || !OidIsValid(owner_rel) || !dpsynth_table_ownercheck(owner_rel, GetUserId()))
		return false;			/* PostgreSQL refuses the statement itself */
	if (OidIsValid(child) && !list_member_oid(find_inheritance_children(parent, NoLock), child))
		return false;			/* NO INHERIT of a table that is not its parent: PostgreSQL says so */
	LockRelationOid(parent, mode);
	if (!in_protected_tree(parent, true))
		return false;
	if (IsolationUsesXactSnapshot() && !in_protected_tree(parent, false))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access to table \"%s\": dpsynth protected it after this transaction began",
						get_rel_name(parent)),
				 errdetail("A table leaving a protected tree takes the tree's budget, which this transaction's snapshot does not see."),
				 errhint("Retry the transaction.")));
	return true;
}

/*
 * Calls dpsynth._on_detach(child, parent) as the extension owner, once no release can read the
 * child through the tree any more.  This runs at ddl_command_start, before ALTER TABLE takes its
 * own locks: in a protected tree, the parent, then the child, are locked ACCESS EXCLUSIVE first
 * (the order in which a release's scan locks a tree), so a release that read or may read the
 * child through the parent ends, its charge committed, before the tree's spend is copied, and a
 * release that has not locked the parent yet finds the child gone from it.  Without the locks,
 * releases charged while the DETACH waited (an analyst's open transaction holding the tree) read
 * the child's rows and were never counted on its budget.  Outside a protected tree only the
 * lock PostgreSQL takes on the parent anyway is taken first (mode: leaves_protected_tree).
 */
static void
call_detach(Oid child, Oid parent, Oid owner_rel, LOCKMODE mode)
{
	Oid			argtypes[2] = {OIDOID, OIDOID};
	Datum		values[2] = {ObjectIdGetDatum(child), ObjectIdGetDatum(parent)};

	if (!OidIsValid(child) || !leaves_protected_tree(parent, owner_rel, child, mode))
		return;					/* PostgreSQL reports a missing table itself; nothing to hand on */
	LockRelationOid(parent, AccessExclusiveLock);
	LockRelationOid(child, AccessExclusiveLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(parent)) ||
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(child)))
		return;					/* dropped while this waited: PostgreSQL reports it */
	call_as_owner("SELECT dpsynth._on_detach($1, $2)", 2, argtypes, values, NULL);
}

/*
 * DETACH PARTITION ... CONCURRENTLY commits once before it waits for the transactions that still
 * see the partition, and a release in one of those still reads the partition's rows and is
 * charged on the tree: the leaving table's copy of the spend, made at the first commit, would miss
 * it.  Refused in a protected tree (0A000), FINALIZE of a detach left pending too.
 */
static void
refuse_concurrent_detach(Oid parent, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on table \"%s\", protected by dpsynth", what, get_rel_name(parent)),
			 errdetail("A release that began before the detach's first commit would read the partition's rows "
					   "and be charged on the tree only."),
			 errhint("Detach the partition without CONCURRENTLY.")));
}

/*
 * ALTER [FOREIGN] TABLE commands that move rows into or out of a protected tree: ATTACH
 * PARTITION and INHERIT go through the guard (no row may get a second budget); DETACH PARTITION
 * and NO INHERIT hand the leaving table the protection its rows had.
 */
static void
guard_alter_table(AlterTableStmt *stmt)
{
	Oid			rel;
	List	   *parents = NIL;	/* INHERIT: all of them at once (one statement may name several) */
	ListCell   *lc;

	rel = RangeVarGetRelid(stmt->relation, NoLock, true);
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		switch (cmd->subtype)
		{
			case AT_AttachPartition:
				guard_join(RangeVarGetRelid(((PartitionCmd *) cmd->def)->name, NoLock, true), NULL,
						   list_make1_oid(rel));
				break;
			case AT_DetachPartition:
				{
					Oid			part = RangeVarGetRelid(((PartitionCmd *) cmd->def)->name, NoLock, true);

					if (!((PartitionCmd *) cmd->def)->concurrent)
						call_detach(part, rel, rel, AccessExclusiveLock);
					else if (OidIsValid(part) && leaves_protected_tree(rel, rel, part, ShareUpdateExclusiveLock))
						refuse_concurrent_detach(rel, "DETACH PARTITION ... CONCURRENTLY");
				}
				break;
			case AT_DetachPartitionFinalize:
				if (leaves_protected_tree(rel, rel, InvalidOid, ShareUpdateExclusiveLock))
					refuse_concurrent_detach(rel, "DETACH PARTITION ... FINALIZE");
				break;
			case AT_AddInherit:
				parents = lappend_oid(parents, RangeVarGetRelid((RangeVar *) cmd->def, NoLock, true));
				break;
			case AT_DropInherit:
				call_detach(rel, RangeVarGetRelid((RangeVar *) cmd->def, NoLock, true), rel, ShareUpdateExclusiveLock);
				break;
			default:
				break;
		}
	}
	guard_join(rel, NULL, parents);
}

/*
 * Before ALTER [FOREIGN] TABLE (DROP COLUMN among its commands) or RENAME COLUMN runs: the
 * table's column policies and domains, and those of the tables below it (a rename or a drop
 * recurses into them), are brought back to their columns' names (dpsynth._domains_by_name).  A
 * restored table's rows may sit at their columns' old attnums until something does so; renamed
 * first, a column would leave its row behind under the old name (its 'exclude' lost), and
 * dropped first, the drop would miss its rows.  One query; a table without rows in those
 * catalogs costs no more.  Not while the extension's own script runs (its tables are altered),
 * nor on a catalog older than 0.7.0, which keeps no names.
 */
static void
resync_before_alter(RangeVar *relation)
{
	Oid			rel;
	List	   *tree;
	Datum	   *elems;
	int			n = 0;
	ListCell   *lc;
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		values[1];

	if (creating_extension || relation == NULL)
		return;
	/* a catalog older than 0.7.0 (the library is loaded before ALTER EXTENSION UPDATE) has none */
	argtypes[0] = OIDOID;
	if (!OidIsValid(LookupFuncName(list_make2(makeString("dpsynth"), makeString("_domains_by_name")),
								   1, argtypes, true)))
		return;
	argtypes[0] = OIDARRAYOID;
	rel = RangeVarGetRelid(relation, NoLock, true);
	if (!OidIsValid(rel))
		return;					/* PostgreSQL reports the missing table itself */
	tree = find_all_inheritors(rel, NoLock, NULL);
	elems = palloc(sizeof(Datum) * list_length(tree));
	foreach(lc, tree)
		elems[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(elems, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	call_as_owner("SELECT pg_catalog.count(*) FROM pg_catalog.unnest($1) r"
				  " WHERE CASE WHEN EXISTS (SELECT 1 FROM dpsynth.column_policies p WHERE p.relid = r)"
				  " OR EXISTS (SELECT 1 FROM dpsynth.domains d WHERE d.relid = r)"
				  " THEN dpsynth._domains_by_name(r) IS NULL END",
				  1, argtypes, values, NULL);
}

/* CREATE [FOREIGN] TABLE ... INHERITS (...) or PARTITION OF: the new table joins its parents. */
static void
guard_create_table(CreateStmt *stmt)
{
	List	   *parents = NIL;
	ListCell   *lc;

	foreach(lc, stmt->inhRelations)
		parents = lappend_oid(parents, RangeVarGetRelid(lfirst_node(RangeVar, lc), NoLock, true));
	guard_join(InvalidOid, quote_qualified_identifier(stmt->relation->schemaname, stmt->relation->relname),
			   parents);
}

/*
 * CREATE SCHEMA ... CREATE TABLE ... INHERITS (...) / PARTITION OF: the schema's elements run as
 * subcommands, for which no event trigger fires, so each table element is guarded here, named
 * in the schema being created.
 */
static void
guard_create_schema(CreateSchemaStmt *stmt)
{
	const char *schema = stmt->schemaname;
	ListCell   *lc;

	if (schema == NULL && stmt->authrole != NULL)
		schema = get_rolespec_name(stmt->authrole);
	foreach(lc, stmt->schemaElts)
	{
		CreateStmt *elt;
		CreateStmt	copy;
		RangeVar	relation;

		if (IsA(lfirst(lc), CreateStmt))
			elt = lfirst_node(CreateStmt, lc);
		else if (IsA(lfirst(lc), CreateForeignTableStmt))
			elt = &((CreateForeignTableStmt *) lfirst(lc))->base;
		else
			continue;
		copy = *elt;
		relation = *elt->relation;
		if (relation.schemaname == NULL)
			relation.schemaname = (char *) schema;
		copy.relation = &relation;
		guard_create_table(&copy);
	}
}

/*
 * Event trigger (ddl_command_start).  DROP EXTENSION dpsynth deletes every budget and the whole
 * ledger with it, so it is refused unless a superuser has confirmed it for the session with
 * SET dpsynth.allow_drop_extension = on.  ALTER [FOREIGN] TABLE: resync_before_alter, then
 * guard_alter_table; RENAME COLUMN: resync_before_alter; CREATE [FOREIGN] TABLE:
 * guard_create_table; CREATE SCHEMA: guard_create_schema.
 */
PG_FUNCTION_INFO_V1(dpsynth_guard_ddl);
Datum
dpsynth_guard_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "dpsynth_guard_ddl: not fired by an event trigger");
	trigdata = (EventTriggerData *) fcinfo->context;
	if (IsA(trigdata->parsetree, AlterTableStmt) || IsA(trigdata->parsetree, CreateStmt) ||
		IsA(trigdata->parsetree, CreateForeignTableStmt) || IsA(trigdata->parsetree, CreateSchemaStmt) ||
		(IsA(trigdata->parsetree, RenameStmt) &&
		 ((RenameStmt *) trigdata->parsetree)->renameType == OBJECT_COLUMN))
	{
		if (!OidIsValid(get_extension_oid("dpsynth", true)))
			PG_RETURN_NULL();
		if (IsA(trigdata->parsetree, AlterTableStmt))
		{
			resync_before_alter(((AlterTableStmt *) trigdata->parsetree)->relation);
			guard_alter_table((AlterTableStmt *) trigdata->parsetree);
		}
		else if (IsA(trigdata->parsetree, RenameStmt))
			resync_before_alter(((RenameStmt *) trigdata->parsetree)->relation);
		else if (IsA(trigdata->parsetree, CreateStmt))
			guard_create_table((CreateStmt *) trigdata->parsetree);
		else if (IsA(trigdata->parsetree, CreateSchemaStmt))
			guard_create_schema((CreateSchemaStmt *) trigdata->parsetree);
		else
			guard_create_table(&((CreateForeignTableStmt *) trigdata->parsetree)->base);
		PG_RETURN_NULL();
	}
	if (!dpsynth_allow_drop_extension && drop_takes_dpsynth(trigdata->parsetree))
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("dropping extension dpsynth would delete every privacy budget and the whole ledger"),
				 errdetail("Budgets, spent privacy loss, declared domains, models and the ledger live in the extension's schema; a table protected again later would start with nothing spent."),
				 errhint("Keep them first with a whole-database pg_dump. A superuser confirms the drop for the session with SET dpsynth.allow_drop_extension = on.")));
	PG_RETURN_NULL();
}

/*
 * Event trigger (ddl_command_end).  ALTER [FOREIGN] TABLE ... RENAME COLUMN old TO new, and ALTER
 * TYPE ... RENAME ATTRIBUTE old TO new (CASCADE renames the typed tables' columns): a privacy unit
 * and the columns constant within a unit named old, in the renamed table or the type's typed
 * tables and the tables below them, take the new name (dpsynth._unit_follows_rename).  At the
 * command's end, under the locks it took, and matched by the old name only (the parse tree holds
 * it), never by attnum: a column that merely sits at a restored table's unit attnum never becomes
 * the unit.
 */
PG_FUNCTION_INFO_V1(dpsynth_follow_rename);
Datum
dpsynth_follow_rename(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	RenameStmt *stmt;
	Oid			rel;
	Oid			argtypes[3] = {OIDOID, TEXTOID, TEXTOID};
	Datum		values[3];

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "dpsynth_follow_rename: not fired by an event trigger");
	trigdata = (EventTriggerData *) fcinfo->context;
	if (!IsA(trigdata->parsetree, RenameStmt))
		PG_RETURN_NULL();
	stmt = (RenameStmt *) trigdata->parsetree;
	if ((stmt->renameType != OBJECT_COLUMN && stmt->renameType != OBJECT_ATTRIBUTE) ||
		stmt->relation == NULL || stmt->subname == NULL || stmt->newname == NULL)
		PG_RETURN_NULL();
	rel = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(rel))
		PG_RETURN_NULL();
	values[0] = ObjectIdGetDatum(rel);
	values[1] = CStringGetTextDatum(stmt->subname);
	values[2] = CStringGetTextDatum(stmt->newname);
	call_as_owner("SELECT dpsynth._unit_follows_rename($1, $2, $3)", 3, argtypes, values, NULL);
	PG_RETURN_NULL();
}

static bool
has_role_named(Oid member, const char *rolname)
{
	Oid			role = get_role_oid(rolname, true);

	return OidIsValid(role) && has_privs_of_role(member, role);
}

void
dpsynth_check_release_privilege(Oid relid, const char *function)
{
	Oid			user = GetUserId();

	if (has_role_named(user, "dpsynth_analyst") || has_role_named(user, "dpsynth_admin") ||
		dpsynth_table_ownercheck(relid, user))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to call %s on table \"%s\"", function, get_rel_name(relid)),
			 errhint("Grant the role dpsynth_analyst to the caller: GRANT dpsynth_analyst TO %s;",
					 quote_identifier(GetUserNameFromId(user, false)))));
}

double
dpsynth_check_epsilon(FunctionCallInfo fcinfo, int argno)
{
	double		epsilon;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("epsilon must not be NULL")));
	epsilon = PG_GETARG_FLOAT8(argno);
	if (!(epsilon > 0) || isinf(epsilon))	/* also rejects NaN */
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon must be a positive finite number, not %s",
						float8out_internal(epsilon)),
				 errhint("Typical values are between 0.1 and 10; each call spends its epsilon from the table's budget.")));
	return epsilon;
}

/* The glue's names for the core's unit arithmetic (dp_plan.h), which budgets, limits and
 * charges all use. */
int64
dpsynth_rho_units(double epsilon, double delta)
{
	return dp_rho_units(epsilon, delta);
}

double
dpsynth_units_rho(int64 units)
{
	return dp_units_rho(units);
}

/*
 * dp_noise_counts refused the counts to release: only a negative count (a broken or hostile
 * shard's) or an invalid noise scale, after the charge.  Fails closed: nothing is released, and
 * the message carries no count.
 */
void
dpsynth_noise_refused(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("could not add noise to the counts to release"),
			 errdetail("A count is negative or the noise scale is invalid; nothing was released, and the charge stands.")));
}

void
dpsynth_check_delta(double delta)
{
	if (!dp_delta_valid(delta))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("delta must be in the open interval (0, 1), not %s", float8out_internal(delta))));
}

/* dp_rho(epsilon, delta) and dp_epsilon(rho, delta): the conversions used for every budget. */
PG_FUNCTION_INFO_V1(dpsynth_rho_units_sql);
Datum
dpsynth_rho_units_sql(PG_FUNCTION_ARGS)
{
	double		epsilon = dpsynth_check_epsilon(fcinfo, 0);
	double		delta = PG_GETARG_FLOAT8(1);
	int64		units;

	dpsynth_check_delta(delta);
	units = dpsynth_rho_units(epsilon, delta);
	if (units < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s at delta %s is outside the supported range",
						float8out_internal(epsilon), float8out_internal(delta)),
				 errhint("rho(epsilon, delta) must be at least 1e-12 and below 9e6.")));
	PG_RETURN_INT64(units);
}

/* The table's delta; raises (55000) if the table is not protected. */
static double
read_table_delta(Oid relid)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;
	double		delta;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT (dpsynth._check_protected($1)).delta", 1, argtypes, values, NULL,
							  true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the budget of relation %u", relid);
	delta = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	dpsynth_restore_user(&sw);
	return delta;
}

/* Raises (55000) if the table is not protected. */
void
dpsynth_check_protected(Oid relid)
{
	(void) read_table_delta(relid);
}

/*
 * Whether the charge fits is decided once, by the charging worker under the budget row's lock,
 * so that every refused attempt is in the ledger too.
 */
int64
dpsynth_rho_for_call(Oid relid, double epsilon, double *delta)
{
	int64		units;

	if (XactReadOnly || RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("dpsynth releases cannot run in a read-only transaction"),
				 errdetail("A release records its completion in the ledger."),
				 errhint("Run it in a read-write transaction on the primary.")));
	*delta = read_table_delta(relid);
	units = dpsynth_rho_units(epsilon, *delta);
	if (units < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s cannot be converted to zCDP at delta %s",
						float8out_internal(epsilon), float8out_internal(*delta)),
				 errhint("rho(epsilon, delta) must be at least 1e-12.")));
	return units;
}

/*
 * Refuses (55000) a protection of a tree one of whose tables (tree: the table and every table below
 * it, locked) has a partition whose DETACH PARTITION ... CONCURRENTLY committed its first
 * transaction and has not finished (pg_inherits.inhdetachpending).  Such a detach checked for a
 * budget when it began, found none, and would end without taking the tree's: the partition would
 * leave a protected tree without its budget.  Read from the catalog as committed now (the locks
 * just taken: a detach whose first transaction committed before them is seen; one that starts after
 * them waits for this transaction and is then refused in a protected tree).
 */
static void
refuse_pending_detach(List *tree)
{
	Relation	inh = table_open(InheritsRelationId, AccessShareLock);
	ListCell   *lc;

	foreach(lc, tree)
	{
		Oid			parent = lfirst_oid(lc);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;
		Oid			pending = InvalidOid;

		ScanKeyInit(&key, Anum_pg_inherits_inhparent, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(parent));
		scan = systable_beginscan(inh, InheritsParentIndexId, true, NULL, 1, &key);
		while (!OidIsValid(pending) && HeapTupleIsValid(tup = systable_getnext(scan)))
			if (((Form_pg_inherits) GETSTRUCT(tup))->inhdetachpending)
				pending = ((Form_pg_inherits) GETSTRUCT(tup))->inhrelid;
		systable_endscan(scan);
		if (OidIsValid(pending))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot protect table \"%s\" while partition \"%s\" is being detached from it",
							get_rel_name(linitial_oid(tree)), get_rel_name(pending)),
					 errdetail("ALTER TABLE \"%s\" DETACH PARTITION \"%s\" CONCURRENTLY has not finished; the partition would leave the protected table without its budget.",
							   get_rel_name(parent), get_rel_name(pending)),
					 errhint("Wait for the detach to finish, or finish it with ALTER TABLE ... DETACH PARTITION ... FINALIZE, then protect the table.")));
	}
	table_close(inh, AccessShareLock);
}

/*
 * SHARE UPDATE EXCLUSIVE on relid and every table below it, to the end of the transaction; then
 * refused while a partition of the tree is being detached concurrently.
 */
static void
lock_tree(Oid relid)
{
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	refuse_pending_detach(lcons_oid(relid, find_all_inheritors(relid, ShareUpdateExclusiveLock, NULL)));
}

/*
 * dpsynth._lock_tree(tbl), called by dpsynth._dp_protect once dpsynth._check_owner has let the
 * invoker protect tbl (so that no other role queues for the lock: its call fails first): SHARE
 * UPDATE EXCLUSIVE on tbl and every table below it, held to the end of the transaction, before the
 * protection is written, so that a DETACH PARTITION or NO INHERIT of the tree (which takes that
 * lock on the parent before it checks for a budget: leaves_protected_tree) either sees the
 * protection committed or has finished first.  Then refused while a partition of the tree is being
 * detached concurrently (refuse_pending_detach).  Not executable by PUBLIC: it locks any table.
 */
PG_FUNCTION_INFO_V1(dpsynth_lock_tree_sql);
Datum
dpsynth_lock_tree_sql(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	lock_tree(relid);
	PG_RETURN_VOID();
}

/*
 * dp_protect on a catalog whose _dp_protect does not call dpsynth._lock_tree (the library loaded
 * before ALTER EXTENSION UPDATE): the tree is locked here as _lock_tree would, after
 * dpsynth._check_owner has let the invoker protect the table (it raises for anyone else: the
 * rule stays in one place).  Runs as the extension owner, inside SPI.  Nothing
 * on an updated catalog.
 */
static void
protect_lock_old_catalog(Datum invoker, Datum relid)
{
	Oid			argtypes[3] = {OIDOID, OIDOID, TEXTOID};
	Datum		values[3] = {invoker, relid, CStringGetTextDatum("protect")};
	Oid			locktypes[1] = {REGCLASSOID};

	if (OidIsValid(LookupFuncName(list_make2(makeString("dpsynth"), makeString("_lock_tree")),
								  1, locktypes, true)))
		return;
	if (SPI_execute_with_args("SELECT dpsynth._check_owner($1, $2, $3)", 3, argtypes, values, NULL,
							  false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not check who may protect table %u", DatumGetObjectId(relid));
	lock_tree(DatumGetObjectId(relid));
}

/*
 * dpsynth_admin_call: the C body of every owner function.  Calls dpsynth._<proname> with the
 * invoking role prepended to the arguments, as the extension owner.
 */
PG_FUNCTION_INFO_V1(dpsynth_admin_call);
Datum
dpsynth_admin_call(PG_FUNCTION_ARGS)
{
	Oid			fnoid = fcinfo->flinfo->fn_oid;
	HeapTuple	proctup;
	Form_pg_proc proc;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
	char	   *nulls;
	Oid			rettype;
	StringInfoData sql;
	DpOwnerSwitch sw;
	Datum		result = (Datum) 0;
	bool		isnull = true;
	bool		is_protect;

	proctup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	if (!HeapTupleIsValid(proctup))
		elog(ERROR, "cache lookup failed for function %u", fnoid);
	proc = (Form_pg_proc) GETSTRUCT(proctup);
	nargs = proc->pronargs;
	rettype = proc->prorettype;

	argtypes = palloc(sizeof(Oid) * (nargs + 1));
	values = palloc(sizeof(Datum) * (nargs + 1));
	nulls = palloc(nargs + 1);
	argtypes[0] = OIDOID;
	values[0] = ObjectIdGetDatum(GetUserId());
	nulls[0] = ' ';
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT dpsynth.%s($1",
					 quote_identifier(psprintf("_%s", NameStr(proc->proname))));
	for (int i = 0; i < nargs; i++)
	{
		argtypes[i + 1] = proc->proargtypes.values[i];
		values[i + 1] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i + 1] = PG_ARGISNULL(i) ? 'n' : ' ';
		appendStringInfo(&sql, ", $%d", i + 2);
	}
	appendStringInfoChar(&sql, ')');
	is_protect = strcmp(NameStr(proc->proname), "dp_protect") == 0 && nargs > 0 && !PG_ARGISNULL(0);
	ReleaseSysCache(proctup);

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (is_protect)
		protect_lock_old_catalog(values[0], PG_GETARG_DATUM(0));
	if (SPI_execute_with_args(sql.data, nargs + 1, argtypes, values, nulls, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "dpsynth: %s did not return one row", sql.data);
	if (rettype != VOIDOID)
	{
		int16		typlen;
		bool		typbyval;

		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		get_typlenbyval(rettype, &typlen, &typbyval);
		if (!isnull)
			result = SPI_datumTransfer(result, typbyval, typlen);
	}
	SPI_finish();
	dpsynth_restore_user(&sw);

	if (rettype == VOIDOID)
		PG_RETURN_VOID();
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}


PG_FUNCTION_INFO_V1(dpsynth_rho);
Datum
dpsynth_rho(PG_FUNCTION_ARGS)
{
	double		epsilon = dpsynth_check_epsilon(fcinfo, 0);
	double		delta = PG_GETARG_FLOAT8(1);
	double		rho;

	dpsynth_check_delta(delta);
	rho = dp_zcdp_rho(epsilon, delta);
	if (isnan(rho))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s at delta %s is outside the supported range",
						float8out_internal(epsilon), float8out_internal(delta))));
	PG_RETURN_FLOAT8(rho);
}

PG_FUNCTION_INFO_V1(dpsynth_epsilon);
Datum
dpsynth_epsilon(PG_FUNCTION_ARGS)
{
	double		rho = PG_GETARG_FLOAT8(0);
	double		delta = PG_GETARG_FLOAT8(1);
	double		epsilon;

	if (!(rho >= 0) || isinf(rho))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rho must be a non-negative finite number, not %s", float8out_internal(rho))));
	dpsynth_check_delta(delta);
	epsilon = dp_zcdp_epsilon(rho, delta);
	if (isnan(epsilon))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rho %s at delta %s is outside the supported range",
						float8out_internal(rho), float8out_internal(delta))));
	PG_RETURN_FLOAT8(epsilon);
}
