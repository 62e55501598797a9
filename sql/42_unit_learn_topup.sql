-- Learning the rows-per-unit bound (issue 39): where no cell of the released rows-per-unit
-- histogram stands above 6 sd of its noise (DP_UNIT_LEARN_TOPUP_Z), dp_synthesize releases the histogram a second time
-- with 3 times its rho, taken from the method's, and learns k from the precision-weighted mean
-- of the two (docs/PRIVACY.md, "Learning the rows-per-unit bound").  The charge is unchanged.
SET client_min_messages = warning;
-- 10 persons of 4 rows at epsilon 0.5: the histogram's sd is about 62, so the first release has
-- no cell above 3 sd in about 96% of the calls (a cell of noise alone passes in about 4%)
CREATE TABLE topup_small (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_small SELECT i, CASE WHEN j % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 10) i, generate_series(1, 4) j;
SELECT dp_protect('topup_small', epsilon => 100000);
SELECT dp_declare('topup_small', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_small', 'person', max_rows_per_unit => NULL);
-- 250 persons of 1 row at epsilon 0.5: cell 1 stands above 3 sd (184) in about 86% of the first
-- releases, above 6 sd (368) in about 3%
CREATE TABLE topup_mid (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_mid SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 250) i;
SELECT dp_protect('topup_mid', epsilon => 100000);
SELECT dp_declare('topup_mid', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_mid', 'person', max_rows_per_unit => NULL);
-- 3,000 persons of 1 row at epsilon 1: the first release's cell 1 stands about 90 sd above 3 sd
CREATE TABLE topup_big (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_big SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 3000) i;
SELECT dp_protect('topup_big', epsilon => 100000);
SELECT dp_declare('topup_big', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_big', 'person', max_rows_per_unit => NULL);

DO $$ BEGIN
	FOR i IN 1..20 LOOP
		PERFORM dp_synthesize('topup_small', epsilon => 0.5, target => 'topup_small_syn');
		DROP TABLE topup_small_syn;
	END LOOP;
	FOR i IN 1..20 LOOP
		PERFORM dp_synthesize('topup_mid', epsilon => 0.5, target => 'topup_mid_syn');
		DROP TABLE topup_mid_syn;
	END LOOP;
	FOR i IN 1..5 LOOP
		PERFORM dp_synthesize('topup_big', epsilon => 1, target => 'topup_big_syn');
		DROP TABLE topup_big_syn;
	END LOOP;
END $$;

-- per call: the histogram's draws (32 cells, twice where the second release was taken), its rho
-- units (1/50 of the release's, or 4/50), and the charge: the releases' units and the method's
-- add up to it, and the histogram's units plus the method's are the same whether it was taken
CREATE TEMP TABLE topup_calls AS
SELECT table_name::text AS t, (r->>'draws')::int AS draws, (r->>'rho_units')::int8 AS shape_units,
	   (m->'privacy'->>'rho_units_method')::int8 AS method_units,
	   (m->'privacy'->>'rho_units_charged')::int8 AS charged,
	   (SELECT sum((x->>'rho_units')::int8) FROM jsonb_array_elements(m->'privacy'->'releases') x) AS release_units,
	   jsonb_array_length(m->'rows_per_unit') AS k,
	   (SELECT (details->>'rho_units_rows_per_unit')::int8 FROM dpsynth.ledger l WHERE l.id = (m->>'ledger_id')::int8) AS planned
FROM (SELECT table_name, dp_model_json(model_id) AS m FROM dp_models
	  WHERE table_name IN ('topup_small'::regclass, 'topup_mid'::regclass, 'topup_big'::regclass)) s,
	 jsonb_array_elements(m->'privacy'->'releases') r
WHERE r->>'release' = 'rows per unit';

SELECT t, count(*) AS calls,
	   bool_and(draws IN (32, 64)) AS draws_32_or_64,
	   bool_and(release_units + method_units = charged) AS adds_up_to_the_charge,
	   count(DISTINCT shape_units + method_units) AS one_sum_of_histogram_and_method,
	   bool_and(shape_units = CASE WHEN draws = 64 THEN 4 ELSE 1 END * planned) AS second_is_3_times_the_first
FROM topup_calls GROUP BY t ORDER BY t;
-- taken on the small table in most calls (at least 10 of 20: below that with probability about
-- 1e-8), on the big one never
SELECT count(*) FILTER (WHERE draws = 64) >= 10 AS small_mostly_taken FROM topup_calls WHERE t = 'topup_small';
-- taken on the middle table too, where cell 1 passes 3 sd but not 6 (at least 14 of 20: below
-- that with probability about 2e-6; at 3 sd it would be taken in about 14% of the calls), and k
-- learned from the mean of the two releases is 1 (but where a cell of noise alone passes)
SELECT count(*) FILTER (WHERE draws = 64) >= 14 AS mid_mostly_taken, count(*) FILTER (WHERE k = 1) >= 14 AS mid_k_1
FROM topup_calls WHERE t = 'topup_mid';
SELECT count(*) FILTER (WHERE draws = 64) AS big_taken, min(k) AS big_k FROM topup_calls WHERE t = 'topup_big';
-- the ledger is the charge made before the release: one row a call, the histogram's planned share
SELECT count(*) AS ledger_rows, bool_and((details->>'rho_units_rows_per_unit')::int8 = (rho * 1e12)::int8 / 50) AS share_is_1_50
FROM dpsynth.ledger WHERE relid = 'topup_small'::regclass;
