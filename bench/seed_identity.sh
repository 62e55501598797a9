#!/usr/bin/env bash
# bench/seed_identity.sh - are the rows of a seeded dp_sample the same at two commits?  The check
# for a refactor that must not change what the server produces (issue 40: "the rows produced for
# a given seed are identical before and after").
#
# Each commit is exported (git archive, nothing is checked out) and built into a scratch copy of
# the PostgreSQL installation of $PGBIN (lib/postgresql/15, share/postgresql/15,
# include/postgresql), so that neither touches the installation others use.  One cluster, started
# with COMMIT_A's build, stores models: dp_synthesize on Adult (the adaptive method, the default,
# and PrivSyn), on star (../shared/datasets/star), and on adult_1m (Adult's rows repeated to
# 1,000,000, scripts/lib.sh; skipped with SKIP_1M=1), and on males with its privacy unit (nr,
# from its domain.json; both methods: the synthetic units' path).  dp_synthesize's
# noise is not seedable (a CSPRNG), so the models are made once; what is compared is dp_sample(model, seed => $SEED) on each, with dpsynth.
# synthesis_threads fixed: the same cluster is stopped and started again with COMMIT_B's build
# (ALTER EXTENSION dpsynth UPDATE when its version is newer) and samples the same models with the
# same seeds.  For each sample: its row count and the md5 of its rows as text, in order; the
# output is one line per sample and "identical" or "DIFFERENT" at the end (exit status 1).
#
# Usage: bench/seed_identity.sh COMMIT_A COMMIT_B
#   PGBIN (default /usr/lib/postgresql/15/bin), DPSYNTH_PORT (the cluster takes DPSYNTH_PORT + 90),
#   SEED (default 42), THREADS (dpsynth.synthesis_threads, default 2), SKIP_1M (1: no adult_1m)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
set +e
[ $# = 2 ] || { echo "usage: bench/seed_identity.sh COMMIT_A COMMIT_B" >&2; exit 2; }
SEED=${SEED:-42}
THREADS=${THREADS:-2}
PORT=$((${DPSYNTH_PORT:-54329} + 90))
SHARED=$TOP/../shared
WORK=$TOP/tmp_seed_identity
PGROOT=$(cd "$PGBIN/../../../.." && pwd)
export PGHOST=$WORK/sock PGPORT=$PORT PGUSER=postgres
DB=seed_identity

pg_stop() { [ -f "$WORK/data/postmaster.pid" ] && as_pg "$1/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1; }
cleanup() { pg_stop "$WORK/a/usr/lib/postgresql/15/bin"; pg_stop "$WORK/b/usr/lib/postgresql/15/bin"; }
trap cleanup EXIT

# build COMMIT DIR: the commit's tree built and installed into DIR/usr, a copy of $PGROOT's server
build() {
	local commit=$1 dir=$2
	rm -rf "$dir" && mkdir -p "$dir/src" "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql" "$dir/usr/include"
	cp -a "$PGROOT/lib/postgresql/15" "$dir/usr/lib/postgresql/" &&
		cp -a "$PGROOT/share/postgresql/15" "$dir/usr/share/postgresql/" &&
		cp -a "$PGROOT/include/postgresql" "$dir/usr/include/" || return 1
	git -C "$TOP" archive "$commit" | tar -x -C "$dir/src" || return 1
	make -C "$dir/src" -s PG_CONFIG="$dir/usr/lib/postgresql/15/bin/pg_config" >"$dir/build.log" 2>&1 &&
		make -C "$dir/src" -s PG_CONFIG="$dir/usr/lib/postgresql/15/bin/pg_config" install >>"$dir/build.log" 2>&1
}

pg_start() {
	as_pg "$1/pg_ctl" -D "$WORK/data" -l "$WORK/server.log" -w start >/dev/null
}

# samples TAG: every stored model sampled with the seed; one line each: model, rows, md5
samples() {
	local m
	for m in $(psql -X -qAt -d $DB -c "SELECT model_id FROM models ORDER BY model_id"); do
		psql -X -qAt -v ON_ERROR_STOP=1 -d $DB -c "SET dpsynth.synthesis_threads = $THREADS" \
			-c "SELECT 1 FROM dp_sample($m, seed => $SEED, target => 's_$1_$m')" >/dev/null || { echo "model $m: dp_sample failed"; continue; }
		echo "model $m ($(psql -X -qAt -d $DB -c "SELECT what FROM models WHERE model_id = $m")):" \
			"$(psql -X -qAt -d $DB -c "SELECT count(*) || ' rows, md5 ' || md5(coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '')) FROM s_$1_$m t")"
		psql -X -q -d $DB -c "DROP TABLE s_$1_$m"
	done
}

rm -rf "$WORK" && mkdir -p "$WORK/sock"
[ "$(id -u)" = 0 ] && chown postgres: "$WORK" "$WORK/sock"
A=$(git -C "$TOP" rev-parse --short "$1") && B=$(git -C "$TOP" rev-parse --short "$2") || exit 2
log "building $A and $B into scratch installations ($WORK)"
build "$A" "$WORK/a" || { tail -n 20 "$WORK/a/build.log"; exit 2; }
build "$B" "$WORK/b" || { tail -n 20 "$WORK/b/build.log"; exit 2; }
BIN_A=$WORK/a/usr/lib/postgresql/15/bin
BIN_B=$WORK/b/usr/lib/postgresql/15/bin

log "models, stored with $A's build"
as_pg "$BIN_A/initdb" -D "$WORK/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null || exit 2
cat >>"$WORK/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$WORK/sock'
port = $PORT
max_worker_processes = 32
shared_buffers = 256MB
CONF
pg_start "$BIN_A" || exit 2
psql -X -q -d postgres -c "CREATE DATABASE $DB" && psql -X -q -d $DB -c "CREATE EXTENSION dpsynth" || exit 2
dp_load_adult $DB && dp_protect_adult $DB 100
[ "${SKIP_1M:-0}" = 1 ] || dp_make_adult_1m $DB 100
/usr/bin/python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/star" star 100 | psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null || exit 2
/usr/bin/python3 "$TOP/scripts/load_dataset.py" "$SHARED/datasets/males" males 100 | psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null || exit 2
psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL || exit 2
SET dpsynth.synthesis_threads = $THREADS;
CREATE TABLE models (model_id int8, what text);
INSERT INTO models SELECT model_id, 'adult, adaptive' FROM dp_synthesize('adult', epsilon => 1, target => 'm1');
INSERT INTO models SELECT model_id, 'adult, privsyn' FROM dp_synthesize('adult', epsilon => 1, method => 'privsyn', target => 'm2');
INSERT INTO models SELECT model_id, 'star, adaptive' FROM dp_synthesize('star', epsilon => 1, target => 'm3');
INSERT INTO models SELECT model_id, 'males per unit, adaptive' FROM dp_synthesize('males', epsilon => 1, target => 'm5');
INSERT INTO models SELECT model_id, 'males per unit, privsyn' FROM dp_synthesize('males', epsilon => 1, method => 'privsyn', target => 'm6');
SQL
[ "${SKIP_1M:-0}" = 1 ] || psql -X -q -v ON_ERROR_STOP=1 -d $DB >/dev/null <<SQL || exit 2
SET dpsynth.synthesis_threads = $THREADS;
INSERT INTO models SELECT model_id, 'adult_1m, adaptive' FROM dp_synthesize('adult_1m', epsilon => 1, target => 'm4');
SQL
log "seeded samples with $A's build"
samples a | tee "$WORK/a.txt"
pg_stop "$BIN_A"
log "seeded samples with $B's build"
pg_start "$BIN_B" || exit 2
psql -X -q -d $DB -c "ALTER EXTENSION dpsynth UPDATE" || exit 2
echo "extension: $(psql -X -qAt -d $DB -c "SELECT extversion FROM pg_extension WHERE extname = 'dpsynth'")"
samples b | tee "$WORK/b.txt"
pg_stop "$BIN_B"
if [ -s "$WORK/a.txt" ] && ! grep -q failed "$WORK/a.txt" && cmp -s "$WORK/a.txt" "$WORK/b.txt"; then
	echo "identical: $A and $B, $(wc -l <"$WORK/a.txt") seeded samples (seed $SEED, $THREADS synthesis threads)"
	rm -rf "$WORK"
else
	diff "$WORK/a.txt" "$WORK/b.txt"
	echo "DIFFERENT: $A and $B (seed $SEED; scratch kept in $WORK)"
	exit 1
fi
