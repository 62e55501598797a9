/*
 * discover.c - learning undeclared domains from the data, under DP, inside a charged call.
 *
 * A release that needs columns without a public domain spends part of its charge on learning
 * them first (the split is the call's privacy plan, src/core/dp_plan.c, from public facts only):
 *   text columns      DP partition selection (dp_discovery.h): exact counts of the values
 *                     present, discrete Gaussian noise, a threshold chosen so that a value held
 *                     by one row is released with probability <= delta_col.  (rho_col,
 *                     delta_col)-approximate zCDP under add/remove-one.  Values longer than
 *                     DISCOVER_MAX_LABEL bytes are never candidates (public rule).
 *   numbers, dates,   a noisy histogram over the type's public log-scale grid (one row adds 1 to
 *   timestamps        one cell: L2 sensitivity 1, rho_col-zCDP), then bounds at the noisy 0.1%
 *                     and 99.9% points and equal-width bins inside them (post-processing).
 * All columns are learned in one scan.  What is released is stored as the column's domain
 * (source 'dp', with the ledger row that paid for it) and reused by later calls for free.
 * On a table with a privacy unit the same releases are made from the rows each unit keeps, with
 * the noise and the threshold for one unit (discover_unit.c).  The releases of number, date
 * and timestamp columns once counted are discover_bins.c's.
 */
#include "discover.h"

#include <math.h>

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "dp_accounting.h"
#include "dp_binning.h"
#include "dp_counts.h"
#include "dp_decode.h"
#include "dp_discovery.h"
#include "dp_sampler.h"
#include "release_guard.h"

#define DISCOVER_SUBDIV		8		/* linear sub-cells per power of two of the grid */

/* Counts one number n times exactly (the fine stage of the bounds reads them back). */
static void
count_number(Discovery *d, int64 key, int64 n)
{
	NumberEntry *e;
	bool		found;

	if (d->exact == NULL)
		return;
	e = hash_search(d->exact, &key, HASH_ENTER, &found);
	if (!found)
		e->count = 0;
	e->count += n;
}

static int64
double_key(double x)
{
	int64		k;

	if (x == 0)
		x = 0;					/* -0 and 0 are one value */
	memcpy(&k, &x, sizeof(k));
	return k;
}

/*
 * Counts an integer value n times: clamped into a quantile column's bounds, its grid cell, (a
 * refined column) its own count, and exactly where the bounds are learned.  count_value's and
 * the one scan's (dpsynth_discover_add_int) one way of counting an integer.
 */
static void
count_int(Discovery *d, int64 v, int64 n)
{
	const DpColumn *col = d->col;

	if (d->quantiles)
		v = Max(Min(v, (int64) col->quantile_upper), (int64) col->quantile_lower);
	d->cells[dp_loggrid_cell_int(&d->grid, v)] += n;
	if (d->fine)
		d->fine[v - (int64) col->quantile_lower] += n;
	count_number(d, v, n);
}

/* Counts one value n times (n rows hold it). */
static void
count_value(Discovery *d, Datum value, int64 n, MemoryContext arena)
{
	DpColumn   *col = d->col;
	uint32		cell;

	if (d->categories)
	{
		ValueEntry *e = dpsynth_discover_entry(d, value, arena);

		if (e != NULL)
			e->count += n;
		return;
	}
	if (dpsynth_value_is_integral(col->typid))
	{
		count_int(d, dpsynth_value_int(col->typid, value), n);
		return;
	}
	if (!dpsynth_discover_cell(d, value, &cell))
		return;
	d->cells[cell] += n;
	count_number(d, double_key(dpsynth_value_real(col->typid, value)), n);
}

static int
label_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

typedef struct Ranked
{
	char	   *value;
	int64		noisy;
} Ranked;

static int
ranked_cmp(const void *a, const void *b)
{
	const Ranked *x = a,
			   *y = b;

	if (x->noisy != y->noisy)
		return x->noisy > y->noisy ? -1 : 1;
	return strcmp(x->value, y->value);
}

