/*
 * dp_consist.c - consistency and non-negativity of published noisy marginals (see dp_consist.h).
 *
 * A plan is built once per call: the distinct attribute sets to reconcile (the empty set, then the
 * closure of the marginals' pairwise intersections under intersection, by increasing size), and
 * for every (set, marginal containing it) pair the weight and the map from marginal cell to set
 * cell.  Passes then only stream over cells.
 *
 * Why one pass in increasing size is enough: let A1 be reconciled before A2 (|A1| <= |A2|) and i a
 * marginal containing both.  The update for A2 adds d(a2) = (t - s_i)(a2) / g_i to the cells of i;
 * summed into a cell a1 of A1 it gives a constant (the number of cells of i per cell of
 * A1 u A2) times the sum of d over the cells of A2 that agree with a1 on A1 n A2, i.e. the
 * projection of t - s_i on A1 n A2.  A1 n A2 is the empty set (the total) or an intersection of
 * marginals processed before A2 (or A1 itself when A1 is inside A2), on which all the marginals
 * containing A2 already agree, and t is their weighted average: that projection is 0.  Marginals
 * not containing A2 are not changed.
 */
#include "dp_consist.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dp_env.h"

typedef struct cs_set
{
	uint32_t	n;
	uint32_t	a[DP_MARG_MAX_ATTRS];	/* increasing column indices */
} cs_set;

typedef struct cs_member
{
	uint32_t	marg;			/* index in margs */
	double		g;				/* cells of the marginal per cell of the set */
	double		w;				/* normalized weight (sums to 1 over the group) */
	uint32_t   *map;			/* marginal cell -> set cell; NULL: identity (g == 1) or empty set */
} cs_member;

typedef struct cs_group
{
	cs_set		set;
	uint64_t	ncells;
	uint32_t	nmem;
	cs_member  *mem;			/* into plan.members */
} cs_group;

typedef struct cs_plan
{
	uint32_t	ngroups;
	cs_group   *groups;
	cs_member  *members;
	uint32_t	nmembers;
	double	   *proj;			/* scratch: nmem * ncells of the largest group */
	double	   *t;				/* scratch: ncells of the largest set */
} cs_plan;

/* ---------- attribute sets ---------- */

static void
set_of_marg(const dp_marg *m, cs_set *s)
{
	memset(s, 0, sizeof(*s));
	s->n = m->nattrs;
	memcpy(s->a, m->attrs, sizeof(uint32_t) * m->nattrs);
}

/* out = x n y (out must not be x or y) */
static void
set_inter(const cs_set *x, const cs_set *y, cs_set *out)
{
	uint32_t	i = 0,
				j = 0;

	memset(out, 0, sizeof(*out));
	while (i < x->n && j < y->n)
	{
		if (x->a[i] < y->a[j])
			i++;
		else if (x->a[i] > y->a[j])
			j++;
		else
		{
			out->a[out->n++] = x->a[i];
			i++;
			j++;
		}
	}
}

static bool
set_eq(const cs_set *x, const cs_set *y)
{
	return x->n == y->n && memcmp(x->a, y->a, sizeof(uint32_t) * x->n) == 0;
}

static int
set_cmp(const void *pa, const void *pb)
{
	const cs_set *x = pa,
			   *y = pb;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (uint32_t k = 0; k < x->n; k++)
		if (x->a[k] != y->a[k])
			return x->a[k] < y->a[k] ? -1 : 1;
	return 0;
}

/* Appends s unless present.  Returns 0, or -1 on allocation failure. */
static int
sets_add(cs_set **sets, uint32_t *n, uint32_t *cap, const cs_set *s)
{
	for (uint32_t k = 0; k < *n; k++)
		if (set_eq(&(*sets)[k], s))
			return 0;
	if (*n == *cap)
	{
		uint32_t	ncap = *cap ? *cap * 2 : 32;
		cs_set	   *ns = dp_realloc(*sets, sizeof(cs_set) * ncap);

		if (ns == NULL)
			return -1;
		*sets = ns;
		*cap = ncap;
	}
	(*sets)[(*n)++] = *s;
	return 0;
}

