-- Attacks found in review, each of which must fail.
\i test/regress_helpers.sql
CREATE ROLE regress_dp_alice LOGIN IN ROLE dpsynth_analyst;
CREATE ROLE regress_dp_team;
GRANT regress_dp_team TO regress_dp_alice;
CREATE ROLE regress_dp_bob;
CREATE SCHEMA alice_scratch AUTHORIZATION regress_dp_alice;
CREATE TABLE t (sex text NOT NULL);
INSERT INTO t SELECT (ARRAY['F', 'M'])[1 + i % 2] FROM generate_series(1, 100) i;
SELECT dp_protect('t', epsilon => 5);
SELECT dp_declare('t', 'sex', categories => ARRAY['F', 'M']);

-- 1. Operator hijack through search_path while dpsynth acts as the extension owner: alice's own
--    "=" would make her superuser if it ever ran as anyone but her.
SET ROLE regress_dp_alice;
CREATE FUNCTION alice_scratch.evil_eq(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF current_user <> 'regress_dp_alice' THEN
		EXECUTE 'ALTER ROLE regress_dp_alice SUPERUSER';
	END IF;
	RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR alice_scratch.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = alice_scratch.evil_eq);
CREATE FUNCTION alice_scratch.evil_eq2(int2, int2) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF current_user <> 'regress_dp_alice' THEN
		EXECUTE 'ALTER ROLE regress_dp_alice SUPERUSER';
	END IF;
	RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR alice_scratch.= (LEFTARG = int2, RIGHTARG = int2, FUNCTION = alice_scratch.evil_eq2);
SET search_path = alice_scratch, pg_catalog, public;
SELECT count(*) FROM public.dp_marginal('public.t', ARRAY['sex'], epsilon => 0.1);
RESET search_path;
RESET ROLE;
SELECT rolsuper AS alice_became_superuser FROM pg_roles WHERE rolname = 'regress_dp_alice';

-- 2. Role limits cannot be escaped with SET ROLE: the charge counts against every role the
--    session user is a member of, too.
SELECT dp_limit_role('t', 'regress_dp_alice', epsilon => 0.5);
SET SESSION AUTHORIZATION regress_dp_alice;
SELECT count(*) FROM dp_marginal('t', ARRAY['sex'], epsilon => 0.4);
SET ROLE regress_dp_team;
SELECT try_sql($$SELECT * FROM dp_marginal('t', ARRAY['sex'], epsilon => 0.4)$$);
SET ROLE dpsynth_analyst;
SELECT try_sql($$SELECT * FROM dp_marginal('t', ARRAY['sex'], epsilon => 0.4)$$);
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT role, rho_limit, rho_spent FROM dp_role_limits;
SELECT dp_limit_role('t', 'regress_dp_alice', epsilon => NULL);

-- 3. Who spent what is not public: bob (no role in this) sees no limits and no ledger rows.
SELECT dp_limit_role('t', 'regress_dp_team', epsilon => 3);
SET ROLE regress_dp_bob;
SELECT count(*) AS limits_bob_sees FROM dp_role_limits;
SELECT count(*) AS ledger_rows_bob_sees FROM dp_ledger;
RESET ROLE;
SELECT dp_limit_role('t', 'regress_dp_team', epsilon => NULL);

-- 4. A read-only transaction is refused before anything is charged.
SELECT rho_spent AS before FROM dpsynth.budgets \gset
SET ROLE regress_dp_alice;
BEGIN READ ONLY;
SELECT try_sql($$SELECT * FROM dp_marginal('t', ARRAY['sex'], epsilon => 0.4)$$);
COMMIT;
RESET ROLE;
SELECT rho_spent = :before AS nothing_charged FROM dpsynth.budgets;

-- 5. One call can spend a whole budget of the same epsilon (allowance and charge round alike).
CREATE TABLE u (sex text NOT NULL);
SELECT dp_protect('u', epsilon => 1);
SELECT dp_declare('u', 'sex', categories => ARRAY['F', 'M']);
SELECT count(*) FROM dp_marginal('u', ARRAY['sex'], epsilon => 1);
SELECT rho_remaining FROM dp_budget WHERE table_name = 'u'::regclass;
SELECT try_sql($$SELECT * FROM dp_marginal('u', ARRAY['sex'], epsilon => 0.001)$$);

DROP TABLE t, u;
DROP SCHEMA alice_scratch CASCADE;
DROP OWNED BY regress_dp_alice;
DROP ROLE regress_dp_alice;
DROP ROLE regress_dp_team;
DROP ROLE regress_dp_bob;
