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
-- the charge, which the caller sees as dpsynth's own), alone and with parallel workers
SET dpsynth.discovery_scans = 'check';
SELECT declare_once();
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_7', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
SET min_parallel_table_scan_size = 0;
SET dpsynth.scan_workers = 2;
SELECT declare_once();
SELECT rows_written > 0 AS synthesized
FROM dp_synthesize('once', 10, target => 'once_8', columns => ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'q', 'g']);
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
-- a partitioned table, one partition of another column layout (a dropped column, another
-- order); a date with infinities and a timestamp over one hour (2^32 microseconds: two halves)
CREATE TABLE oncep (region text NOT NULL, day date, ts timestamptz, k int4) PARTITION BY LIST (region);
CREATE TABLE oncep_n PARTITION OF oncep FOR VALUES IN ('n');
CREATE TABLE oncep_s (junk int, k int4, ts timestamptz, day date, region text NOT NULL);
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
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('oncep', 10, target => 'oncep_1');
SELECT status, details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
RESET dpsynth.scan_workers;
RESET min_parallel_table_scan_size;
SELECT dp_declare('oncep', 'day', lower => '2020-01-01'::date, upper => '2021-12-31'::date);
SELECT dp_declare('oncep', 'ts', lower => '2020-01-01 00:00+00'::timestamptz, upper => '2020-01-01 01:00+00'::timestamptz);
SELECT dp_declare('oncep', 'k', lower => 0, upper => 40);
SELECT rows_written > 0 AS synthesized FROM dp_synthesize('oncep', 10, target => 'oncep_2');
SELECT status, details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
RESET dpsynth.discovery_scans;
DROP TABLE oncep, oncep_1, oncep_2;
-- a superuser setting
CREATE ROLE once_user;
SET ROLE once_user;
SELECT try_sql($$SET dpsynth.discovery_scans = 'two'$$);
RESET ROLE;
DROP ROLE once_user;

DROP TABLE once, once_1, once_2, once_3, once_4, once_5, once_6, once_7, once_8, pages_seen;
DROP FUNCTION declare_once(), pages_read(), scans_since();
