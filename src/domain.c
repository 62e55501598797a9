/*
 * domain.c - columns of a protected table and their public domains.
 *
 * A column's domain comes from the owner's declaration (dpsynth.domains) or, for boolean and
 * enum columns, from the schema itself.  Nothing here reads a row: every error is raised
 * before the scan, and encoding a value never raises (PRIVACY.md, "Errors and side channels").
 *
 * Which codes a column has:
 *   declared categories   one per category, plus the NULL cell (NULL and undeclared values)
 *   integer bins          one per bin (values outside [lower, upper] are clamped), plus the
 *                         NULL cell if the column is nullable
 *   real/numeric bins     one per bin (clamped; +/-Infinity go to the end bins), plus the NULL
 *                         cell (NULL and NaN)
 *   boolean, enum         false/true or the labels in sort order, plus the NULL cell if the
 *                         column is nullable
 */
#include "dpsynth.h"

#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

enum
{
	DP_ENC_TEXT,				/* text, varchar: bytes as stored */
	DP_ENC_BPCHAR,				/* char(n): bytes without the trailing pad */
	DP_ENC_OUTPUT,				/* other types with categories: the output function's text */
	DP_ENC_BOOL_LABEL,			/* boolean with declared categories 'false'/'true' */
	DP_ENC_BOOL,				/* boolean, intrinsic domain: false = 0, true = 1 */
	DP_ENC_ENUM,				/* enum, intrinsic domain: labels in sort order */
	DP_ENC_INT2,
	DP_ENC_INT4,
	DP_ENC_INT8,
	DP_ENC_FLOAT4,
	DP_ENC_FLOAT8,
	DP_ENC_NUMERIC
};

static bool
is_integer_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

static bool
is_real_type(Oid t)
{
	return t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID;
}

static int
numeric_encoding(Oid t)
{
	switch (t)
	{
		case INT2OID:
			return DP_ENC_INT2;
		case INT4OID:
			return DP_ENC_INT4;
		case INT8OID:
			return DP_ENC_INT8;
		case FLOAT4OID:
			return DP_ENC_FLOAT4;
		case FLOAT8OID:
			return DP_ENC_FLOAT8;
		default:
			return DP_ENC_NUMERIC;
	}
}

static void
init_categories(DpColumn *col, const char **labels, int n, bool has_null_cell)
{
	uint32	   *lens = palloc(sizeof(uint32) * n);
	int32	   *slots = palloc(sizeof(int32) * dp_catmap_slots_needed(n));

	for (int i = 0; i < n; i++)
		lens[i] = strlen(labels[i]);
	if (dp_domain_init_categories(&col->domain, labels, lens, n, slots, has_null_cell) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the categories of column \"%s\" are invalid (duplicates, or more than 65535)", col->name)));
}

static int
enum_oid_cmp(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a;
	Oid			y = *(const Oid *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* An enum's labels in sort order are public schema facts. */
static void
init_enum(DpColumn *col)
{
	CatCList   *list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(col->typid));
	int			n = list->n_members;
	const char **labels = palloc(sizeof(char *) * n);
	float4	   *order = palloc(sizeof(float4) * n);
	Oid		   *oids = palloc(sizeof(Oid) * n);

	for (int i = 0; i < n; i++)
	{
		Form_pg_enum e = (Form_pg_enum) GETSTRUCT(&list->members[i]->tuple);

		oids[i] = e->oid;
		order[i] = e->enumsortorder;
		labels[i] = pstrdup(NameStr(e->enumlabel));
	}
	ReleaseCatCacheList(list);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("enum type of column \"%s\" has no labels", col->name)));
	/* sort labels by enumsortorder (insertion sort: enums are small) */
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
	/* OID -> code table, sorted by OID for bsearch */
	col->nenum = n;
	col->enum_oids = palloc(sizeof(Oid) * n);
	col->enum_codes = palloc(sizeof(dp_code) * n);
	{
		Oid		   *sorted = palloc(sizeof(Oid) * n);

		memcpy(sorted, oids, sizeof(Oid) * n);
		qsort(sorted, n, sizeof(Oid), enum_oid_cmp);
		for (int i = 0; i < n; i++)
		{
			col->enum_oids[i] = sorted[i];
			for (int k = 0; k < n; k++)
				if (oids[k] == sorted[i])
					col->enum_codes[i] = (dp_code) k;
		}
	}
	col->encoding = DP_ENC_ENUM;
}

