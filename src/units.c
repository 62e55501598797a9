/*
 * units.c - privacy per unit: a protected table whose rows belong to persons
 * (dp_privacy_unit(table, 'patient_id', max_rows_per_unit => k, max_rows_per_cell => c)).
 *
 * Two tables are neighbours when they differ in every row of one unit.  Every release of such a
 * table reads it through dpsynth_scan_unit_codes: one pass gives each row a random key from the
 * CSPRNG and bounds as it reads, each unit keeping its k rows of smallest key (dp_unit_keep,
 * src/core/dp_units.c: memory of at most k rows a unit, however many it has), a uniform random
 * subset, and only the kept rows reach the counts.  No unit's number of rows is read anywhere else, and nothing data-dependent is said.
 * The noise is calibrated to the bounded unit in one place, dpsynth_unit_sigma2: a histogram in
 * which a unit keeps at most k rows, at most c of them in one cell, moves by an integer vector x
 * with sum(x) <= k and x_i <= c, so ||x||_2^2 <= floor(k/c) c^2 + (k mod c)^2 <= k c (docs/PRIVACY.md,
 * "Privacy per unit").
 *
 * Units are grouped by the exact bytes of the value (hashed only to find them, then compared byte
 * by byte: two units never merge): an integer as its 8-byte two's complement, text and varchar (deterministic collations only, checked by
 * dp_protect and again here) as their bytes, uuid as its 16 bytes; NULL is one unit of its own.
 * For these types equal values are equal bytes, so one person is one unit.
 *
 * What cannot be bounded here is refused before the charge (dpsynth_unit_refuse): partitions on
 * other servers (counted there).  Discovery reads the bounded rows too (discover_unit.c), with
 * its noise and threshold for one unit (dpsynth_unit_discovery_sigma2 and the selection's below).
 */
#include "dpsynth.h"
#include "synthesize.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/uuid.h"

#include "dp_accounting.h"
#include "dp_codes.h"
#include "dp_counts.h"
#include "dp_discovery.h"
#include "dp_env.h"
#include "dp_random.h"
#include "dp_sampler.h"
#include "dp_schedule.h"
#include "dp_units.h"

