/*
 * remote_sql.c - pieces of the SQL text that dpsynth sends to other servers, shared by foreign.c
 * (postgres_fdw partitions, counted on their servers) and citus.c (Citus tables, counted on their
 * shards): a relation's qualified name, a column set's codes' sizes as an int4[] literal, and the
 * conditions that fail on the server unless each column has the type declared here.  Only text:
 * nothing here connects, reads or charges.
 */
#include "dpsynth.h"

#include "access/transam.h"
#include "lib/stringinfo.h"
#include "nodes/bitmapset.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* The relation's schema-qualified name, quoted as needed. */
char *
dpsynth_qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

/* The codes' sizes of a column set as an int4[] literal, for the count statements sent elsewhere. */
char *
dpsynth_sizes_literal(DpColumn *cols, const DpColumnSet *set)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "'{");
	for (int j = 0; j < set->n; j++)
		appendStringInfo(&b, "%s%u", j ? "," : "", dp_domain_ncodes(&cols[set->idx[j]].domain));
	appendStringInfoString(&b, "}'::pg_catalog.int4[]");
	return b.data;
}

/*
 * Conditions that the server parses with its own column types and that fail there unless each
 * column of a built-in type has exactly the type the foreign table declares: ARRAY[col] = '{}'::T[]
 * has no operator when col's type is not T (array equality takes two arrays of one type).  Each
 * starts with " AND "; "" when no column is of a built-in type (a domain's array is not shipped,
 * so its base type is not compared).
 */
char *
dpsynth_types_quals(DpColumn *cols, const DpColumnSet *sets, int k0, int k1)
{
	StringInfoData b;
	Bitmapset  *seen = NULL;

	initStringInfo(&b);
	for (int k = k0; k < k1; k++)
		for (int j = 0; j < sets[k].n; j++)
		{
			DpColumn   *col = &cols[sets[k].idx[j]];
			Oid			arr = get_array_type(col->typid);

			if (bms_is_member(sets[k].idx[j], seen) || col->typid >= FirstNormalObjectId || !OidIsValid(arr))
				continue;
			seen = bms_add_member(seen, sets[k].idx[j]);
			appendStringInfo(&b, " AND ARRAY[%s] OPERATOR(pg_catalog.=) '{}'::%s", quote_identifier(col->name),
							 format_type_be(arr));
		}
	return b.data;
}
