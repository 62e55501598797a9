-- Learning the rows-per-unit bound under DP (issue 39): dp_privacy_unit(..., max_rows_per_unit =>
-- NULL) has every release learn k from a released histogram of the units' row counts (bounded at
-- 32, sensitivity 1), as its 0.99-quantile (or a smaller k where the release's noise outweighs
-- the rows it drops: 35_units_extremes), then bound each unit to k rows (docs/PRIVACY.md,
-- "Learning the rows-per-unit bound").  Epsilon is large, so that the noise is nearly always
-- zero (no smaller k is worth its dropped rows) and the bounded counts show which k was learned:
--   900 persons of 1 row (450 'a', 450 'b'), 100 of 3 rows in 'a', 1 of 10 rows in 'b':
--   1001 units, 0.99 of them is 991 units: 900 have at most 1 or 2 rows, 1000 at most 3, so k = 3;
--   cell a: 450 + 100 * 3 = 750 (k = 1 would give 550), cell b: 450 + 3 = 453 (the ceiling 32: 460).
SET client_min_messages = notice;
CREATE EXTENSION IF NOT EXISTS dpsynth;
CREATE TABLE stays_learned (person int4 NOT NULL, g text NOT NULL);
INSERT INTO stays_learned SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 900) i;
INSERT INTO stays_learned SELECT 1000 + i, 'a' FROM generate_series(1, 100) i, generate_series(1, 3) j;
INSERT INTO stays_learned SELECT 5000, 'b' FROM generate_series(1, 10);
SELECT dp_protect('stays_learned', epsilon => 100000);
SELECT dp_declare('stays_learned', 'g', categories => ARRAY['a', 'b']);

-- refused before anything is stored: a cell bound beyond the ceiling of a learned k
SELECT dp_privacy_unit('stays_learned', 'person', max_rows_per_unit => NULL, max_rows_per_cell => 33);
SELECT dp_privacy_unit('stays_learned', 'person', max_rows_per_unit => 0);
SELECT privacy_unit, max_rows_per_unit, max_rows_per_cell FROM dpsynth.budgets WHERE relid = 'stays_learned'::regclass;

-- k learned: stored as NULL
SELECT dp_privacy_unit('stays_learned', 'person', max_rows_per_unit => NULL);
SELECT privacy_unit, max_rows_per_unit, max_rows_per_cell FROM dpsynth.budgets WHERE relid = 'stays_learned'::regclass;

-- dp_marginal: the counts bounded at the k learned (3)
SELECT cell, noisy_count FROM dp_marginal('stays_learned', ARRAY['g'], epsilon => 1000) ORDER BY cell;
-- the ledger: no k (learned after the charge), the histogram's share of the rho, the noise per
-- unit of squared sensitivity from the rest
SELECT details->'privacy_unit' AS unit, details->'sigma2' AS sigma2,
	   (details->>'rho_units_rows_per_unit')::int8 = (rho * 1e12)::int8 / 50 AS share_is_1_50,
	   abs((details->>'sigma2_per_sensitivity2')::float8 * 2
		   * dpsynth._units_rho((rho * 1e12)::int8 - (details->>'rho_units_rows_per_unit')::int8)::float8 - 1) < 1e-9 AS noise_from_the_rest
FROM dpsynth.ledger WHERE relid = 'stays_learned'::regclass;

-- dp_synthesize: the synthetic table keeps rows per unit up to the k learned; the released
-- rows-per-unit histogram has k cells
SELECT rows_written FROM dp_synthesize('stays_learned', epsilon => 1000, target => 'stays_learned_syn');
SELECT jsonb_array_length(dp_model_json(model_id)->'rows_per_unit') AS k FROM dp_models WHERE table_name = 'stays_learned'::regclass;
SELECT max(n) <= 3 AS at_most_k FROM (SELECT count(*) AS n FROM stays_learned_syn GROUP BY person) s;
SELECT count(*) FROM stays_learned_syn;

