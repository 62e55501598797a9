/*
 * synth_columns.c - the columns of a synthetic table, planned from the source's schema and the
 * owner's policies before anything is charged: which are synthesized, left NULL (excluded, not
 * selected) or regenerated (identifiers), their public domains, and whether an identifier's
 * type can hold the fresh values asked for.
 */
#include "synthesize.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

static bool
is_identifier(OutColumn *oc, const char *treatment, bool serial)
{
	return (treatment && strcmp(treatment, "identifier") == 0) || serial || oc->basetype == UUIDOID;
}

/* Whether a domain on the type's chain is NOT NULL (pg_type.typnotnull, not a pg_constraint row). */
static bool
domain_notnull(Oid typid)
{
	while (get_typtype(typid) == TYPTYPE_DOMAIN)
	{
		HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
		bool		notnull;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for type %u", typid);
		notnull = ((Form_pg_type) GETSTRUCT(tup))->typnotnull;
		typid = ((Form_pg_type) GETSTRUCT(tup))->typbasetype;
		ReleaseSysCache(tup);
		if (notnull)
			return true;
	}
	return false;
}

/*
 * The owner's treatment of every column (NULL: synthesize) and whether it is serial, copied out
 * of SPI into the caller's memory context; read as the extension owner.
 */
static void
read_policies(Oid relid, TupleDesc desc, char ***treatmentsp, bool **serialsp)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	char	  **treatments = palloc0(sizeof(char *) * Max(desc->natts, 1));
	bool	   *serials = palloc0(sizeof(bool) * Max(desc->natts, 1));
	DpOwnerSwitch sw;

	/* (the caller has brought the policies' attnums back to their names: dpsynth_domains_by_name) */
	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			argtypes[3] = {OIDOID, INT2OID, TEXTOID};
		Datum		values[3];

		if (att->attisdropped)
			continue;
		values[0] = ObjectIdGetDatum(relid);
		values[1] = Int16GetDatum(att->attnum);
		values[2] = CStringGetTextDatum(NameStr(att->attname));
		if (SPI_execute_with_args("SELECT p.treatment, pg_catalog.pg_get_serial_sequence($1::regclass::text, $3) IS NOT NULL, "
								  "       pg_catalog.to_jsonb(p)->>'attname' "
								  "FROM (SELECT 1) x LEFT JOIN dpsynth.column_policies p ON p.relid = $1 AND p.attnum = $2",
								  3, argtypes, values, NULL, false, 1) == SPI_OK_SELECT && SPI_processed == 1)
		{
			char	   *t = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
			char	   *set_for = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
			bool		isnull;

			dpsynth_check_policy_column(relid, NameStr(att->attname), set_for);

			treatments[i] = t ? MemoryContextStrdup(caller_cxt, t) : NULL;
			serials[i] = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		}
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	*treatmentsp = treatments;
	*serialsp = serials;
}

