/*
 * domain.c - columns of a protected table and their public domains.
 *
 * A column's domain comes, in this order, from:
 *   1. the owner's declaration, or a domain an earlier call released by DP discovery
 *      (dpsynth.domains, source 'declared' or 'dp'); declared bounds with binning 'quantile',
 *      or 'auto' where the policy allows discovery, first need their bins learned by DP;
 *   2. the type itself: boolean, enum labels;
 *   3. public schema facts: CHECK (col IN (...)), CHECK (col = a OR col = b),
 *      CHECK (col BETWEEN a AND b) and other range checks with both ends, on the table or on a
 *      domain type of the column (a varchar's length is not a domain);
 *   4. otherwise DP discovery, charged to the call, if the table's and the column's policy
 *      allow it: partition selection for text, DP bounds for numbers, dates and times.
 * Identifier-like columns (serial, identity, uuid, or marked by the owner) and excluded
 * columns are never released.
 *
 * Nothing here reads a row: every error is raised before the scan, and encoding a value never
 * raises (PRIVACY.md, "Errors and side channels").  Values are encoded in encode.c and the rows
 * read in scan_parallel.c (dpsynth_scan_codes), after everything here has been checked.
 *
 * Codes of a column: its categories or bins, then one NULL cell that holds NULL and every value
 * that has no place in the domain (categories not listed, NaN).  Columns that are NOT NULL and
 * whose values always have a place (integer, date and time bins; boolean; enum) have no NULL
 * cell.  Numbers, dates and times outside the bins (including +/-Infinity) are clamped to the
 * first or last bin.
 */
#include "dpsynth.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "parser/parse_func.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "dp_binning.h"

/* Unit conversion for dates and timestamps: days or microseconds since 2000-01-01. */
#define USECS_PER_DAY_F 86400000000.0

static bool
is_real_type(Oid t)
{
	return t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}

static bool
is_text_type(Oid t)
{
	return t == TEXTOID || t == VARCHAROID || t == BPCHAROID;
}

static void
init_categories(DpColumn *col, const char **labels, int n, bool has_null_cell)
{
	uint32	   *lens = palloc(sizeof(uint32) * Max(n, 1));
	int32	   *slots = palloc(sizeof(int32) * dp_catmap_slots_needed(n));

	for (int i = 0; i < n; i++)
		lens[i] = strlen(labels[i]);
	if (dp_domain_init_categories(&col->domain, labels, lens, n, slots, has_null_cell) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the categories of column \"%s\" are invalid (duplicates, or more than 65535)", col->name)));
	if (col->typid == TEXTOID || col->typid == VARCHAROID)
		col->encoding = DP_ENC_TEXT;
	else if (col->typid == BPCHAROID)
		col->encoding = DP_ENC_BPCHAR;
	else if (col->typid == BOOLOID)
		col->encoding = DP_ENC_BOOL_LABEL;
	else
	{
		Oid			outfn;
		bool		varlena;
		char		category;
		bool		preferred;

		/*
		 * Other types are matched by their text, which must be short and bounded so that
		 * producing it can never fail on a value: numbers, dates and times, strings.
		 */
		get_type_category_preferred(col->typid, &category, &preferred);
		if (category != TYPCATEGORY_NUMERIC && category != TYPCATEGORY_DATETIME &&
			category != TYPCATEGORY_TIMESPAN && category != TYPCATEGORY_STRING &&
			category != TYPCATEGORY_BOOLEAN && category != TYPCATEGORY_ENUM)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" has type %s, whose values cannot be matched against categories",
							col->name, format_type_be(col->typid)),
					 errhint("Exclude it with dp_column_policy(..., treatment => 'exclude').")));
		getTypeOutputInfo(col->typid, &outfn, &varlena);
		fmgr_info(outfn, &col->outfunc);
		col->encoding = DP_ENC_OUTPUT;
	}
}

/* An enum's labels in sort order are public schema facts. */
static void
init_enum(DpColumn *col)
{
	CatCList   *list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(col->typid));
	int			n = list->n_members;
	const char **labels;
	float4	   *order;
	Oid		   *oids;
	Oid		   *sorted;

	if (n <= 0)
	{
		ReleaseCatCacheList(list);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("enum type of column \"%s\" has no labels", col->name)));
	}
	labels = palloc(sizeof(char *) * (Size) n);
	order = palloc(sizeof(float4) * (Size) n);
	oids = palloc(sizeof(Oid) * (Size) n);
	for (int i = 0; i < n; i++)
	{
		Form_pg_enum e = (Form_pg_enum) GETSTRUCT(&list->members[i]->tuple);

		oids[i] = e->oid;
		order[i] = e->enumsortorder;
		labels[i] = pstrdup(NameStr(e->enumlabel));
	}
	ReleaseCatCacheList(list);
	/* labels by enumsortorder (insertion sort: enums are small) */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && order[j - 1] > order[j]; j--)
		{
			float4		fo = order[j];
			Oid			oo = oids[j];
			const char *lo = labels[j];

			order[j] = order[j - 1], order[j - 1] = fo;
			oids[j] = oids[j - 1], oids[j - 1] = oo;
			labels[j] = labels[j - 1], labels[j - 1] = lo;
		}
	init_categories(col, labels, n, !col->notnull);
	col->nenum = n;
	col->enum_oids = palloc(sizeof(Oid) * (Size) n);
	col->enum_codes = palloc(sizeof(dp_code) * (Size) n);
	sorted = palloc(sizeof(Oid) * (Size) n);
	memcpy(sorted, oids, sizeof(Oid) * (Size) n);
	qsort(sorted, n, sizeof(Oid), dpsynth_oid_cmp);
	for (int i = 0; i < n; i++)
	{
		col->enum_oids[i] = sorted[i];
		for (int k = 0; k < n; k++)
			if (oids[k] == sorted[i])
				col->enum_codes[i] = (dp_code) k;
	}
	col->encoding = DP_ENC_ENUM;
}

