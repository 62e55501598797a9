-- Installation: objects, roles, the catalog's privileges, and the accounting conversions.
\i test/regress_helpers.sql
SELECT extname, extversion FROM pg_extension WHERE extname = 'dpsynth';
SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname IN ('dpsynth_analyst', 'dpsynth_admin') ORDER BY 1;


-- The conversion of PRIVACY.md: rho(1) = 0.02436 and rho(3) = 0.18507 at delta 1e-6, so seven
-- calls at epsilon 1 fit in a budget of epsilon 3, and eight do not.
SELECT round(dp_rho(1, 1e-6)::numeric, 5) AS rho_1, round(dp_rho(3, 1e-6)::numeric, 5) AS rho_3;
SELECT 7 * dp_rho(1, 1e-6) <= dp_rho(3, 1e-6) AS seven_fit, 8 * dp_rho(1, 1e-6) <= dp_rho(3, 1e-6) AS eight_fit;
-- epsilon(rho(e)) comes back to e (rounded up, never below)
SELECT e, dp_epsilon(dp_rho(e, 1e-6), 1e-6) >= e AS not_below,
	   abs(dp_epsilon(dp_rho(e, 1e-6), 1e-6) - e) < 1e-6 * e AS close
FROM unnest(ARRAY[0.1, 1, 3, 10]::float8[]) e;
SELECT dp_epsilon(0, 1e-6) AS zero_rho;
SELECT try_sql($$SELECT dp_rho('NaN', 1e-6)$$);
SELECT try_sql($$SELECT dp_rho(-1, 1e-6)$$);
SELECT try_sql($$SELECT dp_rho(0, 1e-6)$$);
SELECT try_sql($$SELECT dp_rho('Infinity', 1e-6)$$);
SELECT try_sql($$SELECT dp_rho(1, 0)$$);
SELECT try_sql($$SELECT dp_rho(1, 1)$$);
SELECT try_sql($$SELECT dp_epsilon(-0.5, 1e-6)$$);
SELECT dp_rho(NULL, 1e-6) IS NULL AS strict_null;

-- Nobody but the extension owner has any privilege on the catalog tables.
SELECT c.relname, r.rolname, has_table_privilege(r.rolname, c.oid, 'SELECT') AS sel,
	   has_table_privilege(r.rolname, c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE') AS write
FROM pg_class c, pg_roles r
WHERE c.relnamespace = 'dpsynth'::regnamespace AND c.relkind = 'r'
  AND r.rolname IN ('dpsynth_analyst', 'dpsynth_admin')
ORDER BY 1, 2;
-- Who may execute what (PUBLIC = 0).
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
	   has_function_privilege('dpsynth_analyst', p.oid, 'EXECUTE') AS analyst,
	   EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS public
FROM pg_proc p WHERE p.proname IN ('dp_marginal', 'dp_protect', 'dp_declare', 'dp_limit_role')
ORDER BY 1, 2;
SELECT proname FROM pg_proc WHERE pronamespace = 'dpsynth'::regnamespace
  AND has_function_privilege('dpsynth_analyst', oid, 'EXECUTE') ORDER BY 1;