OutColumn *
synth_plan_columns(Oid relid, ArrayType *only, const char *label, int *noutp, ArrayType **synth_names,
				   AttrNumber unit_attnum)
{
	Relation	rel = RelationIdGetRelation(relid);
	TupleDesc	desc = RelationGetDescr(rel);
	OutColumn  *out = palloc0(sizeof(OutColumn) * Max(desc->natts, 1));
	int			nout = 0;
	Datum	   *names = palloc(sizeof(Datum) * Max(desc->natts, 1));
	int			nnames = 0;
	Datum	   *only_elems = NULL;
	bool	   *only_nulls = NULL;
	int			nonly = 0;
	char	  **treatments;
	bool	   *serials;

	if (only)
	{
		deconstruct_array(only, TEXTOID, -1, false, TYPALIGN_INT, &only_elems, &only_nulls, &nonly);
		for (int i = 0; i < nonly; i++)
		{
			if (only_nulls[i])
				ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("column names must not be NULL")));
			if (get_attnum(relid, TextDatumGetCString(only_elems[i])) <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of table \"%s\" does not exist",
								TextDatumGetCString(only_elems[i]), get_rel_name(relid))));
		}
	}

	read_policies(relid, desc, &treatments, &serials);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		OutColumn  *oc;
		bool		listed = (only == NULL);
		bool		excluded;

		if (att->attisdropped)
			continue;
		oc = &out[nout++];
		oc->name = pstrdup(NameStr(att->attname));
		oc->typid = att->atttypid;
		oc->basetypmod = att->atttypmod;
		oc->basetype = getBaseTypeAndTypmod(att->atttypid, &oc->basetypmod);
		oc->typmod = att->atttypmod;	/* the declared type's own typmod, for input and DDL */
		/* a NOT NULL domain counts: rows are inserted without domain checks (table_multi_insert) */
		oc->notnull = att->attnotnull || domain_notnull(att->atttypid);
		oc->scale = -1;
		for (int k = 0; k < nonly; k++)
			listed |= strcmp(TextDatumGetCString(only_elems[k]), oc->name) == 0;
		excluded = treatments[i] && strcmp(treatments[i], "exclude") == 0;

		if (att->attnum == unit_attnum)
		{
			/* the privacy unit: synthetic unit ids, never a marginal's attribute (units.c) */
			oc->kind = OUT_IDENTIFIER;
			oc->treatment = "privacy_unit";
			oc->unit = true;
		}
		else if (is_identifier(oc, treatments[i], serials[i]))
		{
			oc->kind = OUT_IDENTIFIER;
			oc->treatment = "identifier";
		}
		else if (excluded || !listed)
		{
			oc->kind = OUT_NULL;
			oc->treatment = excluded ? "excluded" : "not_selected";
		}
		else
		{
			oc->kind = OUT_SYNTH;
			oc->treatment = "synthesized";
			oc->synth = nnames;
			names[nnames++] = CStringGetTextDatum(oc->name);
		}
		synth_secure_column_type(oc, label);
		if (oc->kind == OUT_NULL && oc->notnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("column \"%s\" of table \"%s\" is NOT NULL but would not be synthesized", oc->name,
							get_rel_name(relid)),
					 only ? errhint("Add it to the columns argument, or leave that argument out.") :
					 errhint("The owner excluded it; a synthetic copy would leave it NULL.")));
		if (oc->kind == OUT_IDENTIFIER && oc->notnull &&
			!(oc->basetype == INT2OID || oc->basetype == INT4OID || oc->basetype == INT8OID ||
			  oc->basetype == NUMERICOID || oc->basetype == UUIDOID || oc->basetype == TEXTOID ||
			  oc->basetype == VARCHAROID))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("identifier column \"%s\" of type %s cannot be regenerated", oc->name,
							format_type_be(oc->typid))));
	}
	RelationClose(rel);
	if (nnames == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table \"%s\" has no column to synthesize", get_rel_name(relid))));
	*synth_names = construct_array(names, nnames, TEXTOID, -1, false, TYPALIGN_INT);
	*noutp = nout;
	return out;
}

/*
 * The columns the owner declared constant within a unit (dp_unit_constant): those that are
 * synthesized; a declared column left NULL or regenerated (excluded, not selected, an identifier)
 * has no value to keep.
 */
int
synth_mark_unit_constant(OutColumn *out, int nout, char *const *names, int n)
{
	int			marked = 0;

	for (int i = 0; i < nout; i++)
	{
		out[i].unit_constant = false;
		for (int k = 0; k < n && out[i].kind == OUT_SYNTH; k++)
			if (strcmp(out[i].name, names[k]) == 0)
				out[i].unit_constant = true;
		marked += out[i].unit_constant;
	}
	return marked;
}

/*
 * Points the synthesized output columns at their columns' domains and placeholders, and prepares
 * the decoding of those whose domain is known.  Before the charge (discovered = false) also the
 * placeholders of every categories column, discovered or not; after discovery (true), the
 * decoding of the columns that only now have a domain.
 */
