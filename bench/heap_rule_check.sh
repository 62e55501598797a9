#!/usr/bin/env bash
# bench/heap_rule_check.sh - where the heap rule (a lone heap in a learned real bin drawn at the bin's
# roundest value, dp_binning_heap_points) fires and where it errs: a smooth log-normal column (it
# should never fire) and a heap at 57.3, off a round value (it comes back at 57), 50,000 rows, bounds
# only declared, one dp_synthesize call at epsilon 1 and one at 3, in a throwaway cluster.  Then the
# integer rule (a refined integer column heaped at multiples of ten weighs them in its cells kept
# whole, dp_binning_heap_multiplier) on 200,000 rows: si smooth (a rounded bell around 40, sd 12:
# it should never fire; its multiples of ten keep their share of the rows) and hi heaped (a bell
# with 60% of its rows moved to the nearest multiple of ten, a thin tail 85..95 heaped at 90 and a
# top code at 99, as hours worked have),
# one call at epsilon 0.3 and one at 1.
# Usage: bench/heap_rule_check.sh   (PGBIN, DPSYNTH_PORT, DPSYNTH_CLUSTER_DIR as for the other benches)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
export DPSYNTH_CLUSTER_DIR=${DPSYNTH_CLUSTER_DIR:-$TOP/tmp_cluster_heap}
export DPSYNTH_PORT=${DPSYNTH_PORT:-54335}
CLUSTER_DIR=$DPSYNTH_CLUSTER_DIR; CLUSTER_PORT=$DPSYNTH_PORT
trap dp_cluster_stop EXIT
dp_cluster_start
psql -X -q -c "CREATE DATABASE h"
psql -X -q -d h <<'SQL'
CREATE EXTENSION dpsynth;
SELECT setseed(0.42);
-- s: a smooth log-normal (2 decimals), g: a group, p: a heap at 57.3 (30%) over a spread recorded to 2 decimals
CREATE TABLE t AS
SELECT round(exp(3 + 0.6 * sqrt(-2 * ln(random())) * cos(2 * pi() * random()))::numeric, 2)::float8 AS s,
       (ARRAY['a','b','c'])[1 + floor(random() * 3)::int] AS g,
       CASE WHEN random() < 0.3 THEN 57.3 ELSE round((40 + 40 * random())::numeric, 2)::float8 END AS p
FROM generate_series(1, 50000);
SELECT dp_protect('t', epsilon => 100);
SELECT dp_declare('t', 's', lower => 0, upper => 1000);
SELECT dp_declare('t', 'p', lower => 0, upper => 100);
SELECT dp_declare('t', 'g', categories => ARRAY['a','b','c']);
SQL
for eps in 1 3; do
  for r in 1; do
    psql -X -q -d h -c "DROP TABLE IF EXISTS s" -c "SELECT true FROM dp_synthesize('t', epsilon => $eps, target => 's')" >/dev/null
    echo "eps $eps run $r"
    psql -X -qAt -d h <<'SQL'
SELECT 'smooth s: most frequent synthetic value share ' || round(max(c)::numeric / sum(c), 4) || ', real ' ||
       (SELECT round(max(c)::numeric / sum(c), 4) FROM (SELECT count(*) c FROM t GROUP BY s) q)
FROM (SELECT count(*) c FROM s GROUP BY s) q;
SELECT 'smooth s: share of synthetic rows on a value holding >=1% of rows ' ||
       round(coalesce(sum(c) FILTER (WHERE c >= 0.01 * tot), 0)::numeric / max(tot), 4)
FROM (SELECT count(*) c, sum(count(*)) OVER () tot FROM s GROUP BY s) q;
SELECT 'smooth s deciles real vs synth: ' || string_agg(round(a::numeric, 2) || '/' || round(b::numeric, 2), ' ')
FROM (SELECT unnest(percentile_cont(ARRAY[.1,.2,.3,.4,.5,.6,.7,.8,.9]) WITHIN GROUP (ORDER BY s)) a,
             generate_series(1, 9) i FROM t) x
JOIN (SELECT unnest(percentile_cont(ARRAY[.1,.2,.3,.4,.5,.6,.7,.8,.9]) WITHIN GROUP (ORDER BY s)) b,
             generate_series(1, 9) i FROM s) y USING (i);
