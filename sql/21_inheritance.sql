-- A row counts under one protected table (one budget) only, whatever way a table joins a
-- protected tree: CREATE [FOREIGN] TABLE ... INHERITS / PARTITION OF, ALTER [FOREIGN] TABLE ...
-- INHERIT / ATTACH PARTITION, dp_protect.  One guard (dpsynth._guard_tree) refuses with 55000
-- any of them that would put a row under two protected tables, through any path (issue 36,
-- finding 6); trees with one protected table at most stay free.
\i test/regress_helpers.sql
SET client_min_messages = warning;
CREATE TABLE p1 (g text NOT NULL);
CREATE TABLE p2 (g text NOT NULL);
CREATE TABLE free1 (g text NOT NULL);
SELECT dp_protect('p1', epsilon => 10);
SELECT dp_protect('p2', epsilon => 10);

-- CREATE TABLE ... INHERITS two protected parents: refused, nothing created
SELECT try_sql($$CREATE TABLE c12 () INHERITS (p1, p2)$$) AS create_two_roots;
SELECT to_regclass('c12') IS NULL AS not_created;
-- one protected parent and a free one: accepted
CREATE TABLE c1f () INHERITS (p1, free1);
-- two parents under the same protected table: accepted (one budget)
CREATE TABLE a1 () INHERITS (p1);
CREATE TABLE b1 () INHERITS (p1);
CREATE TABLE g11 () INHERITS (a1, b1);
-- a grandchild under two protected tables through different paths: refused
CREATE TABLE a2 () INHERITS (p2);
SELECT try_sql($$CREATE TABLE g12 () INHERITS (a1, a2)$$) AS create_grandchild_two_roots;

-- ALTER TABLE ... INHERIT: the table, or a table below it, would count under both
CREATE TABLE lone (g text NOT NULL);
CREATE TABLE lone_child () INHERITS (lone);
ALTER TABLE lone INHERIT p1;
SELECT try_sql($$ALTER TABLE lone INHERIT p2$$) AS inherit_second_root;
-- two INHERITs in one statement are checked together
CREATE TABLE lone2 (g text NOT NULL);
SELECT try_sql($$ALTER TABLE lone2 INHERIT p1, INHERIT p2$$) AS inherit_two_at_once;
-- x is free, but its child d is under p1 through a1: x cannot join p2
CREATE TABLE x (g text NOT NULL);
CREATE TABLE d () INHERITS (x, a1);
SELECT try_sql($$ALTER TABLE x INHERIT a2$$) AS inherit_descendant_second_root;
-- ... and joining p1 again through x is one budget: accepted
ALTER TABLE x INHERIT p1;
-- x leaving p1 would keep p1's protection, and d would stay under p1 through a1: refused
SELECT try_sql($$ALTER TABLE x NO INHERIT p1$$) AS no_inherit_second_root;

-- dp_protect: on a second parent of a child already under a protected table, on a table with
-- a descendant under another protected table, inside or above a protected table: refused
SELECT try_sql($$SELECT dp_protect('free1', epsilon => 1)$$) AS protect_second_parent;
SELECT try_sql($$SELECT dp_protect('x', epsilon => 1)$$) AS protect_inside_other_root;
CREATE TABLE y (g text NOT NULL);
CREATE TABLE y_child () INHERITS (y, a1);
SELECT try_sql($$SELECT dp_protect('y', epsilon => 1)$$) AS protect_above_other_root;
SELECT try_sql($$SELECT dp_protect('a1', epsilon => 1)$$) AS protect_inside;
CREATE TABLE top (g text NOT NULL);
ALTER TABLE p2 INHERIT top;
SELECT try_sql($$SELECT dp_protect('top', epsilon => 1)$$) AS protect_above;
ALTER TABLE p2 NO INHERIT top;
-- a free tree, and a protected table's own budget changed: accepted
CREATE TABLE q (g text NOT NULL);
CREATE TABLE q_child () INHERITS (q);
SELECT dp_protect('q', epsilon => 1);
SELECT dp_protect('p1', epsilon => 20);
SELECT relname FROM dpsynth.budgets
WHERE relid::regclass::text = ANY (ARRAY['p1', 'p2', 'q', 'q_child', 'free1', 'x', 'y', 'a1', 'top', 'lone']) ORDER BY 1;