/*
 * Numeric domain from bounds, a number of equal-width bins, point masses and/or explicit
 * edges.  Returns false when they do not fit the column's type (its type changed since).
 */
static bool
init_numeric(DpColumn *col, double lower, double upper, int bins, const double *edges, int nedges,
			 const double *points, int npoints)
{
	bool		integral = dpsynth_value_is_integral(col->typid);

	if (!integral && !is_real_type(col->typid))
		return false;
	if (integral)
	{
		int64	   *base = palloc(sizeof(int64) * (Max(bins, nedges) + 1));
		int64	   *pts = palloc(sizeof(int64) * Max(npoints, 1));
		int			nbase;
		uint32		n;

		if (edges)
		{
			for (int i = 0; i < nedges; i++)
				base[i] = (int64) edges[i];
			nbase = nedges;
		}
		else
		{
			if (dp_int_equal_edges((int64) lower, (int64) upper, bins, base) != 0)
				return false;
			nbase = bins + 1;
		}
		for (int i = 0; i < npoints; i++)
			pts[i] = (int64) points[i];
		col->iedges = palloc(sizeof(int64) * (nbase + 2 * npoints));
		n = dp_int_edges_with_points(base, nbase, pts, npoints, col->iedges);
		if (dp_domain_init_int_edges(&col->domain, col->iedges, n - 1, !col->notnull) != 0)
			return false;
		col->encoding = DP_ENC_INT;
	}
	else
	{
		double	   *base = palloc(sizeof(double) * (Max(bins, nedges) + 1));
		int			nbase;
		uint32		n;

		if (edges)
		{
			memcpy(base, edges, sizeof(double) * nedges);
			nbase = nedges;
		}
		else
		{
			if (dp_real_equal_edges(lower, upper, bins, base) != 0)
				return false;
			nbase = bins + 1;
		}
		col->edges = palloc(sizeof(double) * (nbase + 2 * npoints + 1));
		n = dp_real_edges_with_points(base, nbase, points, npoints, col->edges);
		/* NaN has no bin: real columns always have a NULL cell */
		if (dp_domain_init_real_edges(&col->domain, col->edges, n - 1, true) != 0)
			return false;
		col->encoding = DP_ENC_REAL;
	}
	return true;
}

/* Default number of bins: one per value for small integer ranges, else 32. */
static int
default_bins(DpColumn *col, double lower, double upper)
{
	if (dpsynth_value_is_integral(col->typid) && upper - lower + 1 < 32)
		return (int) (upper - lower + 1);
	return 32;
}

/* ---------------------------------------------------------------------------------------
 * The catalog's view of a column: policy, declared or released domain, serial-ness.
 * --------------------------------------------------------------------------------------- */
/*
 * Whether dpsynth.domains has a column: the library may run against an older catalog until ALTER
 * EXTENSION dpsynth UPDATE, which then keeps working without it (shape: 0.3.0 on; attname: 0.7.0).
 */
static bool
domains_have(const char *column)
{
	Oid			nsp = get_namespace_oid("dpsynth", true);
	Oid			rel = OidIsValid(nsp) ? get_relname_relid("domains", nsp) : InvalidOid;

	return OidIsValid(rel) && get_attnum(rel, column) != InvalidAttrNumber;
}

typedef struct CatalogColumn
{
	char	   *treatment;		/* NULL = synthesize */
	bool		discovery;		/* table's setting unless the column overrides it */
	char	   *other;
	bool		serial;			/* serial or identity column */
	char	   *kind;			/* NULL = no domain row */
	char	   *source;
	const char **categories;
	int			ncategories;
	double		lower;
	double		upper;
	int			bins;
	double	   *edges;
	int			nedges;
	double	   *points;
	int			npoints;
	char	   *binning;
	double	   *shape;			/* learned edges: the released shape inside the bins, or NULL */
	int			nshape;			/* doubles (3 per piece) */
} CatalogColumn;

