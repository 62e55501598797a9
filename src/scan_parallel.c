/*
 * scan_parallel.c - the release's scan of a big table, shared with parallel workers.
 *
 * What it does: the rows of the protected table (every leaf of its tree) are read by the calling
 * backend and up to dpsynth.scan_workers parallel workers at once, with PostgreSQL's parallel
 * table scan (each block goes to one participant).  Each worker encodes its rows into codes, as
 * the serial scan does, and sends them in chunks through a shared-memory queue; the calling
 * backend hands every row to row_fn.  Only the calling backend keeps anything: the codes live in
 * its memory, as they do without workers.  Nothing is written while the workers run (parallel
 * mode forbids it).
 *
 * Built as PostgreSQL's own parallel utilities are (nbtsort.c's parallel index build): a
 * ParallelContext with an entry point in this library; the workers get the transaction, the
 * snapshot, the user and the settings (the pinned output settings included) from the leader, and
 * take their locks within its lock group.  The leader reads too, whenever no worker has a chunk
 * waiting, so a worker that cannot be started costs nothing but time.  An error or cancel in a
 * worker is raised in the leader (WaitForParallelWorkersToFinish, or the next interrupt check);
 * a cancel of the leader stops the workers.
 *
 * When: the table's pages are at least min_parallel_table_scan_size (the planner's threshold for
 * a parallel scan), dpsynth.scan_workers > 0, and parallel workers may be used here (not inside
 * a parallel worker or parallel mode, a backend under the postmaster, output functions of
 * category columns parallel safe).  The workers are bounded by max_parallel_workers and
 * max_worker_processes, as any parallel query's.
 *
 * Privacy: the rows reach row_fn in another order, and row_fn only counts them or appends them
 * to the encoded table, whose every use is a count: the release is the same function of the
 * table's rows (a multiset) with or without workers.  The queues are shared memory of this
 * server, detached when the workers end, like a parallel query's tuple queues.
 * Tests: sql/19_parallel_scan.sql (the same exact counts with 0 and 2 workers, across partitions
 * with differing layouts; the workers launched; none without max_parallel_workers);
 * test/script/06_synthesize_sessions.sh (a cancel while the workers read);
 * test/script/50_scan_last_detach.sh (the read ends when the workers detached and exited while
 * the leader slept); scripts/test runs the whole pg_regress suite a second time with every table
 * read by workers.
 */
#include "dpsynth.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/tupconvert.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "optimizer/paths.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/latch.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

int			dpsynth_scan_workers = 2;

#define KEY_SHARED		UINT64CONST(0xD950000000000001)
#define KEY_COLUMNS		UINT64CONST(0xD950000000000002)
#define KEY_PSCANS		UINT64CONST(0xD950000000000003)
#define KEY_QUEUES		UINT64CONST(0xD950000000000004)

#define QUEUE_SIZE		((Size) 128 * 1024)	/* per worker: two messages */
#define CHUNK_BYTES		65536	/* one message: whole rows of codes, at most this much */

typedef struct ScanShared
{
	Oid			root;
	int			ncols;
	int			nleaves;
	Size		columns_len;
	/* nleaves leaf OIDs, then nleaves offsets into the KEY_PSCANS area */
	Oid			leaves[FLEXIBLE_ARRAY_MEMBER];
} ScanShared;

static Size *
shared_offsets(ScanShared *sh)
{
	return (Size *) ((char *) sh + MAXALIGN(offsetof(ScanShared, leaves) + sizeof(Oid) * sh->nleaves));
}

static Size
shared_size(int nleaves)
{
	return MAXALIGN(offsetof(ScanShared, leaves) + sizeof(Oid) * nleaves) + sizeof(Size) * nleaves;
}

/* Rows of codes per message. */
static int
chunk_rows(int ncols)
{
	return Max(1, CHUNK_BYTES / (int) (sizeof(dp_code) * Max(ncols, 1)));
}

/*
 * The columns' encoding state, flattened: what dpsynth_encode reads (attribute, type, encoding,
 * domain, enum labels).  Output functions are looked up again by the worker.
 */
static void
put(StringInfo b, const void *p, Size n)
{
	appendBinaryStringInfo(b, p, (int) n);
}