/* The columns constant within a unit: column 5 of dpsynth_unit_load's row, a text[], into u. */
static void
load_constant(DpUnit *u, MemoryContext caller)
{
	bool		isnull;
	Datum		a = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5, &isnull);
	Datum	   *elems;
	int			n;

	if (isnull)
		return;
	deconstruct_array(DatumGetArrayTypeP(a), TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	u->constant = MemoryContextAlloc(caller, sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		u->constant[i] = MemoryContextStrdup(caller, TextDatumGetCString(elems[i]));
	u->nconstant = n;
}

/* Whether the catalog has dpsynth._unit_constant_columns (0.8.0 on). */
static bool
unit_constant_columns_exist(void)
{
	Oid			argtypes[3] = {OIDOID, INT2ARRAYOID, NAMEARRAYOID};

	return OidIsValid(LookupFuncName(list_make2(makeString("dpsynth"), makeString("_unit_constant_columns")),
									 3, argtypes, true));
}

/* Reads the table's privacy unit from dpsynth.budgets; checks its column; u->on false if none. */
void
dpsynth_unit_load(Oid relid, DpUnit *u)
{
	DpOwnerSwitch sw;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;
	int32		typmod;
	Oid			coll;
	char	   *declared_name = NULL;
	MemoryContext caller = CurrentMemoryContext;

	memset(u, 0, sizeof(*u));
	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* through to_jsonb: a catalog older than 0.4.0 (the library is loaded before ALTER EXTENSION
	 * UPDATE) has no such columns, and its tables have no unit.  The columns constant within a
	 * unit by their names (dpsynth._unit_constant_columns): a restored table's attnums may name
	 * other columns, and an attnum of a dropped column names none; a catalog older than 0.8.0 has
	 * not the function, and its syntheses draw those columns per row until the update. */
	if (SPI_execute_with_args(psprintf("SELECT (j->>'privacy_unit')::int2, (j->>'max_rows_per_unit')::int4, "
									   "(j->>'max_rows_per_cell')::int4, j->>'privacy_unit_name', %s "
									   "FROM dpsynth.budgets b, "
									   "LATERAL pg_catalog.to_jsonb(b) j WHERE b.relid = $1",
									   unit_constant_columns_exist() ?
									   "ARRAY(SELECT c.attname::text FROM dpsynth._unit_constant_columns("
									   "b.relid, b.unit_constant, b.unit_constant_names) c "
									   "WHERE c.attnum IS NOT NULL ORDER BY c.attnum)" : "NULL::text[]"),
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the privacy unit of relation %u", relid);
	if (SPI_processed == 1)
	{
		Datum		a = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		char	   *dn;

		if (!isnull)
		{
			Datum		k,
						c;
			bool		cnull;

			u->on = true;
			u->attnum = DatumGetInt16(a);
			k = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &u->learn_k);
			c = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &cnull);
			/* k learned (NULL): bounded at the ceiling until the release learns it */
			u->max_rows = u->learn_k ? DP_UNIT_LEARN_MAX : DatumGetInt32(k);
			u->declared_cell = cnull ? 0 : DatumGetInt32(c);
			u->max_cell = cnull ? u->max_rows : Min(DatumGetInt32(c), u->max_rows);
			dn = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);

			/* SPI_getvalue's copy lives in SPI's context, gone at SPI_finish */
			if (dn != NULL)
				declared_name = MemoryContextStrdup(caller, dn);
			load_constant(u, caller);
		}
	}
	SPI_finish();
	dpsynth_restore_user(&sw);
	if (!u->on)
		return;
	{
		HeapTuple	tp = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(u->attnum));

		if (HeapTupleIsValid(tp))
		{
			Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(tp);

			if (!att->attisdropped)
				u->name = pstrdup(NameStr(att->attname));
			ReleaseSysCache(tp);
		}
	}
	if (u->name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the privacy unit column of table \"%s\" was dropped", get_rel_name(relid)),
				 errdetail("Its rows cannot be bounded per unit. Nothing was charged.")));
	/* the declared column is gone: dropped (dpsynth._on_drop forgets its name), or renamed where
	 * no event trigger fired (single-user mode, or a rename through a parent before 0.9.0) */
	if (declared_name == NULL || get_attnum(relid, declared_name) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the privacy unit column%s of table \"%s\" is gone",
						declared_name ? psprintf(" \"%s\"", declared_name) : "", get_rel_name(relid)),
				 errdetail("It was dropped, or renamed where dpsynth could not follow, and no other column is the unit. Nothing was charged."),
				 declared_name ?
				 errhint("If the column was renamed, the table's owner renames it back to \"%s\".", declared_name) : 0));
	/* the attnum names another column than the one declared (a restore renumbers the columns
	 * that follow a dropped one; renames keep the declared name, dpsynth._unit_follows_rename) */
	if (strcmp(declared_name, u->name) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the privacy unit of table \"%s\" was declared on column \"%s\", not on \"%s\"",
						get_rel_name(relid), declared_name, u->name),
				 errdetail("The table's columns were renumbered (as pg_restore does after a dropped column). Nothing was charged."),
				 errhint("The table's owner points the unit back at its column: SELECT dp_privacy_unit('%s', '%s', %s, %s);",
						 get_rel_name(relid), declared_name,
						 u->learn_k ? "NULL" : psprintf("%d", u->max_rows),
						 u->declared_cell == 0 ? "NULL" : psprintf("%d", u->max_cell))));
	get_atttypetypmodcoll(relid, u->attnum, &u->typid, &typmod, &coll);
	u->typid = getBaseType(u->typid);
	if (!(u->typid == INT2OID || u->typid == INT4OID || u->typid == INT8OID || u->typid == TEXTOID ||
		  u->typid == VARCHAROID || u->typid == UUIDOID) ||
		(OidIsValid(coll) && !get_collation_isdeterministic(coll)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the privacy unit column \"%s\" of table \"%s\" no longer has a supported type", u->name,
						get_rel_name(relid)),
				 errdetail("A unit is an integer, text, varchar or uuid column with a deterministic collation. Nothing was charged.")));
	if (u->max_rows < 1 || u->max_rows > DP_UNIT_MAX_ROWS || u->max_cell < 1 || u->max_cell > u->max_rows)
		elog(ERROR, "dpsynth: invalid bounds of the privacy unit of relation %u", relid);