/* ---------- plan ---------- */

static void
plan_free(cs_plan *p)
{
	if (p->members)
		for (uint32_t k = 0; k < p->nmembers; k++)
			dp_free(p->members[k].map);
	dp_free(p->members);
	dp_free(p->groups);
	dp_free(p->proj);
	dp_free(p->t);
	memset(p, 0, sizeof(*p));
}

/*
 * rho of a marginal as a weight: its positive part relative to the largest rho (so that no sum of
 * weights can overflow, whatever finite rho is given), or 1 for all when no rho is positive.
 */
static double
rho_weight(const dp_marg *m, double maxrho)
{
	if (!(maxrho > 0))
		return 1;
	return m->rho > 0 ? m->rho / maxrho : 0;
}

/* the largest positive rho, or 0 */
static double
max_rho(const dp_marg *margs, uint32_t nmargs)
{
	double		r = 0;

	for (uint32_t i = 0; i < nmargs; i++)
		if (margs[i].rho > r)
			r = margs[i].rho;
	return r;
}

/*
 * Map from the cells of m to the cells of s (a subset of m's attributes, strictly smaller than m
 * and not empty), by an odometer over m's digits.
 */
static uint32_t *
build_map(const dp_marg *m, const cs_set *s)
{
	uint64_t	wa[DP_MARG_MAX_ATTRS];	/* stride in s of m's attribute k (0 if not in s) */
	uint32_t	digit[DP_MARG_MAX_ATTRS] = {0};
	uint32_t   *map;
	uint64_t	o = 0,
				stride = 1;

	memset(wa, 0, sizeof(wa));
	for (int j = (int) s->n - 1; j >= 0; j--)
	{
		for (uint32_t k = 0; k < m->nattrs; k++)
			if (m->attrs[k] == s->a[j])
			{
				wa[k] = stride;
				stride *= m->sizes[k];
			}
	}
	map = dp_alloc(sizeof(uint32_t) * m->ncells);
	if (map == NULL)
		return NULL;
	for (uint64_t c = 0; c < m->ncells; c++)
	{
		int			k = (int) m->nattrs - 1;

		map[c] = (uint32_t) o;
		/* next cell: last digit fastest */
		while (k >= 0)
		{
			digit[k]++;
			o += wa[k];
			if (digit[k] < m->sizes[k])
				break;
			o -= (uint64_t) digit[k] * wa[k];
			digit[k] = 0;
			k--;
		}
	}
	return map;
}

/* Records why marginal i cannot be made consistent; returns -1. */
static int
malformed(uint32_t i, const char *why)
{
	dp_fail(DP_ERR_INVALID, "marginal %u given to consistency is malformed: %s", i, why);
	return -1;
}

