-- A big table is read by parallel workers and the calling backend together
-- (src/scan_parallel.c, issue 12 item 2).  The release is the same function of the rows with
-- or without workers: every partition read, each row counted once, in the right cell.
\i test/regress_helpers.sql
CREATE ROLE regress_par_analyst IN ROLE dpsynth_analyst;
CREATE TABLE par (grp text NOT NULL, k integer NOT NULL, x float8, d date) PARTITION BY RANGE (k);
CREATE TABLE par_lo PARTITION OF par FOR VALUES FROM (0) TO (5);
-- a partition whose columns sit elsewhere: read by name, by the workers too
CREATE TABLE par_hi (junk int, d date, x float8, k integer NOT NULL, grp text NOT NULL);
ALTER TABLE par_hi DROP COLUMN junk;
ALTER TABLE par ATTACH PARTITION par_hi FOR VALUES FROM (5) TO (10);
INSERT INTO par SELECT (ARRAY['a', 'b', 'c', 'zz'])[1 + i % 4], (i * 7) % 10,
	CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 100) / 10.0 END, DATE '2020-01-01' + i % 365
FROM generate_series(1, 60000) i;
SELECT dp_protect('par', epsilon => 5000);
SELECT dp_declare('par', 'grp', categories => ARRAY['a', 'b', 'c']);
SELECT dp_declare('par', 'k', lower => 0, upper => 9);
SELECT dp_declare('par', 'x', lower => 0, upper => 10, bins => 5);
SELECT dp_declare('par', 'd', lower => '2020-01-01'::timestamptz, upper => '2020-12-31'::timestamptz, bins => 4);
GRANT SELECT ON par TO regress_par_analyst;	-- only to print the exact counts below
-- Workers for any table size (the planner's threshold), at most two.
SET min_parallel_table_scan_size = 0;

-- The same exact counts (sigma < 0.1 at this epsilon, so the rounded release is the count)
-- with the calling backend alone and with two workers, and equal to the table's.
SET dpsynth.scan_workers = 0;
CREATE TEMP TABLE alone AS
	SELECT cell, noisy_count FROM dp_marginal('par', ARRAY['grp', 'k', 'x', 'd'], epsilon => 300);
SET dpsynth.scan_workers = 2;
SET jit = off;	-- debug1 shows JIT's inlining too, where a server compiles a plan
SET client_min_messages = debug1;	-- shows the workers launched
SELECT count(*) AS cells FROM dp_marginal('par', ARRAY['grp', 'k', 'x', 'd'], epsilon => 300);
RESET client_min_messages;
CREATE TEMP TABLE shared_scan AS
	SELECT cell, noisy_count FROM dp_marginal('par', ARRAY['grp', 'k', 'x', 'd'], epsilon => 300);
SELECT (SELECT count(*) FROM alone) AS cells, sum(noisy_count) AS rows,
	   (SELECT count(*) FROM (SELECT * FROM alone EXCEPT SELECT * FROM shared_scan) e) AS differ
FROM shared_scan;
SELECT r.grp, r.released, e.exact
FROM (SELECT cell[1] AS grp, sum(noisy_count) AS released FROM shared_scan GROUP BY 1) r
JOIN (SELECT CASE WHEN grp IN ('a', 'b', 'c') THEN grp END AS grp, count(*) AS exact FROM par GROUP BY 1) e
	ON r.grp IS NOT DISTINCT FROM e.grp
ORDER BY 1;
-- More workers asked for than the server allows (bounded by max_parallel_workers and
-- max_worker_processes, launched as slots are free): every row is still read once.
SET dpsynth.scan_workers = 64;
CREATE TEMP TABLE many AS
	SELECT cell, noisy_count FROM dp_marginal('par', ARRAY['grp', 'k', 'x', 'd'], epsilon => 300);
SELECT count(*) AS differ FROM (SELECT * FROM alone EXCEPT SELECT * FROM many) e;
SET dpsynth.scan_workers = 2;
-- An analyst's call takes the same path (the workers run as the definer, like the leader).
CREATE SCHEMA par_space;
GRANT CREATE, USAGE ON SCHEMA par_space TO regress_par_analyst;
SET ROLE regress_par_analyst;
SELECT rows_written BETWEEN 59000 AND 61000 AS about_all_rows
FROM dp_synthesize('par', epsilon => 100, target => 'par_space.par_copy');
SELECT count(DISTINCT grp) AS groups, min(k) >= 0 AND max(k) <= 9 AS k_in_range FROM par_space.par_copy;
RESET ROLE;

-- No workers when scan_workers is 0 or max_parallel_workers is 0: the backend reads alone.
SET max_parallel_workers = 0;
SET client_min_messages = debug1;
SELECT count(*) AS cells FROM dp_marginal('par', ARRAY['grp'], epsilon => 300);
RESET client_min_messages;
RESET max_parallel_workers;
-- Inside a subtransaction that fails after the read, the session goes on (parallel mode ended).
SELECT try_sql($$SELECT count(*) / 0 FROM dp_marginal('par', ARRAY['grp', 'k'], epsilon => 300)$$) AS failed_after;
SELECT count(*) AS cells FROM dp_marginal('par', ARRAY['grp'], epsilon => 300);
-- Only a superuser sets the workers.
SET ROLE regress_par_analyst;
SELECT try_sql($$SET dpsynth.scan_workers = 8$$) AS analyst_sets_workers;
RESET ROLE;
RESET dpsynth.scan_workers;
RESET min_parallel_table_scan_size;
DROP SCHEMA par_space CASCADE;
DROP TABLE par;
DROP ROLE regress_par_analyst;
