/*
 * dp_schedule.c - the privacy schedule of one call (dp_schedule.h): its releases, their rho and
 * mechanisms, from the plan and public facts; what a run spent, and whether it matches; the
 * adaptive rounds' pool.
 */
#include "dp_schedule.h"

#include <math.h>
#include <string.h>

static void
add(dp_schedule *s, dp_release_kind kind, dp_mechanism mech, int64_t units, uint32_t count, double rho,
	double rho_min, double rho_max)
{
	dp_release *r = &s->rel[s->nrel++];

	r->kind = kind;
	r->mech = mech;
	r->units = units;
	r->count = count;
	r->rho = rho;
	r->rho_min = rho_min;
	r->rho_max = rho_max;
}

static void
add_fixed(dp_schedule *s, dp_release_kind kind, dp_mechanism mech, uint32_t count, double rho)
{
	add(s, kind, mech, 0, count, rho, rho, rho);
}

/*
 * The adaptive method: the one-way marginals, then the pool R = rho (1 - share), from which the
 * one-way top-up takes at most (DP_ADAPTIVE_ONEWAY_SHARE_MAX - share) rho, the focus pairs at
 * most half of what it leaves, and the rounds the rest, DP_SCHEDULE_MEASURE_SHARE measuring.
 */
static void
adaptive_releases(dp_schedule *s, double rho, uint32_t d, bool focus)
{
	/* the least the rounds spend: what focus leaves (R / 2 at least), but the last round's
	 * margin (twice it, for the rounding of the last round's eps_t) */
	double		R = rho * (1 - DP_ADAPTIVE_ONEWAY_SHARE),
				topup_max = rho * (DP_ADAPTIVE_ONEWAY_SHARE_MAX - DP_ADAPTIVE_ONEWAY_SHARE),
				low = (focus ? (R - topup_max) / 2 : R - topup_max) * (1 - 2 * DP_SCHEDULE_LAST_MARGIN);
	uint32_t	m = d * (d - 1) / 2;

	s->rho_rounds = R;
	/* the one-way top-up (dp_oneway_topup) takes at most topup_max of R before the rounds */
	add(s, DP_RELEASE_ONEWAY, DP_MECH_GAUSSIAN, 0, d, rho * DP_ADAPTIVE_ONEWAY_SHARE,
		rho * DP_ADAPTIVE_ONEWAY_SHARE, rho * DP_ADAPTIVE_ONEWAY_SHARE + topup_max);
	if (focus)
		add(s, DP_RELEASE_FOCUS, DP_MECH_GAUSSIAN, 0, m, 0, 0, R / 2);
	add(s, DP_RELEASE_SELECT, DP_MECH_EXPONENTIAL, 0, 0, R * (1 - DP_SCHEDULE_MEASURE_SHARE),
		low * (1 - DP_SCHEDULE_MEASURE_SHARE), R * (1 - DP_SCHEDULE_MEASURE_SHARE));
	add(s, DP_RELEASE_MEASURE, DP_MECH_GAUSSIAN, 0, 0, R * DP_SCHEDULE_MEASURE_SHARE,
		low * DP_SCHEDULE_MEASURE_SHARE, R * DP_SCHEDULE_MEASURE_SHARE);
}

