#!/usr/bin/env bash
# bench/sampler_ab.sh - what the speed bench's memory sampler costs a dp_synthesize call: rounds of
# one call of dp_synthesize(TABLE, epsilon => 1) under each of three instruments in turn, the
# order rotated each round: dp_call_with_peak of scripts/lib.sh at revision BASE (its sampling
# loop), dp_call_with_peak of this checkout's scripts/lib.sh, and one psql running the call alone
# (as bench/speed.sh times CREATE TABLE AS and, from this script's commit on, dp_synthesize).
# Prints per call the load average, the wall seconds each instrument measures, and the call's
# own total from its phases (dp_synthesize's seconds).
# Usage (PGHOST, PGPORT, PGUSER exported; database DB, default bench):
#   TABLE=adult_1m bench/sampler_ab.sh ROUNDS [BASE]     (BASE: a revision, default c29e195)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
DB=${DB:-bench}
TABLE=${TABLE:-adult_1m}
ROUNDS=${1:-4}
BASE=${2:-c29e195}
OLD="$TOP/scripts/.lib_at_$BASE.sh"	# in scripts/, where lib.sh finds its checkout
git -C "$TOP" show "$BASE:scripts/lib.sh" > "$OLD"
trap 'rm -f "$OLD"' EXIT
OUT=$(mktemp -d)
total_of() { python3 -c 'import json, sys; print(json.loads(sys.stdin.read().split("|")[0])["total"])'; }
# one call under instrument $1 (base, new, plain); prints "wall total"
one_call() {
	psql -X -q -d "$DB" -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s_sampler_ab" >/dev/null
	local sql="SELECT seconds FROM dp_synthesize('$TABLE', epsilon => 1, target => 's_sampler_ab')"
	case $1 in
		base|new)
			(
				lib="$TOP/scripts/lib.sh"; [ "$1" = base ] && lib=$OLD
				# shellcheck disable=SC1090 # the lib of the arm
				source "$lib"
				# a base whose pid wait ran under set -e could end before its session wrote the pid
				set +e
				dp_call_with_peak "$sql;" "$OUT/call" "$DB"
				echo "$BENCH_WALL $(total_of < "$OUT/call")"
			) ;;
		plain)
			local start res
			start=$(date +%s.%N)
			res=$(psql -X -qAt -d "$DB" -c "$sql")
			echo "$(echo "$(date +%s.%N) - $start" | bc) $(echo "$res" | total_of)" ;;
	esac
}
arms=(base new plain)
echo "| round | arm | load | wall s | dp_synthesize's total s |"
echo "|---|---|---|---|---|"
for r in $(seq 1 "$ROUNDS"); do
	for i in 0 1 2; do
		a=${arms[$(( (i + r) % 3 ))]}
		load=$(cut -d' ' -f1 /proc/loadavg)
		read -r wall total <<< "$(one_call "$a")"
		printf '| %s | %s | %s | %.2f | %.2f |\n' "$r" "$a" "$load" "$wall" "$total"
	done
done
psql -X -q -d "$DB" -c "DROP TABLE IF EXISTS s_sampler_ab" >/dev/null
rm -rf "$OUT"
