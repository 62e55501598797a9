#!/usr/bin/env bash
# The attack suite of issue 9 (the parts that need several sessions or faults):
#  A. 16 sessions spend one budget to exhaustion, mixing dp_marginal and dp_synthesize: spent never
#     exceeds the allowance, spent equals the ledger's sum, every release the clients received is
#     one completed ledger row, every refusal is counted.
#  B. Faults at random moments of dp_synthesize and dp_marginal (cancel, terminate, kill -9 of the
#     backend, immediate shutdown and restart): the server comes back, spent equals the ledger's
#     sum, every release a client received was charged, and no half table is left (a target exists
#     with exactly the rows its call reported, or not at all).
#  C. A refused call never reads the table (pg_stat_user_tables does not move).
# The random delays are seeded (SEED, printed).  DPSYNTH_HEAVY=1 runs B 40 times instead of 8.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_attacks
SEED=${SEED:-$RANDOM}
RANDOM=$SEED
FAULTS=$([ "${DPSYNTH_HEAVY:-0}" = 1 ] && echo 40 || echo 8)
echo "# seed $SEED, $FAULTS faults"
fresh_db $DB
ensure_analyst $DB regress_attacker
psql -X -q -d $DB >/dev/null 2>&1 <<'SQL'
CREATE SCHEMA loot AUTHORIZATION regress_attacker;
CREATE TABLE t (g text NOT NULL, k integer NOT NULL);
INSERT INTO t SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 10 FROM generate_series(1, 3000) i;
SELECT dp_protect('t', epsilon => 6);
SELECT dp_declare('t', 'g', categories => ARRAY['a', 'b', 'c']);
SELECT dp_declare('t', 'k', lower => 0, upper => 9);
-- big: a synthesis lasts long enough to be hit by a fault in its middle
CREATE TABLE big (g text NOT NULL, k integer NOT NULL, h integer NOT NULL, j integer NOT NULL);
INSERT INTO big SELECT (ARRAY['a', 'b', 'c'])[1 + i % 3], i % 10, (i / 7) % 20, (i / 11) % 30 FROM generate_series(1, 600000) i;
SELECT dp_protect('big', epsilon => 100000);
SELECT dp_declare('big', '{"g": {"values": ["a", "b", "c"]}, "k": {"lower": 0, "upper": 9},
						  "h": {"lower": 0, "upper": 19}, "j": {"lower": 0, "upper": 29}}'::jsonb);
SQL
consistent() {	# spent equals the ledger's sum and stays within the allowance, for every budget
	q $DB "SELECT bool_and(b.rho_spent = (SELECT coalesce(sum(l.rho), 0) FROM dpsynth.ledger l
											WHERE l.budget_id = b.id AND l.status <> 'refused')
					   AND b.rho_spent <= b.rho_allowance) FROM dpsynth.budgets b"
}

# ---- A. 16 sessions to exhaustion ----
out=$(mktemp -d)
for s in $(seq 1 16); do
	(
		for i in $(seq 1 12); do
			echo "SELECT 'MARGINAL', count(*) FROM dp_marginal('t', ARRAY['g', 'k'], epsilon => 0.3);"
			echo "SELECT 'SYNTH', rows_written FROM dp_synthesize('t', epsilon => 0.5, \"rows\" => 100, target => 'loot.s${s}_$i');"
		done | psql -X -qAt -U regress_attacker -d $DB >"$out/$s.out" 2>"$out/$s.err"
	) &