int
dp_schedule_method(dp_plan_call call, double rho, uint32_t d, bool focus, dp_schedule *s)
{
	memset(s, 0, sizeof(*s));
	s->call = call;
	s->d = d;
	s->unit_sens2 = 1;
	s->rho_method = rho;
	if (!(rho > 0) || !isfinite(rho) || d == 0)
		return -1;
	switch (call)
	{
		case DP_CALL_PRIVSYN:
			add_fixed(s, DP_RELEASE_ONEWAY, DP_MECH_GAUSSIAN, d, rho * DP_PRIVSYN_ONEWAY_SHARE);
			if (d == 1)
			{
				/* no pair to score or publish: their shares are not spent */
				s->rho_unspent = rho * (DP_PRIVSYN_INDIF_SHARE + DP_PRIVSYN_PUBLISH_SHARE);
				return 0;
			}
			add_fixed(s, DP_RELEASE_INDIF, DP_MECH_GAUSSIAN, d * (d - 1) / 2, rho * DP_PRIVSYN_INDIF_SHARE);
			add_fixed(s, DP_RELEASE_PUBLISH, DP_MECH_GAUSSIAN, d * (d - 1) / 2, rho * DP_PRIVSYN_PUBLISH_SHARE);
			return 0;
		case DP_CALL_ADAPTIVE:
			adaptive_releases(s, rho, d, focus);
			return 0;
		case DP_CALL_MARGINAL:
			add_fixed(s, DP_RELEASE_MARGINAL, DP_MECH_GAUSSIAN, 1, rho);
			return 0;
		case DP_CALL_DISCOVER:
			break;
	}
	return -1;
}

/* the rows-per-unit histogram: its release, and its second one where it was taken (one entry) */
static void
add_shape(dp_schedule *s, const dp_schedule_input *in, int64_t units_shape, int64_t units_topup)
{
	int64_t		units = units_shape + (in->unit_rows_topup ? units_topup : 0);

	add(s, DP_RELEASE_ROWS_PER_UNIT, DP_MECH_GAUSSIAN, units, in->unit_rows,
		dp_units_rho(units), dp_units_rho(units), dp_units_rho(units));
}

int64_t
dp_schedule_unit_topup(int64_t units_rest, int64_t units_shape)
{
	if (units_shape < 1 || units_shape > (INT64_MAX - 1) / DP_SCHEDULE_UNIT_SHAPE_TOPUP)
		return 0;
	return units_rest - DP_SCHEDULE_UNIT_SHAPE_TOPUP * units_shape >= 1 ?
		DP_SCHEDULE_UNIT_SHAPE_TOPUP * units_shape : 0;
}

int
dp_schedule_make(const dp_schedule_input *in, dp_schedule *s)
{
	const dp_plan *plan = in ? in->plan : NULL;
	int64_t		units_shape = 0,
				units_topup = 0,
				units_method;
	dp_schedule method;

	memset(s, 0, sizeof(*s));
	if (plan == NULL || plan->refusal != DP_PLAN_OK || in->unit_sens2 < 1)
		return -1;
	units_method = plan->units_release;
	if (in->unit_rows > 0)
	{
		units_shape = plan->units_release / DP_SCHEDULE_UNIT_SHAPE_PARTS;
		if (units_shape < 1)
			units_shape = 1;
		units_method -= units_shape;
		if (units_method < 1)
			return -1;
		/* the second release of the histogram, where it fits */
		units_topup = dp_schedule_unit_topup(units_method, units_shape);
		if (units_topup == 0 && in->unit_rows_topup)
			return -1;
		if (in->unit_rows_topup)
			units_method -= units_topup;
	}
	memset(&method, 0, sizeof(method));
	if (plan->units_release > 0 &&
		dp_schedule_method(in->call, dp_units_rho(units_method) / (double) in->unit_sens2, in->d,
						   in->focus && in->call == DP_CALL_ADAPTIVE, &method) != 0)
		return -1;
	s->call = in->call;
	s->d = in->d;
	s->unit_sens2 = in->unit_sens2;
	if (units_shape > 0 && in->unit_rows_first)
		add_shape(s, in, units_shape, units_topup);
	if (plan->ndiscover > 0)
	{
		/* each column is calibrated to dp_units_rho(units_each) (dp_discovery.h) */
		double		rho = dp_units_rho(plan->units_each) * plan->ndiscover;

		add(s, DP_RELEASE_DISCOVERY, DP_MECH_DISCOVERY, plan->units_each * plan->ndiscover,
			(uint32_t) plan->ndiscover, rho, rho, rho);
	}
	if (units_shape > 0 && !in->unit_rows_first)
		add_shape(s, in, units_shape, units_topup);
	for (int k = 0; k < method.nrel; k++)
		s->rel[s->nrel++] = method.rel[k];
	s->units_method = plan->units_release > 0 ? units_method : 0;
	s->rho_method = method.rho_method;
	s->rho_rounds = method.rho_rounds;
	s->rho_unspent = method.rho_unspent;
	s->units_topup = units_topup;
	s->units_charged = plan->units_each * plan->ndiscover + units_shape +
		(in->unit_rows_topup ? units_topup : 0) + s->units_method;
	return 0;
}

