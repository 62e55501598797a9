#!/usr/bin/env bash
# bench/gum.sh - PrivSyn's core without the server on the bundled Adult table tiled to 1,000,000
# rows (bench/gum_bench.c: domain.json's equal-width encoding, epsilon 1), with 1 and 2 GUM
# threads, RUNS runs each: seconds per phase and GUM iterations.  --record appends the table to
# bench/RESULTS.md.  Usage: bench/gum.sh [--record]   (RUNS=3, ROWS=1000000)
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
RUNS=${RUNS:-3}
ROWS=${ROWS:-1000000}
dp_install_packages
dp_lock_checkout
make -C "$TOP" -s bench-gum
cd "$TOP"
rows=()
for threads in 1 2; do
	while read -r line; do
		echo "# threads $threads: $line"
		rows+=("| $threads | $(echo "$line" | sed -E 's/^run ([0-9]+): rc 0, (.*) marginals, GUM ([0-9]+) iterations.*seconds: (.*) gum ([0-9.]+) \(([0-9.]+) per iteration\)/\1 | \2 | \3 | \4 | \5 | \6/') |")
	done < <(GUM_THREADS=$threads bench/bin/gum_bench "$ROWS" 1 "$RUNS" | grep '^run')
done
report=$(
	echo "### PrivSyn core on Adult tiled to $ROWS rows (bench/gum.sh), $(date -u +%Y-%m-%d), commit $(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet || echo '+dirty')"
	echo
	echo "Machine: $(nproc --all) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/Mem:/{print $2}') GiB; epsilon 1, no server (bench/gum_bench.c); load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| threads | run | marginals | GUM iterations | other phases (s) | GUM s | s per iteration |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
)
echo "$report"
[ "${1:-}" = "--record" ] && printf '\n%s\n' "$report" >> "$TOP/bench/RESULTS.md"
exit 0