static void
release_categories(Oid relid, Discovery *d, const dp_dgauss *noise, double delta_col, int max_categories,
				   int64 ledger_id)
{
	long		n = hash_get_num_entries(d->values);
	int64	   *counts = palloc(sizeof(int64) * Max(n, 1));
	int64	   *noisy = palloc(sizeof(int64) * Max(n, 1));
	uint8	   *selected = palloc(sizeof(uint8) * Max(n, 1));
	char	  **values = palloc(sizeof(char *) * Max(n, 1));
	Ranked	   *kept;
	HASH_SEQ_STATUS seq;
	ValueEntry *e;
	long		i = 0;
	int			nkept = 0;
	int64		threshold = dp_partition_threshold(noise, delta_col);

	/* the values present: per unit, a value seen only in rows its units did not keep has count 0 */
	hash_seq_init(&seq, d->values);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (e->count > 0)
		{
			counts[i] = e->count;
			values[i] = e->value;
			i++;
		}
	n = i;
	/* the noise of every candidate is drawn, whatever its count */
	if (dp_partition_select(counts, n, noise, threshold, noisy, selected) < 0)
		dpsynth_noise_refused();
	kept = palloc(sizeof(Ranked) * Max(n, 1));
	for (i = 0; i < n; i++)
		if (selected[i])
		{
			kept[nkept].value = values[i];
			kept[nkept].noisy = noisy[i];
			nkept++;
		}
	/* post-processing: at most max_categories (the most frequent by noisy count), sorted */
	if (nkept > max_categories)
	{
		qsort(kept, nkept, sizeof(Ranked), ranked_cmp);
		nkept = max_categories;
	}
	for (i = 0; i < nkept; i++)
		values[i] = kept[i].value;
	qsort(values, nkept, sizeof(char *), label_cmp);
	dpsynth_store_discovered_categories(relid, d->col->attnum, ledger_id, values, nkept);
}

