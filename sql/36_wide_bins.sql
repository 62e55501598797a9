-- Bounds only over a wide range (a real type, or more than 128 integers): in a synthesis the
-- quantile bins follow what the released mass affords (dp_binning_wide_bins: more rows or more
-- epsilon, more bins, at most 64), and their inner edges sit on round values near them
-- (dp_binning_round_edges), so that heaps at round values start bins.  A declared number of bins
-- stays a ceiling; a marginal (no synthesis, no minimum bin mass) keeps at most 16.
\i test/regress_helpers.sql

-- 40,000 rows: w recorded to a tenth over [40, 60) with a heap at 50, n over [0, 100000].
CREATE TABLE wide (w float8 NOT NULL, n integer NOT NULL, v float8 NOT NULL);
INSERT INTO wide SELECT 40 + (i % 200) / 10.0, (i * 7919) % 100001, 40 + (i % 200) / 10.0
FROM generate_series(1, 30000) i;
INSERT INTO wide SELECT 50, (i * 7919) % 100001, 50 FROM generate_series(1, 10000) i;
SELECT dp_protect('wide', epsilon => 50);
SELECT dp_declare('wide', 'w', lower => 0, upper => 100);
SELECT dp_declare('wide', 'n', lower => 0, upper => 100000);
SELECT dp_declare('wide', 'v', lower => 0, upper => 100, bins => 16, binning => 'auto');

SELECT true AS synthesized FROM dp_synthesize('wide', epsilon => 5, target => 'wide_synth');
-- More than the 16 bins a declaration gets, at most 64, where the bounds alone were declared;
-- 16 at most where 16 were declared.
SELECT column_name, kind, source,
	   CASE WHEN cardinality(edges) - 1 > 64 THEN 'over 64'
			WHEN cardinality(edges) - 1 > 16 THEN '17-64' ELSE 'at most 16' END AS bins
FROM dp_domains WHERE table_name = 'wide'::regclass ORDER BY 1;
-- The inner edges are round: multiples of 0.01 at least for w, of 10 at least for n.
SELECT column_name, bool_and(CASE column_name WHEN 'w' THEN abs(e * 100 - round(e * 100)) < 1e-9
										  ELSE e::bigint % 10 = 0 END) AS round_inner_edges
FROM (SELECT column_name, unnest(edges[2:cardinality(edges) - 1]) e
	  FROM dp_domains WHERE table_name = 'wide'::regclass) s
WHERE column_name IN ('w', 'n') GROUP BY 1 ORDER BY 1;
-- A lone heap (a learned real bin whose released count per unit width is at least 8 times both
-- neighbours') draws its rows at the roundest value inside it (dp_binning_heap_points): w's heap
-- at 50 (a quarter of the rows) comes back at 50, not spread uniformly over its bin.
SELECT count(*) FILTER (WHERE w = 50) > 0.2 * count(*) AS heap_at_50,
	   count(*) FILTER (WHERE w = 50) < 0.4 * count(*) AS not_more_than_its_bin
FROM wide_synth;

-- A marginal of the same bounds: at most 16 bins (and the cell of other values).
SELECT dp_declare('wide', 'w', lower => 0, upper => 100);
SELECT count(*) <= 17 AS at_most_16_bins FROM dp_marginal('wide', ARRAY['w'], epsilon => 5);

DROP TABLE wide, wide_synth;

-- A small table at a small epsilon: 400 rows, three columns at epsilon 0.3 (minimum bin mass
-- above 200).  The positive noise of the many cells that the denoising keeps for being high can
-- afford 16 bins or more; bins past the declared 16 follow a lower bound of the row count, so
-- this table never gets more than 16 (up to 16, the denoised mass decides, as for any learned
-- quantile bins).
CREATE TABLE small (w float8 NOT NULL, n integer NOT NULL, k integer NOT NULL);
INSERT INTO small SELECT 40 + (i % 200) / 10.0, (i * 7919) % 100001, i % 5 FROM generate_series(1, 400) i;
SELECT dp_protect('small', epsilon => 50);
SELECT dp_declare('small', 'w', lower => 0, upper => 100);
SELECT dp_declare('small', 'n', lower => 0, upper => 100000);
SELECT dp_declare('small', 'k', lower => 0, upper => 4);
SELECT true AS synthesized FROM dp_synthesize('small', epsilon => 0.3, target => 'small_synth');
SELECT column_name, cardinality(edges) - 1 <= 16 AS at_most_declared
FROM dp_domains WHERE table_name = 'small'::regclass AND column_name IN ('w', 'n') ORDER BY 1;
DROP TABLE small, small_synth;

-- A synthesis that learns an integer column's bins combines each bin's one-way count with the
-- count its discovery released, where the bin is a union of that histogram's cells or refined
-- values (the model says how many: one_way_prior); g's bins, learned before by a marginal, have
-- none.  (Here, after the tests that count the calls of dp_synthesize.)
CREATE TABLE hours (h integer NOT NULL, g integer NOT NULL);
INSERT INTO hours SELECT i % 100, i % 100 FROM generate_series(1, 20000) i;
INSERT INTO hours SELECT 40, 40 FROM generate_series(1, 10000);
SELECT dp_protect('hours', epsilon => 50);
SELECT dp_declare('hours', 'h', lower => 0, upper => 99);
SELECT dp_declare('hours', 'g', lower => 0, upper => 99);
SELECT count(*) > 0 AS g_learned FROM dp_marginal('hours', ARRAY['g'], epsilon => 5);
SELECT model_id AS hours_model FROM dp_synthesize('hours', epsilon => 5, target => 'hours_synth') \gset
SELECT c->>'name' AS name, (c->>'one_way_prior')::int > 0 AS one_way_prior,
	   (c->>'one_way_prior')::int <= (c->>'codes')::int AS at_most_its_codes
FROM jsonb_array_elements(dp_model_json(:hours_model)->'columns') c ORDER BY 1;
DROP TABLE hours, hours_synth;