const dp_release *
dp_schedule_find(const dp_schedule *s, dp_release_kind kind)
{
	for (int k = 0; k < s->nrel; k++)
		if (s->rel[k].kind == kind)
			return &s->rel[k];
	return NULL;
}

double
dp_schedule_rho(const dp_schedule *s, dp_release_kind kind)
{
	const dp_release *r = dp_schedule_find(s, kind);

	return r ? r->rho : 0;
}

const char *
dp_release_name(dp_release_kind kind)
{
	static const char *const names[DP_RELEASE_NKINDS] = {
		"discovery", "rows per unit", "marginal", "one-way", "indif", "publish", "focus", "select", "measure"
	};

	return (int) kind >= 0 && kind < DP_RELEASE_NKINDS ? names[kind] : "?";
}

const char *
dp_mechanism_name(dp_mechanism mech)
{
	switch (mech)
	{
		case DP_MECH_DISCOVERY:
			return "discovery";
		case DP_MECH_GAUSSIAN:
			return "gaussian";
		case DP_MECH_EXPONENTIAL:
			return "exponential";
	}
	return "?";
}

/* ---- what a run spent ---- */

void
dp_spend_record(dp_spend *sp, dp_release_kind kind, double rho, uint32_t n)
{
	if (sp == NULL || (int) kind < 0 || kind >= DP_RELEASE_NKINDS)
		return;
	sp->rho[kind] += rho;
	sp->n[kind] += n;
}

static bool
within(double x, double lo, double hi, double tol)
{
	return x >= lo * (1 - tol) && x <= hi * (1 + tol);
}

bool
dp_spend_matches(const dp_schedule *s, const dp_spend *sp, double rel_tol, const char **why)
{
	double		all = 0,
				pool = 0;

	*why = NULL;
	for (int k = 0; k < DP_RELEASE_NKINDS; k++)
	{
		const dp_release *r = dp_schedule_find(s, (dp_release_kind) k);

		/* the method's releases only: discovery and the rows-per-unit histogram are the glue's */
		if (k == DP_RELEASE_DISCOVERY || k == DP_RELEASE_ROWS_PER_UNIT)
			continue;
		if (r == NULL ? sp->rho[k] != 0 || sp->n[k] != 0 : !within(sp->rho[k], r->rho_min, r->rho_max, rel_tol))
		{
			*why = dp_release_name((dp_release_kind) k);
			return false;
		}
		all += sp->rho[k];
		if (k == DP_RELEASE_FOCUS || k == DP_RELEASE_SELECT || k == DP_RELEASE_MEASURE)
			pool += sp->rho[k];
		/* the adaptive one-way top-up is drawn from the pool too (dp_oneway_topup) */
		if (k == DP_RELEASE_ONEWAY && s->call == DP_CALL_ADAPTIVE && r != NULL && sp->rho[k] > r->rho)
			pool += sp->rho[k] - r->rho;
	}
	if (pool > s->rho_rounds * (1 + rel_tol))
		*why = "the rounds' pool";
	else if (all > s->rho_method * (1 + rel_tol))
		*why = "the method's rho";
	return *why == NULL;
}

/* ---- the adaptive rounds' pool ---- */

