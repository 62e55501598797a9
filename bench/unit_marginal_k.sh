#!/usr/bin/env bash
# bench/unit_marginal_k.sh DATASET UNIT COLUMN EPS N: the rows-per-unit bound dp_marginal learns
# (max_rows_per_unit => NULL) on ../shared/datasets/DATASET's train split, read off N calls of
# dp_marginal(DATASET, ARRAY[COLUMN], epsilon => EPS): each call's counts sum to about k times
# the units (the sum's noise sd is k sigma sqrt(cells)), so sum / units, rounded, estimates k.
# Runs against the installed build, in the database of PGHOST/PGPORT (created: dpsynth_mk); prints
# one line per call (sum, units, sum / units) and a histogram of the rounded ratio.
set -e
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
TOP=$(cd "$(dirname "$0")/.." && pwd); SHARED=${SHARED:-$TOP/../shared}
d=$1 u=$2 col=$3 eps=$4 n=$5; DB=dpsynth_mk
psql -X -qAt -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -qAt -d $DB -c "CREATE EXTENSION dpsynth" >/dev/null
/usr/bin/python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 1000000 | psql -X -q -d $DB -v ON_ERROR_STOP=1 >/dev/null
psql -X -qAt -d $DB -v ON_ERROR_STOP=1 -c "SELECT dp_privacy_unit('$d', '$u', max_rows_per_unit => NULL)" >/dev/null
units=$(psql -X -qAt -d $DB -c "SELECT count(DISTINCT $u) FROM $d")
out=$(for i in $(seq 1 "$n"); do
	s=$(psql -X -qAt -d $DB -c "SELECT sum(noisy_count) FROM dp_marginal('$d', ARRAY['$col'], epsilon => $eps)")
	echo "$s $units $(awk -v s="$s" -v u="$units" 'BEGIN { printf "%.2f", s / u }')"
done)
echo "$out"
echo "$out" | awk '{ r = int($3 + 0.5); h[r]++ } END { for (r in h) print "sum/units ~ " r ": " h[r] " calls" }' | sort -t'~' -k2 -n
psql -X -qAt -d postgres -c "DROP DATABASE $DB" >/dev/null
