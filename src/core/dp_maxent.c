/*
 * dp_maxent.c - the maximum-entropy distribution of a model's marginals over a small joint
 * domain, and rows drawn from it (see dp_maxent.h).
 */
#include "dp_maxent.h"

#include <math.h>
#include <string.h>

#include "dp_internal.h"
#include "dp_odo.h"

uint64_t
dp_maxent_cells(uint32_t d, const uint32_t *sizes)
{
	uint64_t	n = 1;

	for (uint32_t j = 0; j < d; j++)
	{
		if (sizes[j] == 0)
			return 0;
		if (n > ((uint64_t) 1 << 62) / sizes[j])
			return UINT64_MAX;
		n *= sizes[j];
	}
	return n;
}

uint32_t
dp_maxent_sweeps(uint64_t ncells, uint32_t nmargs)
{
	double		s = DP_MAXENT_WORK / ((double) (ncells ? ncells : 1) * (double) (nmargs ? nmargs : 1));

	return s >= DP_MAXENT_MAX_SWEEPS ? DP_MAXENT_MAX_SWEEPS :
		s <= DP_MAXENT_MIN_SWEEPS ? DP_MAXENT_MIN_SWEEPS : (uint32_t) s;
}

/* step[j]: the stride of column j in marginal m, 0 for a column it lacks (j < d) */
static void
marg_steps(const dp_marg *m, uint32_t d, uint64_t *step)
{
	memset(step, 0, sizeof(uint64_t) * d);
	for (uint32_t a = 0; a < m->nattrs; a++)
		step[m->attrs[a]] = m->strides[a];
}

int
dp_maxent_fit(const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
			  double *P, uint32_t max_sweeps, double tol,
			  dp_progress_fn progress, void *progress_arg)
{
	uint64_t	ncells = dp_maxent_cells(d, sizes);
	uint64_t	maxm = 0;
	double	   *cur,
			   *nxt,
			   *tgt;
	uint32_t	sweep;
	bool		ahead = false;	/* cur holds the projection of the next marginal */

	if (d == 0 || d > 64 || ncells == 0 || ncells == UINT64_MAX || nmargs == 0 || max_sweeps == 0)
		return dp_invalid("maximum entropy: no column, more than 64, an empty or too large domain, or no marginal");
	for (uint32_t k = 0; k < nmargs; k++)
	{
		const dp_marg *m = &margs[k];
		double		pos = 0;

		if (m->nattrs == 0 || m->nattrs > DP_MARG_MAX_ATTRS)
			return dp_invalid("maximum entropy: a marginal has no attribute or too many");
		for (uint32_t a = 0; a < m->nattrs; a++)
			if (m->attrs[a] >= d || m->sizes[a] != sizes[m->attrs[a]])
				return dp_invalid("maximum entropy: a marginal's attributes disagree with the columns");
		for (uint64_t q = 0; q < m->ncells; q++)
			pos += m->cells[q] > 0 ? m->cells[q] : 0;
		if (!(pos > 0) || !isfinite(pos))
			return dp_invalid("maximum entropy: a marginal has no positive cell");
		if (m->ncells > maxm)
			maxm = m->ncells;
	}
	cur = dp_alloc(sizeof(double) * maxm);
	nxt = dp_alloc(sizeof(double) * maxm);
	tgt = dp_alloc(sizeof(double) * maxm);
	if (!cur || !nxt || !tgt)
	{
		dp_free(cur);
		dp_free(nxt);
		dp_free(tgt);
		return dp_nomem("could not allocate the maximum-entropy fit's marginals");
	}
	for (uint64_t i = 0; i < ncells; i++)
		P[i] = 1.0 / (double) ncells;
	for (sweep = 0; sweep < max_sweeps; sweep++)
	{
		double		worst = 0;

		for (uint32_t k = 0; k < nmargs; k++)
		{
			const dp_marg *m = &margs[k];
			double		tsum = 0,
						csum = 0,
						l1 = 0;
			uint64_t	sa[DP_ODO_MAX_COLS],
						sb[DP_ODO_MAX_COLS];
			dp_odo_runs r;

			for (uint64_t q = 0; q < m->ncells; q++)
				tsum += tgt[q] = m->cells[q] > 0 ? m->cells[q] : 0;
			marg_steps(m, d, sa);
			if (!ahead)
			{
				dp_odo_runs_init(&r, d, sizes, sa, NULL);
				memset(cur, 0, sizeof(double) * m->ncells);
				dp_odo_project(&r, P, cur);
			}
			for (uint64_t q = 0; q < m->ncells; q++)
				csum += cur[q];
			for (uint64_t q = 0; q < m->ncells; q++)
			{
				double		t = tgt[q] / tsum;

				l1 += fabs(cur[q] / csum - t);
				/* the factor of the joint's cells in marginal cell q */
				cur[q] = cur[q] > 0 ? t / cur[q] : 0;
			}
			if (!(l1 <= worst))
				worst = l1;		/* NaN too: a table with no mass left never converges */
			/* the next marginal's projection in the same pass as this scaling */
			ahead = k + 1 < nmargs;
			if (ahead)
				marg_steps(&margs[k + 1], d, sb);
			dp_odo_scale_next(d, sizes, sa, ahead ? sb : NULL, P, cur, nxt, ahead ? margs[k + 1].ncells : 0);
			if (ahead)
			{
				double	   *swap = cur;

				cur = nxt;
				nxt = swap;
			}
			if (dp_report(progress, progress_arg, DP_PHASE_GUM, sweep, max_sweeps, -1) != 0)
			{
				dp_free(cur);
				dp_free(nxt);
				dp_free(tgt);
				return -1;
			}
		}
		if (worst <= tol)
			break;
	}
	dp_free(cur);
	dp_free(nxt);
	dp_free(tgt);
	{
		double		mass = 0;

		for (uint64_t i = 0; i < ncells; i++)
			mass += P[i];
		if (!(mass > 0) || !isfinite(mass))
			return 0;			/* the marginals' supports left no cell: no distribution */
	}
	return (int) (sweep < max_sweeps ? sweep + 1 : max_sweeps);
}

