#!/usr/bin/env bash
# Empirical privacy audit of discovery per unit (issue 39): N dp_discover releases (epsilon 4 each)
# from two neighbouring tables with a privacy unit (k = 5 rows per unit) which differ in one unit
# of 300 rows, all holding a text value no other unit has ('z') and the number 1e9, far above every
# other unit's.  Partition selection per unit counts the units holding a value, so 'z' has count 1
# in the neighbour, and the threshold releases a value of count 1 with probability at most
# delta_each / k: the claim tested is that 'z' is released in the N releases no more often than a
# binomial of probability delta_each allows (a one-sided tail below 1e-6 refutes it).  The bounds
# of the number column count units too, and how often the unit's cell (count 1 per unit, 300 per
# row) carries the upper bound to 1e9 is reported, not tested: under zCDP a cell of count 1 may
# show now and then, as one row's does on a table without a unit.  The installed build must keep the
# claim; a build compiled with -DDPSYNTH_TEST_IGNORE_UNIT (no bounding, a row's noise and
# threshold: 'z' counts 300) must be refuted, as in 21_unit_audit.sh.  AUDIT_RELEASES=N (default 40).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N=${AUDIT_RELEASES:-40}
EPS=4
DB=dpsynth_unit_selection_audit
K=5
UNIT_ROWS=300

# $1: database (PGHOST/PGPORT of the cluster to use); fills $2.d0 and $2.d1 with N lines each:
# "<categories of g released> <upper bound of x released> <'z' released: 1 or 0>", release i from
# table d0_i or d1_i
releases() {
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null 2>&1
	# a pair of tables for each release (a selection takes a share of the selection delta left,
	# so each release gets a budget of its own)
	psql -X -q -d "$1" -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
CREATE EXTENSION dpsynth;
CREATE TABLE base (person int4 NOT NULL, g text NOT NULL, x int4 NOT NULL);
INSERT INTO base SELECT i, (ARRAY['a', 'b'])[1 + i % 2], i % 100 FROM generate_series(1, 400) i;
SELECT format('CREATE TABLE d0_%s AS SELECT * FROM base', i) FROM generate_series(1, $N) i \gexec
SELECT format('CREATE TABLE d1_%s AS SELECT * FROM base', i) FROM generate_series(1, $N) i \gexec
SELECT format('INSERT INTO d1_%s SELECT 999, ''z'', 1000000000 FROM generate_series(1, $UNIT_ROWS)', i)
FROM generate_series(1, $N) i \gexec
SELECT format('SELECT dp_protect(''d%s_%s'', epsilon => 100, selection_delta => 1e-6), dp_privacy_unit(''d%s_%s'', ''person'', $K)', t, i, t, i)
FROM generate_series(0, 1) t, generate_series(1, $N) i \gexec
SQL
	for t in d0 d1; do
		for i in $(seq 1 "$N"); do
			echo "SELECT count(*) FROM dp_discover('${t}_$i', $EPS, ARRAY['g', 'x']) \\g /dev/null
SELECT coalesce((SELECT array_length(categories, 1) FROM dpsynth.domains WHERE relid = '${t}_$i'::regclass AND attnum = 2), 0)
	|| ' ' || coalesce((SELECT upper FROM dpsynth.domains WHERE relid = '${t}_$i'::regclass AND attnum = 3)::text, 'none')
	|| ' ' || coalesce((SELECT ('z' = ANY (categories))::int FROM dpsynth.domains WHERE relid = '${t}_$i'::regclass AND attnum = 2), 0);"
		done | psql -X -qAt -d "$1" >"$2.$t" 2>/dev/null &
	done
	wait
}

# $1: database, $2: file prefix; the claim's test: prints its line, returns 0 (holds) or 1 (refuted)
audit() {
	local delta completed
	delta=$(q "$1" "SELECT max((details->>'delta_per_selection')::float8) FROM dpsynth.ledger WHERE function = 'dp_discover'")
	completed=$(q "$1" "SELECT count(*) FROM dpsynth.ledger WHERE function = 'dp_discover' AND status = 'completed'")
	/usr/bin/python3 - "$2.d0" "$2.d1" "$N" "$delta" "$completed" <<'PY'
import math, sys
d0, d1 = ([l.split() for l in open(p) if l.strip()] for p in sys.argv[1:3])
n, delta, completed = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
# every release completed and released what every table holds ('a' and 'b', each of 200 units):
# a release that failed reads back as nothing released, which must not count as the claim held
if completed != 2 * n or any(int(l[0]) < 2 for l in d0 + d1):
	print(f"releases {len(d0)} + {len(d1)}; {completed} of {2 * n} completed; "
		  f"{sum(1 for l in d0 + d1 if int(l[0]) < 2)} without 'a' and 'b': NO AUDIT")
	sys.exit(2)
z1 = sum(int(l[2]) for l in d1)
z0 = sum(int(l[2]) for l in d0)
high = sum(1 for l in d1 if l[1] != 'none' and float(l[1]) >= 1e8)
# P(X >= z1) for X ~ Binomial(n, delta): the chance of seeing 'z' this often under the claim
tail = sum(math.comb(n, j) * delta ** j * (1 - delta) ** (n - j) for j in range(z1, n + 1)) if z1 > 0 else 1.0
refuted = tail < 1e-6
print(f"releases {len(d0)} + {len(d1)}; 'z' released {z1} of {len(d1)} (d0: {z0}); "
	  f"delta_each {delta:.3g}, binomial tail {tail:.3g}; upper bound at 1e9 or more in {high} of {len(d1)}; "
	  + ("CLAIM REFUTED" if refuted else "claim holds"))
sys.exit(1 if refuted or len(d0) != n or len(d1) != n else 0)
PY
}

AUDIT_CLAIM_TAIL=""
audit_real_and_broken -DDPSYNTH_TEST_IGNORE_UNIT 74 " (a value of one unit of $UNIT_ROWS rows released at most as often as delta_each allows)" \
	"the build that ignores the unit"
done_testing