#ifdef DPSYNTH_TEST_IGNORE_UNIT

	/*
	 * A deliberately broken build for test/script/21_unit_audit.sh ONLY: the privacy unit is
	 * read, and named to the charge (dpsynth_unit_json), which checks it under the budget's lock,
	 * but then ignored: the rows are counted per row (no bounding), with the noise for one row.
	 * Never defined by the Makefile.
	 */
	u->on = false;
#endif
}

/* Raises (0A000, before the charge) for what a table with a privacy unit cannot do yet. */
void
dpsynth_unit_refuse(const DpUnit *u, Oid relid, const char *what, const char *why)
{
	if (!u->on)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not available on table \"%s\", which has a privacy unit (\"%s\")", what,
					get_rel_name(relid), u->name),
			 errdetail("%s Nothing was charged.", why)));
}

/*
 * The squared L2 sensitivity of a histogram whose every unit keeps at most k rows, at most c
 * in one cell: the largest ||x||^2 over integer x >= 0 with sum(x) <= k and x_i <= c is reached
 * with floor(k/c) cells of c and one of k mod c.  per_cell false: c = k (k^2).
 */
int64
dpsynth_unit_sensitivity2(const DpUnit *u, bool per_cell)
{
	int64		k = u->max_rows,
				c = per_cell ? u->max_cell : u->max_rows;

	if (!u->on)
		return 1;
	return (k / c) * c * c + (k % c) * (k % c);
}

/*
 * The one place where the noise of a release is calibrated to the bounded unit: the variance
 * that gives a release of squared L2 sensitivity s2 the zCDP rho = 1 / (2 sigma2) planned for
 * sensitivity 1, since rho = s2 / (2 * s2 * sigma2).
 */
double
dpsynth_unit_sigma2(const DpUnit *u, double sigma2, bool per_cell)
{
	return sigma2 * (double) dpsynth_unit_sensitivity2(u, per_cell);
}

/*
 * The noise variance of a discovery's histograms of rows (the quantile bins of declared bounds)
 * on a table with a unit, checked before the charge with everything discovery per unit needs:
 * from the rows each unit keeps, a quantile column's log grid counts rows (one unit's k rows may
 * all fall in one cell: sensitivity k, sigma^2 = k^2 / (2 rho_each)); a text column's values and
 * a bounds column's cells count the units holding them (dpsynth_unit_selection_sigma2).  0
 * without a unit or a discovery.  Sets u->discover_rows and u->discover_units for the ledger.
 */
double
dpsynth_unit_discovery_sigma2(DpUnit *u, Oid relid, const DpColumn *cols, int ncols,
							  const dp_plan *plan, double epsilon)
{
	double		sigma2_1,
				sigma2;
	int32		kmax;
	dp_dgauss	g;

	if (!u->on || plan->ndiscover == 0)
		return 0;
	for (int j = 0; j < ncols; j++)
	{
		u->discover_rows |= cols[j].state == DP_COLUMN_DISCOVER_EDGES;
		u->discover_units |= cols[j].state == DP_COLUMN_DISCOVER_CATEGORIES ||
			cols[j].state == DP_COLUMN_DISCOVER_BOUNDS;
	}
	sigma2_1 = dp_gaussian_sigma2(dpsynth_units_rho(plan->units_each), 1.0);
	sigma2 = dpsynth_unit_rows_sigma2(u, plan);
	/*
	 * k still to learn (bounded at the ceiling): the noise of every k from 1 to the ceiling must
	 * be drawable (discovery sets it at the k learned, after the charge): k^2 sigma2_1 for the
	 * rows, k sigma2_1 for the units, both inside [sigma2_1, K^2 sigma2_1]; and the threshold of
	 * a selection must meet delta_each / k at every k, whose hardest case is the ceiling (the
	 * largest noise, the smallest delta).
	 */
	kmax = u->learn_k && !u->learned ? DP_UNIT_LEARN_MAX : u->max_rows;
	if (dp_unit_noise_drawable(sigma2_1, (uint32) kmax) != 0 ||
		(plan->ntext > 0 && (dp_dgauss_init(&g, sigma2_1 * kmax) != 0 ||
							 dp_partition_threshold(&g, plan->delta_each / kmax) <= 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s is too small to learn domains under the bounds of the privacy unit of table \"%s\"",
						float8out_internal(epsilon), get_rel_name(relid)),
				 errdetail("The noise it needs is beyond the sampler's range. Nothing was charged.")));
	return sigma2;
}