-- a declared cell bound with a learned k: c = 2 of the k = 3 rows in one cell
CREATE TABLE stays_learned_c AS SELECT * FROM stays_learned;
SELECT dp_protect('stays_learned_c', epsilon => 100000);
SELECT dp_declare('stays_learned_c', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('stays_learned_c', 'person', max_rows_per_unit => NULL, max_rows_per_cell => 2);
SELECT cell, noisy_count FROM dp_marginal('stays_learned_c', ARRAY['g'], epsilon => 1000) ORDER BY cell;

-- spent: the bound cannot change, learned or not
SELECT dp_privacy_unit('stays_learned', 'person', max_rows_per_unit => 3);
SELECT dp_privacy_unit('stays_learned', 'person', max_rows_per_unit => NULL);

-- k learned before the quantile bins (issue 39): dp_synthesize releases the rows-per-unit
-- histogram and learns k in discovery's scan, then counts the log grid of the rows bounded at the
-- learned k (3) with noise of sensitivity k.  The person with 30 rows at x = 90 adds 3 rows to the
-- learned shape there (bounded at the ceiling 32 it added 30), and the discovery's sigma^2 is
-- k^2 / (2 rho_each) = 9 / (2 rho_each), not 32^2 / (2 rho_each).
CREATE TABLE disc_learned (person int4 NOT NULL, x int4 NOT NULL);
INSERT INTO disc_learned SELECT i, i % 50 FROM generate_series(1, 900) i;
INSERT INTO disc_learned SELECT 1000 + i, i % 50 FROM generate_series(1, 100) i, generate_series(1, 3) j;
INSERT INTO disc_learned SELECT 5000, 90 FROM generate_series(1, 30);
SELECT dp_protect('disc_learned', epsilon => 100000);
SELECT dp_privacy_unit('disc_learned', 'person', max_rows_per_unit => NULL);
SELECT dp_declare('disc_learned', 'x', lower => 0, upper => 100);
-- the plan (before the call) lists the histogram first too
SELECT string_agg(release, ', ' ORDER BY o) AS planned
FROM dp_synthesize_plan('disc_learned', epsilon => 1000) WITH ORDINALITY x(release, mechanism, rho_units, count, rho, rho_min, rho_max, o)
WHERE o <= 2;
SELECT rows_written FROM dp_synthesize('disc_learned', epsilon => 1000, target => 'disc_learned_syn');
-- the learned shape's mass in the piece holding 90: the heavy person's rows bounded at k
SELECT round(sum(s[3 * i + 3])) BETWEEN 2 AND 4 AS bounded_at_learned_k
FROM (SELECT shape AS s FROM dpsynth.domains WHERE relid = 'disc_learned'::regclass) d,
	 generate_series(0, cardinality(s) / 3 - 1) i
WHERE s[3 * i + 1] <= 90 AND s[3 * i + 2] >= 90;
-- the ledger (before k is learned): the discovery's variance per unit of squared sensitivity;
-- the model: the variance drawn, at the learned k
SELECT l.details->'discovery_sigma2' AS ledger_sigma2,
	   round(((l.details->>'discovery_sigma2_per_sensitivity2')::float8 * 2
			  * (l.details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS per_sensitivity2,
	   jsonb_array_length(m->'rows_per_unit') AS k,
	   round(((m->>'rows_per_unit_discovery_sigma2')::float8 * 2
			  * (l.details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS k_squared
FROM dp_models dm, dpsynth.ledger l, LATERAL (SELECT dp_model_json(dm.model_id)::jsonb AS m) x
WHERE dm.table_name = 'disc_learned'::regclass AND l.id = dm.ledger_id;
-- the schedule: the histogram released first (its 32 cells), then discovery, then the method
SELECT string_agg(r->>'release', ', ' ORDER BY o) FILTER (WHERE o <= 2) AS first_releases,
	   min((r->>'draws')::int) FILTER (WHERE r->>'release' = 'rows per unit') AS histogram_draws
FROM dp_models dm, LATERAL jsonb_array_elements(dp_model_json(dm.model_id)::jsonb->'privacy'->'releases') WITH ORDINALITY AS e(r, o)
WHERE dm.table_name = 'disc_learned'::regclass;
-- dp_marginal too: k learned in discovery's scan, the bins counted at it
CREATE TABLE disc_learned_m AS SELECT * FROM disc_learned;
SELECT dp_protect('disc_learned_m', epsilon => 100000);
SELECT dp_privacy_unit('disc_learned_m', 'person', max_rows_per_unit => NULL);
SELECT dp_declare('disc_learned_m', 'x', lower => 0, upper => 100);
-- 900 + 300 + 3 = 1203 at k = 3 (1230 at the ceiling)
SELECT sum(noisy_count) BETWEEN 1193 AND 1213 AS bounded_at_3 FROM dp_marginal('disc_learned_m', ARRAY['x'], epsilon => 1000);
SELECT round(sum(s[3 * i + 3])) BETWEEN 2 AND 4 AS bounded_at_learned_k
FROM (SELECT shape AS s FROM dpsynth.domains WHERE relid = 'disc_learned_m'::regclass) d,
	 generate_series(0, cardinality(s) / 3 - 1) i
WHERE s[3 * i + 1] <= 90 AND s[3 * i + 2] >= 90;
SELECT details->'discovery_sigma2' AS ledger_sigma2,
	   round(((details->>'discovery_sigma2_per_sensitivity2')::float8 * 2
			  * (details->>'rho_units_per_discovery')::float8 * 1e-12)::numeric, 6) AS per_sensitivity2
FROM dpsynth.ledger WHERE relid = 'disc_learned_m'::regclass;