static double *
float8_array(Datum d, int *n, MemoryContext cxt)
{
	ArrayType  *arr = DatumGetArrayTypeP(d);
	Datum	   *elems;
	bool	   *nulls;
	double	   *out;

	deconstruct_array(arr, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, n);
	out = MemoryContextAlloc(cxt, sizeof(double) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		out[i] = DatumGetFloat8(elems[i]);
	return out;
}

static void
read_catalog(Oid relid, DpColumn *col, CatalogColumn *cc)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	DpOwnerSwitch sw;
	Oid			argtypes[3] = {OIDOID, INT2OID, TEXTOID};
	Datum		values[3] = {ObjectIdGetDatum(relid), Int16GetDatum(col->attnum), CStringGetTextDatum(col->name)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;
	char	   *sql;
	char	   *declared_for;
	char	   *policy_for;

	memset(cc, 0, sizeof(*cc));
	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the table's switch forbids discovery outright; a column's can only narrow it (a table with a
	 * privacy unit discovers from the rows each unit keeps: discover_unit.c) */
	sql = psprintf("SELECT p.treatment, b.discovery AND coalesce(p.discovery, true), p.other, "
				   "       pg_catalog.pg_get_serial_sequence($1::regclass::text, $3) IS NOT NULL, "
				   "       d.kind, d.source, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning, %s, "
				   "       pg_catalog.to_jsonb(d)->>'attname', "
				   "       pg_catalog.to_jsonb(p)->>'attname' "
				   "FROM dpsynth.budgets b "
				   "LEFT JOIN dpsynth.column_policies p ON p.relid = b.relid AND p.attnum = $2 "
				   "LEFT JOIN dpsynth.domains d ON d.relid = b.relid AND d.attnum = $2 "
				   "WHERE b.relid = $1", domains_have("shape") ? "d.shape" : "NULL::float8[]");
	if (SPI_execute_with_args(sql,
							  /* not read-only: see domains this statement has just discovered */
							  3, argtypes, values, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the catalog of relation %u", relid);
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
#define GETTEXT(n) (SPI_getbinval(tup, desc, (n), &isnull), isnull ? NULL : MemoryContextStrdup(caller_cxt, SPI_getvalue(tup, desc, (n))))
	cc->treatment = GETTEXT(1);
	cc->discovery = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
	cc->other = GETTEXT(3);
	cc->serial = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	cc->kind = GETTEXT(5);
	cc->source = GETTEXT(6);
	cc->binning = GETTEXT(13);
	declared_for = GETTEXT(15);
	policy_for = GETTEXT(16);
#undef GETTEXT
	d = SPI_getbinval(tup, desc, 7, &isnull);
	if (!isnull)
	{
		ArrayType  *arr = DatumGetArrayTypeP(d);
		Datum	   *elems;
		bool	   *enulls;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &cc->ncategories);
		cc->categories = MemoryContextAlloc(caller_cxt, sizeof(char *) * Max(cc->ncategories, 1));
		for (int i = 0; i < cc->ncategories; i++)
		{
			char	   *s = TextDatumGetCString(elems[i]);

			cc->categories[i] = MemoryContextStrdup(caller_cxt, s);
		}
	}
	d = SPI_getbinval(tup, desc, 8, &isnull);
	cc->lower = isnull ? 0 : DatumGetFloat8(d);
	d = SPI_getbinval(tup, desc, 9, &isnull);
	cc->upper = isnull ? 0 : DatumGetFloat8(d);
	d = SPI_getbinval(tup, desc, 10, &isnull);
	cc->bins = isnull ? 0 : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 11, &isnull);
	if (!isnull)
		cc->edges = float8_array(d, &cc->nedges, caller_cxt);
	d = SPI_getbinval(tup, desc, 12, &isnull);
	if (!isnull)
		cc->points = float8_array(d, &cc->npoints, caller_cxt);
	d = SPI_getbinval(tup, desc, 14, &isnull);
	if (!isnull)
		cc->shape = float8_array(d, &cc->nshape, caller_cxt);
	SPI_finish();
	dpsynth_restore_user(&sw);

	/*
	 * The row at this attnum names another column that dpsynth._domains_by_name could not bring
	 * back (a restored table whose column of that name is gone): that column's domain, not this
	 * one's.  Refused before anything is charged.
	 */
	if (declared_for != NULL && strcmp(declared_for, col->name) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the domain stored for column \"%s\" of table \"%s\" was declared for column \"%s\"",
						col->name, get_rel_name(relid), declared_for),
				 errdetail("The table's columns were renumbered (pg_restore after a dropped column), and no column is named \"%s\" any more. Nothing was charged.",
						   declared_for),
				 errhint("Declare the domain of column \"%s\" again (dp_declare), or remove the stale one (dp_undeclare).",
						 col->name)));

	dpsynth_check_policy_column(relid, col->name, policy_for);
}

/*
 * A column policy found at column colname's attnum but set for column set_for (its stored name;
 * NULL: none stored, or no policy) is one dpsynth._rows_by_name could not bring back: it may
 * be an 'exclude' whose column is gone, so the column is refused rather than released under that
 * policy or without it.  Every reader of dpsynth.column_policies goes through this.
 */
void
dpsynth_check_policy_column(Oid relid, const char *colname, const char *set_for)
{
	if (set_for != NULL && strcmp(set_for, colname) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the column policy stored for column \"%s\" of table \"%s\" was set for column \"%s\"",
						colname, get_rel_name(relid), set_for),
				 errdetail("The table's columns were renumbered (pg_restore after a dropped column), and no column is named \"%s\" any more. Nothing was charged.",
						   set_for),
				 errhint("Set the policy of column \"%s\" again (dp_column_policy).", colname)));
}

/*
 * Brings the attnums of the table's domains and policies back to their columns' names
 * (pg_restore renumbers the columns that follow a dropped one) and refuses the table where a row
 * cannot be matched to its column for certain (dpsynth._domains_for_release: 55000, before any
 * charge).  Writes only where a row moved.  A catalog older than 0.8.0 (the library is loaded
 * before ALTER EXTENSION UPDATE) has only the re-sync (0.7.0) or neither it nor the names.
 */
void
dpsynth_domains_by_name(Oid relid)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	const char *fn = "_domains_for_release";

	if (!OidIsValid(LookupFuncName(list_make2(makeString("dpsynth"), makeString((char *) fn)),
								   1, argtypes, true)))
		fn = "_domains_by_name";
	if (!OidIsValid(LookupFuncName(list_make2(makeString("dpsynth"), makeString((char *) fn)),
								   1, argtypes, true)))
		return;
	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT dpsynth.%s($1)", fn), 1, argtypes, values, NULL, false, 1)
		!= SPI_OK_SELECT)
		elog(ERROR, "could not bring the domains of relation %u back to their columns", relid);
	SPI_finish();
	dpsynth_restore_user(&sw);
}

