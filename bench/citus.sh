#!/usr/bin/env bash
# bench/citus.sh - dp_synthesize and dp_marginal on a Citus distributed table (a coordinator and two
# workers on this machine, Unix sockets) against the same rows in a local table, and the bytes the
# workers send to the coordinator (the partial-count states, as text: counts, never rows).
# Adult's rows repeated to ROWS rows (default 1,000,000), every integer column in declared bins
# (as test/script/18_citus.sh), epsilon 1 for dp_synthesize, RUNS calls of each (default 3).
# Citus is built once and cached by scripts/citusbuild into the PostgreSQL of $PG_CONFIG (or of
# PGBIN).  Ports CITUS_PORT .. CITUS_PORT + 2 (default 54360); clusters in tmp_bench_citus_*.
# Usage: ROWS=1000000 RUNS=3 bench/citus.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
PGBIN=${PGBIN:-$(dirname "$(command -v pg_config 2>/dev/null || echo /usr/lib/postgresql/15/bin/pg_config)")}
PG_CONFIG=${PG_CONFIG:-$PGBIN/pg_config}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
BASE=${CITUS_PORT:-54360}
DB=bench
CLUSTER_TAG=citus SHARED_BUFFERS=128MB
source "$TOP/bench/citus_cluster.sh"

sed "s/CREATE TABLE adult /CREATE TABLE adult /" "$TOP/data/adult/adult.sql" | c >/dev/null
c -c "\\copy adult FROM '$TOP/data/adult/adult_train.csv' WITH (FORMAT csv, HEADER true, NULL '?')"
t0=$(date +%s.%N)
c -c "CREATE TABLE t_local (LIKE adult); INSERT INTO t_local SELECT a.* FROM adult a, generate_series(1, $ROWS / 32561) g;
      INSERT INTO t_local SELECT * FROM adult LIMIT $ROWS - ($ROWS / 32561) * 32561" -c "VACUUM ANALYZE t_local"
t1=$(date +%s.%N)
c -c "CREATE TABLE t_dist (LIKE adult); INSERT INTO t_dist SELECT * FROM t_local;
      SELECT create_distributed_table('t_dist', 'fnlwgt'); SELECT truncate_local_data_after_distributing_table('t_dist')" >/dev/null 2>&1
t2=$(date +%s.%N)
t3=$(date +%s.%N)
c -c "CREATE TABLE t_ctas AS SELECT * FROM t_local" >/dev/null
t4=$(date +%s.%N)
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
echo "# $(c -c "SELECT count(*) FROM t_dist") rows distributed over $(c -c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 't_dist'::regclass") shards;" \
	"local table $(c -c "SELECT pg_size_pretty(pg_table_size('t_local'))") ($(secs $t0 $t1) s to fill), distributed in $(secs $t1 $t2) s," \
	"CREATE TABLE AS of the local table $(secs $t3 $t4) s"
domain=$(cat "$TOP/data/adult/domain.json")
for t in t_local t_dist; do
	c -v t=$t -v domain="$domain" >/dev/null 2>&1 <<'SQL'
SELECT dp_protect(:'t', epsilon => 100000, selection_delta => 1e-6);
SELECT dp_declare(:'t', :'domain'::jsonb);
SELECT dp_declare(:'t', 'age', lower => 16, upper => 100, bins => 21);
SELECT dp_declare(:'t', 'fnlwgt', lower => 10000, upper => 1500000, bins => 30);
SELECT dp_declare(:'t', 'education_num', lower => 1, upper => 17, bins => 16);
SELECT dp_declare(:'t', 'capital_gain', lower => 0, upper => 100000, bins => 20);
SELECT dp_declare(:'t', 'capital_loss', lower => 0, upper => 5000, bins => 20);
SELECT dp_declare(:'t', 'hours_per_week', lower => 0, upper => 100, bins => 20);
SQL
done

echo "| table | call | run | seconds (client) | dpsynth's seconds |"
echo "|---|---|---|---|---|"
for run in $(seq 1 "$RUNS"); do
	for t in t_local t_dist; do
		a=$(date +%s.%N)
		s=$(c -c "SELECT seconds FROM dp_synthesize('$t', 1, target => '${t}_s$run')")
		b=$(date +%s.%N)
		echo "| $t | dp_synthesize | $run | $(secs $a $b) | $s |"
		a=$(date +%s.%N)
		c -c "SELECT count(*) FROM dp_marginal('$t', ARRAY['sex', 'income', 'education', 'age'], 1)" >/dev/null
		b=$(date +%s.%N)
		echo "| $t | dp_marginal (4 columns) | $run | $(secs $a $b) | |"
	done
done
for t in t_local t_dist; do
	echo "# $t: synthetic tvd2 against t_local: $(c -c "SELECT round(avg(value)::numeric, 4) FROM (SELECT value FROM dp_evaluate('t_local', '${t}_s1') WHERE scope = 'table' AND metric = 'tvd2') x" 2>/dev/null)"
done

# the bytes the shards send: the text of each shard's state for dp_synthesize's one count (every
# pair of the 15 columns) and for the 4-column marginal, against the size of the rows
cols=$(c -c "SELECT string_agg(quote_ident(attname), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 't_dist'::regclass AND attnum > 0 AND NOT attisdropped")
enc() { c -c "SELECT string_agg(e.expression, ', ' ORDER BY o) || '|' || string_agg(e.codes::text, ',' ORDER BY o)
	FROM unnest(string_to_array('$1', ',')) WITH ORDINALITY u(col, o), dpsynth._encoder('t_dist', u.col) e"; }
shipped() {
	local e=$(enc "$2")
	c -c "SELECT count(*) || ' shards, ' || sum(length(result)) || ' bytes' FROM run_command_on_shards('t_dist',
		\$q\$SELECT dpsynth.$1(ARRAY[$(echo "${e%|*}" | sed 's/%/%%/g')]::int4[], '{${e##*|}}')::text FROM %s\$q\$)"
}
echo "# dp_synthesize's count (every pair, dpsynth._shard_pairs): $(shipped _shard_pairs "$cols")"
echo "# dp_marginal of sex, income, education, age (dpsynth._shard_counts): $(shipped _shard_counts sex,income,education,age)"
echo "# the rows themselves: $(c -c "SELECT pg_table_size('t_local')") bytes on disk; load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc --all) cores"
