/*
 * test_schedule.c - unit tests for src/core/dp_schedule.c: the privacy schedule of a call.
 *
 * Build and run (from the repository root): make test/unit/bin/test_schedule && test/unit/bin/test_schedule
 *
 * - For each method and table shape (columns, discovery on or off, focus, a privacy unit): the
 *   ledger's units entries add up exactly to the plan's charge, the method's releases to its rho
 *   (shares summing to 1), never above what the charge buys, each with its mechanism.
 * - The adaptive rounds' pool (dp_rounds): the starting rho_t and eps_t, the focus pairs' cap at
 *   R / 2, the anneal, the last round taking the remainder: a whole schedule, anneals at chosen
 *   rounds, spends R less at most DP_SCHEDULE_LAST_MARGIN of it, and never more.
 * - Fixed-seed runs of dp_privsyn_run and dp_adaptive_run (focus or not): their recorded releases
 *   (the result's spend) match the schedule one for one, and a spend that strays is caught.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dp_adaptive.h"
#include "dp_codes.h"
#include "dp_plan.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "dp_schedule.h"
#include "dp_units.h"
#include "unit.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A plan of `call` over d known columns and ndisc columns awaiting bounds, at epsilon 1. */
static dp_plan_refusal
plan_of(dp_plan_call call, uint32_t d, uint32_t ndisc, dp_plan *plan)
{
	dp_plan_column cols[64];
	dp_plan_input in;

	for (uint32_t j = 0; j < d; j++)
	{
		memset(&cols[j], 0, sizeof(cols[j]));
		cols[j].state = j < ndisc ? DP_PLAN_BOUNDS : DP_PLAN_KNOWN;
		cols[j].ncodes = 8;
	}
	in.call = call;
	in.units = dp_rho_units(1, 1e-6);
	in.selection_delta = 1e-8;
	in.ncols = (int) d;
	in.cols = cols;
	return dp_plan_make(&in, plan);
}

/* The method's releases and rho_unspent, summed in long double. */
static long double
method_sum(const dp_schedule *s)
{
	long double sum = s->rho_unspent;

	for (int k = 0; k < s->nrel; k++)
		if (s->rel[k].kind != DP_RELEASE_DISCOVERY && s->rel[k].kind != DP_RELEASE_ROWS_PER_UNIT)
			sum += s->rel[k].rho;
	return sum;
}

static bool
kinds_are(const dp_schedule *s, const dp_release_kind *kinds, int n)
{
	if (s->nrel != n)
		return false;
	for (int k = 0; k < n; k++)
		if (s->rel[k].kind != kinds[k])
			return false;
	return true;
}

