-- dpsynth 0.3.1 -> 0.3.2: a column's encoder as an SQL expression a shard can run
-- (dpsynth._encoder), and the C encoder on one value (dpsynth._encode), which tests pin it to.
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.2'" to load this file. \quit

-- BEGIN encoders (issue 12 item 4; src/encoder.c, docs/DISTRIBUTED.md "Next step", item 1).  A
-- column's encoder as an SQL expression of built-in functions over the column, which a shard can
-- run where its rows are, and the C encoder on one value, which tests pin the expression to.
-- Neither reads the table: the expression is a function of the column's public domain, and
-- _encode maps a value the caller supplies.  The extension owner's tools: no EXECUTE for PUBLIC.
-------------------------------------------------------------------------------
CREATE FUNCTION dpsynth._encoder(tbl regclass, col name, OUT expression text, OUT codes int4)
	AS 'MODULE_PATHNAME', 'dpsynth_encoder' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION dpsynth._encoder(regclass, name) IS
	'the column''s encoder as an SQL expression over the column (its cell code under the public domain, as dpsynth encodes it), and the number of codes';
CREATE FUNCTION dpsynth._encode(tbl regclass, col name, value anyelement) RETURNS int4
	AS 'MODULE_PATHNAME', 'dpsynth_encode_value' LANGUAGE C STABLE;
COMMENT ON FUNCTION dpsynth._encode(regclass, name, anyelement) IS
	'the cell code dpsynth gives a value of the column under its public domain (NULL: the NULL cell)';
REVOKE ALL ON FUNCTION dpsynth._encoder(regclass, name), dpsynth._encode(regclass, name, anyelement) FROM PUBLIC;
-- END encoders