/*
 * The noise variance of a discovery's histogram of rows at the unit's bound as it stands (the
 * ceiling until k is learned, then k): k^2 / (2 rho_each), for the column's share rho_each.
 */
double
dpsynth_unit_rows_sigma2(const DpUnit *u, const dp_plan *plan)
{
	return dpsynth_unit_sigma2(u, dp_gaussian_sigma2(dpsynth_units_rho(plan->units_each), 1.0), false);
}

/*
 * A release whose rows-per-unit bound is learned: the rho units, of the units it has, that
 * release the histogram of the units' row counts which learns k (units.c's learn_k, in the
 * release's first scan), set as u->learn_noise with noise, returned; 0 for a declared k.
 * 1 / DPSYNTH_UNIT_LEARN_PARTS of them, at least one, leaving at least one, with a noise the
 * sampler can draw (22023 before the charge otherwise).  The caller sets how k weighs the rows it
 * drops (u->learn_noise_l1, u->learn_cell; 0: the histogram's quantile alone).
 */
int64
dpsynth_unit_learn_share(DpUnit *u, Oid relid, int64 units, double epsilon, dp_dgauss *noise)
{
	int64		share;

	if (!u->on || !u->learn_k)
		return 0;
	share = Max(units / DPSYNTH_UNIT_LEARN_PARTS, 1);
	if (units - share < 1 || dp_dgauss_init(noise, 1.0 / (2.0 * dpsynth_units_rho(share))) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("epsilon %s is too small to learn the rows-per-unit bound of table \"%s\"",
						float8out_internal(epsilon), get_rel_name(relid)),
				 errdetail("The rows-per-unit histogram's share of it is beyond the sampler's range. Nothing was charged.")));
	u->learn_noise = noise;
	u->learn_topup_noise = NULL;
	u->learn_topped_up = false;
	u->learn_topup_each = 0;
	u->learn_noise_l1 = 0;
	u->learn_cell = 0;
	return share;
}

/*
 * dp_discover, whose units are all discovery's (plan, after units_learn for the histogram that
 * learns k): the histogram's second release, drawn where no cell of its first stands above
 * DP_UNIT_LEARN_TOPUP_Z sd (learn_k), from the discovered columns' units: each gives t =
 * ceil(DP_SCHEDULE_UNIT_SHAPE_TOPUP units_learn / ndiscover), and the release gets the
 * ndiscover t units they give.  Offered (u->learn_topup_noise set with noise, u->learn_topup_each
 * t, t returned) only where each column keeps a unit after it and every noise discovery then
 * draws is drawable at every k up to the ceiling, as dpsynth_unit_discovery_sigma2 checks for the
 * whole units_each, and the second release's noise is too (public numbers: the plan's); 0 (none
 * offered) otherwise, or without a unit, a learned k or a discovery.
 */
