/*
 * synth_onescan.c - dp_synthesize's first read of a table whose quantile bins it learns, in one
 * scan instead of two.
 *
 * A column declared with bounds only (binning by quantiles) has its bins learned by the first
 * dp_synthesize after the declaration (discover.c: a noisy histogram of its values on a public
 * grid inside the bounds, 10% of the call's rho).  Done as two scans, discovery's scan counts the
 * values, and once the bins are released and stored, the encoding scan encodes every row under
 * them.  Here one scan does both: every row is encoded as usual for the columns that have a
 * domain, and for each learned column its value clamped into the declared bounds is kept as its
 * offset from the lower bound (DP_ENC_OFFSET_LO/HI in encode.c: one 16-bit scratch column where
 * the bounds span at most 65,535 values (upper - lower <= 0xFFFE), two where they span at most
 * 2^32 - 1 (upper - lower <= 0xFFFFFFFE); NULL is the offset with every bit set), while
 * the same rows' values are counted for discovery (dpsynth_discover_add_int, exactly as its own
 * scan counts them: clamped into the bounds, a grid cell and a value's own count).  Discovery
 * then releases and stores the bins, and each kept offset is encoded under them in memory.
 *
 * Same counts, same rows: discovery's counts are a function of each row's clamped value, which
 * the offset holds; a value's code under learned bins whose edges lie inside the declared bounds
 * is the code of the value clamped into them (the end bins take everything beyond: dp_encode_int),
 * and NULL goes to the NULL cell either way.  The rows come in the encoding scan's order, as they
 * do with two scans.  Privacy: the bins are still a function of discovery's release only, and the
 * release of exactly the rows it is made from with two scans (docs/PRIVACY.md, "One scan for
 * discovery and encoding").  Everything here runs after the charge, where both scans ran.
 *
 * Two scans remain where one cannot do, each decided before the scan from public facts (the
 * plan, the declarations, the catalog, the table's pages, the settings), but the last, decided
 * from the released bins:
 *   - a privacy unit: discovery's scan keeps at most k rows of each unit, chosen as it reads
 *     (discover_unit.c), not the encoding scan's rows;
 *   - a Citus distributed table: discovery counts on the shards (citus.c);
 *   - a column learning categories or bounds (text values, exact numbers: no fixed grid to keep
 *     an index of), or quantile bins of a real type, or bounds spanning more than 2^32 - 1 values;
 *   - a leaf whose table access method is not heap, or offsets that the table's pages could pass
 *     4 x maintenance_work_mem with (ONESCAN_MEMORY below);
 *   - dpsynth.discovery_scans = 'two';
 *   - learned edges outside the declared bounds (declared points are inside them; never seen):
 *     the encoding scan again.
 * A table with partitions on other servers never comes here: a column without a domain is refused
 * there before the charge (foreign.c).
 *
 * dp_marginal's first call reads the same way (marginal_read_once): the rows kept are its
 * columns' codes, from which it counts its cells, so they count toward the memory bound too.
 */
#include "synthesize.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#define ONESCAN_ONE_SLOT	0xFFFE		/* bounds spanning at most this (upper - lower): one scratch column */
#define ONESCAN_TWO_SLOTS	0xFFFFFFFEU	/* ... at most this: two */

/*
 * The offsets kept (2 bytes a row per scratch column) could be at most the table's pages x
 * MaxHeapTuplesPerPage rows (291 a page of 8 kB; a heap page holds no more tuples), a bound of
 * public facts known before the scan: its pages, which any role reads and a release's duration
 * shows anyway (docs/PRIVACY.md, "Side channels"), and the columns' declarations.  One scan where
 * that bound is at most ONESCAN_MEMORY x maintenance_work_mem: real rows are several times wider
 * than the bound's 28 bytes (a tuple header and a line pointer), so the offsets kept stay within
 * about maintenance_work_mem.  Not the rows the scan reaches: the choice shows in the call's
 * duration (a second read), and it would tell a row count exactly.
 */
#define ONESCAN_MEMORY		4

typedef struct OneScan
{
	DpDiscoverRun *run;
	dp_codes   *codes;
	int			nlearn;
	int		   *col;			/* per learned column: its index in the columns */
	int		   *hi;				/* ... the index of its high half, or -1 */
	int64	   *lower;			/* ... its declared lower bound */
	int64	   *upper;			/* ... and upper */
} OneScan;

