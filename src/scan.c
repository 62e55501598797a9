/*
 * scan.c - one pass over every row of a protected table: its own rows, and those of its
 * partitions and inheritance children, at any depth.
 *
 * A partitioned or inherited table is protected as one table (one budget; its partitions cannot
 * be protected on their own, see dpsynth._dp_protect), so a release reads the whole tree.  Rows
 * come back in the root's column layout: a leaf whose columns differ (dropped columns, another
 * order) is converted by name.  Which leaves are read depends on the schema only: relations
 * without storage are skipped, and so are foreign tables (which dp_marginal and dp_synthesize's
 * adaptive method count on their servers, foreign.c, and every other release refuses before the
 * charge) and temporary tables,
 * which dpsynth_open_source refuses before the charge (a leaf attached since then is skipped rather
 * than failing after the charge; ATTACH PARTITION waits for this transaction's lock anyway).
 */
#include "dpsynth.h"

#include "access/relation.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/tupconvert.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "executor/tuptable.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* Whether a relation of the tree holds rows dpsynth reads. */
static bool
leaf_is_read(Oid relid)
{
	return get_rel_relkind(relid) == RELKIND_RELATION &&
		get_rel_persistence(relid) != RELPERSISTENCE_TEMP && !dpsynth_citus_counted(relid);
}

void
dpsynth_check_tree(Relation root, bool foreign_ok)
{
	List	   *tree = find_all_inheritors(RelationGetRelid(root), AccessShareLock, NULL);
	ListCell   *lc;

	foreach(lc, tree)
	{
		Oid			relid = lfirst_oid(lc);
		char		kind = get_rel_relkind(relid);

		dpsynth_check_visible(root, relid, foreign_ok);
		if (kind == RELKIND_FOREIGN_TABLE && !foreign_ok)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("partition \"%s\" of table \"%s\" is a foreign table", get_rel_name(relid),
							RelationGetRelationName(root)),
					 errdetail("This release reads rows, which stay on their server; dp_marginal and dp_synthesize's adaptive method count a foreign partition there. Nothing was charged.")));
		if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("table \"%s\" has a temporary partition or child \"%s\"",
							RelationGetRelationName(root), get_rel_name(relid)),
					 errdetail("dpsynth protects only permanent and unlogged tables. Nothing was charged.")));
	}
	list_free(tree);
}

/* The relations of root's tree for which keep() holds, locked (AccessShareLock). */
static List *
tree_where(Relation root, bool (*keep) (Oid relid))
{
	List	   *tree = find_all_inheritors(RelationGetRelid(root), AccessShareLock, NULL);
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, tree)
		if (keep(lfirst_oid(lc)))
			out = lappend_oid(out, lfirst_oid(lc));
	list_free(tree);
	return out;
}

static bool
is_foreign(Oid relid)
{
	return get_rel_relkind(relid) == RELKIND_FOREIGN_TABLE || dpsynth_citus_counted(relid);
}

List *
dpsynth_foreign_leaves(Relation root)
{
	return tree_where(root, is_foreign);
}

/* The relations of the tree that hold the rows read. */
List *
dpsynth_source_leaves(Relation root)
{
	return tree_where(root, leaf_is_read);
}

void
dpsynth_source_begin(DpSourceScan *s, Relation root)
{
	memset(s, 0, sizeof(*s));
	s->root = root;
	s->leaves = dpsynth_source_leaves(root);
	s->next = list_head(s->leaves);
	s->leaflock = NoLock;		/* locked by find_all_inheritors */
}

/*
 * A share of a parallel scan of the same tree (scan_parallel.c): the leaves the leader listed,
 * each read through its shared scan state, so that every block goes to one participant.  A
 * worker locks what it opens (granted within the leader's lock group).
 */
void
dpsynth_source_begin_shared(DpSourceScan *s, Relation root, List *leaves,
							ParallelTableScanDesc *pscans, LOCKMODE leaflock)
{
	memset(s, 0, sizeof(*s));
	s->root = root;
	s->leaves = list_copy(leaves);
	s->pscans = pscans;
	s->leaflock = leaflock;
	s->next = list_head(s->leaves);
}

/* Opens the next leaf; false when there is none. */
static bool
open_next_leaf(DpSourceScan *s)
{
	Oid			relid;

	if (s->next == NULL)
		return false;
	relid = lfirst_oid(s->next);
	s->next = lnext(s->leaves, s->next);
	/* the root is open already */
	s->leaf = relid == RelationGetRelid(s->root) ? s->root : table_open(relid, s->leaflock);
	s->leafslot = table_slot_create(s->leaf, NULL);
	s->map = s->leaf == s->root ? NULL :
		dpsynth_attrmap_by_name_if_req(RelationGetDescr(s->leaf), RelationGetDescr(s->root));
	if (s->map != NULL && s->rootslot == NULL)
		s->rootslot = table_slot_create(s->root, NULL);
	if (s->pscans != NULL)
		s->scan = table_beginscan_parallel(s->leaf, s->pscans[s->nopened]);
	else
		s->scan = table_beginscan(s->leaf, GetActiveSnapshot(), 0, NULL);
	s->nopened++;
	return true;
}

static void
close_leaf(DpSourceScan *s)
{
	table_endscan(s->scan);
	ExecDropSingleTupleTableSlot(s->leafslot);
	if (s->map != NULL)
		free_attrmap(s->map);
	if (s->leaf != s->root)
		table_close(s->leaf, NoLock);	/* locks are kept to the end of the transaction */
	s->leaf = NULL;
	s->map = NULL;
}

TupleTableSlot *
dpsynth_source_next(DpSourceScan *s)
{
	for (;;)
	{
		if (s->leaf == NULL && !open_next_leaf(s))
			return NULL;
		if (table_scan_getnextslot(s->scan, ForwardScanDirection, s->leafslot))
			return s->map == NULL ? s->leafslot : execute_attr_map_slot(s->map, s->leafslot, s->rootslot);
		close_leaf(s);
	}
}

void
dpsynth_source_end(DpSourceScan *s)
{
	if (s->leaf != NULL)
		close_leaf(s);
	if (s->rootslot != NULL)
		ExecDropSingleTupleTableSlot(s->rootslot);
	list_free(s->leaves);
}