static void
no_domain_error(Oid relid, DpColumn *col)
{
	char	   *rel = get_rel_name(relid);

	if (is_integer_type(col->typid) || is_real_type(col->typid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("column \"%s\" of table %s has no public domain", col->name, rel),
				 errdetail("dpsynth never learns bounds from the data without charging for them."),
				 errhint("The table's owner can declare one: SELECT dp_declare('%s', '%s', lower => ..., upper => ..., bins => ...);",
						 rel, col->name)));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("column \"%s\" of table %s has no public domain", col->name, rel),
			 errdetail("dpsynth never learns the values present from the data without charging for them."),
			 errhint("The table's owner can declare one: SELECT dp_declare('%s', '%s', categories => ARRAY[...]);",
					 rel, col->name)));
}

/* A declared domain as read from the catalog, copied out of SPI. */
typedef struct DeclaredDomain
{
	bool		categories;
	const char **labels;
	int			nlabels;
	double		lower;
	double		upper;
	int			bins;
} DeclaredDomain;

static bool
read_declared(Oid relid, AttrNumber attnum, DeclaredDomain *dd)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	DpOwnerSwitch sw;
	Oid			argtypes[2] = {OIDOID, INT2OID};
	Datum		values[2] = {ObjectIdGetDatum(relid), Int16GetDatum(attnum)};
	bool		found;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT kind = 'categories', categories, lower, upper, bins "
							  "FROM dpsynth.domains WHERE relid = $1 AND attnum = $2",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dpsynth.domains");
	found = SPI_processed == 1;
	if (found)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		dd->categories = DatumGetBool(SPI_getbinval(tup, desc, 1, &isnull));
		if (dd->categories)
		{
			ArrayType  *arr = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 2, &isnull));
			Datum	   *elems;
			bool	   *enulls;
			MemoryContext old;

			deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &dd->nlabels);
			old = MemoryContextSwitchTo(caller_cxt);
			dd->labels = palloc(sizeof(char *) * dd->nlabels);
			for (int i = 0; i < dd->nlabels; i++)
				dd->labels[i] = TextDatumGetCString(elems[i]);
			MemoryContextSwitchTo(old);
		}
		else
		{
			dd->lower = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
			dd->upper = DatumGetFloat8(SPI_getbinval(tup, desc, 4, &isnull));
			dd->bins = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
		}
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	return found;
}

static void
stale_declaration_error(Oid relid, DpColumn *col)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("declared domain of column \"%s\" of table %s does not fit its type %s",
					col->name, get_rel_name(relid), format_type_be(col->typid)),
			 errhint("The column's type changed since the declaration; the owner must declare it again with dp_declare.")));
}

static void
load_column(Oid relid, DpColumn *col)
{
	DeclaredDomain dd;

	if (read_declared(relid, col->attnum, &dd))
	{
		if (dd.categories)
		{
			init_categories(col, dd.labels, dd.nlabels, true);
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

				getTypeOutputInfo(col->typid, &outfn, &varlena);
				fmgr_info(outfn, &col->outfunc);
				col->encoding = DP_ENC_OUTPUT;
			}
			return;
		}
		if (is_integer_type(col->typid))
		{
			if (dp_domain_init_int_bins(&col->domain, (int64) dd.lower, (int64) dd.upper, dd.bins,
										!col->notnull) != 0)
				stale_declaration_error(relid, col);
		}
		else if (is_real_type(col->typid))
		{
			/* NaN has no bin: these columns always have a NULL cell */
			if (dp_domain_init_real_bins(&col->domain, dd.lower, dd.upper, dd.bins, true) != 0)
				stale_declaration_error(relid, col);
		}
		else
			stale_declaration_error(relid, col);
		col->encoding = numeric_encoding(col->typid);
		return;
	}

	if (col->typid == BOOLOID)
	{
		static const char *bool_labels[2] = {"false", "true"};

		init_categories(col, bool_labels, 2, !col->notnull);
		col->encoding = DP_ENC_BOOL;
		return;
	}
	if (type_is_enum(col->typid))
	{
		init_enum(col);
		return;
	}
	no_domain_error(relid, col);
}

