/*
 * synth_pagewrite.c - the synthetic table's heap pages, built in private memory and written a
 * megabyte at a time, for a table created in this transaction (PostgreSQL 15).
 *
 * Why: PostgreSQL 15 extends a relation one 8 kB page at a time (mdextend writes a zero page,
 * and the buffer is written again when it is evicted): in a profile of a large call, mdextend
 * took a large share of the write, nearly all of it the kernel's page copy.  Pages written a
 * megabyte at a time shorten the write (measured under "The write in pages").  PostgreSQL 16 extends in bulk itself (ExtendBufferedRelBy), so there
 * table_multi_insert is used as before.
 *
 * How, as PostgreSQL's own writers outside shared buffers do (rewriteheap.c's raw_heap_insert,
 * nbtsort.c), with one difference in the order of events (below):
 * - The target is new in this transaction, permanent, a heap, empty, and its inserts need not be
 *   decoded (wal_level below logical): nobody else can see it or has a buffer of it.  Otherwise,
 *   or with dpsynth.write_pages off (a superuser's escape hatch, and the benchmark's other arm),
 *   synth_pagewrite_begin returns NULL and the caller uses table_multi_insert.
 * - Each tuple gets what heap_prepare_insert gives it (our xid and command id, xmax invalid),
 *   goes through the toaster when it is too big, and is added to the current page as
 *   raw_heap_insert does (the table's fillfactor respected).
 * - A chunk of pages is written with one pwrite into the relation's segment file (1 GB
 *   segments, created as md.c names them), then a sync request for the segment is queued for the
 *   checkpointer (RegisterSyncRequest, as md.c's register_dirty_segment does after every write;
 *   when the queue is full, the segment is fsynced here, as md.c does), and only then are the
 *   pages WAL-logged (log_newpages, full images), when the relation needs WAL.
 *
 * Crash safety: a page's sync request is queued before its WAL record exists.  A checkpoint
 * that fixed its redo point after the record was inserted did so after the request was queued
 * (the redo point is fixed under the exclusive WAL insertion lock), and its ProcessSyncRequests
 * absorbs the request before it syncs: the page is on disk when that checkpoint completes, and
 * replay from it does not need the record.  A checkpoint whose redo point lies before the record
 * leaves the record to be replayed, and the full image restores the page.  When the
 * checkpointer's queue is full, or there is no checkpointer, the segment is fsynced here before
 * the record, as md.c does.  (nbtsort.c logs first and writes with skipFsync, and so must fsync
 * the whole relation at the end; PostgreSQL 17's bulk_write.c registers the sync at the end
 * unless a checkpoint began meanwhile.  Writing first lets no checkpoint miss a page, without
 * that fsync.)  Before the write, a page is stamped with the current WAL insert position, so
 * that a base backup running meanwhile sees a page newer than its start (whose checksum it
 * does not verify, as for any page being written) rather than a torn page with LSN 0; the
 * record's full image then carries the page as written, and redo sets the record's LSN.  A
 * crash before commit leaves an uncommitted relation, whose pages do not matter.  With
 * wal_level minimal, the relation needs no WAL, and the commit syncs it (smgrDoPendingSyncs).
 * On abort the relation's files, every segment, are unlinked as for any new relation.
 * Tests: sql/17_pages.sql (the same rows at the same places as table_multi_insert's);
 * test/script/02_durability.sh (a 1.1 GB table over two segments: recovery that replays every
 * page's image; checkpoints during the write that sync both segments; wal_level minimal; the
 * WAL holds full images, not row records; a rollback leaves no data).
 */
#include "synthesize.h"

#include <unistd.h>

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/pg_am.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/fd.h"
#include "storage/smgr.h"
#include "storage/sync.h"
#include "utils/rel.h"

#if PG_VERSION_NUM < 160000

#define PW_CHUNK 128			/* pages per write: 1 MB */

