-- dpsynth 0.3.3 -> 0.3.4: the second audit's fixes (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.4'" to load this file. \quit

-- Which server this is, and its dpsynth: the library's version, the cluster's system identifier
-- and the database's OID, for a coordinator's check before its charge (src/foreign.c).  It runs on
-- a shard over the zero rows of the count statement, beside the aggregates (its argument is the
-- statement's count(*), so that postgres_fdw ships the call).
CREATE FUNCTION dpsynth._shard_identity(bigint) RETURNS text
	AS 'MODULE_PATHNAME', 'dpsynth_shard_identity' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dpsynth._shard_identity(bigint) IS
	'dpsynth''s library version, the system identifier and the database OID of this server (checked on every shard before a charge)';
REVOKE ALL ON FUNCTION dpsynth._shard_identity(bigint) FROM PUBLIC;

-- A Citus table (distributed, reference or Citus-local) is refused by dp_protect and, before the
-- charge, by every release: its rows are in shards that dpsynth's scan does not read.
CREATE FUNCTION dpsynth._check_visible(tbl regclass) RETURNS void
	AS 'MODULE_PATHNAME', 'dpsynth_check_visible_sql' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION dpsynth._check_visible(regclass) FROM PUBLIC;


-- One guard (dpsynth._guard_tree) for every way a table joins a protected tree
-- (CREATE [FOREIGN] TABLE ... INHERITS / PARTITION OF, ALTER [FOREIGN] TABLE ... INHERIT /
-- ATTACH PARTITION, dp_protect): no row may count under two protected tables.
DROP FUNCTION dpsynth._on_attach(oid, oid);
CREATE FUNCTION dpsynth._tree_conflict(rel oid, parents oid[], protecting boolean,
									   OUT tbl regclass, OUT mine regclass, OUT theirs regclass)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
	AS $$ WITH RECURSIVE
		  sub(t) AS (
			  SELECT rel
			  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN sub ON i.inhparent = sub.t),
		  anc(t, a) AS (
			  SELECT t, t FROM sub WHERE t IS NOT NULL
			  UNION SELECT anc.t, i.inhparent FROM anc JOIN pg_catalog.pg_inherits i ON i.inhrelid = anc.a),
		  up(a) AS (
			  SELECT unnest(parents)
			  UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid = up.a),
		  prot(relid) AS (
			  SELECT b.relid FROM dpsynth.budgets b WHERE dpsynth._identifies(b.relid, b.relname)),
		  roots(t, root, added) AS (
			  SELECT anc.t, anc.a, false FROM anc JOIN prot ON prot.relid = anc.a
			  UNION SELECT sub.t, up.a, true FROM sub, up JOIN prot ON prot.relid = up.a
			  UNION SELECT sub.t, rel, true FROM sub WHERE protecting)
		  SELECT r1.t::regclass, r1.root::regclass, r2.root::regclass
		  FROM roots r1 JOIN roots r2 ON r2.t IS NOT DISTINCT FROM r1.t AND r2.root <> r1.root
		  ORDER BY r1.added, NOT r2.added, r1.t, r1.root, r2.root
		  LIMIT 1 $$;

CREATE FUNCTION dpsynth._guard_tree(rel oid, parents oid[], protecting boolean, created text)
RETURNS void LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	c record;
BEGIN
	SELECT * INTO c FROM dpsynth._tree_conflict(rel, parents, protecting);
	IF NOT FOUND THEN
		RETURN;
	ELSIF protecting THEN
		RAISE EXCEPTION 'table % shares rows with protected table %', rel::regclass,
			CASE WHEN c.mine <> rel THEN c.mine ELSE c.theirs END
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('A partitioned or inherited table is protected as one table, with its partitions and children; a row may have one budget only (rows of %s would have two).', c.tbl),
				  HINT = format('Release from %s, or detach the table from it first.',
								CASE WHEN c.mine <> rel THEN c.mine ELSE c.theirs END);
	ELSIF rel IS NULL THEN
		RAISE EXCEPTION 'cannot create % under %: its rows would be protected by dpsynth twice (% and %)',
			created, array_to_string(parents::regclass[]::text[], ', '), c.mine, c.theirs
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A row may have one budget only, and two budgets cannot be merged.',
				  HINT = 'Inherit from tables under one protected table at most.';
	ELSE
		RAISE EXCEPTION 'cannot attach % to %: both hold rows protected by dpsynth (% and %)',
			rel::regclass, array_to_string(parents::regclass[]::text[], ', '), c.mine, c.theirs
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Rows of %s would count under both; a row may have one budget only, and two budgets cannot be merged.', c.tbl);
	END IF;
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._check_protected(rel oid) RETURNS dpsynth.budgets
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	other regclass;
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = rel AND dpsynth._identifies(relid, relname);
	other := (SELECT r FROM dpsynth._protected_relatives(rel) r LIMIT 1);
	IF b.relid IS NOT NULL AND other IS NULL THEN	-- rows below rel that another protected table counts too
		other := (SELECT CASE WHEN c.mine <> rel THEN c.mine ELSE c.theirs END
				  FROM dpsynth._tree_conflict(rel, '{}', false) c);
	END IF;
	IF b.relid IS NULL AND other IS NOT NULL THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', rel::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('Its rows are protected as part of table %s.', other),
				  HINT = format('Release from %s.', other);
	ELSIF b.relid IS NULL THEN
		RAISE EXCEPTION 'table % is not protected by dpsynth', rel::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'The table''s owner must first call dp_protect(table, epsilon => ..., delta => ...).';
	ELSIF other IS NOT NULL THEN	-- not reachable through dpsynth's own DDL checks: defence in depth
		RAISE EXCEPTION 'table % shares rows with protected table %', rel::regclass, other
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'A row may be protected by one budget only; nothing was charged.',
				  HINT = 'Detach one of them (ALTER TABLE ... DETACH PARTITION or NO INHERIT).';
	END IF;
	RETURN b;
END
$$;

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

CREATE OR REPLACE FUNCTION dpsynth._on_detach(child oid, parent oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	donor dpsynth.budgets;
	new_id bigint;
	stays text;
BEGIN
	SELECT b.* INTO donor FROM dpsynth.budgets b
		WHERE (b.relid = parent OR b.relid IN (SELECT r FROM dpsynth._protected_relatives(parent) r))
		  AND dpsynth._identifies(b.relid, b.relname)
		LIMIT 1;
	IF NOT FOUND OR donor.relid = child THEN
		RETURN;
	END IF;
	-- a child of several parents that stays under the donor through another one keeps
	-- being read with it: a budget of its own would count its rows twice
	IF EXISTS (WITH RECURSIVE up(a) AS (
				   SELECT inhparent FROM pg_catalog.pg_inherits WHERE inhrelid = child AND inhparent <> parent
				   UNION SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid = up.a)
			   SELECT 1 FROM up WHERE a = donor.relid) THEN
		RETURN;
	END IF;
	-- the budget it gets would also count the tables below it that stay under the donor
	-- through another path: refused, as any change that puts a row under two budgets
	stays := (WITH RECURSIVE down(t) AS (
				  SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = child
				  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.t),
			  up(t, a) AS (
				  SELECT t, t FROM down
				  UNION SELECT up.t, i.inhparent FROM up JOIN pg_catalog.pg_inherits i ON i.inhrelid = up.a
				  WHERE up.a <> child)
			  SELECT min(t::regclass::text) FROM up WHERE a = donor.relid);
	IF stays IS NOT NULL THEN
		RAISE EXCEPTION 'cannot detach % from %: rows of % would be protected by dpsynth twice (% and %)',
			child::regclass, parent::regclass, stays, donor.relid, child::regclass
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = format('%s would keep its protection, and %s stays under %s through another parent.',
								  child::regclass, stays, donor.relid),
				  HINT = format('Detach %s from %s, or from its other parent, first.', stays, child::regclass);
	END IF;
	INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, rho_spent, delta_spent,
								 selection_delta, discovery, protected_by)
		VALUES (child, dpsynth._qualified_name(child), donor.epsilon, donor.delta, donor.rho_allowance,
				donor.rho_spent, donor.delta_spent, donor.selection_delta, donor.discovery, donor.protected_by)
		RETURNING id INTO new_id;
	INSERT INTO dpsynth.domains (relid, attnum, kind, categories, lower, upper, bins, edges, points, binning,
								 source, ledger_id, declared_by, declared_at, shape)
		SELECT child, ca.attnum, d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning,
			   d.source, d.ledger_id, d.declared_by, d.declared_at, d.shape
		FROM dpsynth.domains d
		JOIN pg_catalog.pg_attribute pa ON pa.attrelid = donor.relid AND pa.attnum = d.attnum
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = pa.attname AND NOT ca.attisdropped
		WHERE d.relid = donor.relid;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, set_at)
		SELECT child, ca.attnum, p.treatment, p.discovery, p.other, p.set_by, p.set_at
		FROM dpsynth.column_policies p
		JOIN pg_catalog.pg_attribute pa ON pa.attrelid = donor.relid AND pa.attnum = p.attnum
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = pa.attname AND NOT ca.attisdropped
		WHERE p.relid = donor.relid;
	INSERT INTO dpsynth.role_limits (relid, role, epsilon, rho_limit, set_by, set_at)
		SELECT child, role, epsilon, rho_limit, set_by, set_at FROM dpsynth.role_limits WHERE relid = donor.relid;
	INSERT INTO dpsynth.ledger (budget_id, relid, relname, role, rolname, session_role, charged_to, function,
								epsilon, delta, rho, delta_add, details, status, completed_at)
		SELECT new_id, child, dpsynth._qualified_name(child), min(l.role), min(l.rolname), min(l.session_role),
			   l.charged_to, 'detached', donor.epsilon, donor.delta, sum(l.rho), sum(l.delta_add),
			   jsonb_build_object('from_table', donor.relname, 'from_budget', donor.id, 'charges', count(*)),
			   'completed', pg_catalog.clock_timestamp()
		FROM dpsynth.ledger l WHERE l.budget_id = donor.id AND l.status <> 'refused'
		GROUP BY l.charged_to;
	RAISE NOTICE 'table % leaves protected table % and keeps its protection: epsilon %, delta %, rho spent % of %',
		child::regclass, donor.relid, donor.epsilon, donor.delta, donor.rho_spent, donor.rho_allowance;