void
synth_bind_columns(OutColumn *out, int nout, DpColumn *cols, bool discovered)
{
	for (int i = 0; i < nout; i++)
	{
		DpColumn   *col;

		if (out[i].kind != OUT_SYNTH)
			continue;
		col = &cols[out[i].synth];
		out[i].domain = &col->domain;
		out[i].other = col->other;
		if (!discovered && (col->state == DP_COLUMN_DISCOVER_CATEGORIES ||
							(col->state == DP_COLUMN_READY && col->domain.kind == DP_DOMAIN_CATEGORIES)))
			synth_prepare_other(&out[i]);
		if (col->state == DP_COLUMN_READY && !out[i].decoding_ready)
			synth_prepare_decoding(&out[i]);
	}
}

/*
 * Before any charge: a NOT NULL identifier column must hold fresh values for up to maxrows rows
 * (the rows asked for, or at most dpsynth.max_sample_rows); refused with 22023 otherwise.  A
 * nullable one gets NULL beyond what its type holds.
 */
void
synth_check_identifiers(OutColumn *out, int nout, int64 maxrows, bool rows_given, const char *label)
{
	for (int i = 0; i < nout; i++)
	{
		OutColumn  *oc = &out[i];

		if (oc->kind != OUT_IDENTIFIER)
			continue;
		synth_prepare_numeric(oc);	/* a numeric(p,s) identifier gets its scale */
		synth_identifier_format(oc, maxrows);
		if (oc->notnull && oc->id_capacity < maxrows)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("identifier column \"%s\" of type %s cannot hold " INT64_FORMAT " fresh values",
							oc->name, format_type_with_typemod(oc->typid, oc->typmod), maxrows),
					 errcontext("%s", label),
					 errdetail("It holds " INT64_FORMAT " at most.", oc->id_capacity),
					 rows_given ? 0 :
					 errhint("Without rows => the table may have up to dpsynth.max_sample_rows rows; pass rows => at most " INT64_FORMAT ".",
							 oc->id_capacity)));
	}
}

/* ---------------------------------------------------------------------------------------
 * The copy's own types.  A column of the copy must depend on nothing the source's owner
 * controls: an enum or composite type of theirs (or an array of one) could be dropped with
 * DROP TYPE ... CASCADE, taking the analyst's column with it, or changed under the copy.  So
 * the copy gets types of its own, owned by the caller, in the target's schema and named after
 * the source's types: an enum with the same labels in the same order (so that ordering and
 * comparisons behave as the source's), a composite with the same attributes over such types,
 * arrays of them.  A type the caller already owns there with that very name (or <name>_<n>)
 * and definition is used again, so that copies in one schema compare with each other.
 * Domains give way to their base types (their NOT NULL and built-in CHECKs become the
 * column's own: synth_write.c).  Built-in types, and base types (only a superuser makes them),
 * are kept; a range or multirange that is not built in becomes text (no code of its owner, such
 * as a canonical function, may come along).  Dropping the copy leaves its types.
 * --------------------------------------------------------------------------------------- */

/* a type's unqualified name */
static char *
type_name(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	char	   *name;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", typid);
	name = pstrdup(NameStr(((Form_pg_type) GETSTRUCT(tup))->typname));
	ReleaseSysCache(tup);
	return name;
}