/* ---------------------------------------------------------------------------------------
 * Schema facts: CHECK constraints that name only this column, and CHECK constraints of the
 * domain types the column is declared with.
 * --------------------------------------------------------------------------------------- */
typedef struct SchemaFacts
{
	List	   *categories;		/* char * */
	bool		have_categories;
	bool		have_lower;
	bool		have_upper;
	double		lower;
	double		upper;
} SchemaFacts;

static Node *
strip_coercions(Node *n)
{
	for (;;)
	{
		if (n == NULL)
			return NULL;
		if (IsA(n, RelabelType))
			n = (Node *) ((RelabelType *) n)->arg;
		else if (IsA(n, CoerceViaIO))
			n = (Node *) ((CoerceViaIO *) n)->arg;
		else if (IsA(n, ArrayCoerceExpr))
			n = (Node *) ((ArrayCoerceExpr *) n)->arg;
		else if (IsA(n, FuncExpr) && ((FuncExpr *) n)->funcformat == COERCE_IMPLICIT_CAST &&
				 list_length(((FuncExpr *) n)->args) == 1)
			n = linitial(((FuncExpr *) n)->args);
		else
			return n;
	}
}

static bool
is_the_column(Node *n, AttrNumber attnum)
{
	n = strip_coercions(n);
	if (n == NULL)
		return false;
	if (IsA(n, Var))
		return ((Var *) n)->varattno == attnum;
	return IsA(n, CoerceToDomainValue);
}

/* A constant as a number in the column's unit; false if it is not a number-like constant. */
static bool
const_number(DpColumn *col, Const *c, double *out)
{
	Oid			t = getBaseType(c->consttype);

	if (c->constisnull)
		return false;
	if (dpsynth_type_is_integer(t) || is_real_type(t))
		*out = dpsynth_value_real(t, c->constvalue);
	else if (t == DATEOID)
	{
		*out = (double) dpsynth_value_int(t, c->constvalue);
		if (col->typid == TIMESTAMPOID || col->typid == TIMESTAMPTZOID)
			*out *= USECS_PER_DAY_F;
	}
	else if (t == TIMESTAMPOID || t == TIMESTAMPTZOID)
		*out = (double) dpsynth_value_int(t, c->constvalue);
	else
		return false;
	return isfinite(*out);
}

static char *
const_label(Const *c)
{
	Oid			outfn;
	bool		varlena;

	getTypeOutputInfo(c->consttype, &outfn, &varlena);
	return OidOutputFunctionCall(outfn, c->constvalue);
}

static void
add_bound(SchemaFacts *f, const char *op, double v, bool integral)
{
	if (strcmp(op, ">=") == 0 || (strcmp(op, ">") == 0 && !integral))
	{
		f->lower = f->have_lower ? Max(f->lower, v) : v;
		f->have_lower = true;
	}
	else if (strcmp(op, ">") == 0)
	{
		f->lower = f->have_lower ? Max(f->lower, floor(v) + 1) : floor(v) + 1;
		f->have_lower = true;
	}
	else if (strcmp(op, "<=") == 0 || (strcmp(op, "<") == 0 && !integral))
	{
		f->upper = f->have_upper ? Min(f->upper, v) : v;
		f->have_upper = true;
	}
	else if (strcmp(op, "<") == 0)
	{
		f->upper = f->have_upper ? Min(f->upper, ceil(v) - 1) : ceil(v) - 1;
		f->have_upper = true;
	}
}

static const char *
commuted(const char *op)
{
	if (strcmp(op, ">=") == 0)
		return "<=";
	if (strcmp(op, "<=") == 0)
		return ">=";
	if (strcmp(op, ">") == 0)
		return "<";
	if (strcmp(op, "<") == 0)
		return ">";
	return op;
}

/* Collects the equality labels of an OR of "col = const" (all arms must be such). */
static bool
collect_or_equalities(DpColumn *col, Node *n, List **labels)
{
	n = strip_coercions(n);
	if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == OR_EXPR)
	{
		ListCell   *lc;

		foreach(lc, ((BoolExpr *) n)->args)
			if (!collect_or_equalities(col, lfirst(lc), labels))
				return false;
		return true;
	}
	if (IsA(n, OpExpr) && list_length(((OpExpr *) n)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) n;
		Node	   *l = linitial(op->args);
		Node	   *r = lsecond(op->args);
		char	   *name = get_opname(op->opno);

		if (name == NULL || strcmp(name, "=") != 0)
			return false;
		if (is_the_column(l, col->attnum) && IsA(strip_coercions(r), Const) && !((Const *) strip_coercions(r))->constisnull)
		{
			*labels = lappend(*labels, const_label((Const *) strip_coercions(r)));
			return true;
		}
		if (is_the_column(r, col->attnum) && IsA(strip_coercions(l), Const) && !((Const *) strip_coercions(l))->constisnull)
		{
			*labels = lappend(*labels, const_label((Const *) strip_coercions(l)));
			return true;
		}
	}
	return false;
}

