/*
 * discover_values.c - a discovered column's values as discovery counts them (discover.c row by
 * row, discover_unit.c per unit): a text value's entry in the column's table of values, a
 * number's cell of the log grid.
 */
#include "discover.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "utils/builtins.h"

/* The entry of a text value (count 0 at its first sight), NULL for a label too long. */
ValueEntry *
dpsynth_discover_entry(Discovery *d, Datum value, MemoryContext arena)
{
	text	   *t = DatumGetTextPP(value);
	char	   *s = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);
	ValueKey	key;
	ValueEntry *e;
	bool		found;

	if (d->col->typid == BPCHAROID)
		len = bpchartruelen(s, len);
	if (len > DISCOVER_MAX_LABEL)
		return NULL;
	key.h1 = hash_bytes_extended((const unsigned char *) s, len, 0x9e3779b97f4a7c15);
	key.h2 = hash_bytes_extended((const unsigned char *) s, len, 0x632be59bd9b4e019);
	/*
	 * Two values of one hash (the seeds are public: chosen values can collide) are two entries:
	 * the second takes the next key that holds it or is free.  So every value keeps its own
	 * count and label whatever the order of the rows, and per unit a value seen only in rows
	 * no unit kept can neither lend its label to nor take one from a value that counts.
	 */
	for (;;)
	{
		e = hash_search(d->values, &key, HASH_ENTER, &found);
		if (!found || (strlen(e->value) == (size_t) len && memcmp(e->value, s, len) == 0))
			break;
		key.h2 += 0x9e3779b97f4a7c15;
	}
	if (!found)
	{
		e->count = 0;
		e->id = 0;
		e->last_unit = 0;
		e->value = MemoryContextAlloc(arena, len + 1);
		memcpy(e->value, s, len);
		e->value[len] = '\0';
	}
	return e;
}

/* A number's cell of the grid, clamped into a quantile column's bounds; false for a NaN. */
bool
dpsynth_discover_cell(const Discovery *d, Datum value, uint32 *cell)
{
	const DpColumn *col = d->col;
	double		x;

	if (dpsynth_value_is_integral(col->typid))
	{
		int64		v = dpsynth_value_int(col->typid, value);

		if (d->quantiles)
			v = Max(Min(v, (int64) col->quantile_upper), (int64) col->quantile_lower);
		*cell = dp_loggrid_cell_int(&d->grid, v);
		return true;
	}
	x = dpsynth_value_real(col->typid, value);
	if (isnan(x))
		return false;
	if (d->quantiles)
		x = Max(Min(x, col->quantile_upper), col->quantile_lower);
	*cell = dp_loggrid_cell_real(&d->grid, x);
	return true;
}
