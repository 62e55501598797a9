#!/usr/bin/env bash
# bench/units_scale.sh - the cost of privacy per unit (issue 39, item 6): dp_synthesize of Adult's
# rows repeated to $ROWS rows (default 1,000,000), protected per row, against the same rows with a
# `person` column of $ROWS / $PER units ($PER = 10 consecutive rows each, default: 100,000 units)
# declared with dp_privacy_unit(max_rows_per_unit => $KEEP) (default $PER, so that every row is
# kept; a smaller KEEP drops rows, e.g. PER=10000 KEEP=10: units of many rows each; MIXED=1 deals
# the rows to the units in turn, row i to unit i mod units, so that a unit's rows are spread over
# the whole table, as in a table written over time); epsilon
# $EPS (default 1), domain.json declared, $RUNS calls each (default 2), alternating, each in a
# session of its own; wall seconds, the call's own seconds, the backend's RssAnon peak, and the
# CPU seconds of the whole cluster during the call (user + system of the postmaster, its reaped
# children and the live ones: the backend, its parallel workers and GUM's threads, and the
# background processes too), read from /proc: on a machine shared with other work the CPU seconds
# compare calls where the wall seconds do not.
# Runs in the cluster of PGHOST/PGPORT (a running throwaway cluster with dpsynth installed, on this
# machine and with nothing else running in it: every process of it is counted), in a database of
# its own that it drops at the end.
# Usage: [ROWS=N] [PER=N] [KEEP=N] [MIXED=1] [EPS=x] [RUNS=N] bench/units_scale.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
set +e
: "${PGHOST:?export PGHOST/PGPORT/PGUSER of a running cluster with dpsynth installed}"
ROWS=${ROWS:-1000000}
PER=${PER:-10}
KEEP=${KEEP:-$PER}
MIXED=${MIXED:-0}
EPS=${EPS:-1}
RUNS=${RUNS:-2}
DB=units_scale
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -d $DB -c "CREATE EXTENSION dpsynth" >/dev/null
dp_load_adult $DB
dp_make_adult_rows $DB rows_t "$ROWS"
psql -X -q -d $DB -v ON_ERROR_STOP=1 -v per="$PER" -v keep="$KEEP" -v units="$((ROWS / PER))" -v mixed="$MIXED" -v domain="$(cat "$TOP/data/adult/domain.json")" >/dev/null <<'SQL'
CREATE TABLE units_t AS SELECT CASE WHEN :mixed = 1 THEN (row_number() OVER () - 1) % :units
	ELSE (row_number() OVER () - 1) / :per END AS person, r.* FROM rows_t r;
VACUUM ANALYZE units_t;
SELECT dp_protect('units_t', epsilon => 999);
SELECT dp_privacy_unit('units_t', 'person', max_rows_per_unit => :keep);
SELECT dp_declare('units_t', :'domain'::jsonb);
SQL
# CPU seconds of the cluster so far: the postmaster's own and its reaped children's (exited
# backends and parallel workers), plus every live child's own
PM=$(head -n 1 "$(psql -X -qAt -d postgres -c 'SHOW data_directory')/postmaster.pid")
cluster_cpu() {
	local f sum=0 ticks
	ticks=$(getconf CLK_TCK)
	f=$(sed 's/^.*) //' "/proc/$PM/stat")
	sum=$(awk '{print $12 + $13 + $14 + $15}' <<<"$f")
	for c in $(ps -o pid= --ppid "$PM"); do
		f=$(sed 's/^.*) //' "/proc/$c/stat" 2>/dev/null) || continue
		sum=$((sum + $(awk '{print $12 + $13}' <<<"$f")))
	done
	echo "scale=2; $sum / $ticks" | bc
}
out=$(mktemp)
echo "# $ROWS rows, $PER a unit$([ "$MIXED" = 1 ] && echo ' (mixed)'), $KEEP kept a unit; $(date -u '+%F %H:%M') UTC, commit $(git -C "$TOP" rev-parse --short HEAD), $(nproc --all) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
	for t in rows_t units_t; do
		cpu0=$(cluster_cpu)
		dp_call_with_peak "SELECT rows_written, seconds FROM dp_synthesize('$t', epsilon => $EPS, target => 's_$t');" "$out" $DB
		sleep 0.2	# the exited backend reaped into the postmaster's children's time
		cpu1=$(cluster_cpu)
		printf '# %s, %s rows, run %s: %.1f s wall, %.1f s cluster CPU; %s; RssAnon peak %d MB\n' "$t" "$ROWS" "$run" \
			"$BENCH_WALL" "$(echo "$cpu1 - $cpu0" | bc)" "$(head -n 1 "$out")" $((BENCH_PEAK_KB / 1024))
		psql -X -q -d $DB -c "DROP TABLE IF EXISTS s_$t" >/dev/null
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$out" "$out.raw" "$out.rc"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