DpColumn *
dpsynth_load_columns(Oid relid, ArrayType *names, int *ncolumns)
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
					 errmsg("column \"%s\" of table %s does not exist", cols[i].name, get_rel_name(relid)),
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
		cols[i].typid = getBaseType(att->atttypid);
		cols[i].notnull = att->attnotnull;
		ReleaseSysCache(atttup);
		load_column(relid, &cols[i]);
	}
	*ncolumns = n;
	return cols;
}

static dp_code
encode_varlena(DpColumn *col, Datum value)
{
	text	   *t = DatumGetTextPP(value);
	char	   *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);

	if (col->encoding == DP_ENC_BPCHAR)
		len = bpchartruelen(s, len);
	return dp_encode_label(&col->domain, s, len);
}

/*
 * Encodes one value.  Allocations (detoasting, output functions) go to the current memory
 * context, which the caller resets per row.  Nothing here raises on a value.
 */
dp_code
dpsynth_encode(DpColumn *col, Datum value, bool isnull)
{
	if (isnull)
		return dp_encode_null(&col->domain);
	switch (col->encoding)
	{
		case DP_ENC_TEXT:
		case DP_ENC_BPCHAR:
			return encode_varlena(col, value);
		case DP_ENC_OUTPUT:
			{
				char	   *s = OutputFunctionCall(&col->outfunc, value);

				return dp_encode_label(&col->domain, s, strlen(s));
			}
		case DP_ENC_BOOL_LABEL:
			return DatumGetBool(value) ? dp_encode_label(&col->domain, "true", 4)
				: dp_encode_label(&col->domain, "false", 5);
		case DP_ENC_BOOL:
			return DatumGetBool(value) ? 1 : 0;
		case DP_ENC_ENUM:
			{
				Oid			key = DatumGetObjectId(value);
				Oid		   *hit = bsearch(&key, col->enum_oids, col->nenum, sizeof(Oid), enum_oid_cmp);

				return hit ? col->enum_codes[hit - col->enum_oids] : dp_encode_null(&col->domain);
			}
		case DP_ENC_INT2:
			return dp_encode_int(&col->domain, DatumGetInt16(value));
		case DP_ENC_INT4:
			return dp_encode_int(&col->domain, DatumGetInt32(value));
		case DP_ENC_INT8:
			return dp_encode_int(&col->domain, DatumGetInt64(value));
		case DP_ENC_FLOAT4:
			return dp_encode_real(&col->domain, DatumGetFloat4(value));
		case DP_ENC_FLOAT8:
			return dp_encode_real(&col->domain, DatumGetFloat8(value));
		case DP_ENC_NUMERIC:
			/* the _no_overflow variant returns +/-HUGE_VAL instead of raising on huge values */
			return dp_encode_real(&col->domain,
								  DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value)));
	}
	return dp_encode_null(&col->domain);
}

Datum
dpsynth_code_label(DpColumn *col, dp_code code, bool *isnull)
{
	char		buf[256];

	if (!dp_code_label(&col->domain, code, buf, sizeof(buf)))
	{
		*isnull = true;
		return (Datum) 0;
	}
	*isnull = false;
	if (col->domain.kind == DP_DOMAIN_CATEGORIES)	/* labels may be longer than buf */
		return PointerGetDatum(cstring_to_text_with_len(col->domain.map.labels[code],
														col->domain.map.lens[code]));
	return CStringGetTextDatum(buf);
}