static void
serialize_columns(StringInfo b, const DpColumn *cols, int ncols)
{
	for (int j = 0; j < ncols; j++)
	{
		const DpColumn *c = &cols[j];
		const dp_domain *d = &c->domain;
		int32		kind = (int32) d->kind;
		uint32		nv = d->nvalues;
		bool		hn = d->has_null_cell;

		put(b, &c->attnum, sizeof(c->attnum));
		put(b, &c->typid, sizeof(c->typid));
		put(b, &c->encoding, sizeof(c->encoding));
		put(b, &kind, sizeof(kind));
		put(b, &nv, sizeof(nv));
		put(b, &hn, sizeof(hn));
		if (d->kind == DP_DOMAIN_CATEGORIES)
			for (uint32 i = 0; i < nv; i++)
			{
				put(b, &d->map.lens[i], sizeof(uint32));
				put(b, d->map.labels[i], d->map.lens[i]);
			}
		else if (d->kind == DP_DOMAIN_INT_BINS)
			put(b, d->iedges, sizeof(int64) * (nv + 1));
		else
			put(b, d->edges, sizeof(double) * (nv + 1));
		put(b, &c->nenum, sizeof(c->nenum));
		if (c->nenum > 0)
		{
			put(b, c->enum_oids, sizeof(Oid) * c->nenum);
			put(b, c->enum_codes, sizeof(dp_code) * c->nenum);
		}
	}
}

typedef struct Reader
{
	const char *p;
	const char *end;
} Reader;

static void
get(Reader *r, void *out, Size n)
{
	if ((Size) (r->end - r->p) < n)
		elog(ERROR, "dpsynth: truncated column state in a parallel worker");
	memcpy(out, r->p, n);
	r->p += n;
}

/* Copies n bytes out of the buffer (aligned storage that outlives the reader). */
static void *
get_copy(Reader *r, Size n)
{
	void	   *out = palloc(Max(n, 1));

	get(r, out, n);
	return out;
}

static DpColumn *
deserialize_columns(const char *buf, Size len, int ncols)
{
	DpColumn   *cols = palloc0(sizeof(DpColumn) * Max(ncols, 1));
	Reader		r = {buf, buf + len};

	for (int j = 0; j < ncols; j++)
	{
		DpColumn   *c = &cols[j];
		int32		kind;
		uint32		nv;
		bool		hn;
		int			rc;

		get(&r, &c->attnum, sizeof(c->attnum));
		get(&r, &c->typid, sizeof(c->typid));
		get(&r, &c->encoding, sizeof(c->encoding));
		get(&r, &kind, sizeof(kind));
		get(&r, &nv, sizeof(nv));
		get(&r, &hn, sizeof(hn));
		if (kind == DP_DOMAIN_CATEGORIES)
		{
			const char **labels = palloc(sizeof(char *) * Max(nv, 1));
			uint32	   *lens = palloc(sizeof(uint32) * Max(nv, 1));
			int32	   *slots = palloc(sizeof(int32) * dp_catmap_slots_needed(nv));

			for (uint32 i = 0; i < nv; i++)
			{
				get(&r, &lens[i], sizeof(uint32));
				labels[i] = get_copy(&r, lens[i]);
			}
			rc = dp_domain_init_categories(&c->domain, labels, lens, nv, slots, hn);
		}
		else if (kind == DP_DOMAIN_INT_BINS)
			rc = dp_domain_init_int_edges(&c->domain, get_copy(&r, sizeof(int64) * (nv + 1)), nv, hn);
		else
			rc = dp_domain_init_real_edges(&c->domain, get_copy(&r, sizeof(double) * (nv + 1)), nv, hn);
		if (rc != 0)
			elog(ERROR, "dpsynth: invalid column state in a parallel worker");
		get(&r, &c->nenum, sizeof(c->nenum));
		if (c->nenum > 0)
		{
			c->enum_oids = get_copy(&r, sizeof(Oid) * c->nenum);
			c->enum_codes = get_copy(&r, sizeof(dp_code) * c->nenum);
		}
		if (c->encoding == DP_ENC_OUTPUT)
		{
			Oid			outfn;
			bool		varlena;

			getTypeOutputInfo(c->typid, &outfn, &varlena);
			fmgr_info(outfn, &c->outfunc);
		}
	}
	return cols;
}

static AttrNumber
max_attnum(const DpColumn *cols, int ncols)
{
	AttrNumber	m = 0;

	for (int j = 0; j < ncols; j++)
		m = Max(m, cols[j].attnum);
	return m;
}

/* One participant's share of the scan. */
typedef struct Share
{
	DpSourceScan scan;
	DpColumn   *cols;
	int			ncols;
	AttrNumber	maxatt;
	MemoryContext rowcxt;
	bool		done;
} Share;