-- Partitions: PARTITION OF and ATTACH PARTITION go through the same guard
CREATE TABLE pt (g text NOT NULL) PARTITION BY LIST (g);
SELECT dp_protect('pt', epsilon => 10);
CREATE TABLE pt_a PARTITION OF pt FOR VALUES IN ('a');
CREATE TABLE pt_b (g text NOT NULL);
SELECT dp_protect('pt_b', epsilon => 1);
SELECT try_sql($$ALTER TABLE pt ATTACH PARTITION pt_b FOR VALUES IN ('b')$$) AS attach_protected;
CREATE TABLE pt_c (g text NOT NULL);
ALTER TABLE pt ATTACH PARTITION pt_c FOR VALUES IN ('c');

-- Foreign tables: CREATE FOREIGN TABLE ... INHERITS and ALTER FOREIGN TABLE ... INHERIT
CREATE FOREIGN DATA WRAPPER regress_inh_fdw;
CREATE SERVER regress_inh_server FOREIGN DATA WRAPPER regress_inh_fdw;
SELECT try_sql($$CREATE FOREIGN TABLE f12 () INHERITS (p1, p2) SERVER regress_inh_server$$) AS create_foreign_two_roots;
CREATE FOREIGN TABLE f1 () INHERITS (p1) SERVER regress_inh_server;
SELECT try_sql($$ALTER FOREIGN TABLE f1 INHERIT p2$$) AS alter_foreign_inherit;
SELECT try_sql($$CREATE FOREIGN TABLE pt_f PARTITION OF pt FOR VALUES IN ('f') SERVER regress_inh_server$$) AS foreign_partition;

-- CREATE SCHEMA's table elements (subcommands, which fire no event trigger of their own) go
-- through the same guard: refused, and neither the schema nor the table is created
SELECT try_sql($$CREATE SCHEMA inh_s CREATE TABLE c12 () INHERITS (p1, p2)$$) AS schema_element_two_roots;
SELECT to_regnamespace('inh_s') IS NULL AS schema_not_created;
SELECT try_sql($$CREATE SCHEMA inh_s CREATE TABLE a1 (g text NOT NULL) CREATE TABLE c () INHERITS (inh_s.a1, p2)
				 CREATE TABLE d () INHERITS (p1, p2)$$) AS schema_later_element_two_roots;
SELECT try_sql($$CREATE SCHEMA inh_s CREATE TABLE pt_s PARTITION OF public.pt FOR VALUES IN ('s')$$) AS schema_partition;
DROP SCHEMA inh_s CASCADE;

-- NO INHERIT from one of two parents under the same protected table: the child is still read
-- with it, so it gets no budget of its own (that would count its rows twice)
ALTER TABLE g11 NO INHERIT a1;
SELECT count(*) AS g11_budgets FROM dpsynth.budgets WHERE relid = 'g11'::regclass;
-- NO INHERIT from its only protected tree: the child keeps the protection (as before)
ALTER TABLE g11 NO INHERIT b1;
SELECT relname FROM dpsynth.budgets WHERE relid = 'g11'::regclass;

-- A state made with the guard switched off (only a superuser can): releases refuse it before
-- any charge
ALTER EVENT TRIGGER dpsynth_guard_ddl DISABLE;
CREATE TABLE c12 () INHERITS (p1, p2);
ALTER EVENT TRIGGER dpsynth_guard_ddl ENABLE;
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT try_sql($$SELECT * FROM dp_marginal('p1', ARRAY['g'], epsilon => 1)$$) AS release_two_roots;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
DROP TABLE c12;

RESET client_min_messages;
DROP TABLE p1, p2, free1, top, q, x, y, lone, lone2, pt, pt_b, g11 CASCADE;
DROP SERVER regress_inh_server CASCADE;
DROP FOREIGN DATA WRAPPER regress_inh_fdw;