static int
plan_build(cs_plan *p, const dp_marg *margs, uint32_t nmargs)
{
	cs_set	   *sets = NULL;
	uint32_t	nsets = 0,
				capsets = 0;
	cs_set		s,
				x,
				y;
	uint64_t	maxproj = 1,
				maxcells = 1;
	uint32_t	k = 0;
	double		maxrho;

	memset(p, 0, sizeof(*p));
	if (nmargs == 0 || margs == NULL)
	{
		dp_fail(DP_ERR_INVALID, "consistency needs at least one marginal");
		return -1;
	}
	maxrho = max_rho(margs, nmargs);
	for (uint32_t i = 0; i < nmargs; i++)
	{
		uint64_t	nc = 1;

		if (margs[i].cells == NULL || margs[i].nattrs == 0 || margs[i].nattrs > DP_MARG_MAX_ATTRS)
			return malformed(i, "no cells or a bad number of attributes");
		for (uint32_t q = 0; q < margs[i].nattrs; q++)
		{
			if (margs[i].sizes[q] == 0 || nc > UINT64_MAX / margs[i].sizes[q] ||
				(q > 0 && margs[i].attrs[q] <= margs[i].attrs[q - 1]))
				return malformed(i, "an attribute of size 0, too many cells, or attributes out of order");
			nc *= margs[i].sizes[q];
		}
		if (nc != margs[i].ncells || !isfinite(margs[i].rho))
			return malformed(i, "a cell count that disagrees with its sizes, or a rho that is not finite");
		for (uint64_t c = 0; c < nc; c++)
			if (!(fabs(margs[i].cells[c]) <= DP_CONSIST_MAX_CELL))	/* also NaN */
				return malformed(i, "a cell that is not finite or out of range");
	}

	/* the sets: empty, pairwise intersections, then their closure under intersection */
	memset(&s, 0, sizeof(s));
	if (sets_add(&sets, &nsets, &capsets, &s) < 0)
		goto fail;
	for (uint32_t i = 0; i < nmargs; i++)
		for (uint32_t j = i + 1; j < nmargs; j++)
		{
			set_of_marg(&margs[i], &x);
			set_of_marg(&margs[j], &y);
			set_inter(&x, &y, &s);
			if (sets_add(&sets, &nsets, &capsets, &s) < 0)
				goto fail;
		}
	for (uint32_t a = 1; a < nsets; a++)	/* nsets grows inside */
		for (uint32_t b = 1; b < a; b++)
		{
			set_inter(&sets[a], &sets[b], &s);
			if (sets_add(&sets, &nsets, &capsets, &s) < 0)
				goto fail;
		}
	qsort(sets, nsets, sizeof(cs_set), set_cmp);

	/* members */
	p->groups = dp_zalloc(sizeof(cs_group) * nsets);
	if (p->groups == NULL)
		goto fail;
	for (uint32_t a = 0; a < nsets; a++)
		for (uint32_t i = 0; i < nmargs; i++)
			if (dp_marg_contains(&margs[i], sets[a].n, sets[a].a))
				p->nmembers++;
	p->members = dp_zalloc(sizeof(cs_member) * (p->nmembers ? p->nmembers : 1));
	if (p->members == NULL)
		goto fail;
	k = 0;
	for (uint32_t a = 0; a < nsets; a++)
	{
		cs_group   *gr = &p->groups[p->ngroups];
		uint32_t	sizes[DP_MARG_MAX_ATTRS];
		uint32_t	first = UINT32_MAX;
		double		wsum = 0;

		gr->set = sets[a];
		gr->mem = &p->members[k];
		for (uint32_t i = 0; i < nmargs; i++)
		{
			if (!dp_marg_contains(&margs[i], sets[a].n, sets[a].a))
				continue;
			/* sizes of the set's attributes, which every member must agree on */
			for (uint32_t j = 0; j < sets[a].n; j++)
				for (uint32_t q = 0; q < margs[i].nattrs; q++)
					if (margs[i].attrs[q] == sets[a].a[j])
					{
						if (first == UINT32_MAX)
							sizes[j] = margs[i].sizes[q];
						else if (sizes[j] != margs[i].sizes[q])
							goto fail;
					}
			if (first == UINT32_MAX)
			{
				first = i;
				gr->ncells = 1;
				for (uint32_t j = 0; j < sets[a].n; j++)
					gr->ncells *= sizes[j];
				if (gr->ncells > UINT32_MAX)
					goto fail;
			}
			gr->mem[gr->nmem].marg = i;
			gr->mem[gr->nmem].g = (double) (margs[i].ncells / gr->ncells);
			gr->nmem++;
			k++;
		}
		if (gr->nmem < 2)
		{
			/* nothing to reconcile (one marginal; only the empty set with nmargs == 1) */
			k -= gr->nmem;
			memset(gr, 0, sizeof(*gr));
			continue;
		}
		for (uint32_t m = 0; m < gr->nmem; m++)
		{
			gr->mem[m].w = rho_weight(&margs[gr->mem[m].marg], maxrho) / gr->mem[m].g;
			wsum += gr->mem[m].w;
		}
		if (!(wsum > 0))
		{
			/* every member has rho 0 while some other marginal has not: equal rho here */
			wsum = 0;
			for (uint32_t m = 0; m < gr->nmem; m++)
				wsum += (gr->mem[m].w = 1 / gr->mem[m].g);
		}
		for (uint32_t m = 0; m < gr->nmem; m++)
		{
			cs_member  *mb = &gr->mem[m];

			mb->w /= wsum;
			if (gr->set.n > 0 && mb->g != 1)
			{
				mb->map = build_map(&margs[mb->marg], &gr->set);
				if (mb->map == NULL)
					goto fail;
			}
		}
		if ((uint64_t) gr->nmem * gr->ncells > maxproj)
			maxproj = (uint64_t) gr->nmem * gr->ncells;
		if (gr->ncells > maxcells)
			maxcells = gr->ncells;
		p->ngroups++;
	}
	p->nmembers = k;
	p->proj = dp_alloc(sizeof(double) * maxproj);
	p->t = dp_alloc(sizeof(double) * maxcells);
	if (p->proj == NULL || p->t == NULL)
		goto fail;
	dp_free(sets);
	return 0;

fail:
	/* every slot of members is zeroed or a member, so plan_free frees exactly the maps built */
	dp_fail(DP_ERR_NOMEM, "could not allocate the consistency plan of %u marginals", nmargs);
	dp_free(sets);
	plan_free(p);
	return -1;
}

