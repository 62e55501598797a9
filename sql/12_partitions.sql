-- Partitioned and inherited tables are protected as one table: one budget for all their rows,
-- every partition read, no partition with a budget of its own, and attaching or detaching a
-- partition keeps every row under exactly one budget (issue 12, item 3).
\i test/regress_helpers.sql
CREATE ROLE regress_part_analyst IN ROLE dpsynth_analyst;
CREATE TABLE part (region text NOT NULL, k integer NOT NULL, v integer) PARTITION BY LIST (region);
CREATE TABLE part_n PARTITION OF part FOR VALUES IN ('n');
-- a partition whose columns sit elsewhere (a dropped column, another order): read by name
CREATE TABLE part_s (junk int, v integer, k integer NOT NULL, region text NOT NULL);
ALTER TABLE part_s DROP COLUMN junk;
ALTER TABLE part ATTACH PARTITION part_s FOR VALUES IN ('s');
INSERT INTO part SELECT (ARRAY['n', 's'])[1 + i % 2], (i / 2) % 4, i FROM generate_series(1, 4000) i;
SELECT dp_protect('part', epsilon => 1000);
SELECT dp_declare('part', 'region', categories => ARRAY['n', 's', 'e']);
SELECT dp_declare('part', 'k', lower => 0, upper => 3);
SELECT b.relname, c.relkind FROM dpsynth.budgets b JOIN pg_class c ON c.oid = b.relid;

-- Every partition is read, each row in the right cell (noise is small at this epsilon: sigma < 1).
SET ROLE regress_part_analyst;
SELECT cell, abs(noisy_count - CASE WHEN cell[1] = 'e' OR cell[1] IS NULL THEN 0 ELSE 500 END) < 10 AS close
FROM dp_marginal('part', ARRAY['region', 'k'], epsilon => 200) ORDER BY 1;
-- A partition is not protected on its own, and cannot be: its rows have their budget.
SELECT try_sql($$SELECT * FROM dp_marginal('part_n', ARRAY['k'], epsilon => 1)$$) AS partition_release;
RESET ROLE;
SELECT try_sql($$SELECT dp_protect('part_n', epsilon => 1)$$) AS protect_partition;

-- A synthetic copy of the whole table: an ordinary table with the same columns.
CREATE SCHEMA part_space;
GRANT CREATE, USAGE ON SCHEMA part_space TO regress_part_analyst;
SET ROLE regress_part_analyst;
SELECT rows_written BETWEEN 3900 AND 4100 AS about_all_rows
FROM dp_synthesize('part', epsilon => 200, target => 'part_space.part_copy');
SELECT relkind, (SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
				 WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped) AS columns
FROM pg_class c WHERE oid = 'part_space.part_copy'::regclass;
-- both partitions' regions; 'e', declared but empty, has a noisy count near 0, and the rows are
-- drawn with their expected counts (maximum entropy, dp_maxent.h), so a row or two of it may appear
SELECT count(DISTINCT region) FILTER (WHERE region IN ('n', 's')) = 2 AS both_regions,
	   count(*) FILTER (WHERE region NOT IN ('n', 's')) < 10 AS others_rare FROM part_space.part_copy;
RESET ROLE;

-- A partition attached later is read with the others.
CREATE TABLE part_e (region text NOT NULL, k integer NOT NULL, v integer);
INSERT INTO part_e SELECT 'e', i % 4, i FROM generate_series(1, 800) i;
ALTER TABLE part ATTACH PARTITION part_e FOR VALUES IN ('e');
SET ROLE regress_part_analyst;
SELECT cell, abs(noisy_count - 200) < 10 AS close
FROM dp_marginal('part', ARRAY['region', 'k'], epsilon => 200) WHERE cell[1] = 'e' ORDER BY 1;
RESET ROLE;

-- A table with a budget of its own cannot be attached: its rows would have two budgets.
CREATE TABLE part_w (region text NOT NULL, k integer NOT NULL, v integer);
SELECT dp_protect('part_w', epsilon => 1);
SELECT try_sql($$ALTER TABLE part ATTACH PARTITION part_w FOR VALUES IN ('w')$$) AS attach_protected;
DROP TABLE part_w;

