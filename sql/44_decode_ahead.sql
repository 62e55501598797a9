-- The values of a synthetic table's bins and random uuids are decoded a chunk of 8,192 rows
-- ahead of the page write, on a helper thread (src/core/dp_decode.c, dp_rowdec; src/synth_write.c):
-- the draws are those of decoding row by row, so the same seed gives the same rows on one
-- thread or two, across chunk boundaries and in units; an error in the middle of the write
-- (a CHECK that divides by zero at row 30,000, past the first chunks, while the next one is
-- decoded) leaves no table and no thread behind, and the session goes on.
\i test/regress_helpers.sql
CREATE TABLE da_src (
	id		integer NOT NULL CHECK (100 / (id - 30000) IS NOT NULL),
	u		uuid NOT NULL,
	kind	text NOT NULL,
	n		integer,
	x		double precision,
	amount	numeric(8,2)
);
INSERT INTO da_src
SELECT i, md5(i::text)::uuid, (ARRAY['a', 'b', 'c'])[1 + i % 3],
	   CASE WHEN i % 10 = 0 THEN NULL ELSE i % 100 END, (i % 37) / 3.0, (i % 500) * 1.25
FROM generate_series(1, 3000) i;
SELECT dp_protect('da_src', epsilon => 50);
SELECT dp_declare('da_src', 'kind', categories => ARRAY['a', 'b', 'c']);
SELECT dp_declare('da_src', 'n', lower => 0, upper => 99, bins => 10);
SELECT dp_declare('da_src', 'x', lower => 0, upper => 13, bins => 8);
SELECT dp_declare('da_src', 'amount', lower => 0, upper => 700, bins => 7);
SELECT dp_column_policy('da_src', 'id', treatment => 'identifier');
SELECT dp_column_policy('da_src', 'u', treatment => 'identifier');

SELECT model_id AS model FROM dp_synthesize('da_src', epsilon => 5, "rows" => 9000, target => 'da_first') \gset

-- one seed, 20,000 rows (three chunks), on two threads and on one: the same rows in the same places
SET dpsynth.synthesis_threads = 2;
SELECT rows_written AS two_rows FROM dp_sample(:model, "rows" => 20000, seed => 7, target => 'da_two') \gset
SET dpsynth.synthesis_threads = 1;
SELECT rows_written AS one_rows FROM dp_sample(:model, "rows" => 20000, seed => 7, target => 'da_one') \gset
RESET dpsynth.synthesis_threads;
SELECT :two_rows = 20000 AND :one_rows = 20000 AS all_rows,
	   (SELECT count(*) FROM (SELECT ctid, * FROM da_two EXCEPT ALL SELECT ctid, * FROM da_one) x) +
	   (SELECT count(*) FROM (SELECT ctid, * FROM da_one EXCEPT ALL SELECT ctid, * FROM da_two) x) AS differences,
	   (SELECT count(DISTINCT u) = count(*) FROM da_two) AS uuids_distinct,
	   (SELECT count(*) FILTER (WHERE n IS NULL) BETWEEN 1 AND 19999 FROM da_two) AS some_nulls,
	   (SELECT bool_and(n BETWEEN 0 AND 99 AND x >= 0 AND x <= 13 AND amount BETWEEN 0 AND 700) FROM da_two) AS in_domain;

-- an error at row 30,000 of the write: no table, no helper thread left, the session goes on
SELECT try_sql($$SELECT * FROM dp_sample($$ || :model || $$, "rows" => 40000, seed => 8, target => 'da_fails')$$) AS fails_mid_write;
SELECT to_regclass('da_fails') IS NULL AS not_created;
SELECT count(*) AS backend_threads FROM pg_ls_dir('/proc/self/task');
SELECT rows_written = 9000 AS sampled_after FROM dp_sample(:model, "rows" => 9000, seed => 8, target => 'da_after');
