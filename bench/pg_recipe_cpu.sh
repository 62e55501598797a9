#!/usr/bin/env bash
# bench/pg_recipe_cpu.sh TARBALL SCRATCH COPT: the CPU seconds of one PostgreSQL build with
# scripts/pgbuild's configure line and make's COPT (e.g. -O0; "" for configure's -O2), from a
# source tarball (scripts/pgbuild's cache keeps them in /var/cache/dpsynth-pg/src) into the
# prefix SCRATCH/prefix.  Never into the shared cache.  Prints the build's user and system CPU
# seconds and its wall seconds (extraction, configure, build, install).
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: bench/pg_recipe_cpu.sh TARBALL SCRATCH COPT" >&2; exit 2; }
tarball=$(realpath "$1") scratch=$2 copt=$3
mkdir -p "$scratch" && scratch=$(realpath "$scratch")
rm -rf "$scratch/work" "$scratch/prefix" && mkdir "$scratch/work"
dir=$(tar tf "$tarball" | head -n 1 | cut -d/ -f1)
/usr/bin/time -f "%U %S %e" -o "$scratch/time" bash -c '
	cd "$1" && tar xf "$2" && cd "$3" &&
	nice -n 10 ./configure --prefix="$4" --with-libxml --without-icu --without-readline --without-zlib \
		--without-zstd --without-lz4 &&
	nice -n 10 make -j"$(nproc)" -s COPT="$5" && make -s install COPT="$5"' _ \
	"$scratch/work" "$tarball" "$dir" "$scratch/prefix" "$copt" >"$scratch/build.log" 2>&1
rc=$?
rm -rf "$scratch/work"
read -r user sys wall <"$scratch/time"
printf 'COPT=%s rc=%s user=%s sys=%s cpu=%.1f wall=%s load=%s\n' "${copt:-none}" "$rc" "$user" "$sys" \
	"$(echo "$user + $sys" | bc)" "$wall" "$(cut -d' ' -f1 /proc/loadavg)"
exit $rc
