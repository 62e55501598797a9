/*
 * dp_marg.h - a marginal: counts over the product of the domains of a few attributes.
 *
 * The one marginal type of the synthesis pipeline (PRIVSYN.md): published noisy marginals,
 * their consistent and non-negative versions, GUM's targets and GUM's current synthetic counts
 * are all dp_marg.  Cells are doubles (post-processing moves them off the integers) in row-major
 * order over attrs, the last attribute varying fastest.  Attributes are column indices of the
 * encoded table (dp_codes), kept in increasing order.
 *
 * Pure C: no PostgreSQL headers.  Memory comes from the installed handlers (dp_env.h).
 */
#ifndef DP_MARG_H
#define DP_MARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_codes.h"

#define DP_MARG_MAX_ATTRS 8

typedef struct dp_marg
{
	uint32_t	nattrs;
	uint32_t	attrs[DP_MARG_MAX_ATTRS];	/* increasing column indices */
	uint32_t	sizes[DP_MARG_MAX_ATTRS];	/* codes per attribute */
	uint64_t	strides[DP_MARG_MAX_ATTRS];	/* row-major, last attribute stride 1 */
	uint64_t	ncells;
	double	   *cells;
	double		rho;			/* zCDP budget it was published with (0: exact / derived) */
	bool		spread;			/* a measurement over coarser cells, spread over these by released
								 * shares, is in it: rho bounds its run totals' noise, not a cell's */
} dp_marg;


/*
 * A zeroed marginal over attrs (any order; stored sorted) whose domains have sizes[col] codes
 * (sizes indexed by column).  Returns 0, or -1 when nattrs is 0 or too large, an attribute repeats,
 * or allocation fails.
 */
int			dp_marg_init(dp_marg *m, uint32_t nattrs, const uint32_t *attrs, const uint32_t *col_sizes);
void		dp_marg_free(dp_marg *m);
int			dp_marg_copy(dp_marg *dst, const dp_marg *src);

/* Exact counts from the encoded table (adds to the cells). */
void		dp_marg_count(dp_marg *m, const dp_codes *t);

/* Cell index of a row of the encoded table. */
static inline uint64_t
dp_marg_index(const dp_marg *m, const dp_codes *t, uint64_t row)
{
	uint64_t	idx = 0;

	for (uint32_t k = 0; k < m->nattrs; k++)
		idx += m->strides[k] * t->col[m->attrs[k]][row];
	return idx;
}

/* Code of attribute k (position in attrs) in cell idx. */
static inline uint32_t
dp_marg_code(const dp_marg *m, uint64_t idx, uint32_t k)
{
	return (uint32_t) ((idx / m->strides[k]) % m->sizes[k]);
}

double		dp_marg_total(const dp_marg *m);

/* true when every attribute of sub is one of m's. */
bool		dp_marg_contains(const dp_marg *m, uint32_t nsub, const uint32_t *sub);

/*
 * Projection onto a subset of m's attributes: out (a dp_marg initialised over that subset, with
 * the same sizes) receives the sums.  Returns 0, or -1 if sub is not a subset.
 */
int			dp_marg_project(const dp_marg *m, dp_marg *out);

/* L1 distance of two marginals over the same attributes (after scaling both to total 1 if
 * normalize).  Returns -1 on mismatched attributes. */
double		dp_marg_l1(const dp_marg *a, const dp_marg *b, bool normalize);

#endif
