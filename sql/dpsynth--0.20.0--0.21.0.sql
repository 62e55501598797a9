-- dpsynth 0.20.0 -> 0.21.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.21.0'" to load this file. \quit

-- dp_protect's lock on the tree it protects (src/dpsynth.c, dpsynth_lock_tree_sql): SHARE UPDATE
-- EXCLUSIVE on the table and every table below it, so that a DETACH PARTITION or NO INHERIT of
-- the tree sees the protection committed or has finished first; refused (55000) while a
-- partition of the tree is being detached concurrently.  Called only after the invoker's right
-- to protect the table is checked (dpsynth._check_owner), so that no other role queues for it.
CREATE FUNCTION dpsynth._lock_tree(tbl regclass) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_lock_tree_sql' LANGUAGE C VOLATILE STRICT;

REVOKE ALL ON FUNCTION dpsynth._lock_tree(regclass) FROM PUBLIC;

-- dp_protect locks the tree once dpsynth._check_owner has let the invoker protect it: the rule of
-- who may protect a table is written once (docs/PRIVACY.md, "Which table's budget").
CREATE OR REPLACE FUNCTION dpsynth._dp_protect(invoker oid, tbl regclass, epsilon float8, delta float8,
									selection_delta float8, discovery boolean)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	kind "char";
	persistence "char";
	allowance numeric;
	spent numeric;
	dspent numeric;
BEGIN
	IF tbl IS NULL THEN
		RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF epsilon IS NULL OR delta IS NULL OR selection_delta IS NULL OR discovery IS NULL THEN
		RAISE EXCEPTION 'epsilon, delta, selection_delta and discovery must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT (selection_delta >= 0 AND selection_delta < 1) THEN
		RAISE EXCEPTION 'selection_delta must be in [0, 1), not %', selection_delta
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'It is the extra delta set aside for discovering category values; 0 forbids that.';
	END IF;
	IF NOT (epsilon > 0 AND epsilon < 'Infinity') THEN	-- also rejects NaN
		RAISE EXCEPTION 'epsilon must be a positive finite number, not %', epsilon
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT (delta > 0 AND delta < 1) THEN
		RAISE EXCEPTION 'delta must be in the open interval (0, 1), not %', delta
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Use a delta well below 1/number of rows, for example 1e-6.';
	END IF;
	-- who may protect it is asked before the tree is locked (no other role queues for the lock),
	-- and so are the refusals that read the catalog only (none queues for a table it may not
	-- protect); then the rule again under the lock (a membership lost meanwhile is seen; under
	-- READ COMMITTED a new owner too)
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	SELECT relkind, relpersistence INTO kind, persistence FROM pg_catalog.pg_class WHERE oid = tbl;
	IF (SELECT relnamespace IN ('pg_catalog'::regnamespace, 'pg_toast'::regnamespace,
								'information_schema'::regnamespace)
		FROM pg_catalog.pg_class WHERE oid = tbl) THEN
		RAISE EXCEPTION 'system table % cannot be protected', tbl USING ERRCODE = 'insufficient_privilege';
	END IF;
	-- dpsynth's own tables (its catalog) are not data to release
	IF (SELECT relnamespace = 'dpsynth'::regnamespace FROM pg_catalog.pg_class WHERE oid = tbl)
		OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
				   WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = tbl AND d.deptype = 'e'
					 AND d.refclassid = 'pg_catalog.pg_extension'::regclass
					 AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'dpsynth')) THEN
		RAISE EXCEPTION 'table % belongs to dpsynth and cannot be protected', tbl
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	-- A temporary table vanishes at the end of its session without any event that could take
	-- its protection with it, and its OID may later name another table.
	IF persistence = 't' THEN
		RAISE EXCEPTION 'temporary table % cannot be protected', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'Protect an ordinary (permanent or unlogged) table.';
	END IF;
	IF kind NOT IN ('r', 'p') THEN
		RAISE EXCEPTION '% is not a table', tbl
			USING ERRCODE = 'wrong_object_type',
				  HINT = 'dpsynth protects ordinary and partitioned tables; views and foreign tables are not supported.';
	END IF;
	PERFORM dpsynth._lock_tree(tbl);
	PERFORM dpsynth._check_owner(invoker, tbl, 'protect');
	-- a Citus table is a shell here, its rows in shards that no release would read
	PERFORM dpsynth._check_visible(tbl);
	-- a partitioned or inherited table is protected as one table: its partitions and children
	-- are read with it, and none of them, nor any table above it, nor any other table above one
	-- of them, may have a budget of its own
	PERFORM dpsynth._guard_tree(tbl, '{}', true, NULL);
	-- a foreign partition (postgres_fdw) is protected with the others: dp_marginal and
	-- dp_synthesize's adaptive method count it on its server (src/foreign.c); dp_discover, which
	-- reads values, and the PrivSyn method refuse it before any charge
	IF EXISTS (WITH RECURSIVE down(r) AS (
				   SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = tbl
				   UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.r)
			   SELECT 1 FROM down JOIN pg_catalog.pg_class c ON c.oid = down.r
			   WHERE c.relpersistence = 't') THEN
		RAISE EXCEPTION 'table % has a temporary partition or child', tbl
			USING ERRCODE = 'feature_not_supported',
				  HINT = 'dpsynth protects only permanent and unlogged tables.';
	END IF;
	PERFORM dpsynth._lock_domains(tbl);
	-- Protections that no longer identify their table (see dpsynth.budgets) go now, with their
	-- domains, policies and limits; their ledger rows stay.
	DELETE FROM dpsynth.budgets b WHERE NOT dpsynth._identifies(b.relid, b.relname);

	allowance := dpsynth._units_rho(dpsynth._rho_units(epsilon, delta));
	SELECT rho_spent, delta_spent INTO spent, dspent FROM dpsynth.budgets WHERE relid = tbl FOR UPDATE;
	IF NOT FOUND THEN
		INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, selection_delta, discovery,
									 protected_by)
			VALUES (tbl, dpsynth._qualified_name(tbl), epsilon, delta, allowance, selection_delta, discovery, invoker);
		RAISE NOTICE 'table % is protected with a budget of epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	ELSE
		IF allowance < spent THEN
			RAISE EXCEPTION 'new budget of table % is below what has already been spent', tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Spent rho %s; epsilon %s at delta %s allows only rho %s.', spent, epsilon, delta, allowance),
					  HINT = 'A budget can be raised or lowered, but never below what was spent.';
		END IF;
		IF dspent > 0 AND (epsilon >= 1000 OR selection_delta::numeric < exp(epsilon::numeric) * dspent) THEN
			RAISE EXCEPTION 'new selection_delta of table % is below what has already been spent', tbl
				USING ERRCODE = 'invalid_parameter_value',
					  DETAIL = format('Partition selection has spent delta %s, which counts exp(epsilon) times: %s.',
									  dspent, exp(epsilon::numeric) * dspent);
		END IF;
		UPDATE dpsynth.budgets b SET epsilon = _dp_protect.epsilon, delta = _dp_protect.delta,
			rho_allowance = allowance,
			selection_delta = _dp_protect.selection_delta, discovery = _dp_protect.discovery
			WHERE relid = tbl;
		RAISE NOTICE 'budget of table % changed to epsilon %, delta % (rho %)', tbl, epsilon, delta, allowance;
	END IF;
END
$$;
