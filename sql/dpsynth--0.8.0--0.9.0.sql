-- dpsynth 0.8.0 -> 0.9.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.9.0'" to load this file. \quit

-- 0.9.0: a privacy unit and the columns constant within a unit follow a RENAME COLUMN (or
-- RENAME ATTRIBUTE ... CASCADE) by their old name, at the command's end, in the table and the
-- tables below it; _on_alter no longer gives the unit the name of whatever column sits at its
-- attnum, and a dropped unit column's name is forgotten (_on_drop).
-- RENAME COLUMN old TO new of a table, or RENAME ATTRIBUTE of a composite type with CASCADE
-- (called at the command's end by dpsynth_follow_rename): in the renamed table, or the type's
-- typed tables, and the tables below them, into which the rename recursed, a privacy unit and the
-- columns constant within a unit named old are named new.  By the old name only, the unit's
-- authority: a restored table whose unit attnum names another column keeps refusing (src/units.c)
-- until the owner points the unit back at its column by name, and a column that only sits at the
-- unit's attnum never becomes the unit.
CREATE FUNCTION dpsynth._unit_follows_rename(rel oid, old_name text, new_name text) RETURNS void
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
$$;
REVOKE ALL ON FUNCTION dpsynth._unit_follows_rename(oid, text, text) FROM PUBLIC;
CREATE FUNCTION dpsynth._follow_rename() RETURNS event_trigger
	AS 'MODULE_PATHNAME', 'dpsynth_follow_rename' LANGUAGE C;
REVOKE ALL ON FUNCTION dpsynth._follow_rename() FROM PUBLIC;
-- (named to fire before dpsynth_on_alter, which brings the unit-constant attnums to their names)
CREATE EVENT TRIGGER dpsynth_follow_rename ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'ALTER FOREIGN TABLE', 'ALTER TYPE') EXECUTE FUNCTION dpsynth._follow_rename();

CREATE OR REPLACE FUNCTION dpsynth._on_alter() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
	cmd record;
	tree oid[];
	cat regclass;
BEGIN
	FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands()
			   WHERE classid IN ('pg_catalog.pg_class'::regclass, 'pg_catalog.pg_namespace'::regclass) LOOP
		UPDATE dpsynth.budgets b SET relname = dpsynth._qualified_name(b.relid)
			FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE c.oid = b.relid
			  AND (b.relid = cmd.objid OR c.relnamespace = cmd.objid)
			  AND b.relname <> dpsynth._qualified_name(b.relid)
			  -- a rename changes one part: the other must be what the row says
			  AND (pg_catalog.starts_with(b.relname, pg_catalog.format('%I.', n.nspname))
				   OR pg_catalog.right(b.relname, pg_catalog.length(pg_catalog.format('.%I', c.relname)))
					  = pg_catalog.format('.%I', c.relname));
		-- a renamed column (its privacy unit and unit-constant names follow it in
		-- dpsynth._unit_follows_rename, fired just before)
		IF cmd.objsubid > 0 THEN
			-- its domain and policy: the attnums first brought back to the names
			PERFORM dpsynth._domains_by_name(cmd.objid);
			-- its rows and those of the tables below it, into which the rename recursed (their rows
			-- were brought back to their columns before it ran, dpsynth_guard_ddl): in each table,
			-- the row at the attnum of its column of the new name follows, once its own name is gone
			-- from that table
			tree := ARRAY[cmd.objid] || ARRAY(WITH RECURSIVE down(t) AS (
								SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = cmd.objid
								UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.t)
							SELECT t FROM down);
			FOREACH cat IN ARRAY ARRAY['dpsynth.domains'::regclass, 'dpsynth.column_policies'::regclass] LOOP
				EXECUTE pg_catalog.format($q$
					UPDATE %s r SET attname = a.attname
					FROM pg_catalog.pg_attribute pa, pg_catalog.pg_attribute a
					WHERE r.relid = ANY ($1) AND pa.attrelid = $2 AND pa.attnum = $3
					  AND a.attrelid = r.relid AND a.attname = pa.attname AND NOT a.attisdropped
					  AND r.attnum = a.attnum AND r.attname <> a.attname
					  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
									  WHERE o.attrelid = r.relid AND o.attname = r.attname AND NOT o.attisdropped)$q$, cat)
					USING tree, cmd.objid, cmd.objsubid;
			END LOOP;
		END IF;
		PERFORM dpsynth._unit_constant_by_name(cmd.objid);
		PERFORM dpsynth._domains_by_name(cmd.objid);
	END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION dpsynth._on_drop() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	DELETE FROM dpsynth.budgets b
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid = 0 AND b.relid = o.objid;
	-- a dropped column's policy and domain go with it (also where a parent's DROP COLUMN
	-- recursed into the table): a column later added under its name starts without them, and a
	-- restore cannot bring two rows of one name.  Only the rows at its attnum that carry its
	-- name: a restored table's rows may still sit at their old attnums (another column's row at
	-- the dropped one's attnum), and an unnamed row (a dump of 0.6.0 or older) may be any
	-- column's; those stay, and a release refuses them (dpsynth._domains_for_release)
	DELETE FROM dpsynth.column_policies p
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid > 0 AND p.relid = o.objid
		  AND p.attnum = o.objsubid AND p.attname = o.address_names[pg_catalog.array_upper(o.address_names, 1)];
	DELETE FROM dpsynth.domains d
		USING pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid > 0 AND d.relid = o.objid
		  AND d.attnum = o.objsubid AND d.attname = o.address_names[pg_catalog.array_upper(o.address_names, 1)];
	-- a dropped privacy unit column's name is forgotten (matched by name: a restored table's unit
	-- attnum may name another column): releases refuse the table, and no column given that name
	-- later becomes the unit by dp_privacy_unit after spending
	UPDATE dpsynth.budgets b SET privacy_unit_name = NULL
		FROM pg_catalog.pg_event_trigger_dropped_objects() o
		WHERE o.classid = 'pg_catalog.pg_class'::regclass AND o.objsubid > 0 AND b.relid = o.objid
		  AND b.privacy_unit_name = o.address_names[pg_catalog.array_upper(o.address_names, 1)];
END
$$;
