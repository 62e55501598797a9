-- Lone heaps' mates (dp_binning_heap_mates): a real column recorded at whole numbers, heaped at
-- each integer 53..62, learns bins such as [55, 56) and [56, 56.5) beside [57, 57.5): the lone
-- heaps (57, 58, 59, each between bins of next to nothing) are drawn at their round value, and so
-- are the bins at their step (1) that start on it and stand out of the column's background, though
-- a heap next to them keeps them from being lone.
\i test/regress_helpers.sql

-- 36,000 rows: t at the integers 53..62 (97%), the rest spread to a tenth over [50, 65)
CREATE TABLE tb (t float8 NOT NULL, g text NOT NULL);
INSERT INTO tb SELECT (ARRAY[53,54,54,55,55,55,56,56,56,56,56,57,57,57,57,57,58,58,58,58,59,59,59,60,60,61,62])[1 + (i * 7) % 27],
	(ARRAY['a','b','c'])[1 + i % 3] FROM generate_series(1, 35000) i;
INSERT INTO tb SELECT 50 + (i * 37 % 150) / 10.0, (ARRAY['a','b','c'])[1 + i % 3] FROM generate_series(1, 1000) i;
SELECT dp_protect('tb', epsilon => 50);
SELECT dp_declare('tb', 't', lower => 40, upper => 100);
SELECT dp_declare('tb', 'g', categories => ARRAY['a','b','c']);
SELECT true AS synthesized FROM dp_synthesize('tb', epsilon => 3, target => 'tb_synth');
-- nearly every synthetic value is a whole number, as 97% of the real ones are (each bin drawn
-- across its width: about 60%), and 55 (in a bin [55, 56) beside the heap at 56) holds its share
SELECT avg((t = round(t))::int) > 0.9 AS whole_numbers,
	   avg((t = 55)::int) BETWEEN 0.08 AND 0.14 AS heap_at_55
FROM tb_synth;
DROP TABLE tb, tb_synth;
