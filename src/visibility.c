/*
 * visibility.c - refuses, before the charge, a relation of a protected table's tree whose rows the
 * release's scan would not see, so that nothing is ever released from rows it never read.
 *
 * The scan (scan.c) reads each leaf with a table scan in this backend, through the leaf's table
 * access method.  What that misses:
 *   - a Citus table (distributed, reference or Citus-local: a row of pg_dist_partition): on the
 *     coordinator it is a shell, its rows are in shards (on the workers, or in shard tables of
 *     their own), and only a query planned by Citus reaches them; a scan of the shell reads no
 *     row, or the rows the table had when it was distributed (Citus leaves them on disk until
 *     truncate_local_data_after_distributing_table).  Refused here, in every release and in
 *     dp_protect (dpsynth._check_visible).  A table protected while local and distributed later
 *     (create_distributed_table keeps its OID) is refused by the same check at its next release.
 * What it does not miss, so is not refused here:
 *   - another table access method: table_beginscan reads any AM's rows (Citus columnar
 *     included, which stores its rows in this server's relation; it has no parallel scan, so
 *     scan_parallel.c reads a leaf that is not heap without workers);
 *   - a foreign table: dpsynth_check_tree refuses it in the releases that read rows, and
 *     dp_marginal and dp_synthesize's adaptive method count it on its server, foreign.c, which
 *     refuses any wrapper other than postgres_fdw before the charge.
 *
 * Citus's catalog is read only when the extension exists, by a scan of the catalog table (no
 * SPI: this runs inside the releases' checks).  A citus extension without the catalog, or a
 * catalog without the column, fails closed.
 */
#include "dpsynth.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/*
 * Citus's distribution method of relid ('h' hash, 'a' append, 'r' range, 'n' none: reference
 * or Citus-local) and replication model ('t' for a reference table), or '\0' when relid is not
 * a Citus table.
 */
char
dpsynth_citus_method(Oid relid, char *repmodel)
{
	Oid			catoid;
	AttrNumber	att_relid,
				att_method,
				att_repmodel;
	Relation	cat;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char		method = '\0';

	*repmodel = '\0';
	if (!OidIsValid(get_extension_oid("citus", true)))
		return '\0';
	catoid = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	att_relid = OidIsValid(catoid) ? get_attnum(catoid, "logicalrelid") : InvalidAttrNumber;
	att_method = OidIsValid(catoid) ? get_attnum(catoid, "partmethod") : InvalidAttrNumber;
	att_repmodel = OidIsValid(catoid) ? get_attnum(catoid, "repmodel") : InvalidAttrNumber;
	if (att_relid == InvalidAttrNumber || att_method == InvalidAttrNumber || att_repmodel == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the citus extension is installed, but its catalog pg_dist_partition cannot be read"),
				 errdetail("dpsynth cannot tell whether table \"%s\" is a Citus table, whose rows its scan does not see. Nothing was charged.",
						   get_rel_name(relid))));

	cat = table_open(catoid, AccessShareLock);
	ScanKeyInit(&key, att_relid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(cat, InvalidOid, false, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, att_method, RelationGetDescr(cat), &isnull);

		method = isnull ? '?' : DatumGetChar(d);
		d = heap_getattr(tup, att_repmodel, RelationGetDescr(cat), &isnull);
		*repmodel = isnull ? '?' : DatumGetChar(d);
	}
	systable_endscan(scan);
	table_close(cat, AccessShareLock);
	return method;
}

/*
 * Whether relid is a Citus table that dp_marginal and dp_synthesize's adaptive method count
 * through Citus (citus.c): a hash-distributed or a reference table that is not partitioned.
 */
bool
dpsynth_citus_counted(Oid relid)
{
	char		repmodel;
	char		method = dpsynth_citus_method(relid, &repmodel);

	return (method == 'h' || (method == 'n' && repmodel == 't')) && get_rel_relkind(relid) == RELKIND_RELATION;
}

static void
check_visible(Relation root, Oid relid, bool counted_ok, const char *tail)
{
	char		repmodel;
	char		method = dpsynth_citus_method(relid, &repmodel);
	const char *kind;

	if (method == '\0')
		return;
	/* the table itself, hash-distributed or a reference table: counted on its shards (citus.c) */
	if (counted_ok && relid == RelationGetRelid(root) && dpsynth_citus_counted(relid))
		return;
	kind = method == 'h' ? "distributed" : method == 'a' ? "append-distributed" : method == 'r' ? "range-distributed" :
		method != 'n' ? "distributed" : repmodel == 't' ? "reference" : "Citus-local";
	if (relid == RelationGetRelid(root))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table \"%s\" is a Citus %s table", RelationGetRelationName(root), kind),
				 errdetail("Its rows are in Citus shards, which dpsynth's scan on this server does not read. %s%s",
						   counted_ok ? "dpsynth counts on the shards only a hash-distributed or reference table that is not partitioned." :
						   "Only dp_marginal and dp_synthesize's adaptive method count a Citus table on its shards.",
						   tail)));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("partition \"%s\" of table \"%s\" is a Citus %s table", get_rel_name(relid),
					RelationGetRelationName(root), kind),
			 errdetail("Its rows are in Citus shards, which dpsynth's scan on this server does not read; dpsynth counts on the shards only a table that is itself hash-distributed or a reference table.%s",
					   tail)));
}

void
dpsynth_check_visible(Relation root, Oid relid, bool counted_ok)
{
	check_visible(root, relid, counted_ok, " Nothing was charged.");
}

/*
 * dpsynth._check_visible(tbl): the same check on every relation of tbl's tree, for dp_protect
 * (a table a release could never read is refused when it is protected).
 */
PG_FUNCTION_INFO_V1(dpsynth_check_visible_sql);
Datum
dpsynth_check_visible_sql(PG_FUNCTION_ARGS)
{
	Relation	rel = relation_open(PG_GETARG_OID(0), AccessShareLock);
	List	   *tree = find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL);
	ListCell   *lc;

	foreach(lc, tree)
		check_visible(rel, lfirst_oid(lc), true, "");
	list_free(tree);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}
