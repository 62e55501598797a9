-- dpsynth 0.3.4 -> 0.4.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.4.0'" to load this file. \quit

-- Partial counts that Citus pushes down to its shards (src/citus_state.c, src/citus.c,
-- docs/DISTRIBUTED.md "Citus"): Citus computes an aggregate on the shards only when its state type
-- is not a pseudo-type, so this one's state is a type of its own, shipped from a shard to the
-- coordinator as its text (the byte form of the partial counts, in base64), read back as
-- untrusted.  Exact counts: no EXECUTE for PUBLIC, as above.
CREATE TYPE dpsynth.partial_state;
CREATE FUNCTION dpsynth._state_in(cstring) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_out(dpsynth.partial_state) RETURNS cstring
	AS 'MODULE_PATHNAME', 'dpsynth_state_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE dpsynth.partial_state (INPUT = dpsynth._state_in, OUTPUT = dpsynth._state_out,
	INTERNALLENGTH = VARIABLE, ALIGNMENT = double, STORAGE = plain);
COMMENT ON TYPE dpsynth.partial_state IS
	'exact partial counts of one marginal (the state of dpsynth._shard_counts); its text is the portable byte form in base64; not a release';
CREATE FUNCTION dpsynth._state_add(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_combine(dpsynth.partial_state, dpsynth.partial_state) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpsynth._state_vector(state dpsynth.partial_state, sizes int4[]) RETURNS int8[]
	AS 'MODULE_PATHNAME', 'dpsynth_state_vector' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dpsynth._state_vector(dpsynth.partial_state, int4[]) IS
	'the exact counts of a partial_state of the given shape, cell by cell (first column slowest); NULL state: zeros';
CREATE AGGREGATE dpsynth._shard_counts(codes int4[], sizes int4[]) (
	SFUNC = dpsynth._state_add, STYPE = dpsynth.partial_state,
	COMBINEFUNC = dpsynth._state_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._shard_counts(int4[], int4[]) IS
	'exact counts of the rows over the joint cells of one marginal, as a partial_state that Citus computes on each shard and combines on the coordinator; not a release';
REVOKE ALL ON FUNCTION dpsynth._state_in(cstring), dpsynth._state_out(dpsynth.partial_state),
	dpsynth._state_add(dpsynth.partial_state, int4[], int4[]),
	dpsynth._state_combine(dpsynth.partial_state, dpsynth.partial_state),
	dpsynth._state_vector(dpsynth.partial_state, int4[]), dpsynth._shard_counts(int4[], int4[]) FROM PUBLIC;
CREATE FUNCTION dpsynth._state_add_pairs(dpsynth.partial_state, int4[], int4[]) RETURNS dpsynth.partial_state
	AS 'MODULE_PATHNAME', 'dpsynth_state_add_pairs' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpsynth._shard_pairs(codes int4[], sizes int4[]) (
	SFUNC = dpsynth._state_add_pairs, STYPE = dpsynth.partial_state,
	COMBINEFUNC = dpsynth._state_combine, PARALLEL = SAFE);
COMMENT ON AGGREGATE dpsynth._shard_pairs(int4[], int4[]) IS
	'exact counts of the rows over every pair of the columns (a code per column), one vector of the pairs one after another, as a partial_state; not a release';
REVOKE ALL ON FUNCTION dpsynth._state_add_pairs(dpsynth.partial_state, int4[], int4[]),
	dpsynth._shard_pairs(int4[], int4[]) FROM PUBLIC;
