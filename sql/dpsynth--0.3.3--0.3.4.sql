-- dpsynth 0.3.3 -> 0.3.4: the second audit's fixes (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.4'" to load this file. \quit

-- Which server this is, and its dpsynth: the library's version, the cluster's system identifier
-- and the database's OID, for a coordinator's check before its charge (src/foreign.c).  It runs on
-- a shard over the zero rows of the count statement, beside the aggregates (its argument is the
-- statement's count(*), so that postgres_fdw ships the call).
CREATE FUNCTION dpsynth._shard_identity(bigint) RETURNS text
	AS 'MODULE_PATHNAME', 'dpsynth_shard_identity' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dpsynth._shard_identity(bigint) IS
	'dpsynth''s library version, the system identifier and the database OID of this server (checked on every shard before a charge)';
REVOKE ALL ON FUNCTION dpsynth._shard_identity(bigint) FROM PUBLIC;
