-- Several releases in one transaction, one statement, a DO block or a function.  Each charge is
-- committed by a background worker in a transaction of its own, while the caller waits: the
-- worker's transaction must never wait for a lock the caller's open transaction holds.  Either
-- the releases work, or the call is refused with an error and nothing is charged.
\i test/regress_helpers.sql
-- a wait that never ends fails the test instead of stalling it; a wait on the caller's own lock
-- must be detected, not left to the charge's lock timeout
SET statement_timeout = '10s';
SET dpsynth.charge_timeout = 60000;
CREATE ROLE regress_dp_onetx IN ROLE dpsynth_analyst;
GRANT CREATE ON SCHEMA public TO regress_dp_onetx;
-- a is declared; every other column has no domain: a release discovers it (and inserts its
-- domain, a row referencing the budget row, in the caller's transaction)
CREATE TABLE t (a text, b text, c int4, d int4, e int4, f text, g int4, h int4, i int4, j text);
INSERT INTO t SELECT (x % 3)::text, (x % 5)::text, x % 7, x % 11, x % 13, (x % 4)::text, x % 9, x % 6,
					 x % 8, (x % 2)::text
FROM generate_series(1, 2000) x;
SELECT dp_protect('t', epsilon => 8, selection_delta => 1e-3);
SELECT dp_declare('t', 'a', categories => ARRAY['0', '1', '2']);
CREATE FUNCTION ledger_rows() RETURNS bigint LANGUAGE sql
	AS $$ SELECT count(*) FROM dpsynth.ledger WHERE relid = 't'::regclass $$;
CREATE FUNCTION spent() RETURNS numeric LANGUAGE sql
	AS $$ SELECT rho_spent FROM dpsynth.budgets WHERE relid = 't'::regclass $$;

-- An analyst: two discoveries inside releases, then dp_discover, in one transaction.
SET ROLE regress_dp_onetx;
BEGIN;
SELECT count(*) >= 1 AS b_released FROM dp_marginal('t', ARRAY['b'], 0.3);
SELECT count(*) >= 1 AS c_released FROM dp_marginal('t', ARRAY['c'], 0.3);
SELECT count(*) AS discovered FROM dp_discover('t', 0.3, ARRAY['d']);
SELECT count(*) >= 1 AS a_released FROM dp_marginal('t', ARRAY['a'], 0.3);
COMMIT;

-- Two discovering releases in one SELECT.
SELECT (SELECT count(*) FROM dp_marginal('t', ARRAY['e'], 0.3)) >= 1 AS e_released,
	   (SELECT count(*) FROM dp_marginal('t', ARRAY['f'], 0.3)) >= 1 AS f_released;

-- A DO block: a discovery, then a release of the same column and of another.
DO $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM dp_discover('t', 0.3, ARRAY['g']);
	SELECT count(*) INTO n FROM dp_marginal('t', ARRAY['g'], 0.3);
	SELECT count(*) INTO n FROM dp_marginal('t', ARRAY['h'], 0.3);
	RAISE NOTICE 'three releases in one DO block';
END
$$;

-- A function: dp_discover, then dp_synthesize of the discovered column.
CREATE FUNCTION discover_and_synthesize() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	PERFORM count(*) FROM dp_discover('t', 0.3, ARRAY['i']);
	SELECT rows_written INTO n FROM dp_synthesize('t', 0.5, target => 't_synth', columns => ARRAY['a', 'i']);
	RETURN n;
END
$$;
SELECT discover_and_synthesize() > 0 AS synthesized;
SELECT count(*) > 0 AS synthetic_rows FROM t_synth;
RESET ROLE;

-- The owner, in one transaction: a declared domain, a column policy and a role limit (rows that
-- reference the budget row), then releases.
BEGIN;
SELECT dp_declare('t', 'j', categories => ARRAY['0', '1']);
SELECT dp_column_policy('t', 'b', 'synthesize');
SELECT dp_limit_role('t', 'regress_dp_onetx', 7);
SELECT count(*) AS j_cells FROM dp_marginal('t', ARRAY['j'], 0.3);
SELECT count(*) AS a_cells FROM dp_marginal('t', ARRAY['a'], 0.3);
COMMIT;

-- Every charge of the releases above is in the ledger, completed, and spent is their sum.
SELECT status, count(*) FROM dpsynth.ledger WHERE relid = 't'::regclass GROUP BY 1 ORDER BY 1;
SELECT spent() = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 't'::regclass AND status <> 'refused')
	AS spent_is_ledger_sum;

-- The owner changes the protection (locks the budget row) and releases in the same transaction:
-- the charge would wait for this transaction, which waits for the charge.  Refused with an
-- error at once; nothing is charged, computed or released.
SELECT ledger_rows() AS rows0, spent() AS spent0 \gset
BEGIN;
SELECT dp_protect('t', epsilon => 8, selection_delta => 2e-3);
SELECT try_sql($$SELECT count(*) FROM dp_marginal('t', ARRAY['a'], 0.3)$$);
ROLLBACK;
BEGIN;
SELECT relid AS locked FROM dpsynth.budgets WHERE relid = 't'::regclass FOR UPDATE;
SELECT try_sql($$SELECT count(*) FROM dp_synthesize('t', 0.3, target => 't_synth2')$$);
COMMIT;
SELECT ledger_rows() = :rows0 AS no_ledger_row, spent() = :spent0 AS nothing_charged;
-- and once that transaction is over, releases work again
SELECT count(*) AS a_cells FROM dp_marginal('t', ARRAY['a'], 0.3);

-- A table protected in this transaction is not yet protected for the charge's own transaction.
CREATE TABLE u (a text);
BEGIN;
SELECT dp_protect('u', epsilon => 1);
SELECT dp_declare('u', 'a', categories => ARRAY['x']);
SELECT try_sql($$SELECT count(*) FROM dp_marginal('u', ARRAY['a'], 0.3)$$);
ROLLBACK;

SELECT status, count(*) FROM dpsynth.ledger WHERE relid = 't'::regclass GROUP BY 1 ORDER BY 1;
SELECT spent() = (SELECT sum(rho) FROM dpsynth.ledger WHERE relid = 't'::regclass AND status <> 'refused')
	AS spent_is_ledger_sum;

DROP TABLE t_synth;
DROP TABLE t;
DROP TABLE u;
DROP FUNCTION discover_and_synthesize();
DROP FUNCTION ledger_rows();
DROP FUNCTION spent();
REVOKE CREATE ON SCHEMA public FROM regress_dp_onetx;
DROP ROLE regress_dp_onetx;
