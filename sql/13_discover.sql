-- dp_discover: a table with nothing declared learns every domain once, as a charged release of
-- its own, with the whole call's rho (issue 10, "Tables with nothing declared"); later releases
-- reuse the domains at no cost.
\i test/regress_helpers.sql
CREATE ROLE regress_disc_analyst IN ROLE dpsynth_analyst;
CREATE TABLE nd (id serial, token uuid, city text NOT NULL, town text, age integer, score float8,
				 secret text);
-- city and town: 40 values of 200 rows each
INSERT INTO nd (token, city, town, age, score, secret)
SELECT gen_random_uuid(), 'c' || (i % 40), 't' || (i % 40), 20 + i % 50, (i % 1000) / 10.0, 's' || i
FROM generate_series(1, 8000) i;
SELECT dp_protect('nd', epsilon => 10, selection_delta => 1e-5);
SELECT dp_column_policy('nd', 'secret', treatment => 'exclude');
SELECT rho_spent AS spent_before FROM dpsynth.budgets WHERE relid = 'nd'::regclass \gset
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset

-- A release that discovers spends a tenth of its rho on it: at epsilon 0.3 hardly any of city's
-- 40 values survive (the selection threshold is about 340 rows, 6 sigma of its noise).
SET ROLE regress_disc_analyst;
SELECT count(*) - 1 < 10 AS few_city_values_kept_by_a_release
FROM dp_marginal('nd', ARRAY['city'], epsilon => 0.3);
RESET ROLE;
SELECT dp_undeclare('nd', 'city');

-- dp_discover at the same epsilon puts all of it into discovery (threshold about 120 rows):
-- every value of city is kept (the "other" cell is the 41st).
SET ROLE regress_disc_analyst;
SELECT column_name, kind, cells FROM dp_discover('nd', epsilon => 0.3, columns => ARRAY['city']);
-- without columns: every undeclared column that can be discovered (not the serial, the uuid or
-- the excluded column)
SELECT column_name, kind, cells > 1 AS learned FROM dp_discover('nd', epsilon => 0.5) ORDER BY 1;
RESET ROLE;
SELECT l.function, l.columns, l.status, (l.details->>'discovered_columns')::int AS discovered,
	   l.rho <= dpsynth._units_rho(dpsynth._rho_units(l.epsilon, 1e-6)) AS within_epsilon
FROM dpsynth.ledger l WHERE l.function = 'dp_discover' ORDER BY l.id;
SELECT rho_spent - :spent_before = (SELECT sum(rho) FROM dpsynth.ledger WHERE id > :ledger_before) AS spent_is_ledger_sum
FROM dpsynth.budgets WHERE relid = 'nd'::regclass;
SELECT column_name, source, (SELECT function FROM dpsynth.ledger WHERE id = ledger_id) AS paid_by
FROM dp_domains WHERE table_name = 'nd'::regclass ORDER BY 1;
-- Numeric bounds on a range of more than 32 values (age 20..69, score 0..99.9) get quantile bins
-- and their shape from the same noisy histogram (post-processing, nothing more charged), as
-- declared bounds with the default binning 'auto' get them in a release.
SELECT a.attname AS column_name, d.kind, cardinality(d.edges) BETWEEN 3 AND 18 AS quantile_bins,
	   d.shape IS NOT NULL AS has_shape
FROM dpsynth.domains d JOIN pg_attribute a ON a.attrelid = d.relid AND a.attnum = d.attnum
WHERE d.relid = 'nd'::regclass AND a.attname IN ('age', 'score') ORDER BY 1;

-- Later calls reuse the domains: nothing left to discover, nothing charged; a synthesis discovers
-- nothing.
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SET ROLE regress_disc_analyst;
SELECT * FROM dp_discover('nd', epsilon => 0.5);
RESET ROLE;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
SELECT rows_written > 0 AS wrote FROM dp_synthesize('nd', epsilon => 1, target => 'nd_copy');
SELECT (details->>'discovered_columns')::int AS discovered_by_synthesis FROM dpsynth.ledger
WHERE function = 'dp_synthesize' ORDER BY id DESC LIMIT 1;

-- Named columns; errors before any charge.
SELECT dp_undeclare('nd', 'age');
SELECT column_name, kind FROM dp_discover('nd', epsilon => 0.2, columns => ARRAY['age']);
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT try_sql($$SELECT * FROM dp_discover('nd', epsilon => 0.2, columns => ARRAY['secret'])$$) AS excluded;
SELECT try_sql($$SELECT * FROM dp_discover('nd', epsilon => 0.2, columns => ARRAY['nope'])$$) AS missing;
SELECT try_sql($$SELECT * FROM dp_discover('nd', epsilon => -1)$$) AS bad_epsilon;
SELECT try_sql($$SELECT * FROM dp_discover(NULL, epsilon => 1)$$) AS null_table;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
SET ROLE regress_disc_analyst;
SELECT try_sql($$SELECT * FROM dp_discover('nd', epsilon => 1000)$$) AS over_budget_or_nothing_to_do;
RESET ROLE;

DROP TABLE nd, nd_copy;
DROP ROLE regress_disc_analyst;

