-- LOG messages go to no client whose role is not a superuser while dpsynth is loaded
-- (src/log_guard.c): with debug_print_plan, the
-- planner's estimates of a table the role may not read (its row count, its most common values'
-- counts) would reach it before "permission denied", and so would the plans of the statements a
-- release runs as the extension owner.
\i test/regress_helpers.sql
LOAD 'dpsynth';
CREATE ROLE regress_msg_analyst IN ROLE dpsynth_analyst;
CREATE TABLE msg (city text, n int4);
INSERT INTO msg SELECT 'c' || (i % 7), i FROM generate_series(1, 2000) i;
ANALYZE msg;
SELECT dp_protect('msg', epsilon => 10);
SELECT dp_declare('msg', 'city', categories => ARRAY['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
-- a superuser still sees LOG messages
SET client_min_messages = log;
DO $$ BEGIN RAISE LOG 'a LOG message for a superuser'; END $$;
RESET client_min_messages;
SET ROLE regress_msg_analyst;
SET client_min_messages = log;
SET debug_print_plan = on;
-- the analyst's own query on the table: refused, and no plan (no estimate) before the refusal
EXPLAIN SELECT * FROM msg WHERE city = 'c3';
-- a release: no plan of dpsynth's own statements either
SELECT count(*) AS cells FROM dp_marginal('msg', ARRAY['city'], epsilon => 1);
DO $$ BEGIN RAISE LOG 'a LOG message for an analyst'; END $$;
RESET debug_print_plan;
RESET client_min_messages;
RESET ROLE;
-- a member of pg_read_all_stats reads the statistics views, not the planner's statistics: no LOG
GRANT pg_read_all_stats TO regress_msg_analyst;
SET ROLE regress_msg_analyst;
SET client_min_messages = log;
DO $$ BEGIN RAISE LOG 'a LOG message for a member of pg_read_all_stats'; END $$;
RESET client_min_messages;
RESET ROLE;
-- the superuser's switch: off, the analyst's client gets them
REVOKE pg_read_all_stats FROM regress_msg_analyst;
SET dpsynth.restrict_client_messages = off;
SET ROLE regress_msg_analyst;
SET client_min_messages = log;
DO $$ BEGIN RAISE LOG 'a LOG message with the guard off'; END $$;
RESET client_min_messages;
RESET ROLE;
RESET dpsynth.restrict_client_messages;
SET ROLE regress_msg_analyst;
SELECT try_sql($$SET dpsynth.restrict_client_messages = off$$) AS analyst_cannot_switch;
RESET ROLE;
DROP TABLE msg;
DROP ROLE regress_msg_analyst;