static void
test_shapes(void)
{
	static const uint32_t ds[] = {1, 2, 5, 15, 40};
	int			sums = 1,
				method_sums = 1,
				below = 1,
				order = 1,
				mechs = 1,
				bounds = 1,
				cases = 0;

	for (int call = 0; call < 2; call++)
		for (size_t di = 0; di < NELEM(ds); di++)
			for (uint32_t ndisc = 0; ndisc <= 2; ndisc += 2)
				for (int focus = 0; focus < 2; focus++)
					for (int unit = 0; unit < 2; unit++)
					{
						dp_plan_call c = call ? DP_CALL_ADAPTIVE : DP_CALL_PRIVSYN;
						uint32_t	d = ds[di];
						dp_plan		plan;
						dp_schedule s;
						dp_schedule_input in = {c, &plan, d, focus != 0, unit ? 3 : 0, unit ? 9 : 1, false, false};
						int64_t		units = 0;
						long double msum;
						dp_release_kind want[DP_SCHEDULE_MAX_RELEASES];
						int			nwant = 0;

						if (plan_of(c, d, ndisc > d ? d : ndisc, &plan) != DP_PLAN_OK ||
							dp_schedule_make(&in, &s) != 0)
						{
							sums = 0;
							continue;
						}
						cases++;
						for (int k = 0; k < s.nrel; k++)
						{
							const dp_release *r = &s.rel[k];

							units += r->units;
							bounds &= r->rho_min <= r->rho && r->rho <= r->rho_max && r->rho_min >= 0;
							mechs &= r->mech == (r->kind == DP_RELEASE_DISCOVERY ? DP_MECH_DISCOVERY :
												 r->kind == DP_RELEASE_SELECT ? DP_MECH_EXPONENTIAL : DP_MECH_GAUSSIAN);
						}
						sums &= units + s.units_method == s.units_charged && s.units_charged == plan.units_charged;
						msum = method_sum(&s);
						method_sums &= fabsl(msum - s.rho_method) <= 4 * s.rho_method * 0x1p-52L;
						/* the method's rho per group, times its sensitivity^2, within the units it is charged */
						below &= s.rho_method * (long double) s.unit_sens2 <= s.units_method * 1e-12L &&
							dp_units_rho(s.units_method) / s.unit_sens2 == s.rho_method;
						if (plan.ndiscover > 0)
							want[nwant++] = DP_RELEASE_DISCOVERY;
						if (unit)
							want[nwant++] = DP_RELEASE_ROWS_PER_UNIT;
						want[nwant++] = DP_RELEASE_ONEWAY;
						if (c == DP_CALL_PRIVSYN && d > 1)
						{
							want[nwant++] = DP_RELEASE_INDIF;
							want[nwant++] = DP_RELEASE_PUBLISH;
						}
						if (c == DP_CALL_ADAPTIVE)
						{
							if (focus)
								want[nwant++] = DP_RELEASE_FOCUS;
							want[nwant++] = DP_RELEASE_SELECT;
							want[nwant++] = DP_RELEASE_MEASURE;
						}
						order &= kinds_are(&s, want, nwant) &&
							(c == DP_CALL_PRIVSYN && d == 1) == (s.rho_unspent > 0);
					}
	unit_check(sums && cases == 2 * 5 * 2 * 2 * 2,
			   "%d shapes (method, 1 to 40 columns, discovery, focus, unit): the units entries add up exactly to the plan's charge",
			   cases);
	unit_check(method_sums, "... the method's releases (and what PrivSyn on one column leaves unspent) add up to its rho within 4 ulps");
	unit_check(below, "... the method's rho times the unit's sensitivity^2 stays within the units it is charged");
	unit_check(order, "... the releases in order: discovery, rows per unit, one-way, then InDif and publish, or focus, select and measure");
	unit_check(mechs, "... each with its mechanism (discovery, exponential for the selections, Gaussian for the rest)");
	unit_check(bounds, "... and rho_min <= rho <= rho_max for each");
}

