-- The partial-count state that Citus ships (src/citus_state.c, docs/DISTRIBUTED.md "Citus"),
-- without Citus: dpsynth._shard_counts and dpsynth._shard_pairs count exactly, serial and with
-- parallel workers (the combine function); the state's text (what a worker sends) reads back to the
-- same counts; malformed or mismatched text is refused without repeating it; the state's text of a
-- sparse marginal is smaller than its dense vector; nobody but the extension owner may run them.
\i test/regress_helpers.sql
CREATE ROLE regress_cs_analyst IN ROLE dpsynth_analyst;
CREATE TABLE cs (a int NOT NULL, b int NOT NULL, c int NOT NULL);
INSERT INTO cs SELECT (i % 13) % 4, (i / 7) % 7, i % 3 FROM generate_series(1, 120000) i;
ANALYZE cs;
-- the exact counts of every cell of a 5 x 8 grid, first column slowest, empty cells included
CREATE VIEW cs_truth AS
SELECT array_agg(coalesce(n, 0) ORDER BY g.a, g.b) AS counts
FROM (SELECT a, b FROM generate_series(0, 4) a, generate_series(0, 7) b) g
	 LEFT JOIN (SELECT a, b, count(*) n FROM cs GROUP BY a, b) c USING (a, b);
SET max_parallel_workers_per_gather = 0;
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{5,8}')
	   = (SELECT counts FROM cs_truth) AS serial_is_exact
FROM cs;
-- the text form read back gives the same counts
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}')::text::dpsynth.partial_state, '{5,8}')
	   = (SELECT counts FROM cs_truth) AS text_round_trip
FROM cs;
-- parallel: partial states in the workers, combined in the leader
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{5,8}') FROM cs;
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{5,8}')
	   = (SELECT counts FROM cs_truth) AS parallel_is_exact
FROM cs;
-- _shard_pairs: every pair of (a, b, c) one after another, equal to each pair's own count
SELECT dpsynth._state_vector(dpsynth._shard_pairs(ARRAY[a, b, c], '{5,8,3}'), '{79}')
	   = (SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{5,8}')
		  || dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, c], '{5,3}'), '{5,3}')
		  || dpsynth._state_vector(dpsynth._shard_counts(ARRAY[b, c], '{8,3}'), '{8,3}') FROM cs) AS pairs_are_the_pairs
FROM cs;
SELECT dpsynth._state_vector(dpsynth._shard_pairs(ARRAY[b], '{8}'), '{8}')
	   = (SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[b], '{8}'), '{8}') FROM cs) AS one_column
FROM cs;
-- serial again (RESET would give the default, 2, and with the costs at 0 an error below could be
-- raised in a worker, its message then carrying "CONTEXT: parallel worker" or not by chance)
SET max_parallel_workers_per_gather = 0;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- no row: a NULL state, zeros of the planned shape
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{5,8}') = array_fill(0::int8, ARRAY[40]) AS no_row
FROM cs WHERE false;
-- a sparse state travels as its non-empty cells: 3 rows in 1,000,000 cells
SELECT length(dpsynth._shard_counts(ARRAY[a], '{1000000}')::text) < 200 AS sparse_is_small
FROM (VALUES (1), (500000), (999999)) v(a);
-- refused: another shape than planned, codes out of range, and malformed text (never repeated)
SELECT dpsynth._state_vector(dpsynth._shard_counts(ARRAY[a, b], '{5,8}'), '{8,5}') FROM cs;
SELECT dpsynth._shard_counts(ARRAY[a, 9], '{5,8}') FROM cs;
SELECT dpsynth._shard_pairs(ARRAY[a, b], '{5}') FROM cs;
SELECT 'SECRET-not-base64!'::dpsynth.partial_state;
SELECT 'U0VDUkVULWJhc2U2NA=='::dpsynth.partial_state;
-- a state's text with one byte changed (its count of cells) is refused
SELECT overlay(s placing 'B' from 9 for 1)::dpsynth.partial_state
FROM (SELECT dpsynth._shard_counts(ARRAY[a, b], '{5,8}')::text s FROM cs) x;
-- the owner's only (an analyst who may read the rows may not count them)
GRANT SELECT ON cs TO regress_cs_analyst;
SET ROLE regress_cs_analyst;
SELECT dpsynth._shard_counts(ARRAY[a, b], '{5,8}') FROM cs;
SELECT dpsynth._state_vector(NULL, '{5,8}');
RESET ROLE;
SELECT has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run, count(*)
FROM pg_proc p WHERE p.pronamespace = 'dpsynth'::regnamespace
	AND p.proname IN ('_shard_counts', '_shard_pairs', '_state_add', '_state_add_pairs', '_state_combine',
					  '_state_vector', '_state_in', '_state_out')
GROUP BY 1;
DROP TABLE cs CASCADE;
DROP ROLE regress_cs_analyst;
