-- Learning the rows-per-unit bound at the ends of epsilon (issue 39).  A discovery per unit with k
-- still to learn is refused before the charge unless its noise, sigma^2 k^2 with sigma^2 =
-- 1 / (2 rho_each), can be drawn at every k from 1 to the ceiling 32 (dp_unit_noise_drawable,
-- test/unit/test_units.c).  No call reaches that refusal: a call is charged at most 9e18 units of
-- 1e-12 (dp_rho_units), a column's discovery gets a tenth of them at most and one unit at least,
-- and the sampler draws sigma^2 from 2^-30 to 2^60.  These calls, at the largest epsilon a call can
-- be charged and at a tiny one, each the first on its table (so its bins are learned, per unit),
-- must be released and charged.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dpsynth;
CREATE TABLE extreme_hi (person int4 NOT NULL, x int4 NOT NULL);
INSERT INTO extreme_hi SELECT i % 300, i % 50 FROM generate_series(1, 1000) i;
CREATE TABLE extreme_lo AS SELECT * FROM extreme_hi;
CREATE TABLE extreme_syn AS SELECT * FROM extreme_hi;
SELECT dp_protect(t, epsilon => 9e6), dp_privacy_unit(t, 'person', max_rows_per_unit => NULL),
	   dp_declare(t, 'x', lower => 0, upper => 100)
FROM unnest(ARRAY['extreme_hi', 'extreme_lo', 'extreme_syn']::regclass[]) t;