static void
walk_check(DpColumn *col, Node *n, SchemaFacts *f)
{
	n = strip_coercions(n);
	if (n == NULL)
		return;
	if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == AND_EXPR)
	{
		ListCell   *lc;

		foreach(lc, ((BoolExpr *) n)->args)
			walk_check(col, lfirst(lc), f);
		return;
	}
	if (IsA(n, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) n;
		Node	   *arr = strip_coercions(lsecond(sa->args));
		char	   *name = get_opname(sa->opno);

		if (sa->useOr && name && strcmp(name, "=") == 0 && is_the_column(linitial(sa->args), col->attnum) &&
			IsA(arr, ArrayExpr) && !f->have_categories)
		{
			/* an IN list as stored: an array of constants */
			List	   *labels = NIL;
			ListCell   *lc;

			foreach(lc, ((ArrayExpr *) arr)->elements)
			{
				Node	   *e = strip_coercions(lfirst(lc));

				if (!IsA(e, Const))
					return;
				if (!((Const *) e)->constisnull)
					labels = lappend(labels, const_label((Const *) e));
			}
			f->categories = labels;
			f->have_categories = true;
		}
		else if (sa->useOr && name && strcmp(name, "=") == 0 && is_the_column(linitial(sa->args), col->attnum) &&
				 IsA(arr, Const) && !((Const *) arr)->constisnull && !f->have_categories)
		{
			ArrayType  *a = DatumGetArrayTypeP(((Const *) arr)->constvalue);
			int16		typlen;
			bool		typbyval;
			char		typalign;
			Datum	   *elems;
			bool	   *nulls;
			int			ne;
			Oid			outfn;
			bool		varlena;

			get_typlenbyvalalign(ARR_ELEMTYPE(a), &typlen, &typbyval, &typalign);
			deconstruct_array(a, ARR_ELEMTYPE(a), typlen, typbyval, typalign, &elems, &nulls, &ne);
			getTypeOutputInfo(ARR_ELEMTYPE(a), &outfn, &varlena);
			for (int i = 0; i < ne; i++)
				if (!nulls[i])
					f->categories = lappend(f->categories, OidOutputFunctionCall(outfn, elems[i]));
			f->have_categories = true;
		}
		return;
	}
	if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == OR_EXPR && !f->have_categories)
	{
		List	   *labels = NIL;

		if (collect_or_equalities(col, n, &labels))
		{
			f->categories = labels;
			f->have_categories = true;
		}
		return;
	}
	if (IsA(n, OpExpr) && list_length(((OpExpr *) n)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) n;
		Node	   *l = linitial(op->args);
		Node	   *r = strip_coercions(lsecond(op->args));
		char	   *name = get_opname(op->opno);
		double		v;
		bool		integral = dpsynth_value_is_integral(col->typid);

		if (name == NULL)
			return;
		if (is_the_column(l, col->attnum) && IsA(r, Const) && const_number(col, (Const *) r, &v))
			add_bound(f, name, v, integral);
		else if (is_the_column(r, col->attnum) && IsA(strip_coercions(l), Const) &&
				 const_number(col, (Const *) strip_coercions(l), &v))
			add_bound(f, commuted(name), v, integral);
	}
}

static void
read_schema_facts(Oid relid, DpColumn *col, Oid declared_type, SchemaFacts *f)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	Oid			argtypes[3] = {OIDOID, INT2OID, OIDOID};
	Datum		values[3] = {ObjectIdGetDatum(relid), Int16GetDatum(col->attnum), ObjectIdGetDatum(declared_type)};
	List	   *exprs = NIL;
	ListCell   *lc;

	memset(f, 0, sizeof(*f));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(
							  "WITH RECURSIVE chain(t) AS ("
							  "  SELECT $3 UNION ALL "
							  "  SELECT y.typbasetype FROM pg_catalog.pg_type y, chain WHERE y.oid = chain.t AND y.typtype = 'd') "
							  "SELECT c.conbin::text "
							  "FROM pg_catalog.pg_constraint c "
							  "WHERE c.contype = 'c' AND ((c.conrelid = $1 AND c.conkey = ARRAY[$2]::int2[]) "
							  "   OR c.contypid IN (SELECT t FROM chain)) "
							  "ORDER BY c.oid",
							  3, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the constraints of relation %u", relid);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *bin = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		MemoryContext old = MemoryContextSwitchTo(caller_cxt);

		if (bin)
			exprs = lappend(exprs, stringToNode(bin));
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	foreach(lc, exprs)
		walk_check(col, lfirst(lc), f);
}

/* Excluded and identifier columns are never released. */
static void
check_releasable(Oid relid, DpColumn *col, const CatalogColumn *cc)
{
	if (cc->treatment && strcmp(cc->treatment, "exclude") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of table \"%s\" is excluded from releases", col->name, get_rel_name(relid)),
				 errhint("The table's owner excluded it with dp_column_policy; synthetic copies leave it NULL.")));
	if ((cc->treatment && strcmp(cc->treatment, "identifier") == 0) || cc->serial || col->typid == UUIDOID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of table \"%s\" is an identifier and is never released", col->name,
						get_rel_name(relid)),
				 errhint("Serial, identity and uuid columns, and columns the owner marks as identifiers, get fresh values in synthetic copies.")));
}

