#!/usr/bin/env bash
# A synthetic table's pages, byte for byte, whichever way its rows go in (src/synth_pagewrite.c).
# On PostgreSQL 15 the rows of a new table are formed in their place on private pages (a row the
# toaster must see goes through heap_form_tuple and the toaster); with dpsynth.write_pages off they
# go through table_multi_insert and shared buffers.  The same seed must give the same pages: every
# line pointer (offset, length), and every tuple's header bits, null bitmap, address and data,
# over columns of every kind the decoder writes (integers, bins of reals, numerics, dates, text
# categories with NULLs, a long label the toaster compresses, a uuid identifier), in one
# transaction (only xmin's command id differs; the hint bits of xmin, 768, are masked: a read
# of the table may set them).  On PostgreSQL 16 and later both arms are
# table_multi_insert, and the check still holds.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_page_bytes
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" 2>/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $DB"
psql -X -q -d $DB -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<'SQL'
CREATE EXTENSION dpsynth;
CREATE EXTENSION pageinspect;
CREATE TABLE src (
	id		uuid NOT NULL,
	n		integer NOT NULL,
	x		double precision,
	amount	numeric(10, 2),
	day		date,
	flag	boolean,
	kind	text,
	note	text NOT NULL
);
INSERT INTO src
SELECT gen_random_uuid(), i % 97, (i % 13) * 1.5, (i % 50) * 3.25, date '2020-01-01' + i % 300, i % 3 = 0,
	   CASE WHEN i % 7 = 0 THEN NULL ELSE (ARRAY['alpha', 'beta', 'gamma'])[1 + i % 3] END,
	   CASE WHEN i % 5 = 0 THEN (SELECT string_agg(md5(i::text || g), '') FROM generate_series(1, 60) g) ELSE 'short' END
FROM generate_series(1, 4000) i;
SELECT dp_protect('src', epsilon => 50);
SELECT dp_declare('src', 'n', lower => 0, upper => 96, bins => 12);
SELECT dp_declare('src', 'x', lower => 0, upper => 20, bins => 8);
SELECT dp_declare('src', 'amount', lower => 0, upper => 170, bins => 10);
SELECT dp_declare('src', 'day', lower => date '2020-01-01', upper => date '2020-12-31', bins => 6);
SELECT dp_declare('src', 'kind', categories => ARRAY['alpha', 'beta', 'gamma']);
SELECT dp_declare('src', 'note', categories => ARRAY['short'] || (SELECT array_agg(DISTINCT note) FROM src WHERE note <> 'short' AND id IS NOT NULL LIMIT 1));
SELECT dp_column_policy('src', 'id', treatment => 'identifier');
SQL
model=$(q $DB "SELECT model_id FROM dp_synthesize('src', epsilon => 5, \"rows\" => 6000, target => 'first')")
[ -n "$model" ]; ok $? "a model of the table ($model)"
# both arms in one transaction: the same xid, so that only the command ids differ
psql -X -q -d $DB -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
BEGIN;
SELECT dp_sample($model, seed => 5, target => 'paged');
SET LOCAL dpsynth.write_pages = off;
SELECT dp_sample($model, seed => 5, target => 'buffered');
COMMIT;
SQL
ok $? "the same seed into a new table, and with dpsynth.write_pages off"
pages=$(q $DB "SELECT pg_relation_size('paged') / current_setting('block_size')::int")
[ "$pages" -gt 3 ]; ok $? "the table spans several pages ($pages)"
is "$(q $DB "SELECT pg_relation_size('paged') = pg_relation_size('buffered')")" "t" "the same size"
items() {
	echo "SELECT p, lp, lp_off, lp_flags, lp_len, t_infomask2, t_infomask & ~768 AS infomask, t_hoff, t_bits, t_ctid, t_data, t_xmin
		  FROM generate_series(0, $pages - 1) p, heap_page_items(get_raw_page('$1', p::int))"
}
# the long labels: toasted (compressed inline or stored out of line) in both
is "$(q $DB "SELECT count(*) > 0 FROM paged WHERE length(note) > 1000")" "t" "long labels were drawn"
[ "$(q $DB "SELECT count(*) FROM paged WHERE kind IS NULL")" -gt 0 ]; ok $? "some rows hold a NULL (a null bitmap)"
diff=$(q $DB "SELECT count(*) FROM (($(items paged)) EXCEPT ALL ($(items buffered))) a")
diff2=$(q $DB "SELECT count(*) FROM (($(items buffered)) EXCEPT ALL ($(items paged))) a")
n=$(q $DB "SELECT count(*) FROM ($(items paged)) a WHERE lp_flags = 1")
[ "$n" -gt 6000 ] || [ "$n" -eq "$(q $DB "SELECT count(*) FROM paged")" ]; ok $? "every row has a line pointer ($n)"
is "$diff $diff2" "0 0" "every line pointer and tuple (header bits but the hint bits, null bitmap, address, data, xmin) is the same"
# the page headers too, but their LSNs and checksums (the paged arm's WAL is full images)
hdr() { echo "SELECT p, lower, upper, special, pagesize, version, prune_xid FROM generate_series(0, $pages - 1) p, page_header(get_raw_page('$1', p::int))"; }
is "$(q $DB "SELECT count(*) FROM (($(hdr paged)) EXCEPT ALL ($(hdr buffered))) a")" "0" "every page's free space bounds are the same"
[ -n "${KEEP:-}" ] || psql -X -q -d postgres -c "DROP DATABASE $DB"
done_testing