/* ---------- passes ---------- */

/*
 * One consistency pass.  Returns the largest |t - s_i| met (each measured just before its set's
 * update, so the first set's value is the inconsistency of the input on the total).
 */
static double
plan_pass(const cs_plan *p, dp_marg *margs)
{
	double		incons = 0;

	for (uint32_t q = 0; q < p->ngroups; q++)
	{
		const cs_group *gr = &p->groups[q];
		uint64_t	na = gr->ncells;
		double	   *t = p->t;

		memset(p->proj, 0, sizeof(double) * gr->nmem * na);
		for (uint32_t m = 0; m < gr->nmem; m++)
		{
			const cs_member *mb = &gr->mem[m];
			const double *x = margs[mb->marg].cells;
			uint64_t	n = margs[mb->marg].ncells;
			double	   *s = p->proj + m * na;

			if (mb->map)
				for (uint64_t c = 0; c < n; c++)
					s[mb->map[c]] += x[c];
			else if (na == 1)
			{
				double		sum = 0;

				for (uint64_t c = 0; c < n; c++)
					sum += x[c];
				s[0] = sum;
			}
			else
				memcpy(s, x, sizeof(double) * n);
		}
		for (uint64_t a = 0; a < na; a++)
		{
			double		v = 0;

			for (uint32_t m = 0; m < gr->nmem; m++)
				v += gr->mem[m].w * p->proj[m * na + a];
			t[a] = v;
		}
		for (uint32_t m = 0; m < gr->nmem; m++)
		{
			const cs_member *mb = &gr->mem[m];
			double	   *x = margs[mb->marg].cells;
			uint64_t	n = margs[mb->marg].ncells;
			double	   *d = p->proj + m * na;

			/* d = (t - s) / g, in place */
			for (uint64_t a = 0; a < na; a++)
			{
				double		diff = t[a] - d[a];

				if (fabs(diff) > incons)
					incons = fabs(diff);
				d[a] = diff / mb->g;
			}
			if (mb->map)
				for (uint64_t c = 0; c < n; c++)
					x[c] += d[mb->map[c]];
			else if (na == 1)
				for (uint64_t c = 0; c < n; c++)
					x[c] += d[0];
			else
				for (uint64_t c = 0; c < n; c++)
					x[c] += d[c];
		}
	}
	return incons;
}

static bool
any_negative(const dp_marg *margs, uint32_t nmargs)
{
	for (uint32_t i = 0; i < nmargs; i++)
		for (uint64_t c = 0; c < margs[i].ncells; c++)
			if (margs[i].cells[c] < 0)
				return true;
	return false;
}

/* ---------- public ---------- */

