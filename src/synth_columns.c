/*
 * synth_columns.c - the columns of a synthetic table, planned from the source's schema and the
 * owner's policies before anything is charged: which are synthesized, left NULL (excluded, not
 * selected) or regenerated (identifiers), their public domains, and whether an identifier's
 * type can hold the fresh values asked for.
 */
#include "synthesize.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

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
		if (SPI_execute_with_args("SELECT p.treatment, pg_catalog.pg_get_serial_sequence($1::regclass::text, $3) IS NOT NULL "
								  "FROM (SELECT 1) x LEFT JOIN dpsynth.column_policies p ON p.relid = $1 AND p.attnum = $2",
								  3, argtypes, values, NULL, false, 1) == SPI_OK_SELECT && SPI_processed == 1)
		{
			char	   *t = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
			bool		isnull;

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
synth_plan_columns(Oid relid, ArrayType *only, const char *label, int *noutp, ArrayType **synth_names)
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

		if (is_identifier(oc, treatments[i], serials[i]))
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