static void
test_values(void)
{
	dp_plan		plan;
	dp_schedule s,
				m;
	dp_schedule_input in = {DP_CALL_ADAPTIVE, &plan, 4, true, 0, 1, false, false};
	const dp_release *r;
	double		rho;

	plan_of(DP_CALL_ADAPTIVE, 4, 2, &plan);
	unit_check(dp_schedule_make(&in, &s) == 0 && plan.ndiscover == 2 && plan.units_each > 0,
			   "adaptive at epsilon 1, 4 columns of which 2 discovered: a schedule");
	r = dp_schedule_find(&s, DP_RELEASE_DISCOVERY);
	unit_check(r && r->units == 2 * plan.units_each && r->count == 2 &&
			   r->rho == dp_units_rho(plan.units_each) * 2,
			   "discovery: units_each for each of the 2 columns, its rho the columns' calibrated rho");
	rho = dp_units_rho(plan.units_release);
	unit_check(s.units_method == plan.units_release && s.rho_method == rho,
			   "the method gets the release's units, as dp_units_rho");
	unit_check(dp_schedule_rho(&s, DP_RELEASE_ONEWAY) == rho * DP_ADAPTIVE_ONEWAY_SHARE &&
			   s.rho_rounds == rho * (1 - DP_ADAPTIVE_ONEWAY_SHARE),
			   "one-way marginals 0.25 rho, the rounds' pool R the rest");
	r = dp_schedule_find(&s, DP_RELEASE_FOCUS);
	unit_check(r && r->rho == 0 && r->rho_min == 0 && r->rho_max == s.rho_rounds / 2 && r->count == 6,
			   "focus: nothing without pairs, at most R / 2, over at most the 6 pairs");
	r = dp_schedule_find(&s, DP_RELEASE_MEASURE);
	unit_check(r && r->rho == s.rho_rounds * DP_SCHEDULE_MEASURE_SHARE &&
			   fabs(r->rho_min - (s.rho_rounds - rho * (DP_ADAPTIVE_ONEWAY_SHARE_MAX - DP_ADAPTIVE_ONEWAY_SHARE)) / 2 *
					DP_SCHEDULE_MEASURE_SHARE) <= 1e-9 * s.rho_rounds,
			   "measure: 0.9 of R, at least 0.9 of half what the one-way top-up leaves of R (when both take their most)");
	r = dp_schedule_find(&s, DP_RELEASE_ONEWAY);
	unit_check(r && r->rho_min == r->rho && r->rho_max == r->rho + rho * (DP_ADAPTIVE_ONEWAY_SHARE_MAX - DP_ADAPTIVE_ONEWAY_SHARE),
			   "one-way: 0.25 rho, at most %g rho with the top-up", DP_ADAPTIVE_ONEWAY_SHARE_MAX);
	unit_check(dp_schedule_method(DP_CALL_ADAPTIVE, rho, 4, true, &m) == 0 &&
			   memcmp(&m.rel[0], dp_schedule_find(&s, DP_RELEASE_ONEWAY), sizeof(dp_release)) == 0 &&
			   m.rho_rounds == s.rho_rounds,
			   "the method's own schedule (dp_schedule_method on its rho) is the call's method part");

	plan_of(DP_CALL_PRIVSYN, 6, 0, &plan);
	in.call = DP_CALL_PRIVSYN;
	in.d = 6;
	in.focus = true;			/* PrivSyn has no focus: ignored */
	in.unit_rows = 10;
	in.unit_sens2 = 100;
	rho = dp_units_rho(plan.units_release - plan.units_release / DP_SCHEDULE_UNIT_SHAPE_PARTS) / 100;
	unit_check(dp_schedule_make(&in, &s) == 0 &&
			   (r = dp_schedule_find(&s, DP_RELEASE_ROWS_PER_UNIT)) != NULL &&
			   r->units == plan.units_release / DP_SCHEDULE_UNIT_SHAPE_PARTS && r->count == 10 &&
			   s.rho_method == rho && dp_schedule_find(&s, DP_RELEASE_FOCUS) == NULL,
			   "PrivSyn per unit (k = 10): 1/50 of the units for the rows-per-unit histogram, the rest / k^2 to the method");
	unit_check(dp_schedule_rho(&s, DP_RELEASE_ONEWAY) == rho * DP_PRIVSYN_ONEWAY_SHARE &&
			   dp_schedule_rho(&s, DP_RELEASE_INDIF) == rho * DP_PRIVSYN_INDIF_SHARE &&
			   dp_schedule_rho(&s, DP_RELEASE_PUBLISH) == rho * DP_PRIVSYN_PUBLISH_SHARE &&
			   dp_schedule_find(&s, DP_RELEASE_INDIF)->count == 15,
			   "PrivSyn: 0.1, 0.1 (15 scores) and 0.8 of the method's rho");

	plan_of(DP_CALL_PRIVSYN, 6, 2, &plan);
	in.unit_rows = DP_UNIT_LEARN_MAX;
	in.unit_sens2 = 9;
	in.unit_rows_first = false;
	unit_check(dp_schedule_make(&in, &s) == 0 && s.nrel > 2 && s.rel[0].kind == DP_RELEASE_DISCOVERY &&
			   s.rel[1].kind == DP_RELEASE_ROWS_PER_UNIT,
			   "per unit with discovery, k declared: discovery, then the rows-per-unit histogram");
	in.unit_rows_first = true;
	unit_check(dp_schedule_make(&in, &s) == 0 && s.nrel > 2 && s.rel[0].kind == DP_RELEASE_ROWS_PER_UNIT &&
			   s.rel[0].count == DP_UNIT_LEARN_MAX && s.rel[1].kind == DP_RELEASE_DISCOVERY &&
			   s.units_charged == plan.units_charged,
			   "k learned with discovery: the rows-per-unit histogram (the ceiling's cells) first, the same charge");
	{
		dp_schedule first;
		int64_t		shape = plan.units_release / DP_SCHEDULE_UNIT_SHAPE_PARTS;

		in.unit_rows_topup = false;
		unit_check(dp_schedule_make(&in, &first) == 0 && first.units_topup == DP_SCHEDULE_UNIT_SHAPE_TOPUP * shape &&
				   dp_schedule_find(&first, DP_RELEASE_ROWS_PER_UNIT)->units == shape,
				   "k learned: the histogram's second release would take %d times its units, not taken yet",
				   DP_SCHEDULE_UNIT_SHAPE_TOPUP);
		in.unit_rows_topup = true;
		unit_check(dp_schedule_make(&in, &s) == 0 && s.units_charged == plan.units_charged &&
				   s.units_method == first.units_method - first.units_topup &&
				   (r = dp_schedule_find(&s, DP_RELEASE_ROWS_PER_UNIT)) != NULL &&
				   r->units == shape + first.units_topup && r->count == DP_UNIT_LEARN_MAX &&
				   s.rho_method == dp_units_rho(s.units_method) / 9 && s.rho_method < first.rho_method,
				   "the second release taken: its units from the method's, the same charge");
		plan.units_release = 4;	/* the histogram 1 unit, the method 3: a top-up of 3 would leave none */
		in.unit_rows_topup = false;
		unit_check(dp_schedule_make(&in, &first) == 0 && first.units_topup == 0,
				   "a second release that would leave the method no unit is not offered");
		in.unit_rows_topup = true;
		unit_check(dp_schedule_make(&in, &s) == -1, "... and refused if asked");
		in.unit_rows_topup = false;
		/* the rule dp_marginal offers it by (src/marginal.c): the same as the schedule's */
		unit_check(dp_schedule_unit_topup(49, 1) == DP_SCHEDULE_UNIT_SHAPE_TOPUP &&
				   dp_schedule_unit_topup(DP_SCHEDULE_UNIT_SHAPE_TOPUP + 1, 1) == DP_SCHEDULE_UNIT_SHAPE_TOPUP &&
				   dp_schedule_unit_topup(DP_SCHEDULE_UNIT_SHAPE_TOPUP, 1) == 0 &&
				   dp_schedule_unit_topup(1000, 0) == 0 && dp_schedule_unit_topup(1000, -1) == 0 &&
				   dp_schedule_unit_topup(INT64_MAX, INT64_MAX / 2) == 0 &&
				   dp_schedule_unit_topup(INT64_MAX, 1000) == DP_SCHEDULE_UNIT_SHAPE_TOPUP * 1000,
				   "dp_schedule_unit_topup: %d times the histogram's units where the rest keeps one, else none",
				   DP_SCHEDULE_UNIT_SHAPE_TOPUP);
	}
	in.unit_rows_first = false;
	in.unit_rows = 10;
	in.unit_sens2 = 100;
	plan_of(DP_CALL_PRIVSYN, 6, 0, &plan);

	plan.units_release = 1;
	unit_check(dp_schedule_make(&in, &s) == -1, "a unit's histogram leaving the method no unit is refused");
	plan.units_release = 100;
	in.unit_rows = 0;
	in.d = 0;
	unit_check(dp_schedule_make(&in, &s) == -1 && dp_schedule_method(DP_CALL_PRIVSYN, 0, 3, false, &s) == -1 &&
			   dp_schedule_method(DP_CALL_ADAPTIVE, NAN, 3, false, &s) == -1,
			   "no column, rho 0 or NaN: no schedule");
	plan.refusal = DP_PLAN_PAIR_TOO_LARGE;
	in.d = 3;
	unit_check(dp_schedule_make(&in, &s) == -1, "a refused plan: no schedule");
}

