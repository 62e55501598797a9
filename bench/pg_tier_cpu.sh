#!/usr/bin/env bash
# bench/pg_tier_cpu.sh PREFIX PORT: scripts/test's PostgreSQL 17/18 tier (version_job) by hand
# against the PostgreSQL installed in PREFIX, with CPU seconds: a copy of this checkout built
# with PREFIX's pg_config (the optimisation level PGXS hands the compile, and the warnings,
# printed), installed, a throwaway cluster on PORT, `make installcheck`; the server's CPU is the
# postmaster's and its reaped children's (/proc/PID/stat) over the suite.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: bench/pg_tier_cpu.sh PREFIX PORT" >&2; exit 2; }
prefix=$1 port=$2
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
copy=$(mktemp -d "$TOP/tmp_pgtier.XXXX")
(cd "$TOP" && tar --exclude=.git --exclude='tmp_*' --exclude='*/bin' --exclude='*/bin-san' --exclude='*.o' \
	--exclude='*.bc' --exclude='*.so' -cf - .) | tar -C "$copy" -xf -
/usr/bin/time -f "%U %S" -o "$copy/tb" make -C "$copy" PG_CONFIG="$prefix/bin/pg_config" >"$copy/build.log" 2>&1
read -r bu bs <"$copy/tb"
echo "build: cpu $(echo "$bu + $bs" | bc) s, $(grep -ci warning "$copy/build.log") warnings, flags of a core file:" \
	"$(grep -m1 -o 'gcc .* -c -o src/core/dp_gum.o' "$copy/build.log" | grep -oE ' -O[0-9sg]' | tr -d '\n')"
make -C "$copy" -s PG_CONFIG="$prefix/bin/pg_config" install >/dev/null 2>&1 || { echo "install failed"; exit 5; }
export PGBIN=$prefix/bin DPSYNTH_PORT=$port DPSYNTH_CLUSTER_DIR=$copy/cluster
# shellcheck source=../scripts/lib.sh
source "$TOP/scripts/lib.sh"
set +e
dp_cluster_start >/dev/null 2>&1 || { echo "the cluster does not start"; exit 6; }
pm=$(head -n 1 "$CLUSTER_DIR/data/postmaster.pid")
s0=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
make -C "$copy" -s PG_CONFIG="$prefix/bin/pg_config" installcheck >"$copy/regress.log" 2>&1
rc=$?
sleep 2
s1=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
dp_cluster_stop
echo "pg_regress: rc $rc, $(grep -cE '^ok ' "$copy/regress.log") ok, $(grep -cE '^not ok ' "$copy/regress.log") not ok," \
	"server cpu $(awk -v a="$s0" -v b="$s1" -v t="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", (b - a) / t}') s, load $(cut -d' ' -f1 /proc/loadavg)"
rm -rf "$copy"
exit $rc
