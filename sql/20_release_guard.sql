-- An error after the charge reaches the caller as dpsynth's generic error (src/release_guard.c):
-- the original goes to the server log only, the charge stays, and the SQLSTATE is kept only for
-- classes that carry no data (here 53400).  The trigger is real: dp_marginal's 100,000 result rows
-- spill from work_mem to a temporary file after the charge, which temp_file_limit forbids.
\i test/regress_helpers.sql
CREATE ROLE regress_guard_analyst IN ROLE dpsynth_analyst;
CREATE TABLE guard_t (x int NOT NULL, y int NOT NULL);
INSERT INTO guard_t SELECT i % 500, i % 200 FROM generate_series(1, 1000) i;
SELECT dp_protect('guard_t', epsilon => 100, discovery => false);
SELECT dp_declare('guard_t', 'x', lower => 0, upper => 499, bins => 500);
SELECT dp_declare('guard_t', 'y', lower => 0, upper => 199, bins => 200);

SET work_mem = '64kB';
SET temp_file_limit = 0;
SET ROLE regress_guard_analyst;
-- the generic error, with the ledger row (its id varies: masked)
SELECT regexp_replace(try_sql($$SELECT count(*) FROM dp_marginal('guard_t', ARRAY['x', 'y'], epsilon => 1)$$),
					  'ledger row [0-9]+', 'ledger row N');
DO $$
DECLARE d text;
BEGIN
	PERFORM count(*) FROM dp_marginal('guard_t', ARRAY['x', 'y'], epsilon => 1);
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RAISE NOTICE '%', regexp_replace(d, 'ledger row [0-9]+', 'ledger row N');
END $$;
RESET ROLE;
-- both calls were charged and released nothing: two 'charged' rows, spent == their sum
SELECT status, count(*) FROM dpsynth.ledger WHERE relid = 'guard_t'::regclass GROUP BY status;
SELECT rho_spent = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 'guard_t'::regclass AND status <> 'refused')
	AND rho_spent > 0 AS spent_is_ledger_sum
FROM dpsynth.budgets WHERE relid = 'guard_t'::regclass;

-- an error before the charge is the caller's own, as it was
SET ROLE regress_guard_analyst;
SELECT try_sql($$SELECT count(*) FROM dp_marginal('guard_t', ARRAY['nope'], epsilon => 1)$$);
RESET ROLE;
RESET temp_file_limit;
RESET work_mem;
-- with the spill allowed, the same call releases (and completes its ledger row)
SET ROLE regress_guard_analyst;
SELECT count(*) FROM dp_marginal('guard_t', ARRAY['x', 'y'], epsilon => 1);
RESET ROLE;
SELECT status, count(*) FROM dpsynth.ledger WHERE relid = 'guard_t'::regclass GROUP BY status ORDER BY status;

DROP TABLE guard_t;
DROP ROLE regress_guard_analyst;
