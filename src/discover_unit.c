/*
 * discover_unit.c - the counts of a discovery on a table with a privacy unit (docs/PRIVACY.md,
 * "Privacy per unit", "Discovery per unit").
 *
 * One scan (dpsynth_scan_unit_rows, units.c): each row's codes are made from its slot, each unit
 * keeps at most k of its rows chosen uniformly at random with the CSPRNG (where k is learned, the
 * same scan learns it first), and the kept rows of a unit arrive one after another.  Then:
 *   quantile bins of declared bounds   each kept row adds 1 to its cell of the log grid (its value
 *                                      clamped into the bounds), and where the bins are refined
 *                                      (a small integer range) to its value's count too: one unit
 *                                      moves each histogram by at most k in one cell, L2
 *                                      sensitivity k;
 *   categories (text)                  each value counts the units holding it among their kept
 *                                      rows, once a unit: one unit adds 1 to at most k values, L2
 *                                      sensitivity sqrt(k), and brings at most k values absent
 *                                      without it (the threshold, discover.c);
 *   bounds (numbers without a domain)  each cell of the log grid counts the units with a kept row
 *                                      in it, once a unit: L2 sensitivity sqrt(k).
 * A text value's code is its index among the values seen (two codes: up to 2^32 values); a
 * number's is its cell (the grids have fewer than 2^16 cells), then, where refined, its value's
 * index in the bounds (at most DP_BINNING_MAX_VALUES); a NULL, a NaN or a label too long is the
 * column's "none" code and counts nowhere.  No count of a unit's rows is read here.
 */
#include "discover.h"

#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#define NONE_ID		PG_UINT32_MAX	/* a category column's code pair for no value */

typedef struct UnitCounts
{
	Discovery  *ds;
	int			nd;
	int		   *at;				/* per column: its first code */
	int			ncodes;
	AttrNumber	maxatt;
	MemoryContext arena;
	MemoryContext rowcxt;		/* a row's detoasted values */
	ValueEntry **entries;		/* the text values seen, by id (all category columns) */
	uint64		nentries;
	uint64		capentries;
	uint64	  **cell_unit;		/* per bounds column: the last unit counted in each cell */
	uint64		unit;			/* the current unit: 1, 2, ... */
} UnitCounts;

/* A text value's id, NONE_ID for a label too long. */
static uint32
entry_id(UnitCounts *uc, Discovery *d, Datum value)
{
	ValueEntry *e = dpsynth_discover_entry(d, value, uc->arena);

	if (e == NULL)
		return NONE_ID;
	if (e->last_unit == 0)		/* first sight: its id */
	{
		if (uc->nentries >= NONE_ID)
			elog(ERROR, "dpsynth: more than 2^32 - 1 distinct text values in one discovery");	/* the rows' bytes could not hold them */
		if (uc->nentries == uc->capentries)
		{
			uc->capentries = Min(uc->capentries + uc->capentries / 2, (uint64) NONE_ID);
			uc->entries = repalloc_huge(uc->entries, sizeof(ValueEntry *) * (Size) uc->capentries);
		}
		e->id = (uint32) uc->nentries;
		uc->entries[uc->nentries++] = e;
		e->last_unit = PG_UINT64_MAX;	/* seen, no unit counted yet (units are 1, 2, ...) */
	}
	return e->id;
}

static void
encode_row(TupleTableSlot *slot, dp_code *codes, void *arg)
{
	UnitCounts *uc = arg;
	MemoryContext old = MemoryContextSwitchTo(uc->rowcxt);

	for (int k = 0; k < uc->nd; k++)
	{
		Discovery  *d = &uc->ds[k];
		AttrNumber	a = d->col->attnum - 1;
		dp_code    *c = codes + uc->at[k];
		uint32		cell;

		if (d->categories)
		{
			uint32		id = slot->tts_isnull[a] ? NONE_ID : entry_id(uc, d, slot->tts_values[a]);

			c[0] = (dp_code) (id >> 16);
			c[1] = (dp_code) (id & 0xFFFF);
		}
		else
		{
			bool		some = !slot->tts_isnull[a] && dpsynth_discover_cell(d, slot->tts_values[a], &cell);

			c[0] = some ? (dp_code) cell : (dp_code) dp_loggrid_ncells(&d->grid);
			if (d->fine)		/* an integer clamped into the bounds: its index there */
				c[1] = some ? (dp_code) (Min(Max(dpsynth_value_int(d->col->typid, slot->tts_values[a]),
												 (int64) d->col->quantile_lower),
											 (int64) d->col->quantile_upper) - (int64) d->col->quantile_lower) : 0;
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(uc->rowcxt);
}

/* A kept row: its quantile cells counted; its values and bounds cells once per unit. */
static void
count_row(const dp_code *codes, bool first, void *arg)
{
	UnitCounts *uc = arg;

	if (first)
		uc->unit++;
	for (int k = 0; k < uc->nd; k++)
	{
		Discovery  *d = &uc->ds[k];
		const dp_code *c = codes + uc->at[k];

		if (d->categories)
		{
			uint32		id = ((uint32) c[0] << 16) | c[1];
			ValueEntry *e;

			if (id == NONE_ID)
				continue;
			e = uc->entries[id];
			if (e->last_unit != uc->unit)
			{
				e->last_unit = uc->unit;
				e->count++;
			}
		}
		else if (c[0] < dp_loggrid_ncells(&d->grid))
		{
			if (d->quantiles)
			{
				d->cells[c[0]]++;
				if (d->fine)
					d->fine[c[1]]++;
			}
			else if (uc->cell_unit[k][c[0]] != uc->unit)
			{
				uc->cell_unit[k][c[0]] = uc->unit;
				d->cells[c[0]]++;
			}
		}
	}
}

void
dpsynth_discover_unit_counts(Relation rel, DpUnit *u, Discovery *ds, int nd, MemoryContext arena)
{
	UnitCounts	uc;

	memset(&uc, 0, sizeof(uc));
	uc.ds = ds;
	uc.nd = nd;
	uc.arena = arena;
	uc.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth discovery row", ALLOCSET_SMALL_SIZES);
	uc.at = palloc(sizeof(int) * Max(nd, 1));
	uc.cell_unit = palloc0(sizeof(uint64 *) * Max(nd, 1));
	uc.capentries = 1024;
	uc.entries = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(ValueEntry *) * (Size) uc.capentries);
	for (int k = 0; k < nd; k++)
	{
		uc.at[k] = uc.ncodes;
		uc.ncodes += ds[k].categories || ds[k].fine ? 2 : 1;
		uc.maxatt = Max(uc.maxatt, ds[k].col->attnum);
		if (ds[k].categories)
			continue;
		if (dp_loggrid_ncells(&ds[k].grid) >= PG_UINT16_MAX ||
			(ds[k].fine && ds[k].col->quantile_upper - ds[k].col->quantile_lower >= PG_UINT16_MAX))
			elog(ERROR, "dpsynth: a log grid or a range of more cells than codes");	/* public: never */
		if (!ds[k].quantiles)
			uc.cell_unit[k] = palloc0(sizeof(uint64) * dp_loggrid_ncells(&ds[k].grid));
	}
	dpsynth_scan_unit_rows(rel, uc.ncodes, uc.maxatt, u, encode_row, &uc, count_row, &uc, NULL);
	MemoryContextDelete(uc.rowcxt);
}
