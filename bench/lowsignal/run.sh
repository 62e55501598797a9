#!/usr/bin/env bash
# bench/lowsignal/run.sh - the low-signal regime (issue 39 item 5, issue 37 part 2): tables with few
# rows for their budget, judged by ../shared/tools/evaluate.py, with the build installed in the
# running cluster (PGHOST, PGPORT, PGUSER exported; database diag).  bench/RESULTS.md, section "The
# low-signal regime", was measured with these scripts; a variant of the synthesis is a build of its
# own, installed before `run.sh TAG`, whose outputs carry TAG.
#
#   run.sh load                    loads males, adult, arrests, smokeban, star and covid_testing into
#                                  database diag as TABLE_raw (scripts/load_dataset.py, unprotected),
#                                  and adult363_raw: 363 rows of Adult drawn with setseed(0.42)
#   run.sh TAG [RUNS] [EPSILONS]   RUNS (8) runs of males cut to 1 row a person and of adult363 at
#                                  epsilon 1 (rowk.sh: bench/units.sh's rowk method, k = 1), and
#                                  RUNS / 2 runs of arrests, smokeban and star at EPSILONS ("0.1 0.3",
#                                  full.sh), then evaluate.py on each (evalall.sh) and the summary
#                                  (evsum.py: means, min-max over the runs, per TAG)
# The parts: rowk.sh DATASET EPS RUN [K], full.sh DATASET EPS RUN (TAG from the environment);
# cols.py TRAIN OUT/TAG...: each column's one-way TVD, synthetic and the cut real rows; sumtab.py
# TRAIN EXCL GLOB...: tvd1 / tvd2 and per column, per glob; replay.py DATASET:EPS:N...: the one-way
# stage replayed on the real counts (noise, dp_rare_merge, four ways to split a merged code);
# rowcount.sh DATASET EPS RUN CAP [K]: the prototype of K rows a person plus the person's row count
# as a column, the synthetic rows weighted by it (issue 39 item 5; database units, as bench/units.sh
# leaves it; one JSON line of evaluate.py's figures).
# Outputs in OUT (default TOP/tmp_diag).
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd); SHARED=${SHARED:-$TOP/../shared}; OUT=${OUT:-$TOP/tmp_diag}; mkdir -p "$OUT"
HERE=$TOP/bench/lowsignal
if [ "${1:-}" = load ]; then
	psql -X -qAt -d postgres -c "SELECT 1 FROM pg_database WHERE datname = 'diag'" | grep -q 1 ||
		psql -X -q -d postgres -c "CREATE DATABASE diag"
	psql -X -q -d diag -c "CREATE EXTENSION IF NOT EXISTS dpsynth"
	for d in males adult arrests smokeban star covid_testing; do
		python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/$d" "$d" 1 | grep -v '^SELECT dp_' |
			sed "s/\\b$d\\b/${d}_raw/; s/TABLE IF EXISTS ${d}_raw;/TABLE IF EXISTS ${d}_raw CASCADE;/" |
			psql -X -q -d diag -v ON_ERROR_STOP=1 >/dev/null
	done
	psql -X -q -d diag -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS adult363_raw" -c "SELECT setseed(0.42)" \
		-c "CREATE TABLE adult363_raw AS SELECT row_number() OVER () AS rid, * FROM (SELECT * FROM adult_raw ORDER BY random() LIMIT 363) s" >/dev/null
	mkdir -p "$OUT/adult363_domain"
	cp "$SHARED/datasets/adult/domain.json" "$OUT/adult363_domain/domain.json"
	exit 0
fi
tag=${1:?usage: run.sh load | run.sh TAG [RUNS] [EPSILONS]}
runs=${2:-8}
epsilons=${3:-"0.1 0.3"}
export TAG=$tag OUT SHARED
for r in $(seq 1 "$runs"); do
	for d in males adult363; do nice -n 10 "$HERE/rowk.sh" "$d" 1 "$r" 1 >/dev/null; done
done
for r in $(seq 1 $(( (runs + 1) / 2 ))); do
	for d in arrests smokeban star; do
		for e in $epsilons; do nice -n 10 "$HERE/full.sh" "$d" "$e" "$r" >/dev/null; done
	done
done
declare -A T=([arrests]=released [smokeban]=smoker [star]=star1)
"$HERE/evalall.sh" males union nr "$OUT"/males-k1-1-*-"$tag".csv > "$OUT/eval_males_$tag.txt"
"$HERE/evalall.sh" adult income rid "$OUT"/adult363-k1-1-*-"$tag".csv > "$OUT/eval_adult363_$tag.txt"
for d in arrests smokeban star; do
	"$HERE/evalall.sh" "$d" "${T[$d]}" "" "$OUT/$d"-0*-"$tag".csv > "$OUT/eval_${d}_$tag.txt"
done
/usr/bin/python3 "$HERE/evsum.py" "$OUT"/eval_*_"$tag".txt