/* ENUM ('label', ...): an enum's labels in their order */
static char *
enum_definition(Oid typid)
{
	CatCList   *list = SearchSysCacheList1(ENUMTYPOIDNAME, ObjectIdGetDatum(typid));
	Form_pg_enum *labels = palloc(sizeof(Form_pg_enum) * Max(list->n_members, 1));
	StringInfoData def;

	for (int i = 0; i < list->n_members; i++)
		labels[i] = (Form_pg_enum) GETSTRUCT(&list->members[i]->tuple);
	/* by sort order (insertion sort: the list comes in no given order) */
	for (int i = 1; i < list->n_members; i++)
		for (int j = i; j > 0 && labels[j - 1]->enumsortorder > labels[j]->enumsortorder; j--)
		{
			Form_pg_enum x = labels[j];

			labels[j] = labels[j - 1];
			labels[j - 1] = x;
		}
	initStringInfo(&def);
	appendStringInfoString(&def, "ENUM (");
	for (int i = 0; i < list->n_members; i++)
		appendStringInfo(&def, "%s%s", i ? ", " : "", quote_literal_cstr(NameStr(labels[i]->enumlabel)));
	appendStringInfoChar(&def, ')');
	ReleaseSysCacheList(list);
	return def.data;
}

static Oid	own_type(Oid typid, int32 *typmod, Oid nspid, int depth);

/* (attribute type, ...): a composite's attributes; over the copy's own types if nspid is valid */
static char *
composite_definition(Oid typid, Oid nspid, int depth)
{
	TupleDesc	desc = lookup_rowtype_tupdesc_copy(typid, -1);
	StringInfoData def;
	int			n = 0;

	initStringInfo(&def);
	appendStringInfoChar(&def, '(');
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		int32		typmod = att->atttypmod;
		Oid			t = att->atttypid;

		if (att->attisdropped)
			continue;
		if (OidIsValid(nspid))
			t = own_type(t, &typmod, nspid, depth + 1);
		appendStringInfo(&def, "%s%s %s", n++ ? ", " : "", quote_identifier(NameStr(att->attname)),
						 format_type_with_typemod(t, typmod));
	}
	appendStringInfoChar(&def, ')');
	return def.data;
}

/*
 * Runs CREATE TYPE (as the caller) in a subtransaction; false if the name (or its array type's)
 * was taken meanwhile by a concurrent transaction (another call making a copy in the same
 * schema), so that the caller tries the next name instead of failing after the charge.
 */
static bool
create_type_unless_taken(const char *sql)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool created = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create a type of the synthetic copy");
		SPI_finish();
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION && edata->sqlerrcode != ERRCODE_DUPLICATE_OBJECT)
			ReThrowError(edata);
		FreeErrorData(edata);
		created = false;
	}
	PG_END_TRY();
	CommandCounterIncrement();
	return created;
}

/*
 * The copy's own type with the definition (ENUM (...) or (...)) in nspid, named after the
 * source's type: one the caller already owns there with that very definition (so that copies
 * in one schema share it and compare with each other), else a new one, created as the caller
 * under the first free name of <name>, <name>_1, ...
 */
static Oid
own_type_named(Oid nspid, const char *typname, char typtype, const char *definition)
{
	for (int n = 0;; n++)
	{
		char	   *name = makeObjectName(typname, NULL, n ? psprintf("%d", n) : NULL);
		HeapTuple	tup = SearchSysCache2(TYPENAMENSP, CStringGetDatum(name), ObjectIdGetDatum(nspid));
		Oid			result;

		if (HeapTupleIsValid(tup))
		{
			Form_pg_type t = (Form_pg_type) GETSTRUCT(tup);
			bool		same = t->typowner == GetUserId() && t->typtype == typtype &&
				(typtype != TYPTYPE_COMPOSITE || get_rel_relkind(t->typrelid) == RELKIND_COMPOSITE_TYPE);

			result = t->oid;
			ReleaseSysCache(tup);
			if (same && strcmp(typtype == TYPTYPE_ENUM ? enum_definition(result)
							   : composite_definition(result, InvalidOid, 0), definition) == 0)
				return result;
			continue;
		}
		if (OidIsValid(get_relname_relid(name, nspid)) ||
			!create_type_unless_taken(psprintf("CREATE TYPE %s AS %s",
											   quote_qualified_identifier(get_namespace_name(nspid), name),
											   definition)))
			continue;
		result = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid, CStringGetDatum(name), ObjectIdGetDatum(nspid));
		if (!OidIsValid(result))
			elog(ERROR, "type \"%s\" vanished", name);
		return result;
	}
}

