-- dpsynth 0.17.0 -> 0.18.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.18.0'" to load this file. \quit

-- A table detached from a tree protected per unit keeps the tree's privacy unit and bounds, and
-- the tree's budget row is read under the lock a charge takes (docs/PRIVACY.md, "Which table's
-- budget").
CREATE OR REPLACE FUNCTION dpsynth._on_detach(child oid, parent oid) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
	donor dpsynth.budgets;
	new_id bigint;
	stays text;
	unit_name name;
	unit int2;
BEGIN
	-- the tree's budget row locked as a charge locks it (the caller holds the parent and the
	-- child ACCESS EXCLUSIVE already: no release of the tree reads the child meanwhile)
	-- (the parent or one of its ancestors: a budget below the parent or beside it is not the tree's
	-- the child leaves)
	SELECT b.* INTO donor FROM dpsynth.budgets b
		WHERE b.relid IN (WITH RECURSIVE up(r) AS (
							  SELECT parent UNION
							  SELECT i.inhparent FROM pg_catalog.pg_inherits i JOIN up ON i.inhrelid = up.r)
						  SELECT r FROM up)
		  AND dpsynth._identifies(b.relid, b.relname)
		ORDER BY b.relid LIMIT 1 FOR NO KEY UPDATE;
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
	-- the tree's privacy unit, by its column's name (the child's attnums may differ); a child
	-- always holds its parents' columns, and one without the unit's is refused, not made per row
	IF donor.privacy_unit IS NOT NULL THEN
		unit_name := coalesce(donor.privacy_unit_name,
							  (SELECT a.attname FROM pg_catalog.pg_attribute a
							   WHERE a.attrelid = donor.relid AND a.attnum = donor.privacy_unit AND NOT a.attisdropped));
		SELECT a.attnum INTO unit FROM pg_catalog.pg_attribute a
			WHERE a.attrelid = child AND a.attname = unit_name AND NOT a.attisdropped AND a.attnum > 0;
		IF unit IS NULL THEN
			RAISE EXCEPTION 'cannot detach % from %: % has no column % to keep the privacy unit of %',
				child::regclass, parent::regclass, child::regclass, coalesce(unit_name, '?'), donor.relid
				USING ERRCODE = 'object_not_in_prerequisite_state';
		END IF;
	END IF;
	INSERT INTO dpsynth.budgets (relid, relname, epsilon, delta, rho_allowance, rho_spent, delta_spent,
								 selection_delta, discovery, protected_by, privacy_unit, max_rows_per_unit,
								 max_rows_per_cell, privacy_unit_name, unit_constant, unit_constant_names)
		VALUES (child, dpsynth._qualified_name(child), donor.epsilon, donor.delta, donor.rho_allowance,
				donor.rho_spent, donor.delta_spent, donor.selection_delta, donor.discovery, donor.protected_by,
				unit, donor.max_rows_per_unit, donor.max_rows_per_cell, CASE WHEN unit IS NOT NULL THEN unit_name END,
				-- the columns constant within a unit: their names, and the child's attnums of them
				CASE WHEN unit IS NOT NULL AND donor.unit_constant_names IS NULL THEN donor.unit_constant
					 WHEN unit IS NOT NULL THEN
						 ARRAY(SELECT coalesce(a.attnum, u.num)
							   FROM unnest(donor.unit_constant, donor.unit_constant_names) WITH ORDINALITY u(num, nm, i)
							   LEFT JOIN pg_catalog.pg_attribute a
								   ON a.attrelid = child AND a.attname = u.nm AND NOT a.attisdropped AND a.attnum > 0
							   ORDER BY u.i) END,
				CASE WHEN unit IS NOT NULL THEN donor.unit_constant_names END)
		RETURNING id INTO new_id;
	-- domains and policies by their own names (the donor's attnums may be a restored table's old
	-- ones); an unnamed row (a dump of 0.6.0 or older) could be any column's, and two rows of one
	-- column are one too many: refused as a release refuses them
	PERFORM dpsynth._domains_for_release(donor.relid);
	INSERT INTO dpsynth.domains (relid, attnum, kind, categories, lower, upper, bins, edges, points, binning,
								 source, ledger_id, declared_by, declared_at, shape, attname)
		SELECT child, ca.attnum, d.kind, d.categories, d.lower, d.upper, d.bins, d.edges, d.points, d.binning,
			   d.source, d.ledger_id, d.declared_by, d.declared_at, d.shape, ca.attname
		FROM dpsynth.domains d
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = d.attname AND NOT ca.attisdropped
		WHERE d.relid = donor.relid;
	INSERT INTO dpsynth.column_policies (relid, attnum, treatment, discovery, other, set_by, set_at, attname)
		SELECT child, ca.attnum, p.treatment, p.discovery, p.other, p.set_by, p.set_at, ca.attname
		FROM dpsynth.column_policies p
		JOIN pg_catalog.pg_attribute ca ON ca.attrelid = child AND ca.attname = p.attname AND NOT ca.attisdropped
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
