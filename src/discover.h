/*
 * discover.h - what discover.c and discover_unit.c share: a column being discovered and the
 * counts of its values (private to discovery).
 */
#ifndef DPSYNTH_DISCOVER_H
#define DPSYNTH_DISCOVER_H

#include "dpsynth.h"

#include "utils/hsearch.h"

#include "dp_discovery.h"

#define DISCOVER_MAX_LABEL	256		/* longer text values are never released as categories */

/* bounds: the exact count of a number (the bits of a double), for the second stage */
typedef struct NumberEntry
{
	int64		key;			/* the integer, or the bits of the double */
	int64		count;
} NumberEntry;

typedef struct ValueKey
{
	uint64		h1;
	uint64		h2;
} ValueKey;

typedef struct ValueEntry
{
	ValueKey	key;			/* 128-bit hash of the bytes (the next free key on a collision) */
	int64		count;
	char	   *value;			/* NUL-terminated copy, in the arena */
	uint32		id;				/* per unit: the value's index in the scan's table of entries */
	uint64		last_unit;		/* per unit: the last unit counted (1, 2, ...; 0 none) */
} ValueEntry;

typedef struct Discovery
{
	DpColumn   *col;
	bool		categories;
	bool		quantiles;		/* clamp into the declared bounds, learn quantile edges */
	HTAB	   *values;			/* categories */
	dp_loggrid	grid;			/* bounds */
	int64	   *cells;
	int64	   *fine;			/* quantile_fine: the exact count of every value of the bounds */
	HTAB	   *exact;			/* bounds: exact count of every value, for the second stage */
	/* quantiles: the released count of each learned bin and its variance (bin_prior), or NULL */
	double	   *prior_est;
	double	   *prior_var;
	int			nprior;
} Discovery;

/* discover_values.c: the entry of a text value (made with count 0 at its first sight), NULL for a
 * label too long ... */
extern ValueEntry *dpsynth_discover_entry(Discovery *d, Datum value, MemoryContext arena);
/* ... and the grid cell of a number (clamped into the bounds of a quantile column), false for a NaN */
extern bool dpsynth_discover_cell(const Discovery *d, Datum value, uint32 *cell);

/*
 * discover_unit.c: the counts of a discovery per unit, from one scan of the rows each unit keeps
 * (at most k, uniformly at random): a quantile column's grid counts rows; a category's value and a
 * bounds column's cell count the units holding them (each unit at most once a value or cell).
 */
extern void dpsynth_discover_unit_counts(Relation rel, DpUnit *u, Discovery *ds, int nd,
										 MemoryContext arena);

/*
 * discover_bins.c: a number, date or timestamp column's releases once the scan has counted it:
 * quantile bins inside declared bounds (noise, then edges at its noisy quantiles), the same with
 * a refined column's two stages, and the bounds of a column without a domain with its bins.
 */
extern void dpsynth_discover_release_edges(Oid relid, Discovery *d, const dp_dgauss *noise,
										   double min_bin_mass, int64 ledger_id);
extern void dpsynth_discover_release_refined(Oid relid, Discovery *d, const dp_dgauss *stage1,
											 const dp_dgauss *stage2, double min_bin_mass, int64 ledger_id);
extern void dpsynth_discover_release_bounds(Oid relid, Discovery *d, const dp_dgauss *coarse,
											const dp_dgauss *fine, int64 ledger_id, bool learn_bins,
											double min_bin_mass);

#endif							/* DPSYNTH_DISCOVER_H */