static void
share_begin(Share *sh, Relation root, List *leaves, ParallelTableScanDesc *pscans, LOCKMODE lock,
			DpColumn *cols, int ncols)
{
	dpsynth_source_begin_shared(&sh->scan, root, leaves, pscans, lock);
	sh->cols = cols;
	sh->ncols = ncols;
	sh->maxatt = max_attnum(cols, ncols);
	sh->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth row", ALLOCSET_SMALL_SIZES);
	sh->done = false;
}

/* Up to max rows of codes into out (row-major); returns how many (0 at the end). */
static int
share_read(Share *sh, dp_code *out, int max)
{
	int			n = 0;
	TupleTableSlot *slot;

	while (n < max && !sh->done)
	{
		CHECK_FOR_INTERRUPTS();
		if ((slot = dpsynth_source_next(&sh->scan)) == NULL)
		{
			sh->done = true;
			break;
		}
		dpsynth_encode_slot(sh->cols, sh->ncols, sh->maxatt, slot, sh->rowcxt, out + (Size) n * sh->ncols);
		n++;
	}
	return n;
}

static void
share_end(Share *sh)
{
	dpsynth_source_end(&sh->scan);
	MemoryContextDelete(sh->rowcxt);
}

/* Whether category columns' output functions may run in a parallel worker. */
static bool
columns_parallel_safe(const DpColumn *cols, int ncols)
{
	for (int j = 0; j < ncols; j++)
		if (cols[j].encoding == DP_ENC_OUTPUT && func_parallel(cols[j].outfunc.fn_oid) != PROPARALLEL_SAFE)
			return false;
	return true;
}

/*
 * Workers to ask for: none below the planner's threshold for a parallel scan, and none when a
 * leaf's table access method is not heap (another AM may not implement parallel scans: Citus
 * columnar raises in table_parallelscan_estimate, after the charge; the serial scan reads it).
 */
static int
workers_for(List *leaves, const DpColumn *cols, int ncols)
{
	BlockNumber pages = 0;
	bool		heap = true;
	ListCell   *lc;

	if (dpsynth_scan_workers <= 0 || max_parallel_workers <= 0 || !IsUnderPostmaster ||
		IsInParallelMode() || IsParallelWorker() || !columns_parallel_safe(cols, ncols))
		return 0;
	foreach(lc, leaves)
	{
		Relation	r = table_open(lfirst_oid(lc), NoLock);

		pages += RelationGetNumberOfBlocks(r);
		heap = heap && r->rd_tableam == GetHeapamTableAmRoutine();
		table_close(r, NoLock);
	}
	if (!heap || (double) pages < (double) min_parallel_table_scan_size)
		return 0;
	return Min(Min(dpsynth_scan_workers, max_parallel_workers), max_worker_processes);
}

/*
 * The scan with parallel workers: false, having read nothing, when the table is too small for
 * them or none may be used; the caller then reads it alone.
 */