/* 1. A domain the owner declared, or one an earlier DP discovery released (source 'dp'). */
static bool
from_declaration(Oid relid, DpColumn *col, const CatalogColumn *cc)
{
	char	   *rel = get_rel_name(relid);
	bool		ok;

	if (!cc->kind)
		return false;
	col->source = cc->source;
	if (strcmp(cc->kind, "categories") == 0)
	{
		init_categories(col, cc->categories, cc->ncategories, true);
		return true;
	}
	/*
	 * 'auto' (the default of a declaration without bins, dp_declare) is 'quantile' where
	 * the policy allows DP discovery; where it does not, the declaration's own equal-width
	 * bins below (public, nothing to learn).
	 */
	if (strcmp(cc->kind, "bins") == 0 && cc->binning &&
		(strcmp(cc->binning, "quantile") == 0 || (strcmp(cc->binning, "auto") == 0 && cc->discovery)))
	{
		bool		is_auto = strcmp(cc->binning, "auto") == 0;

		/* quantile bins inside the declared bounds, not learned yet */
		if (!cc->discovery)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of table \"%s\" needs quantile bins learned by DP, and the policy forbids DP discovery",
							col->name, rel),
					 errhint("Declare equal-width bins instead: SELECT dp_declare('%s', '%s', lower => ..., upper => ..., bins => ...);",
							 rel, col->name)));
		col->state = DP_COLUMN_DISCOVER_EDGES;
		col->quantile_lower = cc->lower;
		col->quantile_upper = cc->upper;
		col->quantile_bins = is_auto ? Min(cc->bins, DPSYNTH_AUTO_BINS) : cc->bins;
		col->quantile_points = cc->npoints;
		col->quantile_auto = is_auto;
		/*
		 * Bounds only (binning 'auto', the default 32 bins) over an integer range of at most
		 * DP_BINNING_MAX_VALUES values: cells refined where the rows afford it, so up to one
		 * bin per value (public: the declaration alone).
		 */
		col->quantile_fine = is_auto && cc->bins == 32 && dpsynth_value_is_integral(col->typid) &&
			dp_binning_fine_range((int64) cc->lower, (int64) cc->upper);
		if (col->quantile_fine)
			col->quantile_bins = (int) (cc->upper - cc->lower + 1);
		/* bounds only over a wider range or of a real type: bins as the mass affords them */
		col->quantile_wide = is_auto && cc->bins == 32 && !col->quantile_fine;
		return true;
	}
	if (strcmp(cc->kind, "bins") == 0)
		ok = init_numeric(col, cc->lower, cc->upper, cc->bins, NULL, 0, cc->points, cc->npoints);
	else
	{
		ok = init_numeric(col, 0, 0, 0, cc->edges, cc->nedges, cc->points, cc->npoints);
		/* the shape inside the learned bins (a released histogram), whatever the points added */
		if (ok && cc->shape && cc->nshape >= 3 && cc->nshape % 3 == 0)
		{
			col->domain.shape = cc->shape;
			col->domain.nshape = (uint32) (cc->nshape / 3);
		}
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("declared domain of column \"%s\" of table \"%s\" does not fit its type %s",
						col->name, rel, format_type_be(col->typid)),
				 errhint("The column's type changed since the declaration; the owner must declare it again with dp_declare.")));
	return true;
}

/* 2. A domain the type itself gives: boolean, enum. */
static bool
from_type(DpColumn *col)
{
	if (col->typid == BOOLOID)
	{
		static const char *bool_labels[2] = {"false", "true"};

		init_categories(col, bool_labels, 2, !col->notnull);
		col->encoding = DP_ENC_BOOL;
		col->source = "type";
		return true;
	}
	if (type_is_enum(col->typid))
	{
		init_enum(col);
		col->source = "type";
		return true;
	}
	return false;
}

/* 3. A domain the schema states: the values or bounds CHECK constraints allow. */
static bool
from_schema(Oid relid, DpColumn *col, Oid declared_type)
{
	SchemaFacts sf;

	read_schema_facts(relid, col, declared_type, &sf);
	if (sf.have_categories && list_length(sf.categories) > 0)
	{
		const char **labels = palloc(sizeof(char *) * list_length(sf.categories));
		int			n = 0;
		ListCell   *lc;

		foreach(lc, sf.categories)
		{
			bool		dup = false;

			for (int i = 0; i < n; i++)
				dup |= strcmp(labels[i], lfirst(lc)) == 0;
			if (!dup)
				labels[n++] = lfirst(lc);
		}
		init_categories(col, labels, n, true);
		col->source = "schema";
		return true;
	}
	if (sf.have_lower && sf.have_upper && sf.lower < sf.upper &&
		(dpsynth_value_is_integral(col->typid) || is_real_type(col->typid)) &&
		fabs(sf.lower) <= 4611686018427387904.0 && fabs(sf.upper) <= 4611686018427387904.0)
	{
		double		lo = dpsynth_value_is_integral(col->typid) ? ceil(sf.lower) : sf.lower;
		double		hi = dpsynth_value_is_integral(col->typid) ? floor(sf.upper) : sf.upper;

		if (lo < hi && init_numeric(col, lo, hi, default_bins(col, lo, hi), NULL, 0, NULL, 0))
		{
			col->source = "schema";
			return true;
		}
	}
	return false;
}

/*
 * 4. Otherwise the domain must be discovered under DP, where the policy allows it and, for text,
 * a selection delta is left; else the call is refused, before any charge.
 */
