#!/usr/bin/env bash
# As run for RESULTS (h2b, 2026-11-30): paths and ports are h2's worktree and cluster.
# S1 in the server: dp_sample(model of adult_1m, seed => 5) alone and while another session sends
# pg_log_backend_memory_contexts 40 times 50 ms apart; md5 of the rows and the call's wall seconds
cd /work/wt/h2
export PGBIN=/work/pg/h2/usr/lib/postgresql/15/bin DPSYNTH_PORT=55210 DPSYNTH_CLUSTER_DIR=/work/wt/h2/tmp_s1
source scripts/lib.sh
set +e
make -s PG_CONFIG=$PGBIN/pg_config && make -s PG_CONFIG=$PGBIN/pg_config install >/dev/null || exit 2
dp_cluster_start
psql -X -q -c "CREATE DATABASE s1" && psql -X -q -d s1 -c "CREATE EXTENSION dpsynth"
dp_load_adult s1 >/dev/null && dp_protect_adult s1 100 >/dev/null
dp_make_adult_1m s1 100
M=$(psql -X -qAt -d s1 -c "SET dpsynth.synthesis_threads = 2" -c "SELECT model_id FROM dp_synthesize('adult_1m', epsilon => 1, target => 'm1')")
echo "model $M"
one() { # tag, interrupts
	local tag=$1 n=$2 t0 t1
	if [ "$n" -gt 0 ]; then
		( for i in $(seq 60); do sleep 0.05; P=$(psql -X -qAt -d s1 -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%dp_sample(%' AND pid <> pg_backend_pid() LIMIT 1"); [ -n "$P" ] && break; done
		  for i in $(seq $n); do psql -X -qAt -d s1 -c "SELECT pg_log_backend_memory_contexts($P)" >/dev/null; sleep 0.05; done ) &
	fi
	t0=$(date +%s.%N)
	psql -X -qAt -d s1 -c "SET dpsynth.synthesis_threads = 2" -c "SELECT 1 FROM dp_sample($M, seed => 5, target => 's_$tag')" >/dev/null
	t1=$(date +%s.%N)
	wait
	echo "$tag: $(psql -X -qAt -d s1 -c "SELECT count(*) || ' rows, md5 ' || md5(string_agg(t::text, E'\n' ORDER BY t::text)) FROM s_$tag t"), wall $(echo "$t1 - $t0" | bc) s, load $(cut -d' ' -f1 /proc/loadavg)"
}
date -u +%T
one a0 0; one i1 40; one a1 0; one i2 40; one a2 0; one i3 40
grep -c "logging memory contexts" $DPSYNTH_CLUSTER_DIR/server.log 2>/dev/null || grep -c "memory contexts" $DPSYNTH_CLUSTER_DIR/data/log/* 2>/dev/null
date -u +%T
dp_cluster_stop