void
dp_normsub(dp_marg *m, double total)
{
	double	   *x = m->cells;
	uint64_t	n = m->ncells,
				cnt = 0;
	double		pos = 0,
				level = 0;

	if (x == NULL || n == 0)
		return;
	if (!(total > 0))
	{
		memset(x, 0, sizeof(double) * n);
		return;
	}
	for (uint64_t c = 0; c < n; c++)
		if (x[c] > 0)
		{
			pos += x[c];
			cnt++;
		}
	if (cnt == 0)
	{
		for (uint64_t c = 0; c < n; c++)
			x[c] = total / (double) n;
		return;
	}
	if (pos <= total)
	{
		double		up = (total - pos) / (double) cnt;

		for (uint64_t c = 0; c < n; c++)
			x[c] = x[c] > 0 ? x[c] + up : 0;
		return;
	}

	/*
	 * Water-filling (Michelot's iteration): S = {x > level} has cnt cells summing to pos; the shift
	 * that gives S the total is nd = (pos - total) / cnt.  When every cell of S is above nd, nd is
	 * the answer; otherwise the cells of S at or below nd leave S and level rises to nd.  S shrinks
	 * strictly every round (the threshold never goes down, even when rounding puts nd below level),
	 * so this ends after at most cnt rounds.
	 */
	for (;;)
	{
		double		nd = (pos - total) / (double) cnt,
					thr = nd > level ? nd : level,
					npos = 0;
		uint64_t	ncnt = 0;

		for (uint64_t c = 0; c < n; c++)
			if (x[c] > thr)
			{
				npos += x[c];
				ncnt++;
			}
		if (ncnt == cnt)
		{
			/* S is {x > thr} too: every cell of S is above nd */
			for (uint64_t c = 0; c < n; c++)
				x[c] = x[c] > level ? x[c] - nd : 0;
			return;
		}
		if (ncnt == 0)
		{
			/*
			 * Only through rounding (total below ~1e-16 of the positive mass): nd is at the top of
			 * S.  Give S's cells equal shares.
			 */
			double		share = total / (double) cnt;

			for (uint64_t c = 0; c < n; c++)
				x[c] = x[c] > level ? share : 0;
			return;
		}
		pos = npos;
		cnt = ncnt;
		level = thr;
	}
}

int
dp_consist_pass(dp_marg *margs, uint32_t nmargs)
{
	cs_plan		p;

	if (plan_build(&p, margs, nmargs) < 0)
		return -1;
	plan_pass(&p, margs);
	plan_free(&p);
	return 0;
}

double
dp_consist(dp_marg *margs, uint32_t nmargs, int max_iters)
{
	cs_plan		p;
	double		total = 0,
				wsum = 0,
				tol;
	double		maxrho;
	int			iters = max_iters > 0 ? max_iters : DP_CONSIST_MAX_ITERS;

	if (plan_build(&p, margs, nmargs) < 0)
		return -1;
	maxrho = max_rho(margs, nmargs);

	/* the common total: the first pass's estimate on the empty set (normalised weights) */
	for (uint32_t i = 0; i < nmargs; i++)
		wsum += rho_weight(&margs[i], maxrho) / (double) margs[i].ncells;
	for (uint32_t i = 0; i < nmargs; i++)
		total += rho_weight(&margs[i], maxrho) / (double) margs[i].ncells / wsum * dp_marg_total(&margs[i]);
	if (!(total > 0))
		total = 0;
	tol = DP_CONSIST_TOL * (total > 1 ? total : 1);

	for (int it = 0; it < iters; it++)
	{
		double		incons;

		dp_check_interrupts();	/* a pass streams over every cell: up to ~10^8 on wide tables */
		incons = plan_pass(&p, margs);

		if (!any_negative(margs, nmargs))
			break;
		for (uint32_t i = 0; i < nmargs; i++)
			dp_normsub(&margs[i], total);
		/*
		 * incons measured the previous Norm-Sub's output: non-negative and consistent to within
		 * incons.  This pass moved each cell by at most incons, so this Norm-Sub had only negatives
		 * of that order to undo: its output is consistent to within a small multiple of it.
		 */
		if (it > 0 && incons <= tol)
			break;
	}
	plan_free(&p);
	return total;
}
