-- dpsynth 0.4.0 -> 0.5.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.5.0'" to load this file. \quit

-- dp_synthesize_plan: the privacy schedule of a dp_synthesize call, charged nothing.
CREATE FUNCTION dp_synthesize_plan(source regclass, epsilon float8, delta float8 DEFAULT NULL, columns text[] DEFAULT NULL,
								   method text DEFAULT NULL, focus text[] DEFAULT NULL,
								   OUT release text, OUT mechanism text, OUT rho_units int8, OUT count int4,
								   OUT rho float8, OUT rho_min float8, OUT rho_max float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'dpsynth_synthesize_plan' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) IS
	'the privacy schedule dp_synthesize would follow with these arguments, one row per release (rho_units sum to its charge); charges nothing and reads no row';
REVOKE ALL ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dp_synthesize_plan(regclass, float8, float8, text[], text, text[]) TO dpsynth_analyst, dpsynth_admin;
