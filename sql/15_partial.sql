-- Partial counts (src/partial.c, docs/DISTRIBUTED.md): exact counts of one marginal as an
-- aggregate with a combine function.  Parallel workers' partial states add up to the serial
-- count; states merge; malformed or mismatched states are refused; and nobody but the extension
-- owner may run them (they are exact counts of raw rows, not releases).
\i test/regress_helpers.sql
CREATE ROLE regress_p_analyst IN ROLE dpsynth_analyst;
CREATE TABLE p_src (a int NOT NULL, b int NOT NULL);
-- 120,000 rows over a 5 x 8 grid, skewed, with the cells of a = 4 and b = 7 left empty
INSERT INTO p_src SELECT (i % 13) % 4, (i / 7) % 7 FROM generate_series(1, 120000) i;
ANALYZE p_src;
-- the exact counts of every cell of the grid, first column slowest, empty cells included
CREATE VIEW p_truth AS
SELECT array_agg(coalesce(n, 0) ORDER BY g.a, g.b) AS counts
FROM (SELECT a, b FROM generate_series(0, 4) a, generate_series(0, 7) b) g
	 LEFT JOIN (SELECT a, b, count(*) n FROM p_src GROUP BY a, b) c USING (a, b);
-- serial
SET max_parallel_workers_per_gather = 0;
CREATE TABLE p_serial AS
SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a, b], '{5,8}'), '{5,8}') AS counts FROM p_src;
SELECT (SELECT counts FROM p_serial) = (SELECT counts FROM p_truth) AS serial_is_exact;
-- parallel: partial aggregates in the workers, combined in the leader
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a, b], '{5,8}'), '{5,8}') FROM p_src;
SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a, b], '{5,8}'), '{5,8}')
	   = (SELECT counts FROM p_serial) AS parallel_equals_serial
FROM p_src;
-- several marginals in one pass: one aggregate each
SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a], '{5}'), '{5}') AS a_counts,
	   dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[b], '{8}'), '{8}') AS b_counts
FROM p_src;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- states counted apart (here one per value of b) merge into the whole, in any order
SELECT dpsynth._partial_vector(dpsynth._partial_merge(s ORDER BY random()), '{5,8}')
	   = (SELECT counts FROM p_serial) AS merged_equals_whole
FROM (SELECT dpsynth._partial_counts(ARRAY[a, b], '{5,8}') s FROM p_src GROUP BY b) parts;
-- no row: a NULL state, which is all zeros of the planned shape; NULL states are skipped
SELECT dpsynth._partial_counts(ARRAY[a, b], '{5,8}') IS NULL AS no_row_is_null FROM p_src WHERE a > 100;
SELECT dpsynth._partial_vector(NULL, '{2,3}');
SELECT dpsynth._partial_vector(dpsynth._partial_merge(s), '{1}')
FROM (SELECT NULL::bytea UNION ALL SELECT dpsynth._partial_counts(ARRAY[0], '{1}')) v(s);
-- the byte form: sparse when few cells are counted (10-byte header, 4 per column, 8 + 16 per
-- non-zero cell), dense otherwise (8 per cell)
SELECT octet_length(dpsynth._partial_counts(ARRAY[a, b], '{5,8}')) AS one_cell_bytes FROM p_src WHERE a = 0 AND b = 0;
SELECT octet_length(dpsynth._partial_counts(ARRAY[a, b], '{5,8}')) AS dense_bytes FROM p_src;
-- refused: a code outside its domain, a row of the wrong arity, NULLs, a bad shape, another shape
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a, b], '{3,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a, b - 1], '{5,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a], '{5,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a, NULL], '{5,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(NULL, '{5,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[0], '{0}')$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[0, 0], '{65536,65536}')$$);
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a, b], CASE WHEN a = 0 THEN '{5,8}' ELSE '{5,9}' END::int4[]) FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_vector(dpsynth._partial_counts(ARRAY[a, b], '{5,8}'), '{8,5}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_merge(s) FROM (SELECT dpsynth._partial_counts(ARRAY[0], '{2}') UNION ALL SELECT dpsynth._partial_counts(ARRAY[0], '{3}')) v(s)$$);
-- a NULL state merged alone is NULL, not an empty state of no shape
SELECT dpsynth._partial_merge(s) IS NULL AS null_merge FROM (SELECT NULL::bytea) v(s);
-- a shard's bytes are untrusted: truncated, altered or foreign bytes are refused
SELECT try_sql($$SELECT dpsynth._partial_merge(substr(s, 1, octet_length(s) - 1)) FROM (SELECT dpsynth._partial_counts(ARRAY[a, b], '{5,8}') s FROM p_src) x$$);
SELECT try_sql($$SELECT dpsynth._partial_merge(overlay(s PLACING '\x02'::bytea FROM 5)) FROM (SELECT dpsynth._partial_counts(ARRAY[a, b], '{5,8}') s FROM p_src) x$$);
SELECT try_sql($$SELECT dpsynth._partial_vector('\x0102', '{1}')$$);
-- not for analysts, nor for PUBLIC: exact counts of raw rows
GRANT SELECT ON p_src TO regress_p_analyst;
SET ROLE regress_p_analyst;
SELECT try_sql($$SELECT dpsynth._partial_counts(ARRAY[a, b], '{5,8}') FROM p_src$$);
SELECT try_sql($$SELECT dpsynth._partial_merge(NULL::bytea)$$);
SELECT try_sql($$SELECT dpsynth._partial_vector(NULL, '{1}')$$);
RESET ROLE;
SELECT p.oid::regprocedure AS function, has_function_privilege('regress_p_analyst', p.oid, 'EXECUTE') AS analyst,
	   has_function_privilege('public', p.oid, 'EXECUTE') AS public
FROM pg_proc p WHERE p.proname LIKE '\_partial\_%' AND p.pronamespace = 'dpsynth'::regnamespace
ORDER BY 1::text;
DROP VIEW p_truth;
DROP TABLE p_serial, p_src;
DROP ROLE regress_p_analyst;
