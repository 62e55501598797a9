-- A refined integer column (bounds only, 33-128 values) heaped at multiples of ten: where its
-- per-value estimates show the heaping (dp_binning_heap_multiplier), a cell of the discovery's
-- histogram kept whole (too few rows for per-value counts) spreads its share of the shape over its
-- values weighted toward the multiples of ten, so that a heap in a thin tail (90 among 88..95)
-- is drawn at its value, not over the cell.  A smooth column gets no such weighting.
\i test/regress_helpers.sql

-- 100,700 rows: h spread thinly over 1..79 with heaps at 10, 20, .., 70, a tail 88..95 with 200
-- rows, 160 of them at 90, and a top code at 99; s spread evenly over 1..79 (and 700 rows at 40)
CREATE TABLE hp (h integer NOT NULL, s integer NOT NULL);
INSERT INTO hp SELECT 1 + (i * 37) % 79, 1 + (i * 53) % 79 FROM generate_series(1, 40000) i;
INSERT INTO hp SELECT 10 * (1 + i % 7), 1 + (i * 53) % 79 FROM generate_series(1, 60000) i;
INSERT INTO hp SELECT CASE WHEN i % 5 = 0 THEN 88 + (i / 5) % 8 ELSE 90 END, 40 FROM generate_series(1, 200) i;
INSERT INTO hp SELECT 99, 40 FROM generate_series(1, 500) i;
SELECT dp_protect('hp', epsilon => 50);
SELECT dp_declare('hp', 'h', lower => 0, upper => 100);
SELECT dp_declare('hp', 's', lower => 0, upper => 100);
SELECT model_id FROM dp_synthesize('hp', epsilon => 0.5, target => 'hp_synth') \gset
CREATE TEMP TABLE attempts AS SELECT 1 AS n, :model_id::int8 AS model_id;

-- the released shape's weight at each value (a piece's weight spread evenly over its values), by
-- attempt (below)
CREATE TEMP VIEW shape_at AS
SELECT a.n, c->>'name' AS col, x, sum((p->>2)::float8 / ((p->>1)::int - (p->>0)::int + 1)) AS w
FROM attempts a, jsonb_array_elements(dp_model_json(a.model_id)->'columns') c,
	 LATERAL (SELECT jsonb_build_array(c->'domain'->'shape'->(3 * i), c->'domain'->'shape'->(3 * i + 1),
									   c->'domain'->'shape'->(3 * i + 2)) p
			  FROM generate_series(0, jsonb_array_length(c->'domain'->'shape') / 3 - 1) i) q,
	 LATERAL generate_series((p->>0)::int, (p->>1)::int) x
GROUP BY 1, 2, 3;
-- The cell 88..95 as an attempt released it: kept whole and spread over its values by the heap
-- multiplier when all eight are weighed, the seven that are no multiple of ten alike and 90 apart
-- (a uniform spread would weigh 90 alike too); then 90's share of the cell.  The discovery splits
-- the cell into per-value counts instead when its stage-1 noisy count reaches 3 sigma_2 sqrt(8)
-- (dp_binning_refine): 200 rows against 380 with sigma_1 77.6 at this call's rho, about 1% of
-- calls, and no spread applies (the per-value estimates, sigma_2 44.8 each, shrunk toward the
-- bin's uniform spread, give 90 about a third).  Such an attempt, and only such a one (its seven
-- other values weighed apart: refined), is followed by another (h and s declared again: learned
-- again with the same rho), up to four: all four refined about once in 1e8 calls.  An attempt
-- kept whole but spread uniformly (no heap found) ends the attempts and fails.
CREATE TEMP VIEW cell_88_95 AS
SELECT n, count(*) = 8 AND max(w) FILTER (WHERE x <> 90) - min(w) FILTER (WHERE x <> 90) <= 1e-9 * max(w)
		  AND abs(max(w) FILTER (WHERE x = 90) - max(w) FILTER (WHERE x <> 90)) > 1e-9 * max(w) AS spread,
	   count(*) = 8 AND max(w) FILTER (WHERE x <> 90) - min(w) FILTER (WHERE x <> 90) > 1e-9 * max(w) AS refined,
	   sum(w) FILTER (WHERE x = 90) / sum(w) AS share_90
FROM shape_at WHERE col = 'h' AND x BETWEEN 88 AND 95 GROUP BY n;
DO $$
DECLARE
	k int := 1;
BEGIN
	WHILE k < 4 AND NOT EXISTS (SELECT 1 FROM cell_88_95 WHERE NOT refined) LOOP
		k := k + 1;
		PERFORM dp_declare('hp', 'h', lower => 0, upper => 100);
		PERFORM dp_declare('hp', 's', lower => 0, upper => 100);
		INSERT INTO attempts SELECT k, model_id FROM dp_synthesize('hp', epsilon => 0.5, target => 'hp_again');
		DROP TABLE hp_again;
	END LOOP;
END $$;
-- 90 holds most of 88..95's weight (a uniform spread over the cell would give it an eighth; the
-- multiplier here, about 18, gives it about 0.72)
SELECT bool_or(spread AND share_90 > 0.4) AS heap_at_90 FROM cell_88_95;
-- the even column's multiples of ten hold their share of its rows (about 0.09), no more
SELECT abs(sum(w) FILTER (WHERE x % 10 = 0) / sum(w) - (SELECT avg((s % 10 = 0)::int) FROM hp)) < 0.03
	   AS even_not_heaped
FROM shape_at WHERE n = 1 AND col = 's';
DROP VIEW cell_88_95, shape_at;
DROP TABLE attempts, hp, hp_synth;
