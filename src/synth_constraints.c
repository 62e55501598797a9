/*
 * synth_constraints.c - what of the source's constraints a synthetic table may carry, and which
 * column types it may keep, decided from the (public) schema before the charge: only
 * expressions and domains made of built-in objects, because the caller creates and fills the
 * table with their own rights.
 */
#include "synthesize.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_range.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

/* ---------------------------------------------------------------------------------------
 * What a synthetic table may run.  The caller (often an admin) creates and fills it, so nothing
 * of the source's owner may end up running with the caller's rights: not a CHECK expression
 * calling the owner's function, not a domain constraint, not a constraint name spliced into SQL.
 * Only expressions made of built-in objects (OID below FirstNormalObjectId) are kept, with
 * non-volatile functions that run no query; a domain whose constraints or default are not
 * built-in-only is replaced by its base type.  All of it is decided from the schema (public)
 * before the charge.
 * --------------------------------------------------------------------------------------- */

typedef struct SafeCtx
{
	const char *why;			/* why not, when unsafe */
} SafeCtx;

static bool type_safe(Oid typid, int depth);

/* built-in functions that run queries or read tables although not volatile */
static bool
function_runs_queries(Oid funcid)
{
	static const char *const names[] = {"table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
		"schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "database_to_xml",
	"database_to_xmlschema", "database_to_xml_and_xmlschema", "query_to_xml", "query_to_xmlschema",
	"query_to_xml_and_xmlschema", "cursor_to_xml", "cursor_to_xmlschema", "ts_stat", "ts_rewrite"};
	char	   *name = get_func_name(funcid);

	if (!name)
		return true;
	for (size_t i = 0; i < lengthof(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return strstr(name, "_validator") != NULL;
}

static bool
function_unsafe(Oid funcid, void *arg)
{
	SafeCtx    *ctx = arg;

	if (funcid >= FirstNormalObjectId)
		ctx->why = "The expression calls a function that is not built in.";
	else if (func_volatile(funcid) == PROVOLATILE_VOLATILE)
		ctx->why = "The expression calls a volatile function.";
	else if (function_runs_queries(funcid))
		ctx->why = "The expression calls a function that runs queries.";
	else
		return false;
	return true;
}

/*
 * True if the (cooked) expression is unsafe: a function or operator that is not built in, or
 * volatile, or runs queries; a sub-query; a value of a type that is not built in (a user enum, a
 * domain, a composite: their input or checks may run code).  Column references (and a domain
 * check's VALUE) are fine whatever their type: the synthetic table's columns are safe types.
 */
static bool
unsafe_walker(Node *node, SafeCtx *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query) || IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, Aggref) ||
		IsA(node, WindowFunc) || IsA(node, Param) || IsA(node, NextValueExpr))
	{
		ctx->why = "The constraint is not a plain expression.";
		return true;
	}
	if (check_functions_in_node(node, function_unsafe, ctx))
		return true;
	if (!IsA(node, List) && !IsA(node, Var) && !IsA(node, CoerceToDomainValue))
	{
		Oid			t = exprType(node);

		if (OidIsValid(t) && t >= FirstNormalObjectId)
		{
			ctx->why = "The expression uses a type that is not built in.";
			return true;
		}
	}
	return expression_tree_walker(node, unsafe_walker, ctx);
}

static bool
expr_builtin_only(Node *expr, const char **why)
{
	SafeCtx		ctx = {NULL};

	if (unsafe_walker(expr, &ctx))
	{
		if (why)
			*why = ctx.why;
		return false;
	}
	return true;
}

/* A domain's own CHECK expressions (not its base type's), as stored (pg_constraint.conbin). */
static List *
domain_checks(Oid domid)
{
	List	   *checks = NIL;
	Relation	conrel = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key, Anum_pg_constraint_contypid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(domid));
	scan = systable_beginscan(conrel, ConstraintTypidIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Datum		bin;

		if (((Form_pg_constraint) GETSTRUCT(tup))->contype != CONSTRAINT_CHECK)
			continue;
		bin = heap_getattr(tup, Anum_pg_constraint_conbin, RelationGetDescr(conrel), &isnull);
		if (!isnull)
			checks = lappend(checks, stringToNode(TextDatumGetCString(bin)));
	}
	systable_endscan(scan);
	table_close(conrel, AccessShareLock);
	return checks;
}