/*
 * A whole run of the rounds' pool as dp_adaptive_run draws it, with B selections a round and an
 * anneal after each round listed in anneal_at; returns the rounds made.
 */
static uint32_t
run_pool(const dp_schedule *s, double T, uint32_t B, uint32_t F, const uint32_t *anneal_at, int nanneal,
		 dp_spend *sp, double *rho_f, double *last_rho_t, bool *ratio_kept)
{
	dp_rounds	rs;
	uint32_t	rounds = 0;

	/* the one-way marginals, as dp_privsyn_oneway_stage records them, before the rounds */
	dp_spend_record(sp, DP_RELEASE_ONEWAY, dp_schedule_rho(s, DP_RELEASE_ONEWAY), s->d);
	dp_rounds_begin(&rs, s, T, sp);
	*rho_f = dp_rounds_focus(&rs, F);
	*ratio_kept = true;
	while (dp_rounds_next(&rs, B))
	{
		/* selecting costs 1/9 of measuring, at every round */
		*ratio_kept &= fabs(rs.eps_t * rs.eps_t / 8 / rs.rho_t - (1 - DP_SCHEDULE_MEASURE_SHARE) /
							DP_SCHEDULE_MEASURE_SHARE) < 1e-9;
		for (uint32_t b = 0; b < B; b++)
			dp_rounds_spend(&rs);
		*last_rho_t = rs.rho_t;
		rounds++;
		if (rs.last)
			continue;			/* dp_rounds_next ends it */
		for (int a = 0; a < nanneal; a++)
			if (anneal_at[a] == rounds)
				dp_rounds_anneal(&rs);
	}
	return rounds;
}