-- the largest: rho about 8.97e6, a tenth of it for the discovery of x
SELECT count(*) > 0 AS released FROM dp_marginal('extreme_hi', ARRAY['x'], epsilon => 8.96e6);
-- a tiny one: a few units of 1e-12 for the discovery (the plan refuses below, "too small to
-- discover", before the charge)
SELECT count(*) > 0 AS released FROM dp_marginal('extreme_lo', ARRAY['x'], epsilon => 1e-5);
-- dp_synthesize at the largest: the histogram and the bins learned, the method run
SELECT rows_written > 0 AS written FROM dp_synthesize('extreme_syn', epsilon => 8.96e6, target => 'extreme_synthetic');
SELECT max(n) <= 32 AS at_most_the_ceiling FROM (SELECT count(*) AS n FROM extreme_synthetic GROUP BY person) s;
-- the ledger: each call charged and its bins learned per unit, the discovery's variance per unit
-- of squared sensitivity drawable at k = 1 and at k = 32
SELECT relid::regclass AS tbl,
	   (details->>'rho_units_per_discovery')::int8 > 8e17 AS largest,
	   (details->>'rho_units_per_discovery')::int8 < 10 AS a_few_units,
	   (details->>'discovery_sigma2_per_sensitivity2')::float8 >= 2 ^ -30 AS drawable_at_1,
	   (details->>'discovery_sigma2_per_sensitivity2')::float8 * 32 * 32 <= 2 ^ 60 AS drawable_at_32,
	   details->'privacy_unit'->'max_rows_per_unit' AS k
FROM dpsynth.ledger WHERE relid IN ('extreme_hi'::regclass, 'extreme_lo'::regclass, 'extreme_syn'::regclass)
ORDER BY id;

-- k learned weighs a bound's noise against the rows it drops (issue 39 follow-up): 20,000
-- persons of 1 row and 5,000 of 2, over 1,001 cells (1,000 categories and the one outside them).
-- The histogram's 0.99-quantile is k = 2 at any epsilon (1 row covers 80% of the persons).
-- k = 1 drops 5,000 of 30,000 rows (a total variation of at most 1/6); it is the better bound once
-- the marginal's expected noise at sensitivity 1, W = sqrt(2 / pi) times 1,001 cells times sd,
-- passes about 12,500 (sd about 15.6; half of W is the noise's total variation): at epsilon 0.2
-- the sd is about 21, so k = 1 and the counts sum to about 25,000 (noise sd about 680); at
-- epsilon 8 it is about 0.7, so k = 2 and they sum to about 30,000.  The 0.99-quantile alone
-- gives k = 2 at both.
CREATE TABLE weigh_learned (person int4 NOT NULL, g text NOT NULL);
INSERT INTO weigh_learned SELECT i, (i % 1000)::text FROM generate_series(1, 20000) i;
INSERT INTO weigh_learned SELECT 100000 + i, ((i + j) % 1000)::text FROM generate_series(1, 5000) i, generate_series(1, 2) j;
SELECT dp_protect('weigh_learned', epsilon => 100000);
SELECT dp_declare('weigh_learned', 'g', categories => (SELECT array_agg(i::text) FROM generate_series(0, 999) i));
SELECT dp_privacy_unit('weigh_learned', 'person', max_rows_per_unit => NULL);
SELECT sum(noisy_count) BETWEEN 22500 AND 27500 AS k_1_at_epsilon_02
FROM dp_marginal('weigh_learned', ARRAY['g'], epsilon => 0.2);
SELECT sum(noisy_count) BETWEEN 29000 AND 31000 AS k_2_at_epsilon_8
FROM dp_marginal('weigh_learned', ARRAY['g'], epsilon => 8);
-- the ledger names the rule and W: sqrt(2 / pi) times the 1,001 cells' sd at sensitivity 1 (the
-- 1,000 categories and the cell of values outside them)
SELECT details->'privacy_unit'->>'learned_rule' AS rule,
	   abs((details->'privacy_unit'->>'learned_noise_l1')::float8
		   / (sqrt(2 / pi()) * 1001 * sqrt((details->>'sigma2_per_sensitivity2')::float8)) - 1) < 1e-9 AS w_from_the_cells
FROM dpsynth.ledger WHERE relid = 'weigh_learned'::regclass ORDER BY id;

-- k learned by dp_synthesize weighs each k at the sensitivity of the synthesis's noise, k, even
-- with a cell bound declared: the method's noise ignores the cell bound (its ledger's
-- max_rows_per_cell is null), so weighing at the marginal's sqrt(floor(k/c) c^2 + (k mod c)^2)
-- understates the noise of a larger k.  20,000 persons of 1 row and 5,000 of 4, over 1,001 cells,
-- cell bound 1: the 0.99-quantile is k = 4; k = 1 drops 15,000 of 40,000 rows.  At sensitivity k,
-- k = 1 is the better bound once W (the one-way marginal's expected noise at sensitivity 1, about
-- 17,300 at epsilon 0.4) passes about 12,500; at sensitivity sqrt(k), the cell bound's, only past
-- about 75,000.  So k = 1: every synthetic person has one row, about 25,000 of them (k = 4 writes
-- about 40,000, some persons with 4 rows).
CREATE TABLE weigh_synth (person int4 NOT NULL, g text NOT NULL);
INSERT INTO weigh_synth SELECT i, (i % 1000)::text FROM generate_series(1, 20000) i;
INSERT INTO weigh_synth SELECT 100000 + i, ((i + j) % 1000)::text FROM generate_series(1, 5000) i, generate_series(1, 4) j;
SELECT dp_protect('weigh_synth', epsilon => 100000);
SELECT dp_declare('weigh_synth', 'g', categories => (SELECT array_agg(i::text) FROM generate_series(0, 999) i));
SELECT dp_privacy_unit('weigh_synth', 'person', max_rows_per_unit => NULL, max_rows_per_cell => 1);
SELECT rows_written BETWEEN 22500 AND 27500 AS k_1_rows
FROM dp_synthesize('weigh_synth', epsilon => 0.4, target => 'weigh_synthetic');
SELECT max(n) AS rows_per_person FROM (SELECT count(*) AS n FROM weigh_synthetic GROUP BY person) s;
-- the ledger: the rule, W in the range above, and no cell bound in the synthesis's noise
SELECT details->'privacy_unit'->>'learned_rule' AS rule,
	   (details->'privacy_unit'->>'learned_noise_l1')::float8 BETWEEN 12500 AND 75000 AS w_between_the_thresholds,
	   details->'privacy_unit'->'max_rows_per_cell' AS cell
FROM dpsynth.ledger WHERE relid = 'weigh_synth'::regclass ORDER BY id;