/* A learned column's kept offset of one row (lo, hi: its halves; hi NULL for one slot); false: NULL. */
static inline bool
kept_offset(uint16 lo, const uint16 *hi, uint64 *off)
{
	if (hi == NULL)
	{
		*off = lo;
		return lo != 0xFFFF;
	}
	*off = (uint64) lo | ((uint64) *hi << 16);
	return *off != 0xFFFFFFFFU;
}

/* One row of the scan: discovery's counts, and the row kept. */
static void
onescan_row(const dp_code *codes, void *arg)
{
	OneScan    *o = arg;

	for (int k = 0; k < o->nlearn; k++)
	{
		uint64		off;

		if (kept_offset(codes[o->col[k]], o->hi[k] >= 0 ? &codes[o->hi[k]] : NULL, &off))
			dpsynth_discover_add_int(o->run, k, o->lower[k] + (int64) off);
	}
	if (dp_codes_append(o->codes, codes) != 0)
		elog(ERROR, "out of memory");
}

static void
append_plain(const dp_code *codes, void *arg)
{
	if (dp_codes_append((dp_codes *) arg, codes) != 0)
		elog(ERROR, "out of memory");
}

/* The 16-bit scratch columns a learned column's offsets take (1 or 2; 0: they do not fit), from
 * its declared bounds' span (public). */
static int
slots_of(const DpColumn *col)
{
	double		lo = col->quantile_lower,
				hi = col->quantile_upper;

	if (!(lo >= -4e18 && hi <= 4e18 && lo <= hi))
		return 0;
	if ((int64) hi - (int64) lo <= ONESCAN_ONE_SLOT)
		return 1;
	if ((uint64) ((int64) hi - (int64) lo) <= ONESCAN_TWO_SLOTS)
		return 2;
	return 0;
}

/* Every leaf is heap, and the 16-bit columns its pages could hold fit (ONESCAN_MEMORY): nslots,
 * the learned columns' offset halves, and for dp_marginal its columns' codes (which
 * dp_synthesize keeps anyway). */
static bool
offsets_fit(Relation rel, int nslots)
{
	List	   *leaves = dpsynth_source_leaves(rel);
	ListCell   *lc;
	double		pages = 0;
	bool		heap = true;

	foreach(lc, leaves)
	{
		Relation	r = table_open(lfirst_oid(lc), NoLock);

		pages += RelationGetNumberOfBlocks(r);
		heap = heap && r->rd_tableam == GetHeapamTableAmRoutine();
		table_close(r, NoLock);
	}
	list_free(leaves);
	return heap && pages * MaxHeapTuplesPerPage * 2.0 * nslots <=
		(double) ONESCAN_MEMORY * maintenance_work_mem * 1024.0;
}

/* Whether the learned column's bins, as loaded, lie inside its declared bounds (see the header). */
static bool
bins_inside(const DpColumn *col, int64 lower, int64 upper)
{
	const dp_domain *d = &col->domain;

	return col->state == DP_COLUMN_READY && col->encoding == DP_ENC_INT && d->kind == DP_DOMAIN_INT_BINS &&
		d->nvalues >= 1 && d->iedges[0] >= lower && d->iedges[d->nvalues] - 1 <= upper;
}

/* Rows of two encoded tables in order: the columns' codes, lexicographically. */
static int
row_cmp(const void *a, const void *b, void *arg)
{
	const dp_codes *t = arg;
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	for (uint32 j = 0; j < t->ncols; j++)
		if (t->col[j][x] != t->col[j][y])
			return t->col[j][x] < t->col[j][y] ? -1 : 1;
	return 0;
}

/*
 * dpsynth.discovery_scans = 'check', a test setting (superuser only): it reads the table again,
 * holds a second encoded copy of it, and sorts both copies without interrupt checks (qsort_arg),
 * none of which a release needs.  The encoded table against the encoding scan's of the same
 * rows under the same domains, as multisets of rows (the parallel scan's order varies); an
 * internal error if they differ.  Compared and dropped: nothing is released or said about them.
 */