static void
test_rounds(void)
{
	static const uint32_t anneals[] = {3, 5};
	dp_schedule s;
	dp_rounds	rs;
	dp_spend	sp;
	double		rho = 0.5,
				R,
				T = 40,
				rho_f,
				last;
	bool		kept;
	uint32_t	rounds,
				plain;
	const char *why;

	dp_schedule_method(DP_CALL_ADAPTIVE, rho, 10, true, &s);
	R = s.rho_rounds;
	dp_rounds_begin(&rs, &s, T, NULL);
	unit_check(rs.rho_t == DP_SCHEDULE_MEASURE_SHARE * R / T &&
			   rs.eps_t == sqrt(8 * (1 - DP_SCHEDULE_MEASURE_SHARE) * R / T) && rs.used == 0 && !rs.last,
			   "the rounds start at rho_t = 0.9 R / T and eps_t = sqrt(0.8 R / T)");
	dp_rounds_anneal(&rs);
	unit_check(rs.rho_t == 4 * DP_SCHEDULE_MEASURE_SHARE * R / T &&
			   rs.eps_t == 2 * sqrt(8 * (1 - DP_SCHEDULE_MEASURE_SHARE) * R / T),
			   "an anneal: 4 rho_t and 2 eps_t");

	memset(&sp, 0, sizeof(sp));
	plain = run_pool(&s, T, 2, 0, NULL, 0, &sp, &rho_f, &last, &kept);
	unit_check(rho_f == 0 && sp.rho[DP_RELEASE_FOCUS] == 0 && (plain == 19 || plain == 20) && kept,
			   "no anneal, T = 40, batches of 2: %u rounds (T / B, the last two perhaps as one), selecting a ninth of measuring in each",
			   plain);
	unit_check(sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] <= R &&
			   sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] >= R * (1 - 2 * DP_SCHEDULE_LAST_MARGIN),
			   "... the pool is spent, less at most the last round's margin (%.17g of %.17g)",
			   sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE], R);
	unit_check(sp.n[DP_RELEASE_SELECT] == 2 * plain && sp.n[DP_RELEASE_MEASURE] == 2 * plain &&
			   dp_spend_matches(&s, &sp, 1e-12, &why),
			   "... two selections a round, and the spend matches the schedule");

	memset(&sp, 0, sizeof(sp));
	rounds = run_pool(&s, T, 2, 0, anneals, NELEM(anneals), &sp, &rho_f, &last, &kept);
	unit_check(rounds < plain && kept && sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] <= R &&
			   sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] >= R * (1 - 2 * DP_SCHEDULE_LAST_MARGIN),
			   "anneals after rounds 3 and 5: %u rounds, the pool still spent exactly", rounds);
	/*
	 * With c = R / 20 a round at the start: rounds 1-3 cost c each, 4-5 4c each (11c used), then
	 * 16c a round, more than the 9c left: round 6 is the last and takes those 9c, 0.9 of them
	 * measuring over its 2 selections.
	 */
	unit_check(rounds == 6 && fabs(last - DP_SCHEDULE_MEASURE_SHARE * (9 * R / 20) / 2) <= 1e-6 * last,
			   "... round 6 is the last, the remainder over its batch (rho_t %.6g, expected %.6g)", last,
			   DP_SCHEDULE_MEASURE_SHARE * (9 * R / 20) / 2);

	memset(&sp, 0, sizeof(sp));
	run_pool(&s, T, 2, 3, NULL, 0, &sp, &rho_f, &last, &kept);
	unit_check(rho_f == DP_SCHEDULE_MEASURE_SHARE * R / T && sp.rho[DP_RELEASE_FOCUS] == 3 * rho_f &&
			   sp.n[DP_RELEASE_FOCUS] == 3 && dp_spend_matches(&s, &sp, 1e-12, &why),
			   "3 focus pairs: each at the starting rho_t, drawn from the pool, the spend matches");
	memset(&sp, 0, sizeof(sp));
	run_pool(&s, T, 2, 45, NULL, 0, &sp, &rho_f, &last, &kept);
	unit_check(rho_f < R / 90 && rho_f == nextafter(R / 90, 0) && sp.rho[DP_RELEASE_FOCUS] <= R / 2 &&
			   sp.rho[DP_RELEASE_FOCUS] + sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] <= R &&
			   sp.rho[DP_RELEASE_SELECT] + sp.rho[DP_RELEASE_MEASURE] >= R / 2 * (1 - 2 * DP_SCHEDULE_LAST_MARGIN) &&
			   dp_spend_matches(&s, &sp, 1e-12, &why),
			   "45 focus pairs: capped at R / 2 in all (R / 90 each, rounded down), the rounds the rest");
}

