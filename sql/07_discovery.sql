-- DP discovery of undeclared domains: charged, stored, reused, and blind to rare values.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_analyst IN ROLE dpsynth_analyst;

-- A free-text column: 5,000 unique notes and 5 common values (1,000 rows each).
CREATE TABLE notes (body text, n integer NOT NULL);
INSERT INTO notes SELECT 'unique note ' || i, 100 + i % 101 FROM generate_series(1, 5000) i;
INSERT INTO notes SELECT (ARRAY['yes', 'no', 'maybe', 'later', 'never'])[1 + i % 5], 100 + i % 101
FROM generate_series(1, 5000) i;
-- Two more tables with the same numeric column, for the bounds' check below.
CREATE TABLE notes_b (n integer NOT NULL);
INSERT INTO notes_b SELECT n FROM notes;
CREATE TABLE notes_c (n integer NOT NULL);
INSERT INTO notes_c SELECT n FROM notes;
-- Two tables that differ in one row holding a value nobody else has.
CREATE TABLE twin_a (city text);
INSERT INTO twin_a SELECT (ARRAY['Paris', 'Lyon', 'Nice'])[1 + i % 3] FROM generate_series(1, 3000) i;
CREATE TABLE twin_b (city text);
INSERT INTO twin_b SELECT * FROM twin_a;
INSERT INTO twin_b VALUES ('Saint-Véran');

-- The owner sets aside a selection delta for discovering text values.
SELECT dp_protect('notes', epsilon => 20, selection_delta => 1e-9);
SELECT dp_protect('notes_b', epsilon => 20);
SELECT dp_protect('notes_c', epsilon => 20);
SELECT dp_protect('twin_a', epsilon => 20, selection_delta => 1e-9);
SELECT dp_protect('twin_b', epsilon => 20, selection_delta => 1e-9);

SET ROLE regress_dp_analyst;
-- Text: partition selection.  With a selection delta of 1e-9 for the column, each of the 5,000
-- unique notes is released with probability <= 1e-9, so all of them stay hidden except with
-- probability <= 5e-6 (the false-alarm rate of this check); the 5 common values (count 1,000,
-- threshold about 26 at sigma 4) are all released except with probability < 1e-100.
SELECT count(*) AS cells, count(*) FILTER (WHERE cell[1] LIKE 'unique%') AS unique_notes_released,
	   string_agg(cell[1], ',' ORDER BY cell[1]) AS released
FROM dp_marginal('notes', ARRAY['body'], epsilon => 5);
-- Numbers: DP bounds from a noisy log-scale histogram (true range 100..200), then 32 bins.
SELECT count(*) AS cells FROM dp_marginal('notes', ARRAY['n'], epsilon => 5);
SELECT count(*) AS cells FROM dp_marginal('notes_b', ARRAY['n'], epsilon => 5);
SELECT count(*) AS cells FROM dp_marginal('notes_c', ARRAY['n'], epsilon => 5);
RESET ROLE;
SELECT column_name, kind, source, ledger_id IS NOT NULL AS paid, cardinality(categories) AS categories,
	   bins
FROM dp_domains WHERE table_name = 'notes'::regclass ORDER BY 1;
-- The discovered bounds lie near the true 100 and 200.  Pure noise makes a block of a stage's
-- histogram significant, and so moves a bound outward, with probability about 0.001 per stage
-- (dp_discovery.h); two stages a discovery.  The check asks it of at least two of three
-- independent discoveries of the same column, so it fails by chance with probability about
-- 3 x 0.002^2, about 1e-5, while bounds that a change moved fail it in every discovery.
SELECT count(*) AS discoveries, count(*) FILTER (WHERE lower BETWEEN 90 AND 110) >= 2 AS lower_ok,
	   count(*) FILTER (WHERE upper BETWEEN 190 AND 210) >= 2 AS upper_ok
FROM dp_domains WHERE table_name IN ('notes'::regclass, 'notes_b'::regclass, 'notes_c'::regclass)
	  AND column_name = 'n' AND source = 'dp';
-- The discovery was charged within the call (its rho and its delta), and is in the ledger.
SELECT columns, details->>'discovered_columns' AS discovered, delta_add > 0 AS paid_delta,
	   rho = dpsynth._units_rho(dpsynth._rho_units(5, 1e-6)) AS rho_is_the_call
FROM dp_ledger WHERE table_name = 'notes'::regclass ORDER BY id;
SELECT delta_spent > 0 AND delta_spent <= selection_delta AS delta_within, delta_total > delta AS total_reported
FROM dp_budget WHERE table_name = 'notes'::regclass;

-- Reused without paying again: no second discovery.
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells FROM dp_marginal('notes', ARRAY['body', 'n'], epsilon => 1);
RESET ROLE;
SELECT details->>'discovered_columns' AS discovered, delta_add FROM dp_ledger
WHERE table_name = 'notes'::regclass ORDER BY id DESC LIMIT 1;