void
dp_rounds_begin(dp_rounds *rs, const dp_schedule *s, double T, dp_spend *spend)
{
	dp_rounds_begin_after(rs, s, 0, T, spend);
}

void
dp_rounds_begin_after(dp_rounds *rs, const dp_schedule *s, double taken, double T, dp_spend *spend)
{
	memset(rs, 0, sizeof(*rs));
	rs->pool = s->rho_rounds - taken;
	rs->spend = spend;
	rs->rho_t = DP_SCHEDULE_MEASURE_SHARE * rs->pool / T;
	rs->eps_t = sqrt(8 * (1 - DP_SCHEDULE_MEASURE_SHARE) * rs->pool / T);
}

double
dp_rounds_focus(dp_rounds *rs, uint32_t npairs)
{
	double		rho_f = rs->rho_t;

	if (npairs == 0)
		return 0;
	if ((double) npairs * rho_f > rs->pool / 2)
		rho_f = nextafter(rs->pool / (2.0 * npairs), 0);	/* rounded down: never more than R / 2 in all */
	rs->used += (double) npairs * rho_f;
	dp_spend_record(rs->spend, DP_RELEASE_FOCUS, (double) npairs * rho_f, npairs);
	return rho_f;
}

bool
dp_rounds_next(dp_rounds *rs, uint32_t batch)
{
	if (rs->last)
		return false;
	if (rs->pool - rs->used < 2 * batch * (rs->rho_t + rs->eps_t * rs->eps_t / 8))
	{
		/* the last round: what is left, rounded down, over the batch */
		double		rem = (rs->pool - rs->used) * (1 - DP_SCHEDULE_LAST_MARGIN);

		if (!(rem > 0))
			return false;
		rs->rho_t = DP_SCHEDULE_MEASURE_SHARE * rem / batch;
		rs->eps_t = sqrt(8 * (1 - DP_SCHEDULE_MEASURE_SHARE) * rem / batch) * (1 - 1e-12);
		rs->last = true;
	}
	return true;
}

void
dp_rounds_spend(dp_rounds *rs)
{
	rs->used += rs->rho_t + rs->eps_t * rs->eps_t / 8;
	dp_spend_record(rs->spend, DP_RELEASE_SELECT, rs->eps_t * rs->eps_t / 8, 1);
	dp_spend_record(rs->spend, DP_RELEASE_MEASURE, rs->rho_t, 1);
}

void
dp_rounds_anneal(dp_rounds *rs)
{
	rs->rho_t *= DP_SCHEDULE_ANNEAL_RHO;
	rs->eps_t *= DP_SCHEDULE_ANNEAL_EPS;
}

double
dp_oneway_topup(const dp_schedule *s, const uint32_t *sizes, double noisy_total)
{
	const dp_release *r = dp_schedule_find(s, DP_RELEASE_ONEWAY);
	double		mean_size = 0,
				sigma,
				q,
				share,
				topup;

	if (s->call != DP_CALL_ADAPTIVE || r == NULL || s->d == 0 || !(r->rho > 0) || !(s->rho_method > 0) ||
		!(r->rho_max > r->rho))
		return 0;
	for (uint32_t j = 0; j < s->d; j++)
		mean_size += sizes[j];
	mean_size /= s->d;
	sigma = sqrt(1 / (2 * r->rho / s->d));
	q = sqrt(2 / M_PI) * sigma * mean_size / fmax(isfinite(noisy_total) ? noisy_total : 1, 1);
	share = fmin(DP_ADAPTIVE_ONEWAY_SHARE_MAX,
				 r->rho / s->rho_method + DP_ADAPTIVE_TOPUP_SLOPE * fmax(q - DP_ADAPTIVE_TOPUP_FROM, 0));
	topup = share * s->rho_method - r->rho;
	if (!(topup >= 1e-3 * r->rho))
		return 0;
	/* rounded down below the schedule's bound */
	return fmin(topup, nextafter(r->rho_max - r->rho, 0));
}
