-- Learning the rows-per-unit bound in dp_marginal and dp_discover (issue 39): where no cell of
-- the released rows-per-unit histogram stands above 6 sd of its noise (DP_UNIT_LEARN_TOPUP_Z),
-- the histogram is released a second time with 3 times its rho, taken from the marginal's
-- (dp_schedule_unit_topup) or from the discovered columns' (dpsynth_unit_discover_topup), and k
-- is learned from the precision-weighted mean of the two (docs/PRIVACY.md, "Learning the
-- rows-per-unit bound").  The charge is unchanged.
SET client_min_messages = warning;
-- 100 persons of 4 rows at epsilon 1: the histogram's sd is about 32, so cell 4 stands about
-- 3.1 sd high in the first release and passes the 3 sd shrink in about 55% of the calls (k 1
-- otherwise, but where a cell of noise alone passes); the mean of the two releases has sd 16,
-- where cell 4 passes in all but about 1 call in 1,600
CREATE TABLE topup_m (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_m SELECT i, CASE WHEN j % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 100) i, generate_series(1, 4) j;
SELECT dp_protect('topup_m', epsilon => 100000);
SELECT dp_declare('topup_m', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_m', 'person', max_rows_per_unit => NULL);
-- the same persons with a number column whose quantile bins are learned: k is learned in
-- discovery's scan, and the second release still comes from the marginal's units (the bins are
-- kept after the first call: a table of its own for each call)
DO $$ BEGIN
	FOR i IN 1..60 LOOP
		EXECUTE format('CREATE TABLE topup_md_%s (person int4 NOT NULL, x int4 NOT NULL)', i);
		EXECUTE format('INSERT INTO topup_md_%s SELECT i, (7 * i + j) %% 100 FROM generate_series(1, 100) i, generate_series(1, 4) j', i);
		PERFORM dp_protect(format('topup_md_%s', i)::regclass, epsilon => 100000);
		PERFORM dp_privacy_unit(format('topup_md_%s', i)::regclass, 'person', max_rows_per_unit => NULL);
		PERFORM dp_declare(format('topup_md_%s', i)::regclass, 'x', lower => 0, upper => 100);
	END LOOP;
END $$;
-- 3,000 persons of 1 row at epsilon 1: cell 1 stands about 90 sd high, no second release
CREATE TABLE topup_mbig (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_mbig SELECT i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 3000) i;
SELECT dp_protect('topup_mbig', epsilon => 100000);
SELECT dp_declare('topup_mbig', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_mbig', 'person', max_rows_per_unit => NULL);

CREATE TEMP TABLE topup_sums (t text, s int8);
DO $$ BEGIN
	FOR i IN 1..30 LOOP
		INSERT INTO topup_sums SELECT 'topup_m', sum(noisy_count) FROM dp_marginal('topup_m', ARRAY['g'], epsilon => 1);
	END LOOP;
	FOR i IN 1..60 LOOP
		INSERT INTO topup_sums SELECT 'topup_md', sum(noisy_count) FROM dp_marginal(format('topup_md_%s', i)::regclass, ARRAY['x'], epsilon => 1);
	END LOOP;
	FOR i IN 1..5 LOOP
		INSERT INTO topup_sums SELECT 'topup_mbig', sum(noisy_count) FROM dp_marginal('topup_mbig', ARRAY['g'], epsilon => 1);
	END LOOP;
END $$;

-- the counts sum to about 400 where k is 4 or more (noise sd about 40 at k = 4), about 100 where
-- k is 1: k of at least 3 in at least 27 of 30 calls (with the first release alone, in about 55%:
-- 27 or more of 30 with probability about 1e-5).  Where discovery learns k (topup_md), a sum over
-- 250 in 406 of 420 calls measured (0.967): at least 48 of 60 calls, which fails with probability
-- about 1e-7 at that rate (2e-4 at 0.93), and passes at the first release's rate above (0.55) with
-- probability about 5e-5
SELECT t, count(*) AS calls,
	   count(*) FILTER (WHERE s > 250) >= CASE t WHEN 'topup_m' THEN 27 ELSE 48 END AS k_of_4_nearly_always
FROM topup_sums WHERE t IN ('topup_m', 'topup_md') GROUP BY t ORDER BY t;
-- the big table: k 1, its 3,000 rows (noise sd about 8)
SELECT count(*) AS calls, bool_and(s BETWEEN 2900 AND 3100) AS k_1 FROM topup_sums WHERE t = 'topup_mbig';

-- the ledger, written before the charge: the second release's share, 3 times the first, and the
-- marginal's noise per unit of squared sensitivity where it is taken, from what it leaves (the
-- release's units: the charge less discovery's)
SELECT t, count(*) AS calls, bool_and(discovered = (t = 'topup_md')::int) AS discovery_in_topup_md,
	   bool_and(first = release / 50) AS share_is_1_50,
	   bool_and(topup = 3 * first) AS topup_is_3_times,
	   bool_and(abs(s2 * 2 * dpsynth._units_rho(release - first)::float8 - 1) < 1e-9) AS noise_from_the_rest,
	   bool_and(abs(s2_topped * 2 * dpsynth._units_rho(release - first - topup)::float8 - 1) < 1e-9) AS noise_from_what_the_topup_leaves
FROM (SELECT t, (details->>'discovered_columns')::int AS discovered,
			 (rho * 1e12)::int8 - (details->>'discovered_columns')::int * (details->>'rho_units_per_discovery')::int8 AS release,
			 (details->>'rho_units_rows_per_unit')::int8 AS first,
			 (details->>'rho_units_rows_per_unit_topup')::int8 AS topup,
			 (details->>'sigma2_per_sensitivity2')::float8 AS s2,
			 (details->>'sigma2_per_sensitivity2_topped_up')::float8 AS s2_topped
	  FROM (SELECT regexp_replace(relid::regclass::text, '_[0-9]+$', '') AS t, rho, details FROM dpsynth.ledger
			WHERE relid::regclass::text ~ '^topup_m(big|d_[0-9]+)?$') l) x
GROUP BY t ORDER BY t;

-- a declared k: no histogram, no second release, the ledger as before
CREATE TABLE topup_mdecl (person int4 NOT NULL, g text NOT NULL);
INSERT INTO topup_mdecl SELECT i, 'a' FROM generate_series(1, 10) i;
SELECT dp_protect('topup_mdecl', epsilon => 100000);
SELECT dp_declare('topup_mdecl', 'g', categories => ARRAY['a', 'b']);
SELECT dp_privacy_unit('topup_mdecl', 'person', max_rows_per_unit => 2);
SELECT count(*) AS cells FROM dp_marginal('topup_mdecl', ARRAY['g'], epsilon => 1);
SELECT details ? 'rho_units_rows_per_unit' AS has_share, details ? 'rho_units_rows_per_unit_topup' AS has_topup
FROM dpsynth.ledger WHERE relid = 'topup_mdecl'::regclass;

-- dp_discover: 100 persons of 4 rows, each with the values a, b, c and d, at epsilon 1 (the
-- histogram as dp_marginal's above); the values count the units holding them among their kept
-- rows: 100 each at k = 4, about 25 at k = 1, where the selection's threshold (about 32) keeps
-- few of them.  A table of its own for each call (the values found are kept)
DO $$ BEGIN
	FOR i IN 1..40 LOOP
		EXECUTE format('CREATE TABLE topup_dd_%s (person int4 NOT NULL, v text NOT NULL)', i);
		EXECUTE format('INSERT INTO topup_dd_%s SELECT i, chr(96 + j) FROM generate_series(1, 100) i, generate_series(1, 4) j', i);
		PERFORM dp_protect(format('topup_dd_%s', i)::regclass, epsilon => 10, selection_delta => 1e-6);
		PERFORM dp_privacy_unit(format('topup_dd_%s', i)::regclass, 'person', max_rows_per_unit => NULL);
	END LOOP;
END $$;
CREATE TEMP TABLE topup_found (i int, cells int);
DO $$ BEGIN
	FOR i IN 1..40 LOOP
		INSERT INTO topup_found SELECT i, d.cells FROM dp_discover(format('topup_dd_%s', i)::regclass, 1) d;
	END LOOP;
END $$;
-- the four values (and the cell of the others: 5 cells) in at least 30 of 40 calls: k of 4 but
-- where a cell of noise alone passes the shrink (about 4% of the calls: k then jumps to it, and
-- the threshold above 100); with the first release alone, in about half of them (25 and 18 of
-- 40 in two runs of 0.14.0's main; 30 or more with probability below 1%)
SELECT count(*) AS calls, count(*) FILTER (WHERE cells = 5) >= 30 AS four_values_nearly_always FROM topup_found;
-- the ledger: the second release's share, 3 times the first (one column: no rounding), from the
-- column's units, the charge unchanged (the histogram's first release and the column's units)
SELECT count(*) AS calls,
	   bool_and((details->>'rho_units_rows_per_unit_topup')::int8 = 3 * (details->>'rho_units_rows_per_unit')::int8) AS topup_is_3_times,
	   bool_and((details->>'rho_units_per_discovery_topped_up')::int8
				= (details->>'rho_units_per_discovery')::int8 - (details->>'rho_units_rows_per_unit_topup')::int8) AS from_the_column,
	   bool_and(abs((details->>'rho_units_per_discovery')::int8 + (details->>'rho_units_rows_per_unit')::int8 - rho * 1e12) < 2) AS charge_unchanged
FROM dpsynth.ledger WHERE relid::regclass::text ~ '^topup_dd_[0-9]+$';