/* A domain's own constraints and default: built-in only? */
static bool
domain_builtin_only(Oid domid, HeapTuple typtup)
{
	bool		isnull;
	Datum		def = SysCacheGetAttr(TYPEOID, typtup, Anum_pg_type_typdefaultbin, &isnull);
	ListCell   *lc;

	if (!isnull && !expr_builtin_only(stringToNode(TextDatumGetCString(def)), NULL))
		return false;
	foreach(lc, domain_checks(domid))
		if (!expr_builtin_only(lfirst(lc), NULL))
			return false;
	return true;
}

/*
 * Whether values of a type can be handled without running code its owner wrote: built-in types,
 * and domains (at any depth, at most 32) whose CHECKs are built-in only, over such types.
 */
static bool
type_safe(Oid typid, int depth)
{
	HeapTuple	tup;
	Form_pg_type t;
	bool		ok = true;

	check_stack_depth();
	if (depth > 32)
		return false;
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	if (!HeapTupleIsValid(tup))
		return false;
	t = (Form_pg_type) GETSTRUCT(tup);
	switch (t->typtype)
	{
		case TYPTYPE_DOMAIN:
			ok = domain_builtin_only(typid, tup) && type_safe(t->typbasetype, depth + 1);
			break;
		case TYPTYPE_COMPOSITE:
			if (typid >= FirstNormalObjectId)
			{
				TupleDesc	desc = lookup_rowtype_tupdesc_noerror(typid, -1, true);

				if (!desc)
					ok = false;
				else
				{
					for (int i = 0; ok && i < desc->natts; i++)
						if (!TupleDescAttr(desc, i)->attisdropped)
							ok = type_safe(TupleDescAttr(desc, i)->atttypid, depth + 1);
					ReleaseTupleDesc(desc);
				}
			}
			break;
		case TYPTYPE_RANGE:
			{
				HeapTuple	rt = SearchSysCache1(RANGETYPE, ObjectIdGetDatum(typid));

				if (!HeapTupleIsValid(rt))
					ok = false;
				else
				{
					Form_pg_range r = (Form_pg_range) GETSTRUCT(rt);

					ok = r->rngcanonical < FirstNormalObjectId && r->rngsubdiff < FirstNormalObjectId &&
						type_safe(r->rngsubtype, depth + 1);
					ReleaseSysCache(rt);
				}
			}
			break;
		case TYPTYPE_MULTIRANGE:
			ok = type_safe(get_multirange_range(typid), depth + 1);
			break;
		default:
			/* enums (built-in input), base types (only superusers make them), arrays: their
			 * elements */
			if (OidIsValid(t->typelem) && IsTrueArrayType(t))
				ok = type_safe(t->typelem, depth + 1);
			break;
	}
	ReleaseSysCache(tup);
	return ok;
}

/*
 * A column whose type is not safe: a domain gets its base type (and the base type's typmod) in
 * synthetic tables, with a NOTICE (the schema is public); any other unsafe type (a composite or
 * array over such a domain) can only be left NULL.  Before any charge.
 */
void
synth_secure_column_type(OutColumn *oc, const char *label)
{
	oc->source_typid = InvalidOid;
	if (type_safe(oc->typid, 0))
		return;
	if (get_typtype(oc->typid) == TYPTYPE_DOMAIN)
	{
		int32		typmod = -1;
		Oid			base = getBaseTypeAndTypmod(oc->typid, &typmod);

		ereport(NOTICE,
				(errmsg("column \"%s\" gets type %s, the base type of its domain %s", oc->name,
						format_type_with_typemod(base, typmod), format_type_be(oc->typid)),
				 errdetail("The domain's constraints or default use objects that are not built in, which would run with your rights."),
				 errcontext("%s", label)));
		oc->source_typid = oc->typid;
		oc->typid = base;
		oc->typmod = typmod;
		oc->basetypmod = typmod;
		oc->basetype = base;
	}
	if (!type_safe(oc->typid, 0) && oc->kind == OUT_SYNTH)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of type %s cannot be synthesized", oc->name, format_type_be(oc->typid)),
				 errdetail("Making its values would run code that is not built in (a domain's constraints) with your rights."),
				 errhint("Leave it out with columns => ..., or have the owner exclude it."),
				 errcontext("%s", label)));
}

/* raw parse tree: function and operator names unqualified or in pg_catalog, built-in type names,
 * columns of the relation with safe types, no sub-query */
typedef struct RawCtx
{
	Relation	rel;
	const char *why;
} RawCtx;

static bool
qualified_outside_catalog(List *name)
{
	return list_length(name) > 1 && strcmp(strVal(linitial(name)), "pg_catalog") != 0;
}

