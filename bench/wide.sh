#!/usr/bin/env bash
# bench/wide.sh - a wide and long table: star's 47 columns twice over (the second copy's rows
# shifted by one, so that the copies are related but not equal) plus 6 more of them (100
# columns), over star's 7,732 rows replicated to 600,000 rows; domain.json declared for every
# copy.  One dp_synthesize at epsilon 1: seconds per phase and the backend's peak private memory.
# Usage: bench/wide.sh [--record]
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_wide}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54334}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
SHARED=${SHARED:-$TOP/../shared}
dp_start_with_adult bench >/dev/null
python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/star" star 999 | psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null
cols=$(psql -X -qAt -d bench -c "SELECT string_agg(quote_ident(attname), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'star'::regclass AND attnum > 0")
extra=$(psql -X -qAt -d bench -c "SELECT string_agg(format('s.%I AS %I', attname, attname || '_c'), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'star'::regclass AND attnum BETWEEN 1 AND 6")
second=$(psql -X -qAt -d bench -c "SELECT string_agg(format('t.%I AS %I', attname, attname || '_b'), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'star'::regclass AND attnum > 0")
psql -X -q -d bench -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE TABLE star_n AS SELECT row_number() OVER () AS rn, * FROM star;
CREATE TABLE wide AS
	SELECT $(echo "$cols" | sed 's/\([^,]*\)/s.\1/g'), $second, $extra
	FROM star_n s JOIN star_n t ON t.rn = s.rn % (SELECT count(*) FROM star_n) + 1, generate_series(1, 78) g
	LIMIT 600000;
SELECT dp_protect('wide', epsilon => 999);
SQL
dom=$(/usr/bin/python3 - "$SHARED/datasets/star/domain.json" <<'PY'
import json, sys
d = {k: v for k, v in json.load(open(sys.argv[1])).items() if not k.startswith("_")}
out = dict(d)
out.update({k + "_b": v for k, v in d.items()})
for k in list(d)[:6]:
    out[k + "_c"] = d[k]
print(json.dumps(out))
PY
)
echo "SELECT dp_declare('wide', :'dom'::jsonb);" | psql -X -q -d bench -v dom="$dom" >/dev/null
shape=$(psql -X -qAt -d bench -c "SELECT count(*) || ' rows x ' || (SELECT count(*) FROM pg_attribute WHERE attrelid = 'wide'::regclass AND attnum > 0) || ' columns' FROM wide")
mkdir -p "$TOP/bench/out"
dp_call_with_peak "SELECT seconds, rows_written, k_way_marginals FROM dp_synthesize('wide', epsilon => 1, target => 'wide_s');" \
	"$TOP/bench/out/wide.out"
peak=$BENCH_PEAK_KB
res=$(head -n 1 "$TOP/bench/out/wide.out")
report="### dp_synthesize on a wide table, $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)

Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'). Command: \`bench/wide.sh\`. Table: $shape (star's columns twice, the second copy shifted by one row, plus 6; star's rows replicated), domain.json declared, epsilon 1.

| seconds per phase | rows written | k-way marginals | peak RssAnon MB |
|---|---|---|---|
| $(echo "$res" | cut -d'|' -f1) | $(echo "$res" | cut -d'|' -f2) | $(echo "$res" | cut -d'|' -f3) | $((peak / 1024)) |"
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