static void
to_discover(Oid relid, DpColumn *col, const CatalogColumn *cc)
{
	char	   *rel = get_rel_name(relid);

	if (is_text_type(col->typid) || dpsynth_value_is_integral(col->typid) || is_real_type(col->typid))
	{
		const char *declare_hint = is_text_type(col->typid)
			? psprintf("The table's owner can declare it: SELECT dp_declare('%s', '%s', categories => ARRAY[...]);", rel, col->name)
			: dpsynth_type_is_time(col->typid)
			? psprintf("The table's owner can declare it: SELECT dp_declare('%s', '%s', lower => '...'::timestamptz, upper => '...'::timestamptz);", rel, col->name)
			: psprintf("The table's owner can declare it: SELECT dp_declare('%s', '%s', lower => ..., upper => ..., bins => ...);", rel, col->name);

		if (!cc->discovery)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of table \"%s\" has no public domain, and the policy forbids DP discovery",
							col->name, rel),
					 errhint("%s", declare_hint)));
		if (is_text_type(col->typid) && !(dpsynth_selection_share(relid) > 0))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of table \"%s\" has no public domain, and no selection delta is left to discover its values",
							col->name, rel),
					 errdetail("Discovering which text values exist (DP partition selection) needs an additive delta: the table's selection delta divided by e to the power of its budget's epsilon (none from an epsilon of about 680 on), less the delta already spent."),
					 errhint("The table's owner can declare it: SELECT dp_declare('%s', '%s', categories => ARRAY[...]); or set aside a selection delta: SELECT dp_protect('%s', epsilon => ..., selection_delta => 1e-7);",
							 rel, col->name, rel)));
		col->state = is_text_type(col->typid) ? DP_COLUMN_DISCOVER_CATEGORIES : DP_COLUMN_DISCOVER_BOUNDS;
		col->source = "dp";
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("column \"%s\" of table \"%s\" has type %s, which dpsynth cannot release",
					col->name, rel, format_type_be(col->typid)),
			 errhint("Declare categories for it with dp_declare, or exclude it: SELECT dp_column_policy('%s', '%s', treatment => 'exclude');",
					 rel, col->name)));
}

static void
load_column(Oid relid, DpColumn *col, Oid declared_type)
{
	CatalogColumn cc;

	read_catalog(relid, col, &cc);
	col->other = cc.other;
	check_releasable(relid, col, &cc);
	col->state = DP_COLUMN_READY;
	if (from_declaration(relid, col, &cc) || from_type(col) || from_schema(relid, col, declared_type))
		return;
	to_discover(relid, col, &cc);
}

static DpColumn *load_columns_once(Oid relid, ArrayType *names, int *ncolumns);

/*
 * The columns with their domains.  Where one must still be discovered, the table's domain lock
 * is taken first (held to the end of the transaction) and the columns are read again: a
 * concurrent call that was discovering the same column has then committed its result, which is
 * reused, or rolled back.  Either way this call plans, and pays for, what is really still
 * unknown, and no store of a discovered domain can collide with another after the charge
 * (READ COMMITTED: each statement here sees what committed before it).  The caller brought the
 * rows back to their names before its first read (dpsynth_domains_by_name); a read again within
 * the call needs no second pass: the rows change only by this call's stores, which name their
 * column, or by a concurrent declaration, which leaves them at their columns' attnums, while DDL
 * that renames or renumbers columns waits for the lock the call holds on the table.
 */
DpColumn *
dpsynth_load_columns(Oid relid, ArrayType *names, int *ncolumns)
{
	DpColumn   *cols = load_columns_once(relid, names, ncolumns);

	for (int i = 0; i < *ncolumns; i++)
		if (cols[i].state != DP_COLUMN_READY)
		{
			/*
			 * Under REPEATABLE READ or SERIALIZABLE the transaction's snapshot can neither see a
			 * discovery another call committed meanwhile nor store one over the budget row the
			 * charge updates (its foreign-key check would fail after the charge): refused here.
			 */
			if (IsolationUsesXactSnapshot())
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("the domain of column \"%s\" of table \"%s\" cannot be discovered in a REPEATABLE READ or SERIALIZABLE transaction",
								cols[i].name, get_rel_name(relid)),
						 errdetail("Nothing was charged."),
						 errhint("Make this call in a READ COMMITTED transaction, or ask the table's owner to declare the domain.")));
			dpsynth_lock_domains(relid);
			return load_columns_once(relid, names, ncolumns);
		}
	return cols;
}

/* The columns as the catalog has them now, without discovery's lock: for readers of domains. */
DpColumn *
dpsynth_peek_columns(Oid relid, ArrayType *names, int *ncolumns)
{
	dpsynth_domains_by_name(relid);
	return load_columns_once(relid, names, ncolumns);
}

static DpColumn *
load_columns_once(Oid relid, ArrayType *names, int *ncolumns)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	DpColumn   *cols;

	if (ARR_NDIM(names) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("columns must be a one-dimensional array")));
	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name at least one column")));
	cols = palloc0(sizeof(DpColumn) * n);
	for (int i = 0; i < n; i++)
	{
		HeapTuple	atttup;
		Form_pg_attribute att;
		Oid			declared_type;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column names must not be NULL")));
		cols[i].name = TextDatumGetCString(elems[i]);
		for (int j = 0; j < i; j++)
			if (strcmp(cols[j].name, cols[i].name) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is listed more than once", cols[i].name)));
		atttup = SearchSysCacheAttName(relid, cols[i].name);
		if (!HeapTupleIsValid(atttup))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of table \"%s\" does not exist", cols[i].name, get_rel_name(relid)),
					 errhint("Column names are case-sensitive here, as in the catalog: write them without quotes.")));
		att = (Form_pg_attribute) GETSTRUCT(atttup);
		if (att->attnum <= 0)
		{
			ReleaseSysCache(atttup);
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("system column \"%s\" cannot be released", cols[i].name)));
		}
		cols[i].attnum = att->attnum;
		declared_type = att->atttypid;
		cols[i].typmod = att->atttypmod;
		cols[i].typid = getBaseTypeAndTypmod(att->atttypid, &cols[i].typmod);
		cols[i].notnull = att->attnotnull;
		ReleaseSysCache(atttup);
		load_column(relid, &cols[i], declared_type);
	}
	*ncolumns = n;
	return cols;
}