/* A table of n rows over d columns of 3 codes, each column following the one before it. */
static void
chain_table(dp_codes *t, uint32_t *sizes, uint32_t d, uint32_t n, dp_prng *rng)
{
	uint16_t	row[16];

	dp_codes_init(t, d, n);
	for (uint32_t j = 0; j < d; j++)
		sizes[j] = 3;
	for (uint32_t i = 0; i < n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
			row[j] = (uint16_t) (j ? (row[j - 1] + dp_prng_below(rng, 2)) % 3 : dp_prng_below(rng, 3));
		dp_codes_append(t, row);
	}
}

static void
test_runs(void)
{
	enum {D = 6, N = 3000};
	uint32_t	sizes[D];
	uint8_t		focus[D] = {1, 0, 0, 0, 0, 0};
	dp_codes	t;
	dp_prng		rng;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_adaptive_stats st;
	dp_schedule s;
	dp_spend	bad;
	const char *why = NULL;
	int			rc;

	dp_prng_seed(&rng, 26);
	chain_table(&t, sizes, D, N, &rng);
	dp_privsyn_default_params(&p);
	p.rho = 0.05;
	p.rows = 500;

	dp_schedule_method(DP_CALL_PRIVSYN, p.rho, D, false, &s);
	rc = dp_privsyn_run(&t, sizes, &p, &rng, &res);
	unit_check(rc == 0 && dp_spend_matches(&s, &res.spend, 1e-12, &why) &&
			   res.spend.n[DP_RELEASE_ONEWAY] == D && res.spend.n[DP_RELEASE_INDIF] == D * (D - 1) / 2 &&
			   res.spend.n[DP_RELEASE_PUBLISH] == res.n_kway && res.n_kway > 0,
			   "PrivSyn, fixed seed: its releases match the schedule one for one (%u one-way, %u scores, %u published)%s%s",
			   res.spend.n[DP_RELEASE_ONEWAY], res.spend.n[DP_RELEASE_INDIF], res.spend.n[DP_RELEASE_PUBLISH],
			   why ? ": " : "", why ? why : "");
	bad = res.spend;
	bad.rho[DP_RELEASE_INDIF] *= 1.001;
	unit_check(rc == 0 && !dp_spend_matches(&s, &bad, 1e-12, &why) && strcmp(why, "indif") == 0,
			   "... a spend 0.1%% over the plan on the InDif scores is caught");
	bad = res.spend;
	dp_spend_record(&bad, DP_RELEASE_SELECT, 1e-9, 1);
	unit_check(rc == 0 && !dp_spend_matches(&s, &bad, 1e-12, &why) && strcmp(why, "select") == 0,
			   "... and so is a release the plan does not have");
	if (rc == 0)
		dp_privsyn_result_free(&res);

	for (int f = 0; f < 2; f++)
	{
		p.focus = f ? focus : NULL;
		dp_schedule_method(DP_CALL_ADAPTIVE, p.rho, D, f != 0, &s);
		rc = dp_adaptive_run(&t, sizes, &p, &rng, &res, &st);
		why = NULL;
		unit_check(rc == 0 && dp_spend_matches(&s, &res.spend, 1e-12, &why) &&
				   res.spend.n[DP_RELEASE_ONEWAY] == D && res.spend.n[DP_RELEASE_FOCUS] == st.focus_pairs &&
				   (f == 0 || st.focus_pairs == D - 1) &&
				   res.spend.n[DP_RELEASE_SELECT] == res.spend.n[DP_RELEASE_MEASURE] &&
				   res.spend.n[DP_RELEASE_SELECT] == st.rounds * ((D + DP_ADAPTIVE_BATCH_COLS - 1) / DP_ADAPTIVE_BATCH_COLS),
				   "adaptive%s, fixed seed: its releases match the schedule one for one (%u focus pairs, %u rounds, %u anneals)%s%s",
				   f ? " with focus" : "", st.focus_pairs, st.rounds, st.anneals, why ? ": " : "", why ? why : "");
		unit_check(rc == 0 && res.spend.rho[DP_RELEASE_ONEWAY] <= st.rho_oneway * (1 + 1e-12) &&
				   res.spend.rho[DP_RELEASE_ONEWAY] >= st.rho_oneway * (1 - 1e-12) &&
				   fabs(res.spend.rho[DP_RELEASE_FOCUS] + res.spend.rho[DP_RELEASE_MEASURE] - st.rho_measure) <=
				   1e-12 * st.rho_measure &&
				   fabs(res.spend.rho[DP_RELEASE_SELECT] - st.rho_select) <= 1e-12 * st.rho_select,
				   "... and agree with the run's own counters (one-way, select, measure)");
		if (rc == 0)
			dp_privsyn_result_free(&res);
	}
	dp_codes_free(&t);
}

