-- Discovery over the whole range of every type (issue 36, finding 3): whatever values a column
-- holds, the bounds released after the charge are stored as a valid domain (clamped to the
-- type's values and to the catalog's exact range, never collapsed, bins that load), so a call
-- is charged once and a retry does not pay for discovery again.  Noisy values are not printed.
\i test/regress_helpers.sql
CREATE ROLE regress_ext_analyst IN ROLE dpsynth_analyst;

-- The issue's reproduction: nanosecond timestamps as bigint, all above 2^53.
CREATE TABLE ns (t_ns bigint NOT NULL);
INSERT INTO ns SELECT 1700000000000000000 + i::bigint * 1000000007 FROM generate_series(1, 3000) i;
SELECT dp_protect('ns', epsilon => 10);
SET ROLE regress_ext_analyst;
SELECT try_sql($$SELECT count(*) FROM dp_marginal('ns', ARRAY['t_ns'], 0.2)$$) AS first_call;
SELECT try_sql($$SELECT count(*) FROM dp_marginal('ns', ARRAY['t_ns'], 0.2)$$) AS retry;
RESET ROLE;
SELECT l.status, (l.details->>'discovered_columns')::int AS discovered
FROM dpsynth.ledger l WHERE l.relid = 'ns'::regclass ORDER BY l.id;
SELECT d.kind, d.lower < d.upper AS ordered, d.bins BETWEEN 1 AND 65535 AS bins_ok,
	   d.ledger_id = (SELECT min(id) FROM dpsynth.ledger WHERE relid = 'ns'::regclass) AS paid_by_first_call
FROM dpsynth.domains d WHERE d.relid = 'ns'::regclass;
SELECT b.rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 'ns'::regclass) AS spent_is_ledger_sum
FROM dpsynth.budgets b WHERE b.relid = 'ns'::regclass;

-- Every type discovery learns, at its extremes.
CREATE TABLE ext (
	big_hi bigint, big_lo bigint, i2 smallint,
	num_huge numeric, num_tiny numeric, num_neg numeric, num_special numeric,
	f8_inf float8, f8_max float8, f8_den float8, f4_max real,
	ts_inf timestamp, ts_far timestamp, tstz_far timestamptz,
	d_lo date, d_hi date, d_inf date);
INSERT INTO ext
SELECT 9223372036854775807 - i, -9223372036854775808 + i, CASE WHEN i % 2 = 0 THEN 32767 ELSE -32768 END,
	   1e300 * i, 1e-300 * i, -(10::numeric ^ 400) * i,
	   (ARRAY['Infinity', '-Infinity', 'NaN'])[1 + i % 3]::numeric,
	   (ARRAY['Infinity', '-Infinity', 'NaN'])[1 + i % 3]::float8, 1.7976931348623157e308 - i,
	   5e-324 * (i % 3), 3.4e38::real,
	   CASE WHEN i % 2 = 0 THEN 'infinity'::timestamp ELSE '-infinity' END,
	   '294276-12-31 23:59:59'::timestamp - i * interval '1 second',
	   '294276-12-30 23:59:59+00'::timestamptz - i * interval '1 second',
	   '4713-01-01 BC'::date + i, '5874897-12-31'::date - i,
	   CASE WHEN i % 2 = 0 THEN 'infinity'::date ELSE '-infinity' END
FROM generate_series(1, 3000) i;
CREATE TABLE ext2 AS SELECT * FROM ext;
SELECT dp_protect('ext', epsilon => 1000);
SELECT dp_protect('ext2', epsilon => 1000);
CREATE TABLE ext_cols AS
SELECT a.attnum, a.attname::text AS col FROM pg_attribute a
WHERE a.attrelid = 'ext'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
GRANT SELECT ON ext_cols TO regress_ext_analyst;

-- A release that discovers each column (equal-width bins), then the same release again; one
-- top-level statement per call (each charge commits on its own).
SET ROLE regress_ext_analyst;
SELECT format('SELECT %L AS col, try_sql(%L) AS first_call', col,
			  format('SELECT count(*) FROM dp_marginal(%L, ARRAY[%L], 1)', 'ext', col))
FROM ext_cols ORDER BY attnum \gexec
SELECT format('SELECT %L AS col, try_sql(%L) AS retry', col,
			  format('SELECT count(*) FROM dp_marginal(%L, ARRAY[%L], 1)', 'ext', col))
FROM ext_cols ORDER BY attnum \gexec
RESET ROLE;
SELECT c.col, d.kind, d.lower < d.upper AS ordered, d.bins BETWEEN 1 AND 65535 AS bins_ok,
	   l.function, l.status, (l.details->>'discovered_columns')::int AS discovered
FROM ext_cols c
LEFT JOIN dpsynth.domains d ON d.relid = 'ext'::regclass AND d.attnum = c.attnum
LEFT JOIN dpsynth.ledger l ON l.id = d.ledger_id
ORDER BY c.col;
-- one charge per call (the retries discover nothing), and the budget is the ledger's sum
SELECT count(*) AS calls, count(*) FILTER (WHERE status = 'completed') AS completed,
	   count(*) FILTER (WHERE (details->>'discovered_columns')::int = 1) AS discovering
FROM dpsynth.ledger WHERE relid = 'ext'::regclass;
SELECT b.rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 'ext'::regclass) AS spent_is_ledger_sum
FROM dpsynth.budgets b WHERE b.relid = 'ext'::regclass;

-- dp_discover learns all of them in one release (quantile edges where a range is wide), and a
-- synthesis then uses the stored domains without discovering anything.
SET ROLE regress_ext_analyst;
SELECT try_sql($$SELECT count(*) FROM dp_discover('ext2', epsilon => 5)$$) AS discover_all;
SELECT count(*) AS nothing_left FROM dp_discover('ext2', epsilon => 5);
RESET ROLE;
SELECT count(*) = (SELECT count(*) FROM ext_cols) AS every_column_has_a_domain,
	   bool_and(CASE kind WHEN 'bins' THEN lower < upper AND bins BETWEEN 1 AND 65535
			    ELSE cardinality(edges) >= 2 END) AS all_valid
FROM dpsynth.domains WHERE relid = 'ext2'::regclass;
SELECT try_sql($$SELECT rows_written FROM dp_synthesize('ext2', epsilon => 5, target => 'ext2_copy')$$) AS synthesis;
SELECT count(*) > 0 AS copied_rows FROM ext2_copy;
SELECT function, status, (details->>'discovered_columns')::int AS discovered
FROM dpsynth.ledger WHERE relid = 'ext2'::regclass ORDER BY id;

DROP TABLE ext_cols, ext2_copy;
DROP ROLE regress_ext_analyst;