static bool
scan_codes_parallel(Relation rel, List *leaves, DpColumn *cols, int ncols,
					void (*row_fn) (const dp_code *codes, void *arg), void *arg)
{
	ListCell   *lc;
	int			nworkers,
				nleaves,
				rows = chunk_rows(ncols);
	Snapshot	snapshot = GetActiveSnapshot();
	StringInfoData colbuf;
	ParallelContext *pcxt;
	ScanShared *shared;
	Size	   *offsets;
	char	   *pscan_area;
	char	   *queue_area;
	Size		pscan_total = 0,
			   *pscan_size;
	ParallelTableScanDesc *pscans;
	shm_mq_handle **mqh;
	bool	   *mq_done;
	int			nlaunched,
				nactive;
	Share		mine;
	dp_code    *buf;

	nleaves = list_length(leaves);
	nworkers = nleaves > 0 && ncols > 0 ? workers_for(leaves, cols, ncols) : 0;
	if (nworkers == 0)
		return false;

	initStringInfo(&colbuf);
	serialize_columns(&colbuf, cols, ncols);

	EnterParallelMode();
	pcxt = CreateParallelContext("$libdir/dpsynth", "dpsynth_scan_worker_main", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, shared_size(nleaves));
	shm_toc_estimate_chunk(&pcxt->estimator, colbuf.len);
	pscan_size = palloc(sizeof(Size) * nleaves);
	foreach(lc, leaves)
	{
		Relation	r = table_open(lfirst_oid(lc), NoLock);

		pscan_size[foreach_current_index(lc)] = MAXALIGN(table_parallelscan_estimate(r, snapshot));
		pscan_total += pscan_size[foreach_current_index(lc)];
		table_close(r, NoLock);
	}
	shm_toc_estimate_chunk(&pcxt->estimator, pscan_total);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(QUEUE_SIZE, nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	InitializeParallelDSM(pcxt);

	/* what the workers read: the tree's leaves, each with its shared scan state */
	shared = shm_toc_allocate(pcxt->toc, shared_size(nleaves));
	shared->root = RelationGetRelid(rel);
	shared->ncols = ncols;
	shared->nleaves = nleaves;
	shared->columns_len = colbuf.len;
	offsets = shared_offsets(shared);
	pscan_area = shm_toc_allocate(pcxt->toc, Max(pscan_total, 1));
	pscans = palloc(sizeof(ParallelTableScanDesc) * nleaves);
	{
		Size		off = 0;

		foreach(lc, leaves)
		{
			int			i = foreach_current_index(lc);
			Relation	r = table_open(lfirst_oid(lc), NoLock);

			shared->leaves[i] = lfirst_oid(lc);
			offsets[i] = off;
			pscans[i] = (ParallelTableScanDesc) (pscan_area + off);
			table_parallelscan_initialize(r, pscans[i], snapshot);
			off += pscan_size[i];
			table_close(r, NoLock);
		}
	}
	{
		char	   *cb = shm_toc_allocate(pcxt->toc, Max(colbuf.len, 1));

		memcpy(cb, colbuf.data, colbuf.len);
		shm_toc_insert(pcxt->toc, KEY_COLUMNS, cb);
	}
	shm_toc_insert(pcxt->toc, KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, KEY_PSCANS, pscan_area);
	queue_area = shm_toc_allocate(pcxt->toc, mul_size(QUEUE_SIZE, nworkers));
	shm_toc_insert(pcxt->toc, KEY_QUEUES, queue_area);
	mqh = palloc0(sizeof(shm_mq_handle *) * nworkers);
	mq_done = palloc0(sizeof(bool) * nworkers);
	for (int i = 0; i < nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(queue_area + (Size) i * QUEUE_SIZE, QUEUE_SIZE);

		shm_mq_set_receiver(mq, MyProc);
		mqh[i] = shm_mq_attach(mq, pcxt->seg, NULL);
	}

	LaunchParallelWorkers(pcxt);
	nlaunched = pcxt->nworkers_launched;
	for (int i = 0; i < nworkers; i++)
	{
		if (i < nlaunched)
			shm_mq_set_handle(mqh[i], pcxt->worker[i].bgwhandle);
		else
			mq_done[i] = true;
	}
	nactive = nlaunched;
	ereport(DEBUG1,
			(errmsg_internal("dpsynth: reading \"%s\" with %d parallel workers of %d planned",
							 RelationGetRelationName(rel), nlaunched, nworkers)));

	/*
	 * The leader hands the workers' chunks to row_fn as they come, and reads a chunk itself
	 * whenever none is waiting.
	 */
	share_begin(&mine, rel, leaves, pscans, NoLock, cols, ncols);
	buf = palloc(sizeof(dp_code) * (Size) rows * ncols);
	while (nactive > 0 || !mine.done)
	{
		bool		got = false;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < nworkers; i++)
		{
			Size		nbytes;
			void	   *data;
			shm_mq_result res;

			if (mq_done[i])
				continue;
			res = shm_mq_receive(mqh[i], &nbytes, &data, true);
			if (res == SHM_MQ_SUCCESS)
			{
				const dp_code *codes = data;
				Size		n = nbytes / (sizeof(dp_code) * ncols);

				if (nbytes % (sizeof(dp_code) * ncols) != 0)
					elog(ERROR, "dpsynth: a parallel worker sent a partial row");
				for (Size k = 0; k < n; k++)
					row_fn(codes + k * ncols, arg);
				got = true;
			}
			else if (res == SHM_MQ_DETACHED)
			{
				mq_done[i] = true;
				nactive--;
			}
		}
		if (got)
			continue;
		if (!mine.done)
		{
			int			n = share_read(&mine, buf, rows);

			for (int k = 0; k < n; k++)
				row_fn(buf + (Size) k * ncols, arg);
			continue;
		}

		/*
		 * The last worker's queue may have been seen detached in this very pass: then nothing is
		 * left to wait for, and no wakeup may ever come (the worker's detach, its last message
		 * and its exit set the latch before this pass, and a wait earlier consumed that), so the
		 * loop ends here rather than waiting.
		 */
		if (nactive == 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1L, DP_WAIT_EVENT_MQ_RECEIVE);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	share_end(&mine);

	/* raises a worker's error, if any (then its rows may be missing: the call fails) */
	WaitForParallelWorkersToFinish(pcxt);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	pfree(buf);
	pfree(mqh);
	pfree(mq_done);
	pfree(pscans);
	pfree(pscan_size);
	pfree(colbuf.data);
	return true;
}

/*
 * One scan of the table: every row's codes for the columns, handed to row_fn.  Output settings
 * are pinned (the cell a value lands in never depends on the caller's session), allocations are
 * per row, and interrupts are checked on every row.  Nothing here can fail on a value.
 * A big table is read by parallel workers as well (scan_codes_parallel); row_fn then sees the
 * rows in another order, which nothing that counts them depends on.
 */
void
dpsynth_scan_codes(Relation rel, DpColumn *cols, int ncols, void (*row_fn) (const dp_code *codes, void *arg),
				   void *arg)
{
	DpSourceScan scan;
	TupleTableSlot *slot;
	MemoryContext rowcxt;
	dp_code    *codes;
	AttrNumber	maxatt = 0;
	int			nestlevel = dpsynth_pin_output_settings();

	List	   *leaves = dpsynth_source_leaves(rel);

	/* the settings are pinned before parallel mode: the workers inherit them */
	if (scan_codes_parallel(rel, leaves, cols, ncols, row_fn, arg))
	{
		list_free(leaves);
		AtEOXact_GUC(false, nestlevel);
		return;
	}
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "dpsynth row", ALLOCSET_SMALL_SIZES);
	codes = palloc(sizeof(dp_code) * ncols);
	for (int j = 0; j < ncols; j++)
		maxatt = Max(maxatt, cols[j].attnum);
	dpsynth_source_begin_shared(&scan, rel, leaves, NULL, NoLock);
	while ((slot = dpsynth_source_next(&scan)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		dpsynth_encode_slot(cols, ncols, maxatt, slot, rowcxt, codes);
		row_fn(codes, arg);
	}
	dpsynth_source_end(&scan);
	list_free(leaves);
	MemoryContextDelete(rowcxt);
	pfree(codes);
	AtEOXact_GUC(false, nestlevel);
}

/* A parallel worker's share: encode, and send the codes to the leader in chunks. */
PGDLLEXPORT void dpsynth_scan_worker_main(dsm_segment *seg, shm_toc *toc);

void
dpsynth_scan_worker_main(dsm_segment *seg, shm_toc *toc)
{
	ScanShared *shared = shm_toc_lookup(toc, KEY_SHARED, false);
	char	   *colbuf = shm_toc_lookup(toc, KEY_COLUMNS, false);
	char	   *pscan_area = shm_toc_lookup(toc, KEY_PSCANS, false);
	char	   *queue_area = shm_toc_lookup(toc, KEY_QUEUES, false);
	shm_mq	   *mq = (shm_mq *) (queue_area + (Size) ParallelWorkerNumber * QUEUE_SIZE);
	shm_mq_handle *mqh;
	Size	   *offsets = shared_offsets(shared);
	ParallelTableScanDesc *pscans = palloc(sizeof(ParallelTableScanDesc) * shared->nleaves);
	List	   *leaves = NIL;
	DpColumn   *cols;
	Relation	root;
	Share		sh;
	int			rows = chunk_rows(shared->ncols);
	dp_code    *buf = palloc(sizeof(dp_code) * (Size) rows * shared->ncols);

	shm_mq_set_sender(mq, MyProc);
	mqh = shm_mq_attach(mq, seg, NULL);
	for (int i = 0; i < shared->nleaves; i++)
	{
		leaves = lappend_oid(leaves, shared->leaves[i]);
		pscans[i] = (ParallelTableScanDesc) (pscan_area + offsets[i]);
	}
	cols = deserialize_columns(colbuf, shared->columns_len, shared->ncols);
	root = table_open(shared->root, AccessShareLock);
	share_begin(&sh, root, leaves, pscans, AccessShareLock, cols, shared->ncols);
	for (;;)
	{
		int			n = share_read(&sh, buf, rows);

		if (n == 0)
			break;
		if (shm_mq_send(mqh, sizeof(dp_code) * (Size) n * shared->ncols, buf, false, true) != SHM_MQ_SUCCESS)
			break;				/* the leader is gone */
	}
	share_end(&sh);
	table_close(root, AccessShareLock);
	shm_mq_detach(mqh);
}