struct SynthPageWriter
{
	Relation	rel;
	TransactionId xid;
	CommandId	cid;
	bool		use_wal;
	Size		save_free;		/* the fillfactor's free space */
	char	   *pages;			/* PW_CHUNK pages; the last used one is being filled */
	int			npages;			/* pages in use in the chunk */
	BlockNumber first;			/* the chunk's first block */
	uint64		ntuples;
	char	   *path;			/* the main fork's first segment */
	int			fd;				/* the open segment, or -1 */
	BlockNumber fd_segno;
};

SynthPageWriter *
synth_pagewrite_begin(Relation rel, CommandId cid)
{
	SynthPageWriter *w;

	if (!dpsynth_write_pages || rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT || XLogLogicalInfoActive() ||
		(rel->rd_createSubid == InvalidSubTransactionId &&
		 rel->rd_firstRelfilenodeSubid == InvalidSubTransactionId) ||
		RelationGetNumberOfBlocks(rel) != 0)
		return NULL;
	w = palloc0(sizeof(SynthPageWriter));
	w->rel = rel;
	w->xid = GetCurrentTransactionId();
	w->cid = cid;
	w->use_wal = RelationNeedsWAL(rel);
	w->save_free = RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR);
	w->pages = palloc((Size) PW_CHUNK * BLCKSZ);
	w->path = relpathperm(rel->rd_node, MAIN_FORKNUM);
	w->fd = -1;
	return w;
}

/* Writes the chunk's pages, queues their segment's sync, then logs them (see the top) */
static void
flush_chunk(SynthPageWriter *w)
{
	BlockNumber blknos[PW_CHUNK];
	char	   *pages[PW_CHUNK];
	BlockNumber segno = w->first / RELSEG_SIZE;
	off_t		offset = (off_t) BLCKSZ * (w->first % RELSEG_SIZE);
	Size		nbytes = (Size) BLCKSZ * w->npages;
	FileTag		tag;
	ssize_t		done;
	XLogRecPtr	stamp;

	if (w->npages == 0)
		return;
	/* a chunk never crosses a segment boundary (chunk_full) */
	Assert((w->first + w->npages - 1) / RELSEG_SIZE == segno);
	stamp = w->use_wal ? GetXLogInsertRecPtr() : InvalidXLogRecPtr;
	for (int i = 0; i < w->npages; i++)
	{
		pages[i] = w->pages + (Size) i * BLCKSZ;
		blknos[i] = w->first + i;
		PageSetLSN(pages[i], stamp);
		PageSetChecksumInplace(pages[i], blknos[i]);
	}
	if (w->fd < 0 || w->fd_segno != segno)
	{
		char	   *path = segno == 0 ? w->path : psprintf("%s.%u", w->path, segno);

		if (w->fd >= 0 && CloseTransientFile(w->fd) != 0)
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not close a segment of \"%s\": %m", w->path)));
		w->fd = OpenTransientFile(path, O_RDWR | O_CREAT | PG_BINARY);
		if (w->fd < 0)
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not open file \"%s\": %m", path)));
		w->fd_segno = segno;
	}
	for (Size off = 0; off < nbytes; off += done)
	{
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_EXTEND);
		done = pg_pwrite(w->fd, w->pages + off, nbytes - off, offset + off);
		pgstat_report_wait_end();
		if (done <= 0)
		{
			/* as md.c: a short write with no error is a full disk */
			if (done == 0)
				errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not extend the synthetic table's file \"%s\" (segment %u): %m", w->path, segno),
					 errhint("Check free disk space.")));
		}
	}
	memset(&tag, 0, sizeof(tag));	/* the tag is a hash key: no stray padding */
	tag.handler = SYNC_HANDLER_MD;
	tag.forknum = MAIN_FORKNUM;
	tag.rnode = w->rel->rd_node;
	tag.segno = segno;
	if (!RegisterSyncRequest(&tag, SYNC_REQUEST, false) && pg_fsync(w->fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(), errmsg("could not fsync the synthetic table's file \"%s\" (segment %u): %m", w->path, segno)));
	if (w->use_wal)
		log_newpages(&w->rel->rd_node, MAIN_FORKNUM, w->npages, blknos, pages, true);
	w->first += w->npages;
	w->npages = 0;
}

