-- dpsynth 0.8.0 -> 0.9.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.9.0'" to load this file. \quit

-- 0.9.0: a privacy unit's name and the names of the columns constant within a unit follow a
-- rename through a parent into the tables below it, as their domains and policies do.
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
		-- a renamed privacy unit column: its name follows, once the old name is gone from the table
		-- (a restored table whose attnum names another column keeps the old name, and is refused)
		UPDATE dpsynth.budgets b SET privacy_unit_name = a.attname
			FROM pg_catalog.pg_attribute a
			WHERE b.relid = cmd.objid AND a.attrelid = b.relid AND a.attnum = b.privacy_unit
			  AND NOT a.attisdropped AND a.attname <> b.privacy_unit_name
			  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
							  WHERE o.attrelid = b.relid AND o.attname = b.privacy_unit_name AND NOT o.attisdropped);
		IF cmd.objsubid > 0 THEN
			-- the tables below it, into which a rename recursed (their rows were brought back to
			-- their columns before it ran, dpsynth_guard_ddl), each at the attnum of its column of
			-- the new name
			tree := ARRAY[cmd.objid] || ARRAY(WITH RECURSIVE down(t) AS (
								SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = cmd.objid
								UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN down ON i.inhparent = down.t)
							SELECT t FROM down);
			-- in each, a renamed privacy unit column's name follows as above
			UPDATE dpsynth.budgets b SET privacy_unit_name = a.attname
				FROM pg_catalog.pg_attribute pa, pg_catalog.pg_attribute a
				WHERE b.relid = ANY (tree) AND pa.attrelid = cmd.objid AND pa.attnum = cmd.objsubid
				  AND a.attrelid = b.relid AND a.attname = pa.attname AND NOT a.attisdropped
				  AND a.attnum = b.privacy_unit AND a.attname <> b.privacy_unit_name
				  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
								  WHERE o.attrelid = b.relid AND o.attname = b.privacy_unit_name AND NOT o.attisdropped);
			-- and a renamed column constant within a unit: its name follows when the renamed column
			-- is at its attnum and the old name is gone; then the attnums follow the names (after a
			-- restore)
			UPDATE dpsynth.budgets b SET unit_constant_names =
				ARRAY(SELECT CASE WHEN u.num = a.attnum
								   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute o
												   WHERE o.attrelid = b.relid AND o.attname = u.nm
													 AND NOT o.attisdropped) THEN a.attname ELSE u.nm END
					  FROM unnest(b.unit_constant, b.unit_constant_names) WITH ORDINALITY u(num, nm, i)
					  ORDER BY u.i)
				FROM pg_catalog.pg_attribute pa, pg_catalog.pg_attribute a
				WHERE b.relid = ANY (tree) AND pa.attrelid = cmd.objid AND pa.attnum = cmd.objsubid
				  AND a.attrelid = b.relid AND a.attname = pa.attname AND NOT a.attisdropped
				  AND b.unit_constant_names IS NOT NULL;
			-- a renamed column's domain: the same, its attnum first brought back to the names
			PERFORM dpsynth._domains_by_name(cmd.objid);
			-- its rows and those of the tables below it: in each table, the row at the attnum of its
			-- column of the new name follows, once its own name is gone from that table
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
