#!/usr/bin/env bash
# bench/read_stall.sh - counts stalls of the parallel read: CALLS sessions, each SET, DROP TABLE,
# LOAD and one dp_synthesize(TABLE, epsilon => 0.05, rows => 1000) (short GUM and write, so the
# read is a large part of the call), printing per call the time, the load average, the backend's
# pid and the phases' read and total seconds, then the count of reads above 5 s.  The statements
# before the call are as bench/so_ab_cpu.sh's: in such a session PostgreSQL 15 arms its 10 s
# idle-stats timeout, which ended the stall of issue 38 part 2 at read = 10.0 s.
# Usage (PGHOST, PGPORT, PGUSER exported; database DB, default bench; TABLE default adult_1m,
# target table TARGET default s_read_stall, dropped before each call and at the end):
#   bench/read_stall.sh CALLS
set -euo pipefail
CALLS=${1:-100}
DB=${DB:-bench}
TABLE=${TABLE:-adult_1m}
TARGET=${TARGET:-s_read_stall}
stalls=0
for i in $(seq 1 "$CALLS"); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	out=$(psql -X -qAt -d "$DB" -v t="$TABLE" -v target="$TARGET" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS :"target";
LOAD 'dpsynth';
SELECT pg_backend_pid(), seconds->>'read', seconds->>'total'
FROM dp_synthesize(:'t', epsilon => 0.05, target => :'target', rows => 1000);
SQL
)
	read=$(echo "$out" | cut -d'|' -f2)
	[ "$(echo "$read > 5" | bc)" = 1 ] && stalls=$((stalls + 1))
	echo "$(date -u +%T) call $i load $load pid|read|total $out"
done
psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS \"$TARGET\"" >/dev/null
echo "calls $CALLS reads_above_5s $stalls"