-- Neighbouring tables (one extra row with a unique value) release the same domain, except with
-- probability <= 1e-9 (the selection delta bounds the chance that 'Saint-Véran' is released).
SET ROLE regress_dp_analyst;
SELECT count(*) FROM dp_marginal('twin_a', ARRAY['city'], epsilon => 5);
SELECT count(*) FROM dp_marginal('twin_b', ARRAY['city'], epsilon => 5);
RESET ROLE;
SELECT a.categories AS twin_a, b.categories AS twin_b, a.categories = b.categories AS identical
FROM dp_domains a, dp_domains b WHERE a.table_name = 'twin_a'::regclass AND b.table_name = 'twin_b'::regclass;

-- The owner can inspect and override a discovered domain.
SELECT dp_declare('notes', 'n', lower => 0, upper => 300, bins => 3);
SELECT column_name, source, ledger_id, lower, upper, bins FROM dp_domains
WHERE table_name = 'notes'::regclass AND column_name = 'n';

-- Quantile bins learned by DP inside declared bounds; a spike (90% zeros) gets a bin of its own.
CREATE TABLE gains (gain integer NOT NULL);
INSERT INTO gains SELECT CASE WHEN i % 10 = 0 THEN (i * 37) % 20000 + 1 ELSE 0 END FROM generate_series(1, 20000) i;
SELECT dp_protect('gains', epsilon => 20);
SELECT dp_declare('gains', 'gain', lower => 0, upper => 50000, bins => 6, binning => 'quantile');
SET ROLE regress_dp_analyst;
SELECT count(*) <= 6 AS at_most_6_bins, (array_agg(cell[1] ORDER BY ord))[1] AS first_bin,
	   bool_and(noisy_count > 200) AS every_bin_holds_mass
FROM dp_marginal('gains', ARRAY['gain'], epsilon => 5) WITH ORDINALITY AS m(cell, noisy_count, ord);
RESET ROLE;
SELECT kind, binning, source, ledger_id IS NOT NULL AS paid, edges[1] = 0 AND edges[2] = 1 AS spike_bin,
	   edges[cardinality(edges)] = 50001 AS ends_past_upper, lower, upper, bins
FROM dp_domains WHERE table_name = 'gains'::regclass;
DROP TABLE gains;

-- The default binning: bounds without bins or binning, on an integer range of more than 32
-- values or on a real or date column, give 'auto'.  Where discovery is allowed it learns
-- quantile bins (at most 16, spikes on top) like 'quantile', inside the call that first needs
-- them, paid and stored with that call's ledger row; where it is forbidden it uses the
-- declaration's 32 equal-width bins, without error.  Explicit bins, or a range of at most 32
-- integers (one bin per value), keep equal widths.
CREATE TABLE amounts (gain integer NOT NULL, ratio float8, day date NOT NULL, small integer NOT NULL,
					  pinned integer NOT NULL);
INSERT INTO amounts SELECT CASE WHEN i % 10 = 0 THEN (i * 37) % 20000 + 1 ELSE 0 END, (i % 1000) / 1000.0,
	   date '2020-01-01' + i % 700, i % 20, i % 500
FROM generate_series(1, 20000) i;
SELECT dp_protect('amounts', epsilon => 50);
SELECT dp_declare('amounts', 'gain', lower => 0, upper => 50000);
SELECT dp_declare('amounts', 'ratio', lower => 0, upper => 1);
SELECT dp_declare('amounts', 'day', lower => '2019-01-01'::date, upper => '2023-12-31'::date);
SELECT dp_declare('amounts', 'small', lower => 0, upper => 19, binning => 'auto');
SELECT dp_declare('amounts', '{"pinned": {"type": "integer", "lower": 0, "upper": 499, "bins": 10}}'::jsonb);
SELECT try_sql($$SELECT dp_declare('amounts', 'pinned', lower => 0, upper => 499, binning => 'bogus')$$) AS bad_binning;
SELECT column_name, kind, binning, bins, source FROM dp_domains
WHERE table_name = 'amounts'::regclass ORDER BY 1;
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells FROM dp_marginal('amounts', ARRAY['small', 'pinned'], epsilon => 1);
SELECT count(*) BETWEEN 2 AND 18 AS learned_gain_bins, (array_agg(cell[1] ORDER BY ord))[1] AS first_bin
FROM dp_marginal('amounts', ARRAY['gain'], epsilon => 5) WITH ORDINALITY AS m(cell, noisy_count, ord);
SELECT count(DISTINCT cell[1]) BETWEEN 2 AND 16 AS ratio_bins, count(DISTINCT cell[2]) BETWEEN 2 AND 16 AS day_bins,
	   count(*) FILTER (WHERE cell[1] IS NULL) > 0 AS ratio_null_cell