static void
check_encoded(Relation rel, DpColumn *cols, int ncols, const dp_codes *codes)
{
	dp_codes	again;
	uint64	   *x,
			   *y;
	bool		same;

	if (dp_codes_init(&again, ncols, 1024) != 0)
		elog(ERROR, "out of memory");
	dpsynth_scan_codes(rel, cols, ncols, append_plain, &again);
	same = again.nrows == codes->nrows;
	if (same)
	{
		x = palloc_extended(sizeof(uint64) * Max(codes->nrows, 1), MCXT_ALLOC_HUGE);
		y = palloc_extended(sizeof(uint64) * Max(codes->nrows, 1), MCXT_ALLOC_HUGE);
		for (uint64 i = 0; i < codes->nrows; i++)
			x[i] = y[i] = i;
		qsort_arg(x, codes->nrows, sizeof(uint64), row_cmp, (void *) codes);
		qsort_arg(y, again.nrows, sizeof(uint64), row_cmp, &again);
		for (uint64 i = 0; same && i < codes->nrows; i++)
			for (int j = 0; same && j < ncols; j++)
				same = codes->col[j][x[i]] == again.col[j][y[i]];
		pfree(x);
		pfree(y);
	}
	dp_codes_free(&again);
	if (!same)
		elog(ERROR, "dpsynth: the one scan's encoded rows differ from the encoding scan's");
}

/* The phase in pg_stat_activity (and verbose's NOTICE): dp_synthesize's; dp_marginal has none. */
static void
report(SynthProgress *pr, const char *phase)
{
	if (pr != NULL)
		synth_report(pr, phase, 0);
}

/* synth_read_once's work; kept: 16-bit columns a row counted toward offsets_fit besides the
 * offsets' (dp_marginal: its columns, a learned column's low half counted twice, on the safe side) */
