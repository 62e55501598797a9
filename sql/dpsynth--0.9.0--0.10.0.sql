-- dpsynth 0.9.0 -> 0.10.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.10.0'" to load this file. \quit

-- ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE: the domains and column policies of the tables of
-- that composite type follow the rename, as the privacy unit's name already does
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
			-- its rows and those of the tables below it, into which the rename recursed: the
			-- children (their rows were brought back to their columns before it ran,
			-- dpsynth_guard_ddl) and, for ALTER TYPE ... RENAME ATTRIBUTE ... CASCADE, the tables
			-- of that composite type and theirs.  In each table, the row at the attnum of its column
			-- of the new name follows, once its own name is gone from that table (a row whose
			-- attnum a restore left stale stays, and a release refuses it)
			tree := ARRAY[cmd.objid] || ARRAY(WITH RECURSIVE down(t) AS (
								SELECT inhrelid FROM pg_catalog.pg_inherits WHERE inhparent = cmd.objid
								UNION SELECT c.oid FROM pg_catalog.pg_class c, pg_catalog.pg_class ty
									WHERE ty.oid = cmd.objid AND ty.relkind = 'c' AND c.reloftype = ty.reltype
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
DROP EVENT TRIGGER dpsynth_on_alter;
CREATE EVENT TRIGGER dpsynth_on_alter ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'ALTER SCHEMA', 'ALTER TYPE') EXECUTE FUNCTION dpsynth._on_alter();