FROM dp_marginal('amounts', ARRAY['ratio', 'day'], epsilon => 5);
RESET ROLE;
SELECT column_name, kind, binning, source, ledger_id = (SELECT max(id) FROM dp_ledger l WHERE l.table_name = 'amounts'::regclass
													   AND l.columns @> ARRAY[d.column_name::text]) AS paid_by_its_call,
	   cardinality(edges) - 1 <= 16 + 2 AS at_most_16_bins_and_a_spike, bounds
FROM dp_domains d WHERE table_name = 'amounts'::regclass AND source = 'dp' ORDER BY 1;
SELECT columns, details->>'discovered_columns' AS discovered FROM dp_ledger
WHERE table_name = 'amounts'::regclass ORDER BY id;
-- Learned bins are reused for free.
SET ROLE regress_dp_analyst;
SELECT count(*) > 0 AS released FROM dp_marginal('amounts', ARRAY['gain', 'ratio'], epsilon => 1);
RESET ROLE;
SELECT details->>'discovered_columns' AS discovered FROM dp_ledger
WHERE table_name = 'amounts'::regclass ORDER BY id DESC LIMIT 1;
-- Discovery forbidden (table, then column): 'auto' falls back to equal widths, no error, nothing learned.
SELECT dp_declare('amounts', 'gain', lower => 0, upper => 50000);
SELECT dp_declare('amounts', 'ratio', lower => 0, upper => 1);
SELECT dp_protect('amounts', epsilon => 50, discovery => false);
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells, (array_agg(cell[1] ORDER BY ord))[1] AS first_bin
FROM dp_marginal('amounts', ARRAY['gain'], epsilon => 1) WITH ORDINALITY AS m(cell, noisy_count, ord);
RESET ROLE;
SELECT dp_protect('amounts', epsilon => 50, discovery => true);
SELECT dp_column_policy('amounts', 'ratio', discovery => false);
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells FROM dp_marginal('amounts', ARRAY['ratio'], epsilon => 1);
RESET ROLE;
SELECT column_name, kind, binning, bins, source, ledger_id FROM dp_domains
WHERE table_name = 'amounts'::regclass AND column_name IN ('gain', 'ratio') ORDER BY 1;
SELECT details->>'discovered_columns' AS discovered FROM dp_ledger
WHERE table_name = 'amounts'::regclass ORDER BY id DESC LIMIT 2;
DROP TABLE amounts;

-- 'auto' on an integer range of at most 128 values (bounds only): a first noisy histogram on the
-- log grid, then one noisy count per value in the cells it shows heavy enough; the bins follow,
-- down to one bin per value where every value's count is resolved, and a heap at 40 keeps a bin
-- of its own (dp_binning.h).  The same rows declared with 16 bins keep at most 16.
CREATE TABLE hours (h integer NOT NULL, g integer NOT NULL);
INSERT INTO hours SELECT i % 100, i % 100 FROM generate_series(1, 20000) i;
INSERT INTO hours SELECT 40, 40 FROM generate_series(1, 10000);
SELECT dp_protect('hours', epsilon => 50);
SELECT dp_declare('hours', 'h', lower => 0, upper => 99);
SELECT dp_declare('hours', 'g', lower => 0, upper => 99, bins => 16, binning => 'auto');
SET ROLE regress_dp_analyst;
SELECT count(*) AS cells FROM dp_marginal('hours', ARRAY['h'], epsilon => 5);
SELECT count(*) <= 17 AS at_most_16_bins FROM dp_marginal('hours', ARRAY['g'], epsilon => 5);
RESET ROLE;
SELECT column_name, kind, source, cardinality(edges) - 1 AS bins, 40 = ANY(edges) AND 41 = ANY(edges) AS own_bin_at_40
FROM dp_domains WHERE table_name = 'hours'::regclass ORDER BY column_name;
DROP TABLE hours;

-- Policies: a column (or the whole table) may forbid discovery; refused before reading.
ALTER TABLE notes ADD COLUMN tag text;
SELECT dp_column_policy('notes', 'tag', discovery => false);
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('notes', ARRAY['tag'], 1)$$) AS column_forbids;
RESET ROLE;
SELECT dp_column_policy('notes', 'tag');	-- back to the table's setting
SELECT dp_protect('notes', epsilon => 20, selection_delta => 1e-9, discovery => false);
SET ROLE regress_dp_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('notes', ARRAY['tag'], 1)$$) AS table_forbids;
RESET ROLE;
-- The selection delta can never fall below what was spent.
SELECT try_sql($$SELECT dp_protect('notes', epsilon => 20, selection_delta => 0)$$) AS lower_selection_delta;

DROP TABLE notes, notes_b, notes_c, twin_a, twin_b;
DROP OWNED BY regress_dp_analyst;
DROP ROLE regress_dp_analyst;