done
wait
marg_ok=$(cat "$out"/*.out | grep -c '^MARGINAL')
synth_ok=$(cat "$out"/*.out | grep -c '^SYNTH')
refused=$(cat "$out"/*.err | grep -c 'privacy budget of table "t" is exhausted')
other=$(cat "$out"/*.err | grep 'ERROR' | grep -vc 'privacy budget of table "t" is exhausted')
echo "# 16 sessions: $marg_ok marginals and $synth_ok syntheses released, $refused refused, $other other errors"
[ "$other" -gt 0 ] && cat "$out"/*.err | grep ERROR | grep -v exhausted | sort | uniq -c | sed -n 1,5p | sed 's/^/# /'
ok "$([ $((marg_ok + synth_ok)) -gt 0 ] && [ "$refused" -gt 0 ]; echo $?)" "some calls were released and the budget ran out"
is "$other" 0 "no other error"
is "$(consistent)" t "spent equals the ledger's sum, within the allowance"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'completed' AND relname = 'public.t'")" "$((marg_ok + synth_ok))" \
	"one completed ledger row per release received"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE status = 'charged'")" 0 "no charge without its release"
is "$(q $DB "SELECT count(*) FROM pg_tables WHERE schemaname = 'loot'")" "$synth_ok" "one synthetic table per synthesis received"
is "$(q $DB "SELECT coalesce(sum(attempts), 0) FROM dpsynth.refusals")" "$refused" "every refusal is counted"
is "$(q $DB "SELECT rho_allowance - rho_spent < dpsynth._units_rho(dpsynth._rho_units(0.3, 1e-6)) FROM dpsynth.budgets WHERE relid = 't'::regclass")" t \
	"the budget was spent to the last call that fitted"

# ---- C. a refused call never reads the table ----
reads() { q $DB "SELECT pg_stat_force_next_flush(); SELECT pg_stat_clear_snapshot(); SELECT seq_scan || '/' || coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 't'" | tail -n 1; }
r0=$(reads)
psql -X -qAt -U regress_attacker -d $DB -c "SELECT count(*) FROM dp_marginal('t', ARRAY['g'], epsilon => 5)" >/dev/null 2>&1
psql -X -qAt -U regress_attacker -d $DB -c "SELECT * FROM dp_synthesize('t', epsilon => 5, target => 'loot.x')" >/dev/null 2>&1
sleep 0.5
is "$(reads)" "$r0" "refused calls never scan the table (seq_scan/idx_scan unchanged)"

# ---- B. faults at random moments ----
# the length of an unharmed synthesis, so that the faults fall inside the calls: the shorter of
# two, since the faults' delays (and so this test's length) scale with it and one call slowed by a
# passing stall (the machine is shared with the other tiers) would put every fault after its call
span_ms=
for c in 1 2; do
	t0=$(date +%s%N)
	q $DB "SELECT rows_written FROM dp_synthesize('big', epsilon => 1, target => 'loot.calibration$c')" >/dev/null
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ -z "$span_ms" ] || [ "$ms" -lt "$span_ms" ] && span_ms=$ms
done
echo "# an unharmed synthesis of big takes $span_ms ms (the shorter of two)"
faults=(cancel terminate kill9 immediate)
received=0
committed=0
for f in $(seq 1 $FAULTS); do
	fault=${faults[$(( (f - 1) % 4 ))]}
	call=$([ $((RANDOM % 3)) = 0 ] && echo marginal || echo synth)
	ms=$(( span_ms * (5 + RANDOM % 90) / 100 ))
	delay=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
	if [ $call = synth ]; then
		sql="SELECT 'RECEIVED', rows_written FROM dp_synthesize('big', epsilon => 1, target => 'loot.f$f')"
	else
		sql="SELECT 'RECEIVED', count(*) FROM dp_marginal('big', ARRAY['g', 'k', 'h', 'j'], epsilon => 1)"
	fi
	psql -X -qAt -U regress_attacker -d $DB -c "$sql" >"$out/f$f.out" 2>&1 &
	client=$!
	pid=""
	for _ in $(seq 1 50); do
		pid=$(q $DB "SELECT pid FROM pg_stat_activity WHERE usename = 'regress_attacker' AND state = 'active'" 2>/dev/null)
		[ -n "$pid" ] && break
		sleep 0.02
	done
	sleep "$delay"
	case $fault in
		cancel) q $DB "SELECT pg_cancel_backend($pid)" >/dev/null 2>&1 ;;
		terminate) q $DB "SELECT pg_terminate_backend($pid)" >/dev/null 2>&1 ;;
		kill9) [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null ;;
		immediate) as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -m immediate -w stop >/dev/null 2>&1
			as_pg "$PGBIN/pg_ctl" -D "$DATADIR" -l "$PGHOST/server.log" -w start >/dev/null 2>&1 ;;
	esac
	wait $client 2>/dev/null
	up=1
	for _ in $(seq 1 150); do q $DB "SELECT 1" >/dev/null 2>&1 && { up=0; break; }; sleep 0.2; done
	got=$(grep -c '^RECEIVED' "$out/f$f.out")
	received=$((received + got))
	echo "# fault $f: $fault of $call after ${delay}s: $([ "$got" = 1 ] && echo 'the call finished first' || echo 'the call was hit')"
	ok $up "fault $f ($fault during $call): the server is up"
	if [ $call = synth ]; then
		rows=$(sed -n 's/^RECEIVED|//p' "$out/f$f.out")
		if [ -n "$rows" ]; then
			is "$(q $DB "SELECT count(*) FROM loot.f$f")" "$rows" "fault $f: the synthetic table holds the rows reported"
		elif [ "$(q $DB "SELECT to_regclass('loot.f$f') IS NOT NULL")" = t ]; then
			# the call committed and the fault then lost its reply (the rows are flushed to the
			# client only after the commit): the table must be whole, and its charge completed
			committed=$((committed + 1))
			echo "# fault $f: the call committed before the fault; only its reply was lost"
			is "$(q $DB "SELECT count(*) > 0 FROM loot.f$f")" t "fault $f: a table left behind is a committed, whole one"
		else
			echo "# fault $f: no reply and no synthetic table: the call rolled back"
		fi
	fi
done
is "$(consistent)" t "after the faults: spent equals the ledger's sum, within the allowance"
# (a call hit after its commit may have completed without the client receiving it: >=)
ok "$([ "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE relname = 'public.big' AND status = 'completed'")" -ge $((received + committed)) ]; echo $?)" \
	"every release received or committed is a completed charge ($received received, $committed committed unreceived)"
is "$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE relname = 'public.big' AND status <> 'refused'")" \
	"$(q $DB "SELECT count(*) FROM dpsynth.ledger WHERE relname = 'public.big' AND status IN ('charged', 'completed')")" "ledger statuses are sane"

rm -rf "$out"
psql -X -q -d postgres -c "DROP DATABASE $DB" >/dev/null
done_testing