/*
 * The one-way top-up (dp_oneway_topup): none where the one-way counts stand above their noise, the
 * formula's share in between, at most DP_ADAPTIVE_ONEWAY_SHARE_MAX where they are mostly noise,
 * none for PrivSyn; a run's spend with a top-up matches the schedule only when the rounds spent
 * no more than what it left of R.
 */
static void
test_topup(void)
{
	enum {D = 10};
	uint32_t	sizes[D];
	dp_schedule s,
				ps;
	dp_spend	sp;
	const dp_release *r;
	double		rho = 0.024356,
				base,
				sigma,
				q,
				t,
				total;
	const char *why = NULL;

	for (uint32_t j = 0; j < D; j++)
		sizes[j] = 10;
	dp_schedule_method(DP_CALL_ADAPTIVE, rho, D, false, &s);
	r = dp_schedule_find(&s, DP_RELEASE_ONEWAY);
	base = r->rho;
	sigma = sqrt(1 / (2 * base / D));	/* 40.5 rows */
	/* q = sqrt(2 / pi) sigma 10 / total: the total that puts q at the dead zone's end, and twice it */
	total = sqrt(2 / M_PI) * sigma * 10 / DP_ADAPTIVE_TOPUP_FROM;
	unit_check(dp_oneway_topup(&s, sizes, total * 1.01) == 0 && dp_oneway_topup(&s, sizes, 1e6) == 0,
			   "no top-up where the one-way noise is at most %g of the total (%.0f rows and more)",
			   DP_ADAPTIVE_TOPUP_FROM, total);
	q = DP_ADAPTIVE_TOPUP_FROM + 0.1;
	t = dp_oneway_topup(&s, sizes, total * DP_ADAPTIVE_TOPUP_FROM / q);
	unit_check(fabs(t - DP_ADAPTIVE_TOPUP_SLOPE * 0.1 * rho) <= 1e-9 * rho && t > 0,
			   "at a ratio 0.1 above the dead zone's end: a top-up of %g rho (%.6g)", DP_ADAPTIVE_TOPUP_SLOPE * 0.1, t / rho);
	t = dp_oneway_topup(&s, sizes, 100);
	unit_check(t > 0 && t < r->rho_max - r->rho && t >= (r->rho_max - r->rho) * (1 - 1e-12) &&
			   fabs(base + t - DP_ADAPTIVE_ONEWAY_SHARE_MAX * rho) <= 1e-12 * rho,
			   "100 rows over 10 columns of 10 codes at epsilon 1: the one-ways take their most, %g rho (%.6g)",
			   DP_ADAPTIVE_ONEWAY_SHARE_MAX, (base + t) / rho);
	unit_check(dp_oneway_topup(&s, sizes, -50) == t && dp_oneway_topup(&s, sizes, NAN) == t,
			   "a released total below 1 (or not a number) counts as 1 row");
	dp_schedule_method(DP_CALL_PRIVSYN, rho, D, false, &ps);
	unit_check(dp_oneway_topup(&ps, sizes, 100) == 0, "PrivSyn: no top-up");

	/* a spend with that top-up: the rounds may spend what it leaves of R, not more */
	memset(&sp, 0, sizeof(sp));
	dp_spend_record(&sp, DP_RELEASE_ONEWAY, base, D);
	dp_spend_record(&sp, DP_RELEASE_ONEWAY, t, D);
	dp_spend_record(&sp, DP_RELEASE_SELECT, (s.rho_rounds - t) * (1 - DP_SCHEDULE_MEASURE_SHARE), 10);
	dp_spend_record(&sp, DP_RELEASE_MEASURE, (s.rho_rounds - t) * DP_SCHEDULE_MEASURE_SHARE, 10);
	unit_check(dp_spend_matches(&s, &sp, 1e-12, &why), "a top-up and rounds that spend the rest of R: as planned%s%s",
			   why ? ": " : "", why ? why : "");
	dp_spend_record(&sp, DP_RELEASE_MEASURE, t / 2, 1);
	unit_check(!dp_spend_matches(&s, &sp, 1e-12, &why) && why && strcmp(why, "the rounds' pool") == 0,
			   "... rounds that spend part of the top-up again are caught (the rounds' pool)");
	{
		dp_rounds	rs;

		dp_rounds_begin_after(&rs, &s, t, 20, NULL);
		unit_check(rs.pool == s.rho_rounds - t && rs.rho_t == DP_SCHEDULE_MEASURE_SHARE * (s.rho_rounds - t) / 20,
				   "the rounds begin on R less the top-up");
	}
}