END
$$;

REVOKE ALL ON FUNCTION dpsynth._tree_conflict(oid, oid[], boolean), dpsynth._guard_tree(oid, oid[], boolean, text)
	FROM PUBLIC;
DROP EVENT TRIGGER dpsynth_guard_ddl;
CREATE EVENT TRIGGER dpsynth_guard_ddl ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED', 'DROP SCHEMA', 'ALTER TABLE', 'ALTER FOREIGN TABLE',
				 'CREATE TABLE', 'CREATE FOREIGN TABLE') EXECUTE FUNCTION dpsynth._guard_ddl();

-- The charge locks the budget row FOR NO KEY UPDATE: a domain discovered or declared earlier in
-- the caller's open transaction holds a key-share lock on it, which FOR UPDATE waited for while
-- the caller waited for the charge.
CREATE OR REPLACE FUNCTION dpsynth._charge(p_relid oid, p_role oid, p_session oid, p_function text,
								p_columns text[], p_epsilon float8, p_delta float8, p_units int8,
								p_delta_add float8, p_details jsonb,
								OUT status text, OUT ledger_id bigint, OUT rho_charged numeric,
								OUT rho_remaining numeric, OUT limit_role oid)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	b dpsynth.budgets;
	lim record;
	roles oid[];
BEGIN
	SELECT * INTO b FROM dpsynth.budgets WHERE relid = p_relid AND dpsynth._identifies(relid, relname) FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		status := 'unprotected';
		RETURN;
	END IF;
	rho_charged := dpsynth._units_rho(p_units);
	rho_remaining := b.rho_allowance - b.rho_spent;
	roles := ARRAY(SELECT r.oid FROM pg_catalog.pg_roles r
				   WHERE pg_catalog.pg_has_role(p_role, r.oid, 'MEMBER')
					  OR pg_catalog.pg_has_role(p_session, r.oid, 'MEMBER') ORDER BY 1);
	status := 'charged';
	IF rho_charged > rho_remaining
		OR (b.delta_spent + p_delta_add::numeric > 0
			AND (b.epsilon >= 1000
				 OR exp(b.epsilon::numeric) * (b.delta_spent + p_delta_add::numeric) > b.selection_delta::numeric)) THEN
		status := 'over_budget';
	ELSE
		FOR lim IN SELECT * FROM dpsynth.role_limits rl
				   WHERE rl.relid = p_relid AND rl.role = ANY (roles) ORDER BY rl.role LOOP
			IF (SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l
				WHERE l.budget_id = b.id AND l.status <> 'refused' AND lim.role = ANY (l.charged_to))
			   + rho_charged > lim.rho_limit THEN
				status := 'over_role_limit';
				limit_role := lim.role;
				EXIT;
			END IF;
		END LOOP;
	END IF;
	IF status <> 'charged' THEN
		-- a refusal repeated: counted, no new ledger row (see dpsynth.refusals)
		UPDATE dpsynth.refusals r SET attempts = r.attempts + 1, last_at = pg_catalog.clock_timestamp(),
			last_rho = rho_charged
			WHERE r.budget_id = b.id AND r.role = p_role AND r.function = p_function AND r.reason = status
			RETURNING r.first_ledger_id INTO ledger_id;
		IF FOUND THEN
			RETURN;
		END IF;
	END IF;
	INSERT INTO dpsynth.ledger (budget_id, relid, relname, role, rolname, session_role, charged_to, function,
								columns, epsilon, delta, rho, delta_add, details, status, reason)
		VALUES (b.id, p_relid, b.relname, p_role,
				coalesce((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = p_role), p_role::text),
				p_session, roles, p_function, p_columns, p_epsilon, p_delta, rho_charged,
				p_delta_add::numeric, p_details,
				CASE WHEN status = 'charged' THEN 'charged' ELSE 'refused' END,
				CASE WHEN status = 'charged' THEN NULL ELSE status END)
		RETURNING id INTO ledger_id;
	IF status <> 'charged' THEN
		INSERT INTO dpsynth.refusals (budget_id, role, rolname, function, reason, first_ledger_id, last_rho)
			VALUES (b.id, p_role, coalesce((SELECT rolname FROM pg_catalog.pg_roles WHERE oid = p_role), p_role::text),
					p_function, status, ledger_id, rho_charged);
	END IF;
	IF status = 'charged' THEN
		UPDATE dpsynth.budgets SET rho_spent = rho_spent + rho_charged,
			delta_spent = delta_spent + p_delta_add::numeric WHERE relid = p_relid;
		rho_remaining := rho_remaining - rho_charged;
	END IF;
END
$$;
