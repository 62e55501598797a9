-- dpsynth 0.8.0 -> 0.9.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.9.0'" to load this file. \quit

-- 0.9.0: a privacy unit and the columns constant within a unit follow a RENAME COLUMN by their
-- old name, before it runs (dpsynth_guard_ddl), in the table and the tables below it; _on_alter no
-- longer gives the unit the name of whatever column sits at its attnum.
-- RENAME COLUMN old TO new of a table (called by dpsynth_guard_ddl before the command runs, so
-- in its transaction): in the table and the tables below it, into which the rename recurses, a
-- privacy unit and the columns constant within a unit named old are named new.  By name, the
-- unit's authority: a restored table whose unit attnum names another column keeps refusing
-- (src/units.c) until the owner points the unit back at its column by name, and a column that
-- only sits at the unit's attnum never becomes the unit.
CREATE FUNCTION dpsynth._unit_follows_rename(tree oid[], old_name text, new_name text) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
	UPDATE dpsynth.budgets b SET privacy_unit_name = new_name::name
		WHERE b.relid = ANY (tree) AND b.privacy_unit_name = old_name::name
		  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
					  WHERE a.attrelid = b.relid AND a.attname = old_name::name AND NOT a.attisdropped);
	UPDATE dpsynth.budgets b SET unit_constant_names =
			ARRAY(SELECT CASE WHEN u.nm = old_name::name THEN new_name::name ELSE u.nm END
				  FROM unnest(b.unit_constant_names) WITH ORDINALITY u(nm, i) ORDER BY u.i)
		WHERE b.relid = ANY (tree) AND old_name::name = ANY (b.unit_constant_names)
		  AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
					  WHERE a.attrelid = b.relid AND a.attname = old_name::name AND NOT a.attisdropped);
$$;
REVOKE ALL ON FUNCTION dpsynth._unit_follows_rename(oid[], text, text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION dpsynth._on_alter() RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
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
		-- a renamed column (its privacy unit and unit-constant names were renamed before the
		-- command ran: dpsynth_guard_ddl, dpsynth._unit_follows_rename)
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