double
dpsynth_selection_share(Oid relid)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;
	double		share;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT dpsynth._selection_share($1)", 1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not compute the selection share of relation %u", relid);
	share = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	dpsynth_restore_user(&sw);
	return isnull ? 0 : share;
}

static void
store_domain_nulls(const char *sql, int nargs, Oid *argtypes, Datum *values, const char *nulls)
{
	DpOwnerSwitch sw;
	int			ret;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false, 0);
	if ((ret != SPI_OK_INSERT && ret != SPI_OK_UPDATE) || SPI_processed != 1)
		elog(ERROR, "could not store a discovered domain");
	SPI_finish();
	dpsynth_restore_user(&sw);
}

static void
store_domain(const char *sql, int nargs, Oid *argtypes, Datum *values)
{
	store_domain_nulls(sql, nargs, argtypes, values, NULL);
}

/*
 * The name column and its value for an INSERT of a learned domain: the row names its column (the
 * column at its attnum now: the release has just brought the table's rows back to their names),
 * as every insert of dpsynth's does, since a row without a name is one restored from a dump of
 * 0.6.0 or older, which releases refuse.  "" and "" on a catalog older than 0.7.0.
 */
static void
domain_name_insert(const char **column, const char **value)
{
	bool		named = domains_have("attname");

	*column = named ? ", attname" : "";
	*value = named ? ", (SELECT a.attname FROM pg_catalog.pg_attribute a "
		"WHERE a.attrelid = $1 AND a.attnum = $2 AND NOT a.attisdropped)" : "";
}

void
dpsynth_store_discovered_categories(Oid relid, AttrNumber attnum, int64 ledger_id, char **labels, int nlabels)
{
	Oid			argtypes[4] = {OIDOID, INT2OID, INT8OID, TEXTARRAYOID};
	Datum		values[4];
	Datum	   *elems = palloc(sizeof(Datum) * Max(nlabels, 1));
	const char *name_column;
	const char *name_value;

	for (int i = 0; i < nlabels; i++)
		elems[i] = CStringGetTextDatum(labels[i]);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int64GetDatum(ledger_id);
	values[3] = PointerGetDatum(construct_array(elems, nlabels, TEXTOID, -1, false, TYPALIGN_INT));
	domain_name_insert(&name_column, &name_value);
	store_domain(psprintf("INSERT INTO dpsynth.domains (relid, attnum, kind, categories, source, ledger_id, declared_by%s) "
						  "VALUES ($1, $2, 'categories', $4, 'dp', $3, (SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'dpsynth')%s)",
						  name_column, name_value), 4, argtypes, values);
}

void
dpsynth_store_discovered_bins(Oid relid, AttrNumber attnum, int64 ledger_id, double lower, double upper, int bins)
{
	Oid			argtypes[6] = {OIDOID, INT2OID, INT8OID, FLOAT8OID, FLOAT8OID, INT4OID};
	Datum		values[6];
	const char *name_column;
	const char *name_value;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int64GetDatum(ledger_id);
	values[3] = Float8GetDatum(lower);
	values[4] = Float8GetDatum(upper);
	values[5] = Int32GetDatum(bins);
	domain_name_insert(&name_column, &name_value);
	store_domain(psprintf("INSERT INTO dpsynth.domains (relid, attnum, kind, lower, upper, bins, source, ledger_id, declared_by%s) "
						  "VALUES ($1, $2, 'bins', $4, $5, $6, 'dp', $3, (SELECT extowner FROM pg_catalog.pg_extension WHERE extname = 'dpsynth')%s)",
						  name_column, name_value), 6, argtypes, values);
}

/* A float8[] of n doubles (float8_array's inverse). */
static Datum
float8_array_datum(const double *x, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = Float8GetDatum(x[i]);
	return PointerGetDatum(construct_array(elems, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

void
dpsynth_store_learned_edges(Oid relid, AttrNumber attnum, int64 ledger_id, const double *edges, int nedges,
							const double *shape, int npieces)
{
	Oid			argtypes[5] = {OIDOID, INT2OID, INT8OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', npieces > 0 ? ' ' : 'n'};

	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	values[2] = Int64GetDatum(ledger_id);
	values[3] = float8_array_datum(edges, nedges);
	values[4] = npieces > 0 ? float8_array_datum(shape, 3 * npieces) : (Datum) 0;
	/* (a catalog from before 0.3.0 has no shape column: the edges alone, as then) */
	if (domains_have("shape"))
		store_domain_nulls("UPDATE dpsynth.domains SET kind = 'edges', edges = $4, shape = $5, source = 'dp', ledger_id = $3 "
						   "WHERE relid = $1 AND attnum = $2",
						   5, argtypes, values, nulls);
	else
		store_domain("UPDATE dpsynth.domains SET kind = 'edges', edges = $4, source = 'dp', ledger_id = $3 "
					 "WHERE relid = $1 AND attnum = $2",
					 4, argtypes, values);
}