/* The type a column of the copy gets for the source's type typid (and *typmod). */
static Oid
own_type(Oid typid, int32 *typmod, Oid nspid, int depth)
{
	check_stack_depth();
	if (typid < FirstNormalObjectId)
		return typid;
	if (depth > 32)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("type %s nests too deeply for a synthetic copy", format_type_be(typid))));
	switch (get_typtype(typid))
	{
		case TYPTYPE_DOMAIN:
			{
				Oid			base = getBaseTypeAndTypmod(typid, typmod);

				return own_type(base, typmod, nspid, depth + 1);
			}
		case TYPTYPE_ENUM:
			return own_type_named(nspid, type_name(typid), TYPTYPE_ENUM, enum_definition(typid));
		case TYPTYPE_COMPOSITE:
			*typmod = -1;
			return own_type_named(nspid, type_name(typid), TYPTYPE_COMPOSITE,
								  composite_definition(typid, nspid, depth));
		case TYPTYPE_RANGE:
		case TYPTYPE_MULTIRANGE:
			*typmod = -1;
			return TEXTOID;
		default:
			{
				Oid			elem = get_element_type(typid);
				Oid			own_elem;
				Oid			array;

				if (!OidIsValid(elem) || !type_is_array(typid))
					return typid;	/* a base type: made by a superuser */
				own_elem = own_type(elem, typmod, nspid, depth + 1);
				if (own_elem == elem)
					return typid;
				array = get_array_type(own_elem);
				if (!OidIsValid(array))
				{
					*typmod = -1;
					return TEXTOID;
				}
				return array;
			}
	}
}

/* An enum value of the source's type as the same label of the copy's enum. */
static Datum
own_enum_value(Datum value, Oid own)
{
	HeapTuple	tup = SearchSysCache1(ENUMOID, value);
	Oid			result;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for enum value %u", DatumGetObjectId(value));
	result = GetSysCacheOid2(ENUMTYPOIDNAME, Anum_pg_enum_oid, ObjectIdGetDatum(own),
							 NameGetDatum(&((Form_pg_enum) GETSTRUCT(tup))->enumlabel));
	ReleaseSysCache(tup);
	if (!OidIsValid(result))
		elog(ERROR, "enum label missing from the copy's type %s", format_type_be(own));
	return ObjectIdGetDatum(result);
}

/*
 * Gives every column of the copy to be created in nspid a type that depends on
 * nothing of the source's owner (above), as the caller, before CREATE TABLE: out[].copy_type
 * and copy_typmod.  A synthesized enum column's decoded values
 * (its categories, placeholder and fallback) become the same labels of the copy's enum.
 */
void
synth_own_column_types(OutColumn *out, int nout, Oid nspid)
{
	for (int i = 0; i < nout; i++)
	{
		OutColumn  *oc = &out[i];
		int32		typmod = oc->basetypmod;
		Oid			own = own_type(oc->basetype, &typmod, nspid, 0);

		oc->copy_type = own;
		oc->copy_typmod = typmod;
		if (own == oc->basetype)
			continue;
		if (oc->kind == OUT_SYNTH && type_is_enum(oc->basetype) && oc->decoding_ready)
		{
			if (oc->category)
				for (uint32 c = 0; c < oc->domain->nvalues; c++)
					oc->category[c] = own_enum_value(oc->category[c], own);
			if (oc->has_other_value)
				oc->other_value = own_enum_value(oc->other_value, own);
			if (oc->domain->kind == DP_DOMAIN_CATEGORIES && (oc->has_other_value || oc->domain->nvalues > 0))
				oc->fallback = own_enum_value(oc->fallback, own);
		}
		else if (oc->kind == OUT_SYNTH)	/* not reached: only enums of these are synthesized */
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("column \"%s\" of type %s cannot be synthesized", oc->name, format_type_be(oc->typid))));
	}
}