-- A partition detached keeps the protection its rows had: the same budget, spent, domains and
-- role limits, and a ledger that adds up to what it spent.
SELECT dp_limit_role('part', 'regress_part_analyst', epsilon => 900);
SELECT rho_spent AS part_spent FROM dpsynth.budgets WHERE relid = 'part'::regclass \gset
ALTER TABLE part DETACH PARTITION part_s;
SELECT b.relname, b.epsilon, b.rho_spent = :part_spent AS same_spent,
	   b.rho_spent = (SELECT sum(rho) FROM dpsynth.ledger l WHERE l.budget_id = b.id) AS ledger_adds_up,
	   (SELECT count(*) FROM dpsynth.domains d WHERE d.relid = b.relid) AS domains,
	   (SELECT count(*) FROM dpsynth.role_limits r WHERE r.relid = b.relid) AS role_limits
FROM dpsynth.budgets b WHERE b.relid = 'part_s'::regclass;
-- its domains are keyed by its own column numbers (its columns sit elsewhere than the parent's)
SELECT column_name, categories, lower, upper FROM dp_domains
WHERE table_name = 'part_s'::regclass AND column_name <> 'v' ORDER BY 1;
-- v (1 to 4000 over both partitions) was learned by DP: its bounds cover the rows of both
SELECT lower::float8 BETWEEN 0 AND 10 AND upper::float8 BETWEEN 3900 AND 4200 AS v_bounds_cover_both_partitions
FROM dp_domains WHERE table_name = 'part_s'::regclass AND column_name = 'v';
SET ROLE regress_part_analyst;
SELECT count(*) AS cells FROM dp_marginal('part_s', ARRAY['region', 'k'], epsilon => 1);
SELECT my_rho_remaining < (SELECT rho_limit FROM dp_role_limits WHERE table_name = 'part_s'::regclass) AS limit_counts_what_was_spent
FROM dp_budget WHERE table_name = 'part_s'::regclass;
RESET ROLE;
-- ... and, once detached, it cannot come back while it has a budget of its own
SELECT try_sql($$ALTER TABLE part ATTACH PARTITION part_s FOR VALUES IN ('s')$$) AS reattach;

-- Inheritance: a parent's releases read its children; NO INHERIT hands the protection along.
CREATE TABLE inh_parent (g text NOT NULL);
CREATE TABLE inh_child (extra int) INHERITS (inh_parent);
INSERT INTO inh_parent SELECT 'a' FROM generate_series(1, 300);
INSERT INTO inh_child SELECT 'b', 1 FROM generate_series(1, 300);
SELECT dp_protect('inh_parent', epsilon => 1000);
SELECT dp_declare('inh_parent', 'g', categories => ARRAY['a', 'b']);
SELECT cell, abs(noisy_count - CASE WHEN cell[1] IS NULL THEN 0 ELSE 300 END) < 10 AS close
FROM dp_marginal('inh_parent', ARRAY['g'], epsilon => 200) ORDER BY 1;
SELECT try_sql($$SELECT dp_protect('inh_child', epsilon => 1)$$) AS protect_child;
ALTER TABLE inh_child NO INHERIT inh_parent;
SELECT relname, rho_spent > 0 AS spent_carried FROM dpsynth.budgets WHERE relid = 'inh_child'::regclass;
CREATE TABLE inh_other (g text NOT NULL);
SELECT try_sql($$ALTER TABLE inh_child INHERIT inh_parent$$) AS inherit_protected;
-- an unprotected table may join
ALTER TABLE inh_other INHERIT inh_parent;

-- A foreign or temporary child is refused before anything is charged.
CREATE TEMP TABLE inh_temp () INHERITS (inh_parent);
SELECT count(*) AS ledger_before FROM dpsynth.ledger \gset
SELECT try_sql($$SELECT * FROM dp_marginal('inh_parent', ARRAY['g'], epsilon => 1)$$) AS temp_child;
SELECT count(*) = :ledger_before AS nothing_charged FROM dpsynth.ledger;
DROP TABLE inh_temp;

DROP TABLE part, part_s, inh_parent, inh_child, inh_other CASCADE;
DROP SCHEMA part_space CASCADE;
DROP ROLE regress_part_analyst;
