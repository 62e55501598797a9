#!/usr/bin/env bash
# bench/heaped_refine.sh - how often sql/47_heaped_integers's cell 88..95 is kept whole and spread
# by the heap multiplier, and 90's share of its weight: CALLS first calls of dp_synthesize on fresh
# copies of the test's table (100,700 rows; h and s declared with bounds 0..100, epsilon 0.5, as
# the test calls it), each in a psql of its own.  A call whose cell is spread has all eight
# values weighed, the seven that are no multiple of ten alike and 90 apart; any other had the
# cell refined into per-value counts by the discovery (its stage-1 noisy count reached
# 3 sigma_2 sqrt(8)).  Prints one line a call (call, spread, share of 90) and a summary.
# Uses the installed build (not built here).
# Usage: [CALLS=500] bench/heaped_refine.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_heaped_refine}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54337}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR
CLUSTER_PORT=$DPSYNTH_PORT
CALLS=${CALLS:-500}
trap dp_cluster_stop EXIT
dp_cluster_start >/dev/null
set +e
psql -X -q -c "CREATE DATABASE bench"
psql -X -q -d bench >/dev/null <<'SQL'
CREATE EXTENSION dpsynth;
CREATE TABLE tpl (h integer NOT NULL, s integer NOT NULL);
INSERT INTO tpl SELECT 1 + (i * 37) % 79, 1 + (i * 53) % 79 FROM generate_series(1, 40000) i;
INSERT INTO tpl SELECT 10 * (1 + i % 7), 1 + (i * 53) % 79 FROM generate_series(1, 60000) i;
INSERT INTO tpl SELECT CASE WHEN i % 5 = 0 THEN 88 + (i / 5) % 8 ELSE 90 END, 40 FROM generate_series(1, 200) i;
INSERT INTO tpl SELECT 99, 40 FROM generate_series(1, 500) i;
CREATE TABLE res (call int, spread bool, share float8);
SQL
for i in $(seq 1 "$CALLS"); do
	psql -X -q -At -d bench -v call="$i" >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS hp_synth;
DROP TABLE IF EXISTS hp;
CREATE TABLE hp AS SELECT * FROM tpl;
SELECT dp_protect('hp', epsilon => 50) \gset
SELECT dp_declare('hp', 'h', lower => 0, upper => 100) \gset
SELECT dp_declare('hp', 's', lower => 0, upper => 100) \gset
SELECT model_id FROM dp_synthesize('hp', epsilon => 0.5, target => 'hp_synth') \gset
WITH shape AS (
	SELECT x, sum((p->>2)::float8 / ((p->>1)::int - (p->>0)::int + 1)) AS w
	FROM jsonb_array_elements(dp_model_json(:model_id)->'columns') c,
		 LATERAL (SELECT jsonb_build_array(c->'domain'->'shape'->(3 * i), c->'domain'->'shape'->(3 * i + 1),
										   c->'domain'->'shape'->(3 * i + 2)) p
				  FROM generate_series(0, jsonb_array_length(c->'domain'->'shape') / 3 - 1) i) q,
		 LATERAL generate_series((p->>0)::int, (p->>1)::int) x
	WHERE c->>'name' = 'h' GROUP BY x)
INSERT INTO res
SELECT :call, count(*) = 8 AND max(w) FILTER (WHERE x <> 90) - min(w) FILTER (WHERE x <> 90) <= 1e-9 * max(w)
			  AND abs(max(w) FILTER (WHERE x = 90) - max(w) FILTER (WHERE x <> 90)) > 1e-9 * max(w),
	   sum(w) FILTER (WHERE x = 90) / sum(w)
FROM shape WHERE x BETWEEN 88 AND 95;
SQL
done
psql -X -qAt -d bench -c "SELECT call, spread, round(share::numeric, 3) FROM res ORDER BY call"
echo "| cell | calls | share of 90: min | max | mean | share <= 0.4 |"
echo "|---|---|---|---|---|---|"
psql -X -qAt -F ' | ' -d bench -c "SELECT CASE WHEN spread THEN 'spread' ELSE 'refined' END, count(*),
	round(min(share)::numeric, 3), round(max(share)::numeric, 3), round(avg(share)::numeric, 3),
	count(*) FILTER (WHERE share <= 0.4) FROM res GROUP BY spread ORDER BY spread DESC" | sed 's/^/| /; s/$/ |/'
