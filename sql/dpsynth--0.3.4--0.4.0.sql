-- dpsynth 0.3.4 -> 0.4.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.4.0'" to load this file. \quit

-- CREATE SCHEMA ... CREATE TABLE ... INHERITS / PARTITION OF: the schema's elements are guarded
-- too (their subcommands fire no event trigger of their own).
DROP EVENT TRIGGER dpsynth_guard_ddl;
CREATE EVENT TRIGGER dpsynth_guard_ddl ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP OWNED', 'DROP SCHEMA', 'ALTER TABLE', 'ALTER FOREIGN TABLE',
				 'CREATE TABLE', 'CREATE FOREIGN TABLE', 'CREATE SCHEMA') EXECUTE FUNCTION dpsynth._guard_ddl();
