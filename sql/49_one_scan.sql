-- The first dp_synthesize of a table whose integer columns are declared with bounds only learns
-- their quantile bins and reads the table once (src/synth_onescan.c): the encoding scan counts
-- discovery's rows too and encodes them once the bins are released.  Where it cannot (a real
-- column to learn, a column without a domain, offsets past maintenance_work_mem, the setting
-- 'two'), two scans as before.  dpsynth.discovery_scans = 'check' compares the one scan's
-- discovery counts and encoded rows with those of both other scans: an error if they differ.
\i test/regress_helpers.sql

-- 80,000 rows.  a: 0..100 (one 16-bit offset), b .. f: 0..5,000,000 (two), q: quantile bins, r: a real;
-- values outside the bounds and NULLs in a and b
-- (autovacuum off: its reads of the table would count as the calls')
CREATE TABLE once (a int4, b int8, c int4, d int4, e int4, f int4, q int2, g text, r float8)
	WITH (autovacuum_enabled = false);
INSERT INTO once
SELECT CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN -5 WHEN i % 83 = 0 THEN 1000 ELSE 18 + i % 60 END,
	   CASE WHEN i % 101 = 0 THEN NULL WHEN i % 79 = 0 THEN 99999999 ELSE (i * 7919) % 5000001 END,
	   (i * 31) % 5000001, (i * 131) % 5000001, (i * 1009) % 5000001, i % 5000001,
	   (i % 50)::int2, CASE WHEN i % 3 = 0 THEN 'x' ELSE 'y' END, (i % 100) / 10.0
FROM generate_series(1, 80000) i;
SELECT dp_protect('once', epsilon => 1000);
CREATE FUNCTION declare_once() RETURNS void LANGUAGE sql AS $$
	SELECT dp_declare('once', 'a', lower => 0, upper => 100);
	SELECT dp_declare('once', 'b', lower => 0, upper => 5000000);
	SELECT dp_declare('once', 'c', lower => 0, upper => 5000000);
	SELECT dp_declare('once', 'd', lower => 0, upper => 5000000);
	SELECT dp_declare('once', 'e', lower => 0, upper => 5000000);
	SELECT dp_declare('once', 'f', lower => 0, upper => 5000000);
	SELECT dp_declare('once', 'q', lower => 0, upper => 49, bins => 8, binning => 'quantile');
	SELECT dp_declare('once', 'g', categories => ARRAY['x', 'y']);
	SELECT dp_declare('once', 'r', lower => 0, upper => 10);
$$;
SELECT declare_once();
ANALYZE once;
SET dpsynth.scan_workers = 0;

-- the table's heap pages read (hit or not) by the statement run since the last call
CREATE TABLE pages_seen (n bigint);
INSERT INTO pages_seen VALUES (0);
CREATE FUNCTION pages_read() RETURNS bigint LANGUAGE sql AS $$
	SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relname = 'once'
$$;
CREATE FUNCTION scans_since() RETURNS numeric LANGUAGE sql AS $$
	WITH d AS (SELECT pages_read() - n AS seen FROM pages_seen),
		 u AS (UPDATE pages_seen SET n = pages_read())
	SELECT round(seen::numeric / (pg_relation_size('once') / current_setting('block_size')::int), 2) FROM d
$$;
SELECT pg_stat_force_next_flush();
SELECT scans_since() IS NOT NULL AS started;
-- the same over a tree's tables (partitions and INHERITS children, each heap table of it)
CREATE TABLE tree_seen (rel regclass PRIMARY KEY, n bigint);
CREATE FUNCTION tree_tables(t regclass) RETURNS SETOF oid LANGUAGE sql AS $$
	WITH RECURSIVE r(oid) AS (SELECT t::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN r ON i.inhparent = r.oid)
	SELECT r.oid FROM r JOIN pg_class c ON c.oid = r.oid WHERE c.relkind = 'r'
$$;
CREATE FUNCTION tree_pages_read(t regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT coalesce(sum(heap_blks_hit + heap_blks_read), 0)::bigint FROM pg_statio_user_tables
	WHERE relid IN (SELECT tree_tables(t))
$$;
CREATE FUNCTION tree_scans_since(t regclass) RETURNS numeric LANGUAGE sql AS $$
	WITH d AS (SELECT tree_pages_read(t) - coalesce((SELECT n FROM tree_seen WHERE rel = t), 0) AS seen),
		 u AS (INSERT INTO tree_seen VALUES (t, tree_pages_read(t)) ON CONFLICT (rel) DO UPDATE SET n = excluded.n)
	SELECT round(seen::numeric / (SELECT sum(pg_relation_size(o)) FROM tree_tables(t) o)
				 * current_setting('block_size')::int, 2) FROM d
$$;

-- the first call learns a .. f and q (7 columns) and reads the table once
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_1', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_first_call;
SELECT details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
-- the next learns nothing: once too
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_2', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_second_call;
SELECT details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
-- NULLs and values outside the bounds are synthesized as the bins have them: a's NULLs kept
SELECT count(*) FILTER (WHERE a IS NULL) > 0 AS a_nulls, bool_and(a IS NULL OR a BETWEEN 0 AND 100) AS a_inside
FROM once_1;

-- 'two': discovery's scan, then the encoding scan
SELECT declare_once();
SET dpsynth.discovery_scans = 'two';
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_3', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_two;
RESET dpsynth.discovery_scans;

-- a real column to learn (r): two scans
SELECT declare_once();
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('once', 10, target => 'once_4', columns => ARRAY['a', 'r']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_real_column;
SELECT details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;

-- offsets that the table's pages could pass 4 x maintenance_work_mem with (291 rows a page of
-- 8 kB at most): two scans, decided before the first from the pages (public), not the rows; here
-- 7 columns of 12 16-bit halves pass 4 MB from 601 pages on, a and b's 3 halves from 2,403 pages
SELECT declare_once();
SET maintenance_work_mem = '1MB';
SELECT pg_relation_size('once') / 8192 BETWEEN 601 AND 2402 AS pages_between;
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_5', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_past_memory;
-- ... fewer columns fit: once
SELECT declare_once();
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('once', 10, target => 'once_6', columns => ARRAY['a', 'b']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_within_memory;
RESET maintenance_work_mem;

-- 'check': the one scan's counts and rows equal those of the other scans (else an error after
-- the charge, which the caller sees as dpsynth's own), alone and with parallel workers; its
-- NOTICE and the pages read (the one scan, discovery's own scan, the encoding scan: 3 reads;
-- two scans would read 2 and say nothing) show that the one scan ran and was checked
SET dpsynth.discovery_scans = 'check';
SELECT declare_once();
SELECT pg_stat_force_next_flush();
SELECT scans_since() IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_7', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_check;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
SET min_parallel_table_scan_size = 0;
SET dpsynth.scan_workers = 2;
SELECT declare_once();
SELECT pg_stat_force_next_flush();
SELECT scans_since() IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_8', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT pg_stat_force_next_flush();
SELECT scans_since() AS scans_check_parallel;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
-- a partitioned table, one partition of another column layout (a dropped column, another
-- order); a date with infinities and a timestamp over one hour (2^32 microseconds: two halves)
CREATE TABLE oncep (region text NOT NULL, day date, ts timestamptz, k int4) PARTITION BY LIST (region);
CREATE TABLE oncep_n PARTITION OF oncep FOR VALUES IN ('n') WITH (autovacuum_enabled = false);
CREATE TABLE oncep_s (junk int, k int4, ts timestamptz, day date, region text NOT NULL)
	WITH (autovacuum_enabled = false);
ALTER TABLE oncep_s DROP COLUMN junk;
ALTER TABLE oncep ATTACH PARTITION oncep_s FOR VALUES IN ('s');
INSERT INTO oncep
SELECT CASE WHEN i % 2 = 0 THEN 'n' ELSE 's' END,
	   CASE WHEN i % 211 = 0 THEN 'infinity'::date WHEN i % 223 = 0 THEN '-infinity'::date
			WHEN i % 227 = 0 THEN NULL ELSE '2020-01-01'::date + i % 700 END,
	   '2020-01-01 00:00+00'::timestamptz + (i % 4000) * interval '1 second',
	   i % 37
FROM generate_series(1, 30000) i;
SELECT dp_protect('oncep', epsilon => 1000);
SELECT dp_declare('oncep', 'region', categories => ARRAY['n', 's']);
SELECT dp_declare('oncep', 'day', lower => '2020-01-01'::date, upper => '2021-12-31'::date);
SELECT dp_declare('oncep', 'ts', lower => '2020-01-01 00:00+00'::timestamptz, upper => '2020-01-01 01:00+00'::timestamptz);
SELECT dp_declare('oncep', 'k', lower => 0, upper => 40);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('oncep') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('oncep', 10, target => 'oncep_1');
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('oncep') AS scans_check_partitioned_parallel;
SELECT status, details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
RESET dpsynth.scan_workers;
RESET min_parallel_table_scan_size;
SELECT dp_declare('oncep', 'day', lower => '2020-01-01'::date, upper => '2021-12-31'::date);
SELECT dp_declare('oncep', 'ts', lower => '2020-01-01 00:00+00'::timestamptz, upper => '2020-01-01 01:00+00'::timestamptz);
SELECT dp_declare('oncep', 'k', lower => 0, upper => 40);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('oncep') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('oncep', 10, target => 'oncep_2');
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('oncep') AS scans_check_partitioned;
SELECT status, details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
DROP TABLE oncep, oncep_1, oncep_2;

-- 'check' at the edges, each column learned alone or with others (the NOTICE gives the halves,
-- from the declarations): 2,000 rows, each column with NULLs, its bounds' ends and values beyond
-- them.  n1: a negative lower bound (one half), n2: one too (two); s1: upper - lower = 0xFFFE,
-- the widest one half (its upper bound's offset is 0xFFFE, next to NULL's 0xFFFF), s2: 0xFFFF
-- (two); w1: 0xFFFFFFFE, the widest two halves; w2: 0xFFFFFFFF (two scans, no NOTICE); p, m:
-- int8 bounds at +2^53 and -2^53, a declaration's limit (one half; two); ts: one hour (two
-- halves) with infinities.  Every span exceeds the 2,000 rows (one half: the look-up table).
CREATE TABLE edges (n1 int4, n2 int4, s1 int4, s2 int4, w1 int8, w2 int8, p int8, m int8, ts timestamp)
	WITH (autovacuum_enabled = false);
-- row i's value in [lo, hi]: NULL, the ends, one past each, far beyond, else spread inside
CREATE FUNCTION edge_value(i int, lo int8, hi int8, far int8) RETURNS int8 LANGUAGE sql AS $$
	SELECT CASE i % 11 WHEN 0 THEN NULL WHEN 1 THEN lo WHEN 2 THEN hi WHEN 3 THEN lo - 1 WHEN 4 THEN hi + 1
		   WHEN 5 THEN far WHEN 6 THEN -far ELSE lo + (i::int8 * 7919 * 104729) % (hi - lo + 1) END
$$;
INSERT INTO edges
SELECT edge_value(i, -1000, 1000, 2000000000), edge_value(i, -3000000, 2000000, 2000000000),
	   edge_value(i, 7, 7 + 65534, 2000000000), edge_value(i, 7, 7 + 65535, 2000000000),
	   edge_value(i, -5, -5 + 4294967294, 9000000000000000000), edge_value(i, -5, -5 + 4294967295, 9000000000000000000),
	   edge_value(i, 9007199254740992 - 10000, 9007199254740992, 9000000000000000000),
	   edge_value(i, -9007199254740992, -9007199254740992 + 100000, 9000000000000000000),
	   CASE WHEN i % 13 = 0 THEN 'infinity'::timestamp WHEN i % 17 = 0 THEN '-infinity'::timestamp
			WHEN i % 19 = 0 THEN NULL ELSE '2020-01-01'::timestamp + (i % 3700) * interval '1 second' END
FROM generate_series(1, 2000) i;
SELECT dp_protect('edges', epsilon => 1000);
CREATE FUNCTION declare_edges() RETURNS void LANGUAGE sql AS $$
	SELECT dp_declare('edges', 'n1', lower => -1000, upper => 1000);
	SELECT dp_declare('edges', 'n2', lower => -3000000, upper => 2000000);
	SELECT dp_declare('edges', 's1', lower => 7, upper => 7 + 65534);
	SELECT dp_declare('edges', 's2', lower => 7, upper => 7 + 65535);
	SELECT dp_declare('edges', 'w1', lower => -5, upper => -5 + 4294967294);
	SELECT dp_declare('edges', 'w2', lower => -5, upper => -5 + 4294967295);
	SELECT dp_declare('edges', 'p', lower => 9007199254740992 - 10000, upper => 9007199254740992);
	SELECT dp_declare('edges', 'm', lower => -9007199254740992, upper => -9007199254740992 + 100000);
	SELECT dp_declare('edges', 'ts', lower => '2020-01-01 00:00'::timestamp, upper => '2020-01-01 01:00'::timestamp);
$$;
SET dpsynth.scan_workers = 0;
SELECT declare_edges();
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('edges', 10, target => 'edges_0', columns => ARRAY['n1', 'n2', 'p', 'm', 'ts']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') AS scans_edges, (SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1);
SELECT declare_edges();
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('edges', 10, target => 'edges_1', columns => ARRAY['s1']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') AS scans_s1, (SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1);
SELECT declare_edges();
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('edges', 10, target => 'edges_2', columns => ARRAY['s2']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') AS scans_s2, (SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1);
SELECT declare_edges();
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('edges', 10, target => 'edges_3', columns => ARRAY['w1']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') AS scans_w1, (SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1);
SELECT declare_edges();
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('edges', 10, target => 'edges_4', columns => ARRAY['w2']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('edges') AS scans_w2, (SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1);

-- a table with INHERITS children (one of another column layout): one scan of all, checked
CREATE TABLE inh (a int4, b int4) WITH (autovacuum_enabled = false);
CREATE TABLE inh_c1 () INHERITS (inh) WITH (autovacuum_enabled = false);
CREATE TABLE inh_c2 (junk int, b int4, a int4) WITH (autovacuum_enabled = false);
ALTER TABLE inh_c2 DROP COLUMN junk;
ALTER TABLE inh_c2 INHERIT inh;
INSERT INTO inh SELECT i % 101, (i * 7919) % 5000001 FROM generate_series(1, 3000) i;
INSERT INTO inh_c1 SELECT i % 97, (i * 31) % 5000001 FROM generate_series(1, 3000) i;
INSERT INTO inh_c2 SELECT i % 89, (i * 131) % 5000001 FROM generate_series(1, 3000) i;
SELECT dp_protect('inh', epsilon => 1000);
SELECT dp_declare('inh', 'a', lower => 0, upper => 100);
SELECT dp_declare('inh', 'b', lower => 0, upper => 5000000);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('inh') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('inh', 10, target => 'inh_s');
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('inh') AS scans_check_inherits;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;

-- a privacy unit: two scans (discovery keeps at most k rows of each unit as it reads), no NOTICE
CREATE TABLE unitd (uid int4, a int4) WITH (autovacuum_enabled = false);
INSERT INTO unitd SELECT i % 500, i % 101 FROM generate_series(1, 5000) i;
SELECT dp_protect('unitd', epsilon => 1000);
SELECT dp_privacy_unit('unitd', 'uid', 3);
SELECT dp_declare('unitd', 'a', lower => 0, upper => 100);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('unitd') IS NOT NULL AS started;
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('unitd', 10, target => 'unitd_s', columns => ARRAY['a']);
SELECT pg_stat_force_next_flush();
SELECT tree_scans_since('unitd') AS scans_check_unit;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
RESET dpsynth.scan_workers;
RESET dpsynth.discovery_scans;
DROP TABLE edges, edges_0, edges_1, edges_2, edges_3, edges_4, inh, unitd, inh_s, unitd_s, tree_seen CASCADE;
DROP FUNCTION edge_value(int, int8, int8, int8), declare_edges();

-- a superuser setting
CREATE ROLE once_user;
SET ROLE once_user;
SELECT try_sql($$SET dpsynth.discovery_scans = 'two'$$);
RESET ROLE;
DROP ROLE once_user;

DROP TABLE once, once_1, once_2, once_3, once_4, once_5, once_6, once_7, once_8, pages_seen;
DROP FUNCTION declare_once(), pages_read(), scans_since(), tree_tables(regclass), tree_pages_read(regclass),
	tree_scans_since(regclass);