int64
dpsynth_unit_discover_topup(DpUnit *u, const dp_plan *plan, int64 units_learn, dp_dgauss *noise)
{
	int64		t;
	double		sigma2_1;
	dp_dgauss	g;

	if (!u->on || !u->learn_k || u->learned || plan->ndiscover < 1 || units_learn < 1 ||
		units_learn > INT64_MAX / (2 * DP_SCHEDULE_UNIT_SHAPE_TOPUP))
		return 0;
	t = (DP_SCHEDULE_UNIT_SHAPE_TOPUP * units_learn + plan->ndiscover - 1) / plan->ndiscover;
	if (plan->units_each - t < 1)
		return 0;
	sigma2_1 = dp_gaussian_sigma2(dpsynth_units_rho(plan->units_each - t), 1.0);
	if (dp_dgauss_init(noise, 1.0 / (2.0 * dpsynth_units_rho(t * plan->ndiscover))) != 0 ||
		dp_unit_noise_drawable(sigma2_1, DP_UNIT_LEARN_MAX) != 0 ||
		(plan->ntext > 0 && (dp_dgauss_init(&g, sigma2_1 * DP_UNIT_LEARN_MAX) != 0 ||
							 dp_partition_threshold(&g, plan->delta_each / DP_UNIT_LEARN_MAX) <= 0)))
		return 0;
	u->learn_topup_noise = noise;
	u->learn_topup_each = t;
	return t;
}

/*
 * The noise variance of a selection per unit (a text column's values, a bounds column's cells):
 * each counts the units holding it among their kept rows, so one unit adds 1 to at most k of
 * them: L2 sensitivity sqrt(k), sigma^2 = k / (2 rho_each), whatever the cell bound.
 */
double
dpsynth_unit_selection_sigma2(const DpUnit *u, const dp_plan *plan)
{
	return dp_gaussian_sigma2(dpsynth_units_rho(plan->units_each), 1.0) * (double) (u->on ? u->max_rows : 1);
}

/*
 * The additive delta each value of a selection per unit may take: one unit brings at most k
 * values that are absent without it, each of count 1, so a threshold that releases one of them
 * with probability at most delta_each / k keeps the selection's delta at delta_each.
 */
double
dpsynth_unit_selection_delta(const DpUnit *u, const dp_plan *plan)
{
	return plan->delta_each / (double) (u->on ? u->max_rows : 1);
}

/* The units' bytes, one after another: a buffer that may pass 1 GB (huge allocations). */
typedef struct KeyBuf
{
	char	   *data;
	uint64		len;
	uint64		cap;
} KeyBuf;

