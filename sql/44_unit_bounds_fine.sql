-- The bounds of a number column without a domain, per unit (issue 39): two stages as per row,
-- the log grid's span (stage 1) and a linear grid over it (stage 2), each cell of each counting
-- the units with a kept row in it (L2 sensitivity sqrt(k) each; docs/PRIVACY.md, "Discovery per
-- unit").  Stage 1 alone reads its bounds at the log grid's cells (an eighth of a power of two:
-- 64 wide from 512 to 1024, 128 from 1024 to 2048); stage 2 narrows them to the values.
SET client_min_messages = warning;
-- 2,000 persons of 3 rows, x from 1,000 to 1,010: stage 1's cells are 960..1023 and 1024..1151
CREATE TABLE fine_u (person int4 NOT NULL, x int4 NOT NULL);
INSERT INTO fine_u SELECT i, 1000 + (7 * i + 3 * j) % 11 FROM generate_series(1, 2000) i, generate_series(1, 3) j;
SELECT dp_protect('fine_u', epsilon => 100);
SELECT dp_privacy_unit('fine_u', 'person', max_rows_per_unit => 3);
SELECT column_name, kind FROM dp_discover('fine_u', 10);
-- within 10 of the values (stage 1 alone: 960 and 1023, or 1151)
SELECT lower BETWEEN 990 AND 1000 AS lower_near_1000, upper BETWEEN 1010 AND 1020 AS upper_near_1010
FROM dp_domains WHERE table_name = 'fine_u'::regclass AND column_name = 'x';
-- the same per row (the path it now shares)
CREATE TABLE fine_r AS SELECT x FROM fine_u;
SELECT dp_protect('fine_r', epsilon => 100);
SELECT column_name, kind FROM dp_discover('fine_r', 10);
SELECT lower BETWEEN 990 AND 1000 AS lower_near_1000, upper BETWEEN 1010 AND 1020 AS upper_near_1010
FROM dp_domains WHERE table_name = 'fine_r'::regclass AND column_name = 'x';
-- a real column per unit, k learned: 0.5 to 0.6 (stage 1's cells: 0.5..0.5625 and 0.5625..0.625)
CREATE TABLE fine_ur (person int4 NOT NULL, y float8 NOT NULL);
INSERT INTO fine_ur SELECT i, 0.5 + ((7 * i + 3 * j) % 101) / 1000.0 FROM generate_series(1, 2000) i, generate_series(1, 3) j;
SELECT dp_protect('fine_ur', epsilon => 100);
SELECT dp_privacy_unit('fine_ur', 'person', max_rows_per_unit => NULL);
SELECT column_name, kind FROM dp_discover('fine_ur', 10);
SELECT lower BETWEEN 0.49 AND 0.5 AS lower_near_05, upper BETWEEN 0.6 AND 0.61 AS upper_near_06
FROM dp_domains WHERE table_name = 'fine_ur'::regclass AND column_name = 'y';