static bool
raw_unsafe_walker(Node *node, RawCtx *ctx)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink) || IsA(node, SelectStmt) || IsA(node, ParamRef))
	{
		ctx->why = "The constraint is not a plain expression.";
		return true;
	}
	if ((IsA(node, FuncCall) && qualified_outside_catalog(((FuncCall *) node)->funcname)) ||
		(IsA(node, A_Expr) && qualified_outside_catalog(((A_Expr *) node)->name)))
	{
		ctx->why = "The expression names a function or operator outside pg_catalog.";
		return true;
	}
	if (IsA(node, TypeName))
	{
		Type		typ = LookupTypeName(NULL, (TypeName *) node, NULL, true);
		bool		builtin = typ && ((Form_pg_type) GETSTRUCT(typ))->oid < FirstNormalObjectId;

		if (typ)
			ReleaseSysCache(typ);
		if (!builtin)
		{
			ctx->why = "The expression uses a type that is not built in.";
			return true;
		}
		return false;
	}
	if (IsA(node, ColumnRef))
	{
		ColumnRef  *cr = (ColumnRef *) node;
		AttrNumber	att;

		if (list_length(cr->fields) != 1 || !IsA(linitial(cr->fields), String))
		{
			ctx->why = "The expression references something other than a column.";
			return true;
		}
		att = attnameAttNum(ctx->rel, strVal(linitial(cr->fields)), false);
		if (att <= 0 || !type_safe(TupleDescAttr(RelationGetDescr(ctx->rel), att - 1)->atttypid, 0))
		{
			ctx->why = "The expression references an unknown column, or one of a type that is not safe.";
			return true;
		}
		return false;
	}
	return raw_expression_tree_walker(node, raw_unsafe_walker, ctx);
}

/*
 * Validates a stored CHECK expression for a synthetic table (relid, already created): parsed
 * with search_path pinned to pg_catalog, pg_temp, refused unless it uses built-in, non-volatile
 * functions and safe types only; returns it deparsed again, or NULL (with *why) if refused.
 * Nothing of the expression is executed.
 */
static char *
validate_check_text(Oid relid, const char *expr, const char **why)
{
	int			nestlevel = dpsynth_pin_search_path();
	List	   *raw;
	SelectStmt *sel;
	Node	   *rawexpr;
	Node	   *cooked;
	Relation	rel;
	RawCtx		rctx;
	char	   *result = NULL;

	*why = "The constraint is not a single expression.";
	raw = raw_parser(psprintf("SELECT (%s\n)", expr), RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		goto done;
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (sel->op != SETOP_NONE || list_length(sel->targetList) != 1 || sel->distinctClause || sel->intoClause ||
		sel->fromClause || sel->whereClause || sel->groupClause || sel->havingClause || sel->windowClause ||
		sel->valuesLists || sel->sortClause || sel->limitOffset || sel->limitCount || sel->lockingClause ||
		sel->withClause || ((ResTarget *) linitial(sel->targetList))->name)
		goto done;
	rawexpr = ((ResTarget *) linitial(sel->targetList))->val;
	rel = table_open(relid, AccessShareLock);
	rctx.rel = rel;
	rctx.why = NULL;
	if (raw_unsafe_walker(rawexpr, &rctx))
		*why = rctx.why;
	else
	{
		ParseState *pstate = make_parsestate(NULL);
		ParseNamespaceItem *nsitem = addRangeTableEntryForRelation(pstate, rel, AccessShareLock, NULL, false, true);

		addNSItemToQuery(pstate, nsitem, true, true, true);
		cooked = transformExpr(pstate, rawexpr, EXPR_KIND_CHECK_CONSTRAINT);
		cooked = coerce_to_boolean(pstate, cooked, "CHECK");
		assign_expr_collations(pstate, cooked);
		if (expr_builtin_only(cooked, why))
			result = deparse_expression(cooked, deparse_context_for(RelationGetRelationName(rel), relid), false, false);
		free_parsestate(pstate);
	}
	table_close(rel, NoLock);
done:
	AtEOXact_GUC(false, nestlevel);
	return result;
}

/*
 * The source's CHECK constraints (public schema facts), name and expression apart.  Those whose
 * expression uses only built-in objects (every object the constraint depends on is the table, its
 * columns or has an OID below FirstNormalObjectId; and the expression tree passes
 * expr_builtin_only) are returned; the names of the others go to *skipped, each with a NOTICE
 * (before the charge).  The expressions are deparsed with search_path pinned to pg_catalog,
 * pg_temp, so that every object they name outside pg_catalog is schema-qualified.
 */
List *
synth_read_checks(Oid relid, const char *label, List **skipped)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MemoryContext caller_cxt = CurrentMemoryContext;
	List	   *checks = NIL;
	int			nestlevel = dpsynth_pin_search_path();

	*skipped = NIL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT c.conname, pg_catalog.pg_get_expr(c.conbin, c.conrelid), c.conbin::text, "
							  "NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass "
							  "AND d.objid = c.oid AND d.refobjid >= 16384 "
							  "AND NOT (d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid = c.conrelid)) "
							  "FROM pg_catalog.pg_constraint c "
							  "WHERE c.conrelid = $1 AND c.contype = 'c' ORDER BY c.oid",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of the source");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *name = SPI_getvalue(tup, desc, 1);
		char	   *expr = SPI_getvalue(tup, desc, 2);
		char	   *bin = SPI_getvalue(tup, desc, 3);
		bool		isnull;
		bool		deps_ok = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
		const char *why = "The expression depends on objects that are not built in.";
		MemoryContext old = MemoryContextSwitchTo(caller_cxt);

		if (deps_ok && expr && bin && expr_builtin_only(stringToNode(bin), &why))
		{
			DpCheck    *c = palloc(sizeof(DpCheck));

			c->name = pstrdup(name);
			c->expr = pstrdup(expr);
			checks = lappend(checks, c);
		}
		else
		{
			ereport(NOTICE,
					(errmsg("CHECK constraint \"%s\" is not copied to the synthetic table", name),
					 errdetail("%s Only constraints made of built-in objects are copied, since a constraint runs with the rights of whoever writes to the table.", why),
					 errcontext("%s", label)));
			*skipped = lappend(*skipped, pstrdup(name));
		}
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	AtEOXact_GUC(false, nestlevel);
	return checks;
}