/*
 * A run of the adaptive method on a table of few rows for its budget gets the top-up: the one-way
 * marginals released twice, its spend as the schedule plans it, and the run's counters agree.
 */
static void
test_topup_run(void)
{
	enum {D = 6, N = 150};
	uint32_t	sizes[D];
	dp_codes	t;
	dp_prng		rng;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_adaptive_stats st;
	dp_schedule s;
	const char *why = NULL;
	int			rc;

	dp_prng_seed(&rng, 27);
	chain_table(&t, sizes, D, N, &rng);
	dp_privsyn_default_params(&p);
	p.rho = 0.005;
	dp_schedule_method(DP_CALL_ADAPTIVE, p.rho, D, false, &s);
	rc = dp_adaptive_run(&t, sizes, &p, &rng, &res, &st);
	unit_check(rc == 0 && dp_spend_matches(&s, &res.spend, 1e-12, &why) && st.rho_topup > 0 &&
			   res.spend.n[DP_RELEASE_ONEWAY] == 2 * D &&
			   fabs(res.spend.rho[DP_RELEASE_ONEWAY] - st.rho_oneway) <= 1e-12 * st.rho_oneway &&
			   fabs(st.rho_oneway - dp_schedule_rho(&s, DP_RELEASE_ONEWAY) - st.rho_topup) <= 1e-12 * st.rho_oneway &&
			   res.spend.rho[DP_RELEASE_SELECT] + res.spend.rho[DP_RELEASE_MEASURE] <= (s.rho_rounds - st.rho_topup) * (1 + 1e-12),
			   "adaptive, %d rows at rho %.3f: the one-ways released twice (top-up %.3g of rho), the spend as planned%s%s",
			   N, p.rho, st.rho_topup / p.rho, why ? ": " : "", why ? why : "");
	unit_check(rc == 0 && res.margs[0].nattrs == 1 && fabs(res.margs[0].rho - st.rho_oneway / D) <= 1e-12 * res.margs[0].rho,
			   "... the one-way marginals carry the rho of both releases (the consistency weight, the split's variance): %.6g against %.6g",
			   rc == 0 ? res.margs[0].rho : 0, st.rho_oneway / D);
	if (rc == 0)
		dp_privsyn_result_free(&res);
	dp_codes_free(&t);
}

int
main(void)
{
	test_shapes();
	test_values();
	test_rounds();
	test_runs();
	test_topup();
	test_topup_run();
	return unit_done();
}
