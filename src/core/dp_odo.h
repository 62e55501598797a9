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

#endif							/* DP_ODO_H */
