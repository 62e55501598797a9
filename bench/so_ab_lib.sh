# bench/so_ab_lib.sh - shared by the same-hour A/B scripts of dpsynth.so builds (so_ab_1m.sh,
# so_ab_cpu.sh, so_ab_sample.sh; sourced, defines so_ab_run and so_ab_cpu_view).
# so_ab_run ROUNDS CALL NAME=path/to/dpsynth.so ...: saves the dpsynth.so installed in PG_CONFIG's
# pkglibdir and puts it back at exit, then runs ROUNDS rounds; in each, `CALL ROUND NAME` once per
# build with that build installed (by rename, so a running backend keeps its own), the order
# rotated every round.  The builds are only the shared object: for changes with no SQL-visible
# difference.
so_ab_run() {
	local rounds=$1 call=$2 names=() paths=() a n r i k
	shift 2
	SO_AB_PKGLIB=$("${PG_CONFIG:-pg_config}" --pkglibdir)
	SO_AB_SAVED=$(mktemp)
	cp "$SO_AB_PKGLIB/dpsynth.so" "$SO_AB_SAVED"
	trap 'so_ab_use "$SO_AB_SAVED"; rm -f "$SO_AB_SAVED"' EXIT
	for a in "$@"; do
		names+=("${a%%=*}")
		paths+=("${a#*=}")
	done
	n=${#names[@]}
	for r in $(seq 1 "$rounds"); do
		for i in $(seq 0 $((n - 1))); do
			k=$(((i + r - 1) % n))
			so_ab_use "${paths[$k]}"
			"$call" "$r" "${names[$k]}"
		done
	done
}

so_ab_use() {
	cp "$1" "$SO_AB_PKGLIB/dpsynth.so.ab" && chmod 755 "$SO_AB_PKGLIB/dpsynth.so.ab" &&
		mv "$SO_AB_PKGLIB/dpsynth.so.ab" "$SO_AB_PKGLIB/dpsynth.so"
}

# so_ab_cpu_view: prints the SQL that loads dpsynth and creates the temporary view cpu (ticks: the
# backend's utime + stime from /proc/self/stat, helper threads included; main_ticks: its own
# thread's), read before and after a call in the same session.
so_ab_cpu_view() {
	cat <<'SQL'
LOAD 'dpsynth';
CREATE TEMP VIEW cpu AS SELECT (split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint) AS ticks,
(SELECT split_part(m, ' ', 14)::bigint + split_part(m, ' ', 15)::bigint
 FROM pg_read_file('/proc/self/task/' || pg_backend_pid() || '/stat') m) AS main_ticks
FROM pg_read_file('/proc/self/stat') s;
SQL
}