SELECT 'heap p: top synthetic values ' || string_agg(v || ':' || round(c::numeric / tot, 3), ' ')
FROM (SELECT p v, count(*) c, sum(count(*)) OVER () tot FROM s GROUP BY p ORDER BY count(*) DESC LIMIT 3) q;
SELECT 'heap p: synthetic share in [57.2, 57.4] ' || round(avg((p BETWEEN 57.2 AND 57.4)::int), 3) ||
       ', real ' || (SELECT round(avg((p BETWEEN 57.2 AND 57.4)::int), 3) FROM t) FROM s;
SQL
  done
done
psql -X -qAt -d h -c "SELECT column_name, cardinality(edges) - 1, edges[1:40] FROM dp_domains WHERE table_name = 't'::regclass AND column_name IN ('s','p')"
psql -X -q -d h <<'SQL'
SELECT setseed(0.42);
CREATE TABLE ti AS
SELECT si, CASE WHEN u1 < 0.0015 THEN 99
                WHEN u1 < 0.0045 THEN (CASE WHEN u2 < 0.7 THEN 90 ELSE 85 + floor(u3 * 11)::int END)
                WHEN u2 < 0.6 THEN 10 * round(b / 10.0)::int ELSE b END AS hi
FROM (SELECT greatest(0, least(100, round(40 + 12 * sqrt(-2 * ln(random())) * cos(2 * pi() * random()))))::int AS si,
             greatest(0, least(80, round(40 + 12 * sqrt(-2 * ln(random())) * cos(2 * pi() * random()))))::int AS b,
             random() AS u1, random() AS u2, random() AS u3
      FROM generate_series(1, 200000) g) q;
SELECT dp_protect('ti', epsilon => 100);
SELECT dp_declare('ti', 'si', lower => 0, upper => 100);
SELECT dp_declare('ti', 'hi', lower => 0, upper => 100);
SQL
for eps in 0.3 1; do
  # declared anew: each call learns its own bins and shape at its epsilon
  psql -X -q -d h -c "SELECT dp_declare('ti', 'si', lower => 0, upper => 100)" -c "SELECT dp_declare('ti', 'hi', lower => 0, upper => 100)" \
	-c "DROP TABLE IF EXISTS si_s" -c "SELECT true FROM dp_synthesize('ti', epsilon => $eps, target => 'si_s')" >/dev/null
  echo "integers, eps $eps"
  psql -X -qAt -d h <<'SQL'
SELECT 'smooth si: share at multiples of ten synthetic ' || round(avg((si % 10 = 0)::int), 4) ||
       ', real ' || (SELECT round(avg((si % 10 = 0)::int), 4) FROM ti) FROM si_s;
SELECT 'smooth si: one-way TVD value by value ' || round(0.5 * sum(abs(coalesce(a, 0) - coalesce(b, 0)))::numeric, 4)
FROM (SELECT si, count(*)::float8 / sum(count(*)) OVER () a FROM ti GROUP BY 1) r
FULL JOIN (SELECT si, count(*)::float8 / sum(count(*)) OVER () b FROM si_s GROUP BY 1) s USING (si);
SELECT 'heaped hi: share of 85..95 at 90 synthetic ' ||
       round(count(*) FILTER (WHERE hi = 90)::numeric / nullif(count(*) FILTER (WHERE hi BETWEEN 85 AND 95), 0), 3) ||
       ', real ' || (SELECT round(count(*) FILTER (WHERE hi = 90)::numeric / count(*) FILTER (WHERE hi BETWEEN 85 AND 95), 3) FROM ti)
FROM si_s;
SELECT 'heaped hi: one-way TVD value by value ' || round(0.5 * sum(abs(coalesce(a, 0) - coalesce(b, 0)))::numeric, 4)
FROM (SELECT hi, count(*)::float8 / sum(count(*)) OVER () a FROM ti GROUP BY 1) r
FULL JOIN (SELECT hi, count(*)::float8 / sum(count(*)) OVER () b FROM si_s GROUP BY 1) s USING (hi);
SQL
done
