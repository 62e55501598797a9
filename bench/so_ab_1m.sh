#!/usr/bin/env bash
# bench/so_ab_1m.sh - same-hour A/B of builds on the 1M-row call: dp_synthesize('adult_1m',
# epsilon => 1) with each build's dpsynth.so in turn, the order rotated each round, a new session
# per call (the installed dpsynth.so is replaced by rename, so a running backend keeps its own),
# then dp_evaluate's table-scope tvd1 / tvd2 / tvd3 / range_error of the call's rows.  Prints one
# line per call: round, build, load average, the distances, the model's k-way marginals and the
# call's seconds (json).
# The builds are only the shared object: use it for changes with no SQL-visible difference.
# Usage (PGHOST, PGPORT, PGUSER exported; database DB, default bench, holding adult_1m as
# scripts/lib.sh's dp_make_adult_1m makes it, or TABLE, another table of Adult's columns as
# dp_make_adult_rows makes it; PG_CONFIG names the installation whose dpsynth.so is replaced,
# and restored at the end):
#   [TABLE=adult_1m] bench/so_ab_1m.sh ROUNDS NAME=path/to/dpsynth.so NAME=path/to/dpsynth.so ...
set -euo pipefail
source "$(dirname "$0")/so_ab_lib.sh"
DB=${DB:-bench}
TABLE=${TABLE:-adult_1m}
# one call: round $1, build $2
one_call() {
	local load sec ev
	psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_ab" >/dev/null
	load=$(cut -d' ' -f1 /proc/loadavg)
	sec=$(psql -X -qAt -d "$DB" -c "SELECT k_way_marginals || ' ' || seconds FROM dp_synthesize('$TABLE', epsilon => 1, target => 's_ab')")
	ev=$(psql -X -qAt -d "$DB" -c "SET client_min_messages = warning" -c "SELECT string_agg(metric || '=' || round(value::numeric, 5), ' ' ORDER BY metric)
		FROM dp_evaluate('$TABLE', 's_ab') WHERE scope = 'table' AND metric IN ('tvd1', 'tvd2', 'tvd3', 'range_error')")
	echo "round $1 $2 load $load | $ev | $sec"
}
ROUNDS=$1
shift
so_ab_run "$ROUNDS" one_call "$@"
psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_ab" >/dev/null
