-- The first dp_marginal of a table whose integer columns are declared with bounds only learns
-- their quantile bins and reads the table once, as dp_synthesize does (src/synth_onescan.c):
-- the scan counts discovery's rows and keeps them, encoded once the bins are released, and the
-- marginal's cells are counted from them.  Where it cannot (the setting 'two', a privacy unit, a
-- real column to learn, rows whose codes the table's pages could pass 4 x maintenance_work_mem
-- with), two scans as before.  dpsynth.discovery_scans = 'check' compares the one scan's
-- discovery counts and encoded rows with those of both other scans: an error if they differ.
\i test/regress_helpers.sql

-- 60,000 rows: a 0..100 (one 16-bit offset) with NULLs and values outside the bounds, b
-- 0..5,000,000 (two), g a category, r a real, u a person, pad to fill pages
CREATE TABLE monce (a int4, b int8, g text, r float8, u int4, pad text) WITH (autovacuum_enabled = false);
INSERT INTO monce
SELECT CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN -5 WHEN i % 83 = 0 THEN 1000 ELSE 18 + i % 60 END,
	   (i * 7919) % 5000001, CASE WHEN i % 3 = 0 THEN 'x' ELSE 'y' END, (i % 100) / 10.0, i % 6000,
	   repeat('p', 150)
FROM generate_series(1, 60000) i;
CREATE TABLE monce_u WITH (autovacuum_enabled = false) AS SELECT * FROM monce;
SELECT dp_protect('monce', epsilon => 1000);
CREATE FUNCTION declare_monce() RETURNS void LANGUAGE sql AS $$
	SELECT dp_declare('monce', 'a', lower => 0, upper => 100);
	SELECT dp_declare('monce', 'b', lower => 0, upper => 5000000);
	SELECT dp_declare('monce', 'g', categories => ARRAY['x', 'y']);
	SELECT dp_declare('monce', 'r', lower => 0, upper => 10);
$$;
SELECT declare_monce();
SELECT dp_protect('monce_u', epsilon => 1000);
SELECT dp_privacy_unit('monce_u', 'u', max_rows_per_unit => 10);
SELECT dp_declare('monce_u', 'a', lower => 0, upper => 100);
SELECT dp_declare('monce_u', 'g', categories => ARRAY['x', 'y']);
ANALYZE monce, monce_u;
SET dpsynth.scan_workers = 0;

-- a table's heap pages read (hit or not) since the last look, in scans of the table
CREATE TABLE mpages_seen (rel regclass PRIMARY KEY, n bigint);
CREATE FUNCTION mpages_read(t regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT heap_blks_hit + heap_blks_read FROM pg_statio_user_tables WHERE relid = t
$$;
CREATE FUNCTION mscans_since(t regclass = 'monce') RETURNS numeric LANGUAGE sql AS $$
	WITH d AS (SELECT mpages_read(t) - coalesce((SELECT n FROM mpages_seen WHERE rel = t), 0) AS seen),
		 u AS (INSERT INTO mpages_seen VALUES (t, mpages_read(t)) ON CONFLICT (rel) DO UPDATE SET n = excluded.n)
	SELECT round(seen::numeric / (pg_relation_size(t) / current_setting('block_size')::int), 2) FROM d
$$;
SELECT pg_stat_force_next_flush();
SELECT mscans_since() IS NOT NULL AND mscans_since('monce_u') IS NOT NULL AS started;

-- the first call learns a and b and reads the table once
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_first_call;
SELECT details->>'discovered_columns' AS discovered FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
-- the next learns nothing: once too
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_second_call;

-- the counts: a's cells (NULL, and the bins, values outside the bounds in the end bins) near
-- the rows' (noise sd about 0.1 a cell at epsilon 100)
SELECT declare_monce();
CREATE TEMP TABLE a_cells AS SELECT cell[1] AS a, noisy_count FROM dp_marginal('monce', ARRAY['a'], 100);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_one_column;
SELECT abs(sum(noisy_count) - 60000) < 50 AS total_near,
	   abs(sum(noisy_count) FILTER (WHERE a IS NULL) - (SELECT count(*) FROM monce WHERE a IS NULL)) < 20 AS nulls_near
FROM a_cells;
DROP TABLE a_cells;
SELECT pg_stat_force_next_flush();
SELECT mscans_since() IS NOT NULL AS started;

-- 'two': discovery's scan, then the marginal's
SELECT declare_monce();
SET dpsynth.discovery_scans = 'two';
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_two;
RESET dpsynth.discovery_scans;

-- a real column to learn (r): two scans
SELECT declare_monce();
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'r'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_real_column;

-- the rows kept: 2 bytes a row for each of the marginal's columns and each offset half, which
-- the table's pages could pass 4 x maintenance_work_mem with (291 rows a page at most): two
-- scans, decided from the pages (public), not the rows; 3 columns and 3 halves (a, b, g) pass
-- 4 MB from 1,202 pages on, a's 2 from 3,604
SELECT declare_monce();
SET maintenance_work_mem = '1MB';
SELECT pg_relation_size('monce') / 8192 BETWEEN 1202 AND 3603 AS pages_between;
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_past_memory;
SELECT declare_monce();
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_within_memory;
RESET maintenance_work_mem;

-- a privacy unit: discovery's scan keeps a unit's rows as it reads them: two scans
SELECT count(*) > 0 AS released FROM dp_marginal('monce_u', ARRAY['a', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since('monce_u') AS scans_per_unit;

-- 'check': the one scan's counts and rows equal those of the other scans (else an error after
-- the charge); its NOTICE and the pages read (the one scan, discovery's own scan, the encoding
-- scan: 3 reads; two scans would read 2 and say nothing) show that the one scan ran and was
-- checked, alone and with parallel workers
SET dpsynth.discovery_scans = 'check';
SELECT declare_monce();
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_check;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
SET min_parallel_table_scan_size = 0;
SET dpsynth.scan_workers = 2;
SELECT declare_monce();
SELECT count(*) > 0 AS released FROM dp_marginal('monce', ARRAY['a', 'b', 'g'], 10);
SELECT pg_stat_force_next_flush();
SELECT mscans_since() AS scans_check_parallel;
SELECT status FROM dpsynth.ledger ORDER BY id DESC LIMIT 1;
RESET min_parallel_table_scan_size;
RESET dpsynth.scan_workers;
RESET dpsynth.discovery_scans;
DROP FUNCTION declare_monce(), mscans_since(regclass), mpages_read(regclass);
DROP TABLE monce, monce_u, mpages_seen;