/* The chunk has no room for another page: PW_CHUNK pages, or its segment's last page */
static bool
chunk_full(const SynthPageWriter *w)
{
	return w->npages == PW_CHUNK || (w->first + w->npages) % RELSEG_SIZE == 0;
}

/* One row: heap_prepare_insert's header, the toaster if needed, raw_heap_insert's placement */
void
synth_pagewrite_row(SynthPageWriter *w, Datum *values, bool *isnull)
{
	HeapTuple	tup = heap_form_tuple(RelationGetDescr(w->rel), values, isnull);
	HeapTuple	heaptup;
	Size		len;
	Page		page;
	OffsetNumber off;
	HeapTupleHeader ondisk;

	tup->t_data->t_infomask &= ~(HEAP_XACT_MASK);
	tup->t_data->t_infomask2 &= ~(HEAP2_XACT_MASK);
	tup->t_data->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(tup->t_data, w->xid);
	HeapTupleHeaderSetCmin(tup->t_data, w->cid);
	HeapTupleHeaderSetXmax(tup->t_data, 0);
	tup->t_tableOid = RelationGetRelid(w->rel);
	if (HeapTupleHasExternal(tup) || tup->t_len > TOAST_TUPLE_THRESHOLD)
		heaptup = heap_toast_insert_or_update(w->rel, tup, NULL, HEAP_INSERT_SKIP_FSM);
	else
		heaptup = tup;
	len = MAXALIGN(heaptup->t_len);
	if (len > MaxHeapTupleSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %zu, maximum size %zu", len, MaxHeapTupleSize)));
	page = w->npages > 0 ? (Page) (w->pages + (Size) (w->npages - 1) * BLCKSZ) : NULL;
	if (page == NULL || len + w->save_free > PageGetHeapFreeSpace(page))
	{
		if (w->npages > 0 && chunk_full(w))
			flush_chunk(w);
		page = (Page) (w->pages + (Size) w->npages++ * BLCKSZ);
		PageInit(page, BLCKSZ, 0);
	}
	off = PageAddItem(page, (Item) heaptup->t_data, heaptup->t_len, InvalidOffsetNumber, false, true);
	if (off == InvalidOffsetNumber)
		elog(ERROR, "failed to add a tuple to a synthetic table's page");
	ondisk = (HeapTupleHeader) PageGetItem(page, PageGetItemId(page, off));
	ItemPointerSet(&ondisk->t_ctid, w->first + w->npages - 1, off);
	w->ntuples++;
	if (heaptup != tup)
		heap_freetuple(heaptup);
	heap_freetuple(tup);
}

/* The last pages; the rows are counted for autovacuum, as heap_multi_insert counts them */
void
synth_pagewrite_end(SynthPageWriter *w)
{
	flush_chunk(w);
	if (w->fd >= 0 && CloseTransientFile(w->fd) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not close a segment of \"%s\": %m", w->path)));
	pgstat_count_heap_insert(w->rel, (PgStat_Counter) w->ntuples);
	pfree(w->pages);
	pfree(w->path);
	pfree(w);
}

#else							/* PostgreSQL 16 and later extend in bulk themselves */

SynthPageWriter *
synth_pagewrite_begin(Relation rel, CommandId cid)
{
	(void) rel;
	(void) cid;
	return NULL;
}

void
synth_pagewrite_row(SynthPageWriter *w, Datum *values, bool *isnull)
{
	(void) w;
	(void) values;
	(void) isnull;
	elog(ERROR, "synth_pagewrite_row is not used on this version");
}

void
synth_pagewrite_end(SynthPageWriter *w)
{
	(void) w;
}

#endif