int
dp_maxent_draw(const double *P, uint32_t d, const uint32_t *sizes, uint64_t n, dp_prng *rng,
			   dp_codes *out, dp_progress_fn progress, void *progress_arg)
{
	uint64_t	ncells = dp_maxent_cells(d, sizes);
	uint32_t   *order;
	uint64_t	base = out->nrows,
				done = 0;
	double		sum = 0,
				run,
				u;
	int64_t		prev;
	uint16_t	row[64] = {0};
	dp_odo		o;
	uint64_t	last = 0;		/* the last cell with mass: it takes what rounding leaves */

	if (d == 0 || d > 64 || ncells == 0 || ncells == UINT64_MAX || n >= ((uint64_t) 1 << 32) ||
		out->ncols != d)
		return dp_invalid("maximum entropy: a draw of too many rows, or from a domain it cannot hold");
	for (uint32_t j = 0; j < d; j++)
		if (sizes[j] > 65536)
			return dp_invalid("maximum entropy: a column of more than 65,536 codes");
	for (uint64_t i = 0; i < ncells; i++)
		if (P[i] > 0)
		{
			sum += P[i];
			last = i;
		}
	if (!(sum > 0) || !isfinite(sum))
		return dp_invalid("maximum entropy: the distribution has no positive cell");
	if (n == 0)
		return 0;
	/* n rows in cell order first, then permuted */
	for (uint64_t i = 0; i < n; i++)
		if (dp_codes_append(out, row) != 0)
			return -2;			/* dp_codes_append said why */
	order = dp_alloc(sizeof(uint32_t) * n);
	if (!order)
		return dp_nomem("could not allocate the order of the maximum-entropy rows");
	for (uint64_t i = 0; i < n; i++)
		order[i] = (uint32_t) i;
	dp_prng_shuffle_u32(rng, order, n);
	u = dp_prng_unit(rng);
	run = 0;
	prev = 0;					/* floor(0 + u) */
	dp_odo_start(&o, d, sizes);
	for (uint64_t c = 0; c < ncells && done < n; c++, dp_odo_next(&o))
	{
		int64_t		now;
		uint64_t	take;

		run += (P[c] > 0 ? P[c] : 0) / sum * (double) n;
		now = (int64_t) floor(run + u);
		if (now > (int64_t) n || c == last)
			now = (int64_t) n;
		take = now > prev ? (uint64_t) (now - prev) : 0;
		if (take > n - done)
			take = n - done;
		for (uint32_t j = 0; j < d; j++)
			row[j] = (uint16_t) o.code[j];
		for (uint64_t t = 0; t < take; t++, done++)
		{
			for (uint32_t j = 0; j < d; j++)
				out->col[j][base + order[done]] = row[j];
			if ((done & 0xFFFF) == 0xFFFF && dp_report(progress, progress_arg, DP_PHASE_GUM, 0, 0, -1) != 0)
			{
				dp_free(order);
				return -1;
			}
		}
		if (now > prev)
			prev = now;
	}
	dp_free(order);
	return 0;
}