static void
keybuf_append(KeyBuf *b, const void *p, uint64 n)
{
	if (b->len + n > b->cap)
	{
		b->cap = Max(b->cap + b->cap / 2, b->len + n);
		b->data = repalloc_huge(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* The unit value's bytes: a tag (0 NULL, 1 value), then the value (see the header). */
static void
unit_key(const DpUnit *u, Datum v, bool isnull, KeyBuf *buf)
{
	char		tag = isnull ? 0 : 1;

	keybuf_append(buf, &tag, 1);
	if (isnull)
		return;
	switch (u->typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			{
				int64		x = u->typid == INT2OID ? DatumGetInt16(v) :
					u->typid == INT4OID ? DatumGetInt32(v) : DatumGetInt64(v);

				keybuf_append(buf, &x, sizeof(x));
				break;
			}
		case UUIDOID:
			keybuf_append(buf, DatumGetUUIDP(v)->data, UUID_LEN);
			break;
		default:
			{
				text	   *t = DatumGetTextPP(v);

				keybuf_append(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				if ((Pointer) t != DatumGetPointer(v))
					pfree(t);
			}
	}
}

/* dpsynth_scan_unit_codes' encoder: the columns' codes under their domains. */
typedef struct EncodeColumns
{
	DpColumn   *cols;
	int			ncols;
	AttrNumber	maxatt;
	MemoryContext rowcxt;
} EncodeColumns;

static void
encode_columns(TupleTableSlot *slot, dp_code *codes, void *arg)
{
	EncodeColumns *ec = arg;

	dpsynth_encode_slot(ec->cols, ec->ncols, ec->maxatt, slot, ec->rowcxt, codes);
}

/*
 * One pass over the table (serially: a parallel scan would need the units' rows in one place)
 * that bounds the units as it reads, then row_fn on every kept row, the rows of a unit one after another (first
 * says a unit begins).  hist (k + 1 entries, or NULL) gets the number of units keeping j rows: a
 * private vector, to release through dp_noise_counts only.  Nothing here fails on a value.
 */
void
dpsynth_scan_unit_codes(Relation rel, DpColumn *cols, int ncols, DpUnit *u, DpUnitRowFn row_fn,
						void *arg, int64 *hist)
{
	EncodeColumns ec = {cols, ncols, u->attnum, NULL};

	for (int j = 0; j < ncols; j++)
		ec.maxatt = Max(ec.maxatt, cols[j].attnum);
	ec.rowcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth row", ALLOCSET_SMALL_SIZES);
	dpsynth_scan_unit_rows(rel, ncols, ec.maxatt, u, encode_columns, &ec, row_fn, arg, hist);
	MemoryContextDelete(ec.rowcxt);
}

double
dpsynth_unit_column_cells(const DpColumn *col)
{
	if (col->domain.nvalues > 0)
		return (double) dp_domain_ncodes(&col->domain);
	/* bounds still to learn get equal-width bins and NULL; categories, unknown until selected, count one */
	if (col->state == DP_COLUMN_DISCOVER_BOUNDS)
		return (double) (DP_PLAN_DISCOVERED_BINS + 1);
	return (double) Max(col->quantile_bins, 1);
}

/*
 * Learns k (max_rows_per_unit NULL) from learned[1..DP_UNIT_LEARN_MAX], the units by row count
 * bounded at DP_UNIT_LEARN_MAX: released with u->learn_noise (one unit is 1 in one cell, L2
 * sensitivity 1), then k is the bound of least estimated error (rows dropped against the
 * release's noise, u->learn_noise_l1, at the release's sensitivity: u->learn_cell) up to their DP_UNIT_LEARN_QUANTILE-quantile, each cell less 3 sd of the
 * noise, at least 0 (dp_unit_pick_k_weighed, post-processing), and the unit's bounds become k and min(c, k).
 * u->released_hist gets the released histogram of the units' rows folded at k, its cells of
 * noise alone dropped at 3 sd (dp_unit_fold_hist; post-processing: min(rows, k) is a function of
 * min(rows, DP_UNIT_LEARN_MAX)); the release's later scans bound at k and release nothing more
 * about the units' rows (u->learned).  Where no cell of the release stands above
 * DP_UNIT_LEARN_TOPUP_Z sd and the release offers a second one (u->learn_topup_noise:
 * dp_synthesize, dp_marginal and dp_discover, from the method's, the marginal's or the
 * discovered columns' units), the same counts are released again with it, and k and the fold read the
 * precision-weighted mean of the two (u->learn_topped_up; docs/PRIVACY.md).
 */
static void
learn_k(DpUnit *u, int64 *learned)
{
	int32		k;
	int64		exact[DP_UNIT_LEARN_MAX + 1];
	double		sigma2 = dp_dgauss_sigma2(u->learn_noise);

	memcpy(exact, learned, sizeof(exact));
	if (dp_noise_counts(u->learn_noise, learned + 1, learned + 1, DP_UNIT_LEARN_MAX) != 0)
		dpsynth_noise_refused();
	/* no cell above DP_UNIT_LEARN_TOPUP_Z sd (the release alone, public numbers, decide it): a
	 * second release of the same counts with the top-up's noise, and the precision-weighted mean
	 * of the two with its smaller sd (post-processing) */
	u->learn_topped_up = false;
	if (u->learn_topup_noise != NULL &&
		!dp_unit_hist_any_above(learned, DP_UNIT_LEARN_MAX, DP_UNIT_LEARN_TOPUP_Z * sqrt(sigma2)))
	{
		if (dp_noise_counts(u->learn_topup_noise, exact + 1, exact + 1, DP_UNIT_LEARN_MAX) != 0)
			dpsynth_noise_refused();
		sigma2 = dp_unit_hist_combine(learned, sigma2, exact, dp_dgauss_sigma2(u->learn_topup_noise),
									  DP_UNIT_LEARN_MAX, learned);
		if (!(sigma2 > 0))
			elog(ERROR, "the rows-per-unit histogram's two releases cannot be combined");
		u->learn_topped_up = true;
	}
	memset(exact, 0, sizeof(exact));
	/* each cell less DP_UNIT_LEARN_Z sd of the noise, at least 0 (dp_units.h): the sd is public */
	k = (int32) dp_unit_pick_k_weighed(learned, DP_UNIT_LEARN_MAX, DP_UNIT_LEARN_QUANTILE,
									   DP_UNIT_LEARN_Z * sqrt(sigma2),
									   u->learn_noise_l1, (uint32) Max(u->learn_cell, 0));
	u->max_rows = k;
	u->max_cell = u->declared_cell > 0 ? Min(u->declared_cell, k) : k;
	memset(u->released_hist, 0, sizeof(u->released_hist));
	dp_unit_fold_hist(learned, DP_UNIT_LEARN_MAX, (uint32) k, DP_UNIT_LEARN_Z * sqrt(sigma2),
					  u->released_hist);
	u->learned = true;
}

/* The bounding's failure (dp_unit_keep: out of memory, or a bound over its largest): no data in it. */
static void
unit_keep_failed(void)
{
	ereport(ERROR, (errcode(dpsynth_core_errcode()), errmsg("%s", dp_last_error())));
}

/*
 * dpsynth_scan_unit_codes with the codes of a row made by encode_fn (after the slot's first
 * maxatt attributes are read): one pass that bounds as it reads (dp_unit_keep: memory grows with
 * the units, at most max_rows rows each, not with the rows), then row_fn on every kept row.
 */
void
dpsynth_scan_unit_rows(Relation rel, int ncols, AttrNumber maxatt, DpUnit *u,
					   DpUnitEncodeFn encode_fn, void *encode_arg, DpUnitRowFn row_fn, void *arg, int64 *hist)
{
	DpSourceScan scan;
	TupleTableSlot *slot;
	dp_code    *codes = palloc(sizeof(dp_code) * Max(ncols, 1));
	KeyBuf		key;
	dp_unit_keep *keep;
	uint32		cap;
	const dp_code **rows;
	uint64		rkey[1024];
	int			nrkey = 0;
	int			nestlevel = dpsynth_pin_output_settings();
	bool		learn = u->learn_k && u->learn_noise != NULL && !u->learned;
	int64		learned[DP_UNIT_LEARN_MAX + 1];

	Assert(u->on);
	Assert(!learn || u->max_rows == DP_UNIT_LEARN_MAX);
	Assert(!u->learned || u->learn_k);
	maxatt = Max(maxatt, u->attnum);
	key.cap = 256;
	key.data = palloc(key.cap);
	cap = (uint32) u->max_rows;	/* DP_UNIT_LEARN_MAX where k is learned after this scan */
	if ((keep = dp_unit_keep_new((uint32) ncols, cap)) == NULL)
		unit_keep_failed();
	dpsynth_source_begin(&scan, rel);
	while ((slot = dpsynth_source_next(&scan)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		slot_getsomeattrs(slot, maxatt);
		encode_fn(slot, codes, encode_arg);
		key.len = 0;
		unit_key(u, slot->tts_values[u->attnum - 1], slot->tts_isnull[u->attnum - 1], &key);
		if (nrkey == 0)
		{
			nrkey = lengthof(rkey);
			dp_random_bytes(rkey, sizeof(rkey));
		}
		/* a varlena is at most 1 GB: the key's length fits 32 bits */
		if (dp_unit_keep_add(keep, (const uint8 *) key.data, (uint32) key.len, codes, rkey[--nrkey]) != 0)
			unit_keep_failed();
	}
	dpsynth_source_end(&scan);
	pfree(key.data);
	/* k learned by an earlier scan of the release: its histogram, not this scan's counts */
	if (dp_unit_keep_finish(keep, learn ? learned : u->learned ? NULL : hist) != 0)
		unit_keep_failed();
	if (learn)
		learn_k(u, learned);
	if (u->learned && hist != NULL)
		memcpy(hist, u->released_hist, sizeof(int64) * (u->max_rows + 1));
	rows = palloc(sizeof(const dp_code *) * cap);
	for (uint64 i = 0; i < dp_unit_keep_units(keep); i++)
	{
		/* a unit's rows come in increasing random key: its first max_rows are a uniform subset */
		uint32		n = Min(dp_unit_keep_unit(keep, i, rows), (uint32) u->max_rows);

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		for (uint32 j = 0; j < n; j++)
			row_fn(rows[j], j == 0, arg);
	}
	pfree(rows);
	dp_unit_keep_free(keep);
	pfree(codes);
	AtEOXact_GUC(false, nestlevel);
}

/* The ledger's words for the unit: ", \"privacy_unit\": {...}", or "" without a unit. */
char *
dpsynth_unit_json(const DpUnit *u, bool per_cell)
{
	StringInfoData js;

#ifdef DPSYNTH_TEST_IGNORE_UNIT
	if (u->name == NULL)		/* the ignored unit is still named (dpsynth_unit_load) */
		return "";
#else
	if (!u->on)
		return "";
#endif
	initStringInfo(&js);
	appendStringInfoString(&js, ", \"privacy_unit\": {\"column\": ");
	escape_json(&js, u->name);
	if (u->learn_k)				/* learned after the charge: the ceiling bounds it */
		appendStringInfo(&js, ", \"max_rows_per_unit\": null, \"learned_up_to\": %d, \"learned_quantile\": %g, "
						 "\"learned_shrink_sd\": %g, \"learned_rule\": \"%s\", \"learned_noise_l1\": %.17g, "
						 "\"max_rows_per_cell\": %s}", DP_UNIT_LEARN_MAX, DP_UNIT_LEARN_QUANTILE, DP_UNIT_LEARN_Z,
						 u->learn_noise_l1 > 0 ? "least_error" : "quantile", u->learn_noise_l1,
						 per_cell && u->declared_cell > 0 ? psprintf("%d", u->declared_cell) : "null");
	else
		appendStringInfo(&js, ", \"max_rows_per_unit\": %d, \"max_rows_per_cell\": %d, \"sensitivity2\": " INT64_FORMAT "}",
						 u->max_rows, per_cell ? u->max_cell : u->max_rows, dpsynth_unit_sensitivity2(u, per_cell));
	return js.data;
}

/*
 * The ledger's words for a discovery per unit (", \"discovery_sigma2\": ..." for its histograms of
 * rows, ", \"selection_sigma2\": ..." for its selections counting units), or "" without one:
 * where k is still to learn (before the charge), the variances per unit of squared sensitivity,
 * since discovery draws its noise at the k learned (discover.c).
 */
char *
dpsynth_unit_discovery_json(const DpUnit *u, double sigma2)
{
	bool		pending = u->learn_k && !u->learned;
	double		k = (double) u->max_rows;
	char	   *rows = "",
			   *units = "";

	if (!u->on || sigma2 <= 0)
		return "";
	if (u->discover_rows)
		rows = pending ?
			psprintf(", \"discovery_sigma2\": null, \"discovery_sigma2_per_sensitivity2\": %.17g",
					 sigma2 / (double) dpsynth_unit_sensitivity2(u, false)) :
			psprintf(", \"discovery_sigma2\": %.17g", sigma2);
	/* sigma2 is k^2 sigma2_1 (per_cell false), the selection's k sigma2_1 */
	if (u->discover_units)
		units = pending ?
			psprintf(", \"selection_sigma2\": null, \"selection_sigma2_per_row_bound\": %.17g",
					 sigma2 / (double) dpsynth_unit_sensitivity2(u, false)) :
			psprintf(", \"selection_sigma2\": %.17g, \"selection_delta_divided_by\": %d",
					 sigma2 / k, u->max_rows);
	return psprintf("%s%s", rows, units);
}