/*
 * The checks to add to the target (created, still empty): each validated again against it by
 * validate_check_text and deparsed from what was validated.  A stored model's text is
 * never pasted as it is: a check that does not pass is left out, with a NOTICE.
 */
List *
synth_validated_checks(Oid target_relid, List *checks, const char *label)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, checks)
	{
		DpCheck    *c = lfirst(lc);
		const char *why = NULL;
		char	   *expr = validate_check_text(target_relid, c->expr, &why);

		if (expr)
		{
			DpCheck    *v = palloc(sizeof(DpCheck));

			v->name = c->name;
			v->expr = expr;
			out = lappend(out, v);
		}
		else
			ereport(NOTICE,
					(errmsg("CHECK constraint \"%s\" is not added to the synthetic table", c->name),
					 errdetail("%s Only constraints made of built-in objects are added.", why),
					 errcontext("%s", label)));
	}
	return out;
}

/* a domain check's VALUE, as the target's column (deparsed by name) */
typedef struct ValueToVar
{
	AttrNumber	attnum;
} ValueToVar;

static Node *
value_to_var(Node *node, ValueToVar *ctx)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, CoerceToDomainValue))
	{
		CoerceToDomainValue *v = (CoerceToDomainValue *) node;

		return (Node *) makeVar(1, ctx->attnum, v->typeId, v->typeMod, v->collation, 0);
	}
	return expression_tree_mutator(node, value_to_var, ctx);
}

/*
 * The CHECK constraints of the (built-in-only, see secure_column_type) domains of the target's
 * columns, nested domains included, as expressions over the columns: heap_insert does not check
 * domains, so synthetic rows whose values a domain rejects are deleted with those a CHECK
 * rejects (post-processing).  Deparsed with search_path pinned to pg_catalog, pg_temp.
 */
List *
synth_domain_check_exprs(Oid target_relid, OutColumn *out, int nout)
{
	List	   *exprs = NIL;
	List	   *dpcontext = deparse_context_for(get_rel_name(target_relid), target_relid);
	int			nestlevel = dpsynth_pin_search_path();

	for (int i = 0; i < nout; i++)
	{
		ValueToVar	ctx = {(AttrNumber) (i + 1)};
		Oid			t = out[i].typid;

		while (get_typtype(t) == TYPTYPE_DOMAIN)
		{
			HeapTuple	tup;
			ListCell   *lc;

			foreach(lc, domain_checks(t))
			{
				Node	   *e = lfirst(lc);

				/* defence in depth: such a domain was replaced by its base type before */
				if (!expr_builtin_only(e, NULL))
					continue;
				exprs = lappend(exprs, deparse_expression(value_to_var(e, &ctx), dpcontext, false, false));
			}
			/* the domain's own base type (maybe a domain in turn) */
			tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(t));
			if (!HeapTupleIsValid(tup))
				elog(ERROR, "cache lookup failed for type %u", t);
			t = ((Form_pg_type) GETSTRUCT(tup))->typbasetype;
			ReleaseSysCache(tup);
		}
	}
	AtEOXact_GUC(false, nestlevel);
	return exprs;
}
