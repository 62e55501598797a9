#!/usr/bin/env bash
# bench/anneal.sh - the adaptive rounds against the table's size (issue 12/10): dp_synthesize of
# Adult's rows repeated to each of $SIZES rows (domain.json declared, epsilon 1, verbose), $RUNS
# calls per size, each in its own session.  Per call: the rounds and anneals (the verbose notice),
# the seconds per phase as dp_synthesize reports them, and the backend's CPU seconds over the call
# (utime + stime of /proc/PID/stat, all its threads; read from the server as superuser).  With
# QUALITY=1, every synthetic table is also judged by ../shared/tools/evaluate.py against Adult's
# train/test CSVs (tvd1 / tvd2 / tvd3 / range / AUC).
# Usage: [SIZES="32561 200000 1000000"] [RUNS=3] [QUALITY=0] bench/anneal.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
set +e
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_anneal}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54335}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
SIZES=${SIZES:-"32561 200000 1000000"}
RUNS=${RUNS:-3}
QUALITY=${QUALITY:-0}
SHARED=${SHARED:-$TOP/../shared}
OUT=$TOP/bench/out/$(basename "$0" .sh).$$	# one directory per run: two runs at once must not share synth.csv
mkdir -p "$OUT"
dp_start_with_adult bench >/dev/null
echo "# commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet -- src || echo '+dirty')"
for n in $SIZES; do
	dp_make_adult_rows bench big "$n" || exit 1
	for run in $(seq 1 "$RUNS"); do
		# CPU ticks of this backend before and after the call (clock ticks: 100 per second)
		res=$(psql -X -qAt -d bench -v ON_ERROR_STOP=1 2>&1 <<'SQL'
SET client_min_messages = notice;
SELECT split_part(pg_read_file('/proc/self/stat'), ' ', 14)::bigint + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::bigint AS t0 \gset
DROP TABLE IF EXISTS s_big;
SELECT seconds FROM dp_synthesize('big', epsilon => 1, target => 's_big', verbose => true);
SELECT ((split_part(pg_read_file('/proc/self/stat'), ' ', 14)::bigint + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::bigint - :t0) / 100.0)::numeric(8,2);
SQL
)
		rounds=$(echo "$res" | sed -n 's/.*NOTICE: *\([0-9]* rounds ([0-9]* anneals)\).*/\1/p' | head -n 1)
		secs=$(echo "$res" | grep '^{' | head -n 1)
		cpu=$(echo "$res" | tail -n 1)
		q=""
		if [ "$QUALITY" = 1 ]; then
			psql -X -q -d bench -c "\\copy s_big TO '$OUT/anneal.csv' WITH (FORMAT csv, HEADER true)"
			q=$(/usr/bin/python3 "$SHARED/tools/evaluate.py" "$SHARED/datasets/adult/adult_train.csv" "$OUT/anneal.csv" \
				--test "$SHARED/datasets/adult/adult_test.csv" --target income --json |
				/usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print('; quality %.3f / %.3f / %.3f / %.4f / AUC %.3f' % (d['tvd1'], d['tvd2'], d['tvd3'], d['range'], d['tstr_auc']))")
		fi
		echo "# $n rows, run $run: $rounds; backend CPU $cpu s; $secs$q"
	done
done
dp_cluster_stop
