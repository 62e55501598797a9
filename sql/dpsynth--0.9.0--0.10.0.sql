-- dpsynth 0.9.0 -> 0.10.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.10.0'" to load this file. \quit

-- ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE: the declared domains and column policies of the
-- type's tables follow the rename by the old name, as the privacy unit's name already does
CREATE OR REPLACE FUNCTION dpsynth._unit_follows_rename(rel oid, old_name text, new_name text) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp SET jit = off AS $$
	WITH RECURSIVE tree(t) AS (
		SELECT rel
		UNION SELECT c.oid FROM pg_catalog.pg_class c, pg_catalog.pg_class ty
			WHERE ty.oid = rel AND ty.relkind = 'c' AND c.reloftype = ty.reltype
		UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree ON i.inhparent = tree.t)
	UPDATE dpsynth.budgets b
		SET privacy_unit_name = CASE WHEN b.privacy_unit_name = old_name::name THEN new_name::name
									 ELSE b.privacy_unit_name END,
			unit_constant_names =
				CASE WHEN old_name::name = ANY (b.unit_constant_names)
					 THEN ARRAY(SELECT CASE WHEN u.nm = old_name::name THEN new_name::name ELSE u.nm END
								FROM unnest(b.unit_constant_names) WITH ORDINALITY u(nm, i) ORDER BY u.i)
					 ELSE b.unit_constant_names END
		WHERE b.relid IN (SELECT t FROM tree)
		  AND (b.privacy_unit_name = old_name::name OR old_name::name = ANY (b.unit_constant_names))
		  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
					  WHERE a.attrelid = b.relid AND a.attname = new_name::name AND NOT a.attisdropped);
	-- ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE: the declared domains and column policies of the
	-- type's tables (and the tables below them) follow by the old name, as the unit does (ALTER
	-- TABLE's rows are brought back to their columns before the rename, dpsynth_guard_ddl, and
	-- followed by dpsynth._on_alter).  By name, not by attnum: a restore may have left a row's
	-- attnum at another column's (it keeps that attnum; a release brings it to its name or refuses
	-- it).  Only where the old name's column is gone and no row of the new name is there already.
	WITH RECURSIVE typed(t) AS (
		SELECT c.oid FROM pg_catalog.pg_class c, pg_catalog.pg_class ty
			WHERE ty.oid = rel AND ty.relkind = 'c' AND c.reloftype = ty.reltype
		UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN typed ON i.inhparent = typed.t),
	domains AS (
		UPDATE dpsynth.domains r SET attname = new_name::name
		WHERE r.relid IN (SELECT t FROM typed) AND r.attname = old_name::name
			  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
						  WHERE a.attrelid = r.relid AND a.attname = new_name::name AND NOT a.attisdropped)
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
							  WHERE a.attrelid = r.relid AND a.attname = old_name::name AND NOT a.attisdropped)
			  AND NOT EXISTS (SELECT 1 FROM dpsynth.domains o WHERE o.relid = r.relid AND o.attname = new_name::name)
		RETURNING 1)
	UPDATE dpsynth.column_policies r SET attname = new_name::name
		WHERE r.relid IN (SELECT t FROM typed) AND r.attname = old_name::name
		  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
					  WHERE a.attrelid = r.relid AND a.attname = new_name::name AND NOT a.attisdropped)
		  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
						  WHERE a.attrelid = r.relid AND a.attname = old_name::name AND NOT a.attisdropped)
		  AND NOT EXISTS (SELECT 1 FROM dpsynth.column_policies o WHERE o.relid = r.relid AND o.attname = new_name::name);
$$;
