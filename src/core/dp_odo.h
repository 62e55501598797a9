/*
 * dp_odo.h - an odometer over the cells of a row-major table (the last column fastest) that
 * keeps the cell's index in a second table over some of its columns up to date as it moves:
 * step[j] is that table's stride of column j, 0 for a column it does not hold.  Used by the
 * maximum-entropy fits (dp_maxent.c over the whole joint table, dp_jtree.c over a clique) to
 * project a table onto a marginal and to scale it by a marginal's factors in one pass.
 *
 * Pure C: no PostgreSQL headers.
 */
#ifndef DP_ODO_H
#define DP_ODO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DP_ODO_MAX_COLS 64

typedef struct dp_odo
{
	uint32_t	d;
	const uint32_t *sizes;
	uint32_t	code[DP_ODO_MAX_COLS];
	uint64_t	step[DP_ODO_MAX_COLS];
	uint64_t	idx;
} dp_odo;

/* At cell 0 of a table over sizes[0..d) (d <= DP_ODO_MAX_COLS), every step 0 (the caller sets them). */
static inline void
dp_odo_start(dp_odo *o, uint32_t d, const uint32_t *sizes)
{
	o->d = d;
	o->sizes = sizes;
	o->idx = 0;
	memset(o->code, 0, sizeof(o->code));
	memset(o->step, 0, sizeof(o->step));
}

static inline void
dp_odo_next(dp_odo *o)
{
	for (uint32_t j = o->d; j-- > 0;)
	{
		o->code[j]++;
		o->idx += o->step[j];
		if (o->code[j] < o->sizes[j])
			return;
		o->idx -= o->step[j] * o->sizes[j];
		o->code[j] = 0;
	}
}


/*
 * The same walk in runs: a table's columns grouped into blocks of neighbours that the second
 * table either all holds, with strides that make the block one column of it, or all lacks
 * (columns of size 1 join any block).  The innermost block is walked by a tight loop; the
 * odometer turns over the outer blocks only, ncells / inner times.  dp_odo_project and
 * dp_odo_scale are the fits' two passes (project a table onto the second, scale it by it).
 */
typedef struct dp_odo_runs
{
	uint32_t	nouter;
	uint32_t	sizes[DP_ODO_MAX_COLS]; /* the outer blocks', outermost first */
	uint64_t	step[DP_ODO_MAX_COLS];
	uint64_t	inner;			/* cells of the innermost block */
	uint64_t	istep;			/* its stride in the second table (0: a block it lacks) */
	uint64_t	ncells;
} dp_odo_runs;

/* step[j]: the second table's stride of column j, 0 for a column it lacks (d <= DP_ODO_MAX_COLS) */
static inline void
dp_odo_runs_init(dp_odo_runs *r, uint32_t d, const uint32_t *sizes, const uint64_t *step)
{
	uint64_t	bsize = 1,
				bstep = 0;
	bool		open = false,
				inner = true;
	uint32_t	n = 0;
	uint32_t	rs[DP_ODO_MAX_COLS];
	uint64_t	rt[DP_ODO_MAX_COLS];

	r->ncells = 1;
	r->inner = 1;
	r->istep = 0;
	for (uint32_t j = d; j-- > 0;)
	{
		r->ncells *= sizes[j];
		if (sizes[j] == 1)
			continue;
		if (open && ((bstep == 0 && step[j] == 0) ||
					 (bstep != 0 && step[j] == bstep * bsize)))
		{
			bsize *= sizes[j];
			continue;
		}
		if (open)
		{
			if (inner)
			{
				r->inner = bsize;
				r->istep = bstep;
				inner = false;
			}
			else
			{
				rs[n] = (uint32_t) bsize;
				rt[n++] = bstep;
			}
		}
		open = true;
		bsize = sizes[j];
		bstep = step[j];
	}
	if (open)
	{
		if (inner)
		{
			r->inner = bsize;
			r->istep = bstep;
		}
		else
		{
			rs[n] = (uint32_t) bsize;
			rt[n++] = bstep;
		}
	}
	/* outermost first, as the odometer counts */
	r->nouter = n;
	for (uint32_t i = 0; i < n; i++)
	{
		r->sizes[i] = rs[n - 1 - i];
		r->step[i] = rt[n - 1 - i];
	}
}

/* out[0..) += P projected: the second table's sums of P's cells (out zeroed by the caller) */
static inline void
dp_odo_project(const dp_odo_runs *r, const double *P, double *out)
{
	dp_odo		o;
	uint64_t	L = r->inner,
				is = r->istep;

	dp_odo_start(&o, r->nouter, r->sizes);
	memcpy(o.step, r->step, sizeof(uint64_t) * r->nouter);
	for (uint64_t i = 0; i < r->ncells; i += L, dp_odo_next(&o))
	{
		const double *p = P + i;

		if (is == 0)
		{
			double		s = 0;

			for (uint64_t j = 0; j < L; j++)
				s += p[j];
			out[o.idx] += s;
		}
		else if (is == 1)
		{
			double	   *q = out + o.idx;

			for (uint64_t j = 0; j < L; j++)
				q[j] += p[j];
		}
		else
			for (uint64_t j = 0; j < L; j++)
				out[o.idx + j * is] += p[j];
	}
}

/* P's cells times f's (the second table's) */
static inline void
dp_odo_scale(const dp_odo_runs *r, double *P, const double *f)
{
	dp_odo		o;
	uint64_t	L = r->inner,
				is = r->istep;

	dp_odo_start(&o, r->nouter, r->sizes);
	memcpy(o.step, r->step, sizeof(uint64_t) * r->nouter);
	for (uint64_t i = 0; i < r->ncells; i += L, dp_odo_next(&o))
	{
		double	   *p = P + i;

		if (is == 0)
		{
			double		g = f[o.idx];

			for (uint64_t j = 0; j < L; j++)
				p[j] *= g;
		}
		else if (is == 1)
		{
			const double *q = f + o.idx;

			for (uint64_t j = 0; j < L; j++)
				p[j] *= q[j];
		}
		else
			for (uint64_t j = 0; j < L; j++)
				p[j] *= f[o.idx + j * is];
	}
}

#endif							/* DP_ODO_H */