static HTAB *
blob_hash(const char *name, Size keysize, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = cxt;
	return hash_create(name, 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* The one scan of the rows (row-level), each discovered column's value counted. */
static void
scan_rows(Relation rel, Discovery *ds, int nd, AttrNumber maxatt, MemoryContext cxt)
{
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "dpsynth discovery row", ALLOCSET_SMALL_SIZES);
	TupleTableSlot *slot;
	DpSourceScan scan;

	/* ---- one scan; nothing here can fail on a value ---- */
	dpsynth_source_begin(&scan, rel);
	while ((slot = dpsynth_source_next(&scan)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		slot_getsomeattrs(slot, maxatt);
		MemoryContextSwitchTo(rowcxt);
		for (int k = 0; k < nd; k++)
		{
			AttrNumber	a = ds[k].col->attnum - 1;

			if (!slot->tts_isnull[a])
				count_value(&ds[k], slot->tts_values[a], 1, cxt);
		}
		MemoryContextSwitchTo(cxt);
		MemoryContextReset(rowcxt);
	}
	dpsynth_source_end(&scan);
	MemoryContextDelete(rowcxt);
}

/* A Citus table's (citus.c): a value of one column present on the shards, and its count. */
typedef struct CitusValues
{
	Discovery  *d;
	MemoryContext arena;
} CitusValues;

static void
add_citus_value(void *arg, Datum value, int64 n)
{
	CitusValues *cv = arg;

	count_value(cv->d, value, n, cv->arena);
}

/*
 * One discovery: its columns' counts, its noises (public: the plan's units), the arena that holds
 * them.  dpsynth_discover counts them with a scan of its own; a caller reading the table anyway
 * counts them in its own scan (dpsynth_discover_add_int) between begin and finish.
 */
struct DpDiscoverRun
{
	Relation	rel;
	Oid			relid;
	MemoryContext cxt;
	DpColumn   *cols;			/* the caller's columns (its load before the charge) */
	int			ncols;
	const dp_plan *plan;
	DpUnit	   *unit;
	bool		per_unit;
	Discovery  *ds;
	int			nd;
	AttrNumber	maxatt;
	dp_dgauss	noise,
				coarse,
				fine,
				stage1,
				stage2,
				selection;
	double		delta_each;
	bool		two_stage,
				refine;
};

DpDiscoverRun *
dpsynth_discover_begin(Relation rel, DpColumn *cols, int ncols, const dp_plan *plan, DpUnit *unit)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth discovery",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	DpDiscoverRun *r = palloc0(sizeof(DpDiscoverRun));
	double		rho_coarse,
				rho_fine,
				rho_1,
				rho_2;

	r->rel = rel;
	r->relid = RelationGetRelid(rel);
	r->cxt = cxt;
	r->cols = cols;
	r->ncols = ncols;
	r->plan = plan;
	r->unit = unit;
	r->per_unit = unit != NULL && unit->on;
	r->ds = palloc0(sizeof(Discovery) * Max(ncols, 1));
	r->delta_each = plan->delta_each;
	for (int j = 0; j < ncols; j++)
	{
		Discovery  *d;

		if (cols[j].state == DP_COLUMN_READY)
			continue;
		d = &r->ds[r->nd++];
		d->col = &cols[j];
		d->categories = cols[j].state == DP_COLUMN_DISCOVER_CATEGORIES;
		d->quantiles = cols[j].state == DP_COLUMN_DISCOVER_EDGES;
		if (d->categories)
			d->values = blob_hash("dpsynth discovered values", sizeof(ValueKey), sizeof(ValueEntry), cxt);
		else
		{
			if (dpsynth_value_is_integral(cols[j].typid))
				dp_loggrid_init_int(&d->grid, DISCOVER_SUBDIV);
			else
				dp_loggrid_init_real(&d->grid, DISCOVER_SUBDIV);
			d->cells = palloc0(sizeof(int64) * dp_loggrid_ncells(&d->grid));
			if (d->quantiles && cols[j].quantile_fine)
				d->fine = palloc0(sizeof(int64) * (int64) (cols[j].quantile_upper - cols[j].quantile_lower + 1));
			if (!d->quantiles)
				d->exact = blob_hash("dpsynth discovered numbers", sizeof(int64), sizeof(NumberEntry), cxt);
		}
		r->maxatt = Max(r->maxatt, cols[j].attnum);
	}
	if (!r->per_unit && dp_dgauss_init(&r->noise, dp_gaussian_sigma2(dpsynth_units_rho(plan->units_each), 1.0)) != 0)
		elog(ERROR, "discovery noise out of range");	/* checked by the caller before charging */
	/*
	 * bounds in two stages when both noises can be drawn: public (the plan's units only); per
	 * unit the bounds' fine stage is not run (it reads exact values), and every other noise (the
	 * histograms', the selections', the refined bins' stages) is set after the scan, at the k
	 * bounded
	 */
	r->two_stage = !r->per_unit && dp_bounds_split(dpsynth_units_rho(plan->units_each), &rho_coarse, &rho_fine) == 0 &&
		dp_dgauss_init(&r->coarse, dp_gaussian_sigma2(rho_coarse, 1.0)) == 0 &&
		dp_dgauss_init(&r->fine, dp_gaussian_sigma2(rho_fine, 1.0)) == 0;
	/* refined bins in two stages when both noises can be drawn (dp_binning.h): public too */
	r->refine = !r->per_unit && dp_binning_split(dpsynth_units_rho(plan->units_each), &rho_1, &rho_2) == 0 &&
		dp_dgauss_init(&r->stage1, dp_gaussian_sigma2(rho_1, 1.0)) == 0 &&
		dp_dgauss_init(&r->stage2, dp_gaussian_sigma2(rho_2, 1.0)) == 0;
	MemoryContextSwitchTo(old);
	return r;
}

/*
 * Counts one row's value v of the k-th column discovered (0, 1, ... in the columns' order), an
 * integer column learning quantile bins inside declared bounds, exactly as count_value counts it
 * from a Datum: clamped into the bounds, its grid cell and (a refined column) its own count.  A
 * NULL is not counted (nor is it by the scan).  Allocates nothing.
 */
void
dpsynth_discover_add_int(DpDiscoverRun *r, int k, int64 v)
{
	Assert(k < r->nd && r->ds[k].quantiles && r->ds[k].grid.integral);
	count_int(&r->ds[k], v, 1);
}

/* Discovery's own counts: per unit, on a Citus table's shards, or one scan of the rows. */
static void
discover_count(DpDiscoverRun *r)
{
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	Discovery  *ds = r->ds;
	int			nd = r->nd;

	if (r->per_unit)
	{
		/*
		 * One scan, each unit keeping at most k rows chosen with the CSPRNG (where k is learned,
		 * the scan releases the rows-per-unit histogram and learns k first: units.c); then the
		 * noise for the k bounded, in range for every k up to the ceiling (checked before the
		 * charge): the quantile grids count rows (sensitivity k), categories and bounds count
		 * units (sqrt(k)), the threshold meets delta_each / k (discover_unit.c, units.c).
		 */
		DpUnit	   *unit = r->unit;
		dp_plan		left = *r->plan;
		double		rho_1,
					rho_2;

		dpsynth_discover_unit_counts(r->rel, unit, ds, nd, r->cxt);
		/* dp_discover: the histogram's second release, where drawn, took learn_topup_each of each
		 * column's units (dpsynth_unit_discover_topup checked the noise at what is left) */
		if (unit->learn_topped_up)
			left.units_each -= unit->learn_topup_each;
		if (dp_dgauss_init(&r->noise, dpsynth_unit_rows_sigma2(unit, &left)) != 0 ||
			dp_dgauss_init(&r->selection, dpsynth_unit_selection_sigma2(unit, &left)) != 0)
			elog(ERROR, "discovery noise out of range");
		r->delta_each = dpsynth_unit_selection_delta(unit, &left);
		/* refined bins where both stages' noise for the bounded unit can be drawn at this k (public) */
		r->refine = dp_binning_split(dpsynth_units_rho(left.units_each), &rho_1, &rho_2) == 0 &&
			dp_dgauss_init(&r->stage1, dpsynth_unit_sigma2(unit, dp_gaussian_sigma2(rho_1, 1.0), false)) == 0 &&
			dp_dgauss_init(&r->stage2, dpsynth_unit_sigma2(unit, dp_gaussian_sigma2(rho_2, 1.0), false)) == 0;
	}
	else if (dpsynth_citus_counted(r->relid))
		for (int k = 0; k < nd; k++)	/* on the shards, one statement a column (citus.c) */
		{
			CitusValues cv = {&ds[k], r->cxt};

			dpsynth_citus_count_values(r->relid, ds[k].col, add_citus_value, &cv);
		}
	else
		scan_rows(r->rel, ds, nd, r->maxatt, r->cxt);
	MemoryContextSwitchTo(old);
}

/*
 * dpsynth.discovery_scans = 'check': the counts the caller's scan gave (dpsynth_discover_add_int)
 * against those of discovery's own scan of the same rows, before any noise; an internal error
 * if they differ.  Exact counts, compared and dropped: nothing is released or said about them.
 */
static void
check_counts(DpDiscoverRun *r)
{
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	Discovery  *again = palloc0(sizeof(Discovery) * Max(r->nd, 1));

	for (int k = 0; k < r->nd; k++)
	{
		const Discovery *d = &r->ds[k];

		again[k] = *d;
		again[k].cells = palloc0(sizeof(int64) * dp_loggrid_ncells(&d->grid));
		if (d->fine)
			again[k].fine = palloc0(sizeof(int64) * (int64) (d->col->quantile_upper - d->col->quantile_lower + 1));
	}
	scan_rows(r->rel, again, r->nd, r->maxatt, r->cxt);
	for (int k = 0; k < r->nd; k++)
	{
		const Discovery *d = &r->ds[k];

		if (memcmp(d->cells, again[k].cells, sizeof(int64) * dp_loggrid_ncells(&d->grid)) != 0 ||
			(d->fine && memcmp(d->fine, again[k].fine,
							   sizeof(int64) * (int64) (d->col->quantile_upper - d->col->quantile_lower + 1)) != 0))
			elog(ERROR, "dpsynth: the one scan's discovery counts of column \"%s\" differ from discovery's own scan",
				 d->col->name);
	}
	MemoryContextSwitchTo(old);
}

/*
 * The releases of every column counted (noise, then post-processing), stored as the columns'
 * domains; the arena dropped; the columns (names) loaded again, all ready: the learned ones with
 * the domains just stored, the others as the caller loaded them.  A domain read from the catalog
 * each time can change while the call runs where the domain lock does not block it (ALTER TYPE
 * ... ADD VALUE on an enum: a label added shifts the codes after it), and the caller planned,
 * charged, prepared its output and may have encoded rows under its own load: every step of one
 * call reads the same domain of a column.  check: the counts
 * came from the caller's scan, compared first with discovery's own (check_counts).
 */
DpColumn *
dpsynth_discover_finish(DpDiscoverRun *r, ArrayType *names, int64 ledger_id, bool standalone, bool check)
{
	Oid			relid = r->relid;
	DpColumn   *before = r->cols;	/* r goes with its arena */
	int			nbefore = r->ncols;
	const dp_plan *plan = r->plan;
	Discovery  *ds = r->ds;
	int			nd = r->nd;
	int			ncols;
	DpColumn   *cols;
	Discovery  *priors;
	AttrNumber *prior_att = palloc0(sizeof(AttrNumber) * Max(nd, 1));
	MemoryContext old;

	if (check)
		check_counts(r);
	old = MemoryContextSwitchTo(r->cxt);
	for (int k = 0; k < nd; k++)
	{
		CHECK_FOR_INTERRUPTS();
		if (ds[k].categories)
			release_categories(relid, &ds[k], r->per_unit ? &r->selection : &r->noise, r->delta_each,
							   plan->max_categories, ledger_id);
		else if (ds[k].fine && r->refine)
			dpsynth_discover_release_refined(relid, &ds[k], &r->stage1, &r->stage2, plan->min_bin_mass,
											 ledger_id);
		else if (ds[k].quantiles)
			dpsynth_discover_release_edges(relid, &ds[k], &r->noise, plan->min_bin_mass, ledger_id);
		else
			dpsynth_discover_release_bounds(relid, &ds[k],
											r->per_unit ? &r->selection : r->two_stage ? &r->coarse : &r->noise,
											r->two_stage ? &r->fine : NULL, ledger_id, standalone,
											plan->min_bin_mass);
	}
	MemoryContextSwitchTo(old);
	/* the learned bins' released counts (bin_prior), out of the arena before it goes */
	priors = palloc0(sizeof(Discovery) * Max(nd, 1));
	for (int k = 0; k < nd; k++)
		if (ds[k].nprior > 0)
		{
			priors[k].nprior = ds[k].nprior;
			priors[k].prior_est = palloc(sizeof(double) * ds[k].nprior);
			priors[k].prior_var = palloc(sizeof(double) * ds[k].nprior);
			memcpy(priors[k].prior_est, ds[k].prior_est, sizeof(double) * ds[k].nprior);
			memcpy(priors[k].prior_var, ds[k].prior_var, sizeof(double) * ds[k].nprior);
			prior_att[k] = ds[k].col->attnum;
		}
	MemoryContextDelete(r->cxt);

	/* the columns again, now with the domains just stored */
	cols = dpsynth_load_columns(relid, names, &ncols);
	if (ncols != nbefore)
		elog(ERROR, "dpsynth: the columns changed during discovery");	/* the domain lock: never */
	for (int j = 0; j < ncols; j++)
	{
		if (before[j].state == DP_COLUMN_READY)
		{
			if (before[j].attnum != cols[j].attnum)
				elog(ERROR, "dpsynth: the columns changed during discovery");
			cols[j] = before[j];
			continue;
		}
		if (cols[j].state != DP_COLUMN_READY)
			elog(ERROR, "dpsynth: column \"%s\" has no domain after discovery", cols[j].name);
		for (int k = 0; k < nd; k++)
			if (priors[k].nprior > 0 && prior_att[k] == cols[j].attnum)
			{
				cols[j].prior_est = priors[k].prior_est;
				cols[j].prior_var = priors[k].prior_var;
				cols[j].nprior = priors[k].nprior;
			}
	}
	return cols;
}

DpColumn *
dpsynth_discover(Relation rel, ArrayType *names, DpColumn *cols, int ncols, const dp_plan *plan,
				 int64 ledger_id, bool standalone, DpUnit *unit)
{
	DpDiscoverRun *r = dpsynth_discover_begin(rel, cols, ncols, plan, unit);

	discover_count(r);
	return dpsynth_discover_finish(r, names, ledger_id, standalone, false);
}
