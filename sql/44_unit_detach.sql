-- A table leaving a tree protected per unit (DETACH PARTITION, NO INHERIT) keeps the tree's
-- privacy unit, its bounds and its columns constant within a unit, by their names: its budget
-- carries what the tree spent per unit, and dp_privacy_unit cannot set a unit once anything is
-- spent, so a budget per row would protect its rows, not its persons, for good.
\i test/regress_helpers.sql
-- the unit column at another attnum in the partition (a dropped column before it)
CREATE TABLE ud (patient_id int8, dept text, sex text, x int4) PARTITION BY LIST (dept);
CREATE TABLE ud_a (x int4, junk int4, sex text, dept text, patient_id int8);
ALTER TABLE ud_a DROP COLUMN junk;
ALTER TABLE ud ATTACH PARTITION ud_a FOR VALUES IN ('a');
CREATE TABLE ud_b PARTITION OF ud FOR VALUES IN ('b');
-- patient 1: 20 rows in each partition; patients 2..11: one row each in ud_b
INSERT INTO ud SELECT 1, 'a', 'f', g FROM generate_series(1, 20) g;
INSERT INTO ud SELECT 1, 'b', 'f', g FROM generate_series(1, 20) g;
INSERT INTO ud SELECT g, 'b', 'm', 1 FROM generate_series(2, 11) g;
SELECT dp_protect('ud', epsilon => 1e6);
SELECT dp_privacy_unit('ud', 'patient_id', 4);
SELECT dp_unit_constant('ud', ARRAY['sex']);
SELECT dp_declare('ud', 'dept', categories => ARRAY['a', 'b']);
SELECT dp_declare('ud', 'x', lower => 0, upper => 20, bins => 2);
SELECT sum(noisy_count) AS four_plus_ten FROM dp_marginal('ud', ARRAY['dept'], 1000);
ALTER TABLE ud DETACH PARTITION ud_a;
-- the partition's budget: the tree's spend, unit and bounds, at the partition's own attnums
SELECT b.rho_spent = t.rho_spent AS spent_kept, a.attname AS unit_column, b.privacy_unit_name,
	   b.max_rows_per_unit, b.max_rows_per_cell, b.unit_constant_names,
	   (SELECT array_agg(attname ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = 'ud_a'::regclass AND attnum = ANY (b.unit_constant)) AS unit_constant_columns
FROM dpsynth.budgets b
JOIN dpsynth.budgets t ON t.relid = 'ud'::regclass
LEFT JOIN pg_attribute a ON a.attrelid = b.relid AND a.attnum = b.privacy_unit
WHERE b.relid = 'ud_a'::regclass;
-- its releases still keep at most 4 rows of patient 1 (20 per row), and say so in the ledger
SELECT sum(noisy_count) AS four FROM dp_marginal('ud_a', ARRAY['x'], 1000);
SELECT details->'privacy_unit'->>'column' AS unit, details->'privacy_unit'->>'max_rows_per_unit' AS k
FROM dpsynth.ledger WHERE relid = 'ud_a'::regclass AND function = 'dp_marginal';
-- and the unit cannot be taken off the detached table, as off any table that spent
SELECT try_sql($$SELECT dp_privacy_unit('ud_a', NULL)$$) AS unit_removal;
-- the same through inheritance (NO INHERIT)
CREATE TABLE ui (patient_id int8, x int4);
CREATE TABLE ui_c (y int4) INHERITS (ui);
INSERT INTO ui_c SELECT 1, g, g FROM generate_series(1, 20) g;
SELECT dp_protect('ui', epsilon => 1e6);
SELECT dp_privacy_unit('ui', 'patient_id', 2);
SELECT dp_declare('ui', 'x', lower => 0, upper => 20, bins => 2);
SELECT sum(noisy_count) AS two FROM dp_marginal('ui', ARRAY['x'], 1000);
ALTER TABLE ui_c NO INHERIT ui;
SELECT a.attname AS unit_column, b.max_rows_per_unit FROM dpsynth.budgets b
LEFT JOIN pg_attribute a ON a.attrelid = b.relid AND a.attnum = b.privacy_unit
WHERE b.relid = 'ui_c'::regclass;
SELECT sum(noisy_count) AS two FROM dp_marginal('ui_c', ARRAY['x'], 1000);
-- DETACH ... CONCURRENTLY of a protected tree is refused (a release that began before its first
-- commit would still read the partition and be charged on the tree only), FINALIZE too
CREATE TABLE dc (id int4) PARTITION BY RANGE (id);
CREATE TABLE dc1 PARTITION OF dc FOR VALUES FROM (0) TO (10);
SELECT dp_protect('dc', epsilon => 1);
ALTER TABLE dc DETACH PARTITION dc1 CONCURRENTLY;
SELECT count(*) AS still_attached FROM pg_inherits WHERE inhrelid = 'dc1'::regclass;
-- a budget below or beside the parent is not the tree's: a sibling's budget stays its own, and a
-- tree without a budget detaches as PostgreSQL does, CONCURRENTLY too
CREATE TABLE sib (id int4) PARTITION BY RANGE (id);
CREATE TABLE sib_a PARTITION OF sib FOR VALUES FROM (0) TO (10);
CREATE TABLE sib_b PARTITION OF sib FOR VALUES FROM (10) TO (20);
SELECT dp_protect('sib_a', epsilon => 1);
ALTER TABLE sib DETACH PARTITION sib_b;
SELECT count(*) AS budgets_of_sib_b FROM dpsynth.budgets WHERE relid = 'sib_b'::regclass;
ALTER TABLE sib DETACH PARTITION sib_a CONCURRENTLY;
SELECT count(*) AS budgets_of_sib_a FROM dpsynth.budgets WHERE relid = 'sib_a'::regclass;
DROP TABLE ud, ud_a, ui, ui_c, dc, sib, sib_a, sib_b;
