#!/usr/bin/env bash
# bench/so_ab_sample.sh - same-hour A/B of dpsynth.so builds on the final draw alone: for each
# stored model of MODELS (ids in dpsynth.models), `dp_sample(model, seed => SEED)` with each
# build in turn (the order rotated each round, a new session per call; the installed dpsynth.so
# is replaced by rename, so a running backend keeps its own), then dp_evaluate's table-scope
# tvd1 / tvd2 / tvd3 / range_error of the rows against the model's source table.  The same model
# and seed give each build the same start, so the builds differ by their draw only.  Prints one
# line per call: round, model, its k-way marginals, build, load average, the distances, the
# backend's CPU seconds during the call (helper threads included) and its own thread's, and the
# call's seconds (json).  The builds are only the shared object: for changes with no SQL-visible
# difference.
# Usage (PGHOST, PGPORT, PGUSER exported; PG_CONFIG names the installation whose dpsynth.so is
# replaced, and restored at the end; database DB, default bench):
#   MODELS="2 13" SEED=1 bench/so_ab_sample.sh ROUNDS NAME=path/to/dpsynth.so ...
# EVAL=0: no dp_evaluate; the rows' count and the md5 of their text in the order written instead
# (for builds that must write the same rows: a change of speed only).
set -euo pipefail
source "$(dirname "$0")/so_ab_lib.sh"
DB=${DB:-bench}
SEED=${SEED:-1}
TICK=$(getconf CLK_TCK)
# one call: round $1, build $2 (every model of MODELS)
one_call() {
	local m load out src kway cpu main sec ev
	for m in $MODELS; do
		load=$(cut -d' ' -f1 /proc/loadavg)
		out=$( { echo "SET client_min_messages = warning; DROP TABLE IF EXISTS s_absample;"; so_ab_cpu_view; cat <<'SQL'; } | psql -X -qAt -d "$DB" -v m="$m" -v seed="$SEED"
SELECT 'model', relname, k_way_marginals FROM dpsynth.models WHERE id = :m;
SELECT ticks AS c0, main_ticks AS m0 FROM cpu \gset
SELECT 'seconds', seconds FROM dp_sample(:m, seed => :seed, target => 's_absample');
SELECT 'cpu', ticks - :c0, main_ticks - :m0 FROM cpu;
SQL
)
		src=$(echo "$out" | awk -F'|' '$1 == "model" {print $2}')
		kway=$(echo "$out" | awk -F'|' '$1 == "model" {print $3}')
		cpu=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "cpu" {printf "%.2f", $2 / tick}')
		main=$(echo "$out" | awk -F'|' -v tick="$TICK" '$1 == "cpu" {printf "%.2f", $3 / tick}')
		sec=$(echo "$out" | awk -F'|' '$1 == "seconds" {print $2}')
		ev="rows $(psql -X -qAt -d "$DB" -c "SELECT count(*) || ' md5 ' || md5(string_agg(t::text, E'\n' ORDER BY ctid)) FROM s_absample t")"
		[ "${EVAL:-1}" = 0 ] || ev=$(psql -X -qAt -d "$DB" -c "SET client_min_messages = warning" -c "SELECT string_agg(metric || '=' || round(value::numeric, 5), ' ' ORDER BY metric)
			FROM dp_evaluate('$src', 's_absample') WHERE scope = 'table' AND metric IN ('tvd1', 'tvd2', 'tvd3', 'range_error')")
		echo "round $1 model $m kway $kway $2 load $load | $ev | cpu $cpu main $main | $sec"
	done
}
ROUNDS=$1
shift
so_ab_run "$ROUNDS" one_call "$@"
psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_absample" >/dev/null