-- Values inside learned bins follow the released histogram that placed the edges (its noisy
-- counts from the first to the last significant cell of the public grid, stored as the domain's
-- shape): ages 18..60 declared in [0, 100] give (almost) no synthetic age below 18 (the grid
-- cell [18,19]) or above 63 (the cell [60,63]), where a uniform draw inside the end bins gives
-- ages 0-17 and 64-100 to about a tenth of the rows.  (A noise cell of the grid may keep a
-- count of 1 or 2 at this epsilon: hence the 1% slack.)
CREATE TABLE ages (age int NOT NULL, g text NOT NULL);
INSERT INTO ages SELECT 18 + (i * 7) % 43, CASE WHEN i % 3 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 4000) i;
SELECT dp_protect('ages', epsilon => 1000);
SELECT dp_declare('ages', 'age', lower => 0, upper => 100);
SELECT dp_declare('ages', 'g', categories => ARRAY['a', 'b']);
SELECT model_id AS ages_model FROM dp_synthesize('ages', epsilon => 50, target => 'ages_copy') \gset
SELECT count(*) FILTER (WHERE age < 18) < 0.01 * count(*) AS hardly_below_the_data,
	   count(*) FILTER (WHERE age > 63) < 0.01 * count(*) AS hardly_beyond_its_cell,
	   count(DISTINCT age) >= 40 AS spread_over_the_data FROM ages_copy;
SELECT kind, source, cardinality(shape) % 3 = 0 AND cardinality(shape) >= 9 AS shape_stored
FROM dpsynth.domains WHERE relid = 'ages'::regclass AND attnum = 1;
-- the model keeps it: dp_sample draws the same way
SELECT jsonb_array_length(c->'domain'->'shape') % 3 = 0 AS model_has_shape
FROM jsonb_array_elements(dp_model_json(:ages_model)->'columns') c WHERE c->>'name' = 'age';
SELECT rows_written > 0 AS sampled FROM dp_sample(:ages_model, seed => 3, target => 'ages_sample');
SELECT count(*) FILTER (WHERE age < 18 OR age > 63) < 0.01 * count(*) AS sample_inside FROM ages_sample;
-- a new declaration forgets the learned edges and their shape
SELECT dp_declare('ages', 'age', lower => 0, upper => 100);
SELECT kind, edges IS NULL AS no_edges, shape IS NULL AS no_shape FROM dpsynth.domains WHERE relid = 'ages'::regclass AND attnum = 1;
DROP TABLE ages, ages_copy, ages_sample;

-- Timestamps (microseconds since 2000) learn quantile bins and a shape too, and the model
-- samples from them inside the declared bounds.
CREATE TABLE stamps (at timestamptz NOT NULL, k text NOT NULL);
INSERT INTO stamps SELECT timestamptz '2020-01-01 00:00:00+00' + i * interval '37 minutes', CASE WHEN i % 3 = 0 THEN 'x' ELSE 'y' END
FROM generate_series(1, 20000) i;
SELECT dp_protect('stamps', epsilon => 1000);
SELECT dp_declare('stamps', 'at', lower => timestamptz '2019-06-01 00:00:00+00', upper => timestamptz '2022-06-01 00:00:00+00');
SELECT dp_declare('stamps', 'k', categories => ARRAY['x', 'y']);
SELECT model_id AS stamps_model FROM dp_synthesize('stamps', epsilon => 5, target => 'stamps_copy') \gset
SELECT kind, cardinality(shape) % 3 = 0 AND cardinality(shape) >= 3 AS shape_stored
FROM dpsynth.domains WHERE relid = 'stamps'::regclass AND attnum = 1;
SELECT rows_written > 0 AS sampled FROM dp_sample(:stamps_model, seed => 1, target => 'stamps_sample');
SELECT min(at) >= timestamptz '2019-06-01 00:00:00+00' AND max(at) <= timestamptz '2022-06-01 00:00:00+00' AS inside_bounds
FROM stamps_sample;
DROP TABLE stamps, stamps_copy, stamps_sample;

-- A budget with a large epsilon leaves text discovery no delta (selection_delta / e^epsilon, which
-- underflows a double from about epsilon 680 on): the clear refusal, never a cast error, and the
-- same at 800 as at 1000.  Numbers are still discovered.
CREATE TABLE big_budget (t text, n int);
INSERT INTO big_budget SELECT 'v' || i % 3, i FROM generate_series(1, 500) i;
SELECT dp_protect('big_budget', epsilon => 800, selection_delta => 1e-6);
SELECT dpsynth._selection_share('big_budget'::regclass) AS share_at_800;
SELECT try_sql($$SELECT * FROM dp_discover('big_budget', epsilon => 1)$$) AS text_at_800;
SELECT dp_protect('big_budget', epsilon => 1000, selection_delta => 1e-6);
SELECT try_sql($$SELECT * FROM dp_discover('big_budget', epsilon => 1)$$) AS text_at_1000;
SELECT dp_declare('big_budget', 't', categories => ARRAY['v0', 'v1', 'v2']);
SELECT column_name, kind FROM dp_discover('big_budget', epsilon => 1);
DROP TABLE big_budget;