static SynthReadOnce
read_once(Relation rel, ArrayType *names, DpColumn **colsp, int ncols, const dp_plan *plan,
		  int64 ledger_id, const DpUnit *unit, dp_codes *codes, SynthProgress *pr, int kept)
{
	DpColumn   *cols = *colsp;
	DpColumn   *wide;
	OneScan		o;
	int			nwide = ncols,
				nslots = 0;
	bool		check = dpsynth_discovery_scans == DPSYNTH_DISCOVERY_SCANS_CHECK;

	/* ---- where one scan cannot do: two, as the header says (public facts only) ---- */
	if (dpsynth_discovery_scans == DPSYNTH_DISCOVERY_SCANS_TWO || (unit != NULL && unit->on) ||
		dpsynth_citus_counted(RelationGetRelid(rel)))
		return SYNTH_READ_TWICE;
	for (int j = 0; j < ncols; j++)
	{
		if (cols[j].state == DP_COLUMN_READY)
			continue;
		if (cols[j].state != DP_COLUMN_DISCOVER_EDGES || !dpsynth_value_is_integral(cols[j].typid) ||
			slots_of(&cols[j]) == 0)
			return SYNTH_READ_TWICE;
		nslots += slots_of(&cols[j]);
	}
	if (!offsets_fit(rel, nslots + kept))
		return SYNTH_READ_TWICE;

	/* ---- the scan's columns: the ready ones, each learned one's offset halves ---- */
	memset(&o, 0, sizeof(o));
	o.codes = codes;
	o.col = palloc(sizeof(int) * ncols);
	o.hi = palloc(sizeof(int) * ncols);
	o.lower = palloc(sizeof(int64) * ncols);
	o.upper = palloc(sizeof(int64) * ncols);
	wide = palloc0(sizeof(DpColumn) * (ncols + nslots));
	memcpy(wide, cols, sizeof(DpColumn) * ncols);
	for (int j = 0; j < ncols; j++)
	{
		int			k = o.nlearn;
		int64	   *edges;

		if (cols[j].state == DP_COLUMN_READY)
			continue;
		o.nlearn++;
		o.col[k] = j;
		o.lower[k] = (int64) cols[j].quantile_lower;
		o.upper[k] = (int64) cols[j].quantile_upper;
		edges = palloc(sizeof(int64) * 2);
		edges[0] = o.lower[k];
		edges[1] = o.upper[k] + 1;
		if (dp_domain_init_int_edges(&wide[j].domain, edges, 1, true) != 0)
			elog(ERROR, "dpsynth: invalid bounds of column \"%s\"", cols[j].name);	/* declared: never */
		wide[j].encoding = DP_ENC_OFFSET_LO;
		o.hi[k] = -1;
		if (slots_of(&cols[j]) == 2)
		{
			o.hi[k] = nwide;
			wide[nwide] = wide[j];
			wide[nwide].encoding = DP_ENC_OFFSET_HI;
			nwide++;
		}
	}

	/* ---- one scan: discovery's counts and the rows ---- */
	report(pr, "reading the table");
	if (dp_codes_init(codes, nwide, 1024) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("%s", dp_last_error())));
	o.run = dpsynth_discover_begin(rel, cols, ncols, plan, NULL);
	dpsynth_scan_codes(rel, wide, nwide, onescan_row, &o);

	/* ---- discovery's release, then the kept offsets under the bins it stored ---- */
	report(pr, "discovering domains");
	cols = dpsynth_discover_finish(o.run, names, ledger_id, false, check);
	*colsp = cols;
	/* the columns that had a domain are the ones the scan encoded under (discovery's finish keeps
	 * them); the learned ones' bins decide whether the rows kept are the encoding scan's */
	for (int k = 0; k < o.nlearn; k++)
		if (!bins_inside(&cols[o.col[k]], o.lower[k], o.upper[k]))
		{
			dp_codes_free(codes);
			return SYNTH_READ_DISCOVERED;
		}
	report(pr, "encoding the rows");
	for (int k = 0; k < o.nlearn; k++)
	{
		const dp_domain *dom = &cols[o.col[k]].domain;
		uint16	   *lo = codes->col[o.col[k]];
		const uint16 *hi = o.hi[k] >= 0 ? codes->col[o.hi[k]] : NULL;
		uint64		span = (uint64) (o.upper[k] - o.lower[k]) + 1;

		if (hi == NULL)
		{
			/* one half (at most 65,535 offsets): each offset's code once, then a look-up a row;
			 * chosen from the bounds' span alone, never from the row count */
			dp_code    *code_of = palloc(sizeof(dp_code) * 65536);

			for (uint64 v = 0; v < span; v++)
				code_of[v] = dp_encode_int(dom, o.lower[k] + (int64) v);
			code_of[0xFFFF] = dp_encode_null(dom);	/* NULL's offset */
			for (uint64 i = 0; i < codes->nrows; i++)
			{
				if ((i & 0xFFFF) == 0)
					CHECK_FOR_INTERRUPTS();
				lo[i] = code_of[lo[i]];
			}
			pfree(code_of);
			continue;
		}
		for (uint64 i = 0; i < codes->nrows; i++)
		{
			uint64		off;

			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			lo[i] = kept_offset(lo[i], &hi[i], &off) ?
				dp_encode_int(dom, o.lower[k] + (int64) off) : dp_encode_null(dom);
		}
	}
	/* the high halves come after every column (nwide above): dropped */
	dp_codes_keep(codes, ncols);
	if (check)
	{
		check_encoded(rel, cols, ncols, codes);
		/* the test setting says that the one scan ran and was checked, and its halves (from the
		 * declarations: public) */
		ereport(NOTICE,
				(errmsg("dpsynth.discovery_scans = 'check': one scan (16-bit offset halves: %d), the same counts and rows as two scans",
						nslots)));
	}
	return SYNTH_READ_ONCE;
}

SynthReadOnce
synth_read_once(Relation rel, ArrayType *names, DpColumn **colsp, int ncols, const dp_plan *plan,
				int64 ledger_id, const DpUnit *unit, dp_codes *codes, SynthProgress *pr)
{
	return read_once(rel, names, colsp, ncols, plan, ledger_id, unit, codes, pr, 0);
}

/*
 * dp_marginal's first read of a table whose quantile bins it learns: the same one scan, where
 * the encoded rows of its columns also fit (ONESCAN_MEMORY, public facts: the table's pages and
 * the columns); the marginal's cells are then counted from them (dp_codes_count).
 */
SynthReadOnce
marginal_read_once(Relation rel, ArrayType *names, DpColumn **colsp, int ncols, const dp_plan *plan,
				   int64 ledger_id, const DpUnit *unit, dp_codes *codes)
{
	return read_once(rel, names, colsp, ncols, plan, ledger_id, unit, codes, NULL, ncols);
}
