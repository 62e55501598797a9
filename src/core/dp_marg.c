/*
 * dp_marg.c - the marginal type (see dp_marg.h).
 */
#include "dp_marg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_env.h"


int
dp_marg_init(dp_marg *m, uint32_t nattrs, const uint32_t *attrs, const uint32_t *col_sizes)
{
	uint64_t	n = 1;

	memset(m, 0, sizeof(*m));
	if (nattrs == 0 || nattrs > DP_MARG_MAX_ATTRS)
		return -1;
	for (uint32_t k = 0; k < nattrs; k++)
		m->attrs[k] = attrs[k];
	/* sort (insertion: at most 8) and reject repeats */
	for (uint32_t i = 1; i < nattrs; i++)
		for (uint32_t j = i; j > 0 && m->attrs[j - 1] > m->attrs[j]; j--)
		{
			uint32_t	t = m->attrs[j];

			m->attrs[j] = m->attrs[j - 1];
			m->attrs[j - 1] = t;
		}
	for (uint32_t i = 1; i < nattrs; i++)
		if (m->attrs[i] == m->attrs[i - 1])
			return -1;
	m->nattrs = nattrs;
	for (int k = (int) nattrs - 1; k >= 0; k--)
	{
		m->sizes[k] = col_sizes[m->attrs[k]];
		if (m->sizes[k] == 0)
			return -1;
		m->strides[k] = n;
		if (n > UINT64_MAX / m->sizes[k] / sizeof(double))
			return -1;
		n *= m->sizes[k];
	}
	m->ncells = n;
	m->cells = dp_alloc(sizeof(double) * n);
	if (m->cells == NULL)
		return -1;
	memset(m->cells, 0, sizeof(double) * n);
	return 0;
}

void
dp_marg_free(dp_marg *m)
{
	dp_free(m->cells);
	m->cells = NULL;
	m->ncells = 0;
}

int
dp_marg_copy(dp_marg *dst, const dp_marg *src)
{
	*dst = *src;
	dst->cells = dp_alloc(sizeof(double) * (src->ncells ? src->ncells : 1));
	if (dst->cells == NULL)
		return -1;
	if (src->ncells > 0)
		memcpy(dst->cells, src->cells, sizeof(double) * src->ncells);
	return 0;
}

/* Rows with a code outside an attribute's domain are skipped, as dp_codes_count does. */
void
dp_marg_count(dp_marg *m, const dp_codes *t)
{
	for (uint64_t i = 0; i < t->nrows; i++)
	{
		bool		inside = true;

		for (uint32_t k = 0; k < m->nattrs; k++)
			inside &= t->col[m->attrs[k]][i] < m->sizes[k];
		if (inside)
			m->cells[dp_marg_index(m, t, i)] += 1;
	}
}

double
dp_marg_total(const dp_marg *m)
{
	double		s = 0;

	for (uint64_t i = 0; i < m->ncells; i++)
		s += m->cells[i];
	return s;
}

bool
dp_marg_contains(const dp_marg *m, uint32_t nsub, const uint32_t *sub)
{
	for (uint32_t i = 0; i < nsub; i++)
	{
		bool		found = false;

		for (uint32_t k = 0; k < m->nattrs; k++)
			found |= m->attrs[k] == sub[i];
		if (!found)
			return false;
	}
	return true;
}

int
dp_marg_project(const dp_marg *m, dp_marg *out)
{
	uint32_t	pos[DP_MARG_MAX_ATTRS];	/* position in m of each attribute of out */

	for (uint32_t j = 0; j < out->nattrs; j++)
	{
		pos[j] = UINT32_MAX;
		for (uint32_t k = 0; k < m->nattrs; k++)
			if (m->attrs[k] == out->attrs[j])
				pos[j] = k;
		if (pos[j] == UINT32_MAX || out->sizes[j] != m->sizes[pos[j]])
			return -1;
	}
	memset(out->cells, 0, sizeof(double) * out->ncells);
	for (uint64_t i = 0; i < m->ncells; i++)
	{
		uint64_t	o = 0;

		for (uint32_t j = 0; j < out->nattrs; j++)
			o += out->strides[j] * dp_marg_code(m, i, pos[j]);
		out->cells[o] += m->cells[i];
	}
	return 0;
}

double
dp_marg_l1(const dp_marg *a, const dp_marg *b, bool normalize)
{
	double		ta = 1,
				tb = 1,
				s = 0;

	if (a->nattrs != b->nattrs || a->ncells != b->ncells)
		return -1;
	for (uint32_t k = 0; k < a->nattrs; k++)
		if (a->attrs[k] != b->attrs[k] || a->sizes[k] != b->sizes[k])
			return -1;
	if (normalize)
	{
		ta = dp_marg_total(a);
		tb = dp_marg_total(b);
		if (ta <= 0 || tb <= 0)
			return -1;
	}
	for (uint64_t i = 0; i < a->ncells; i++)
		s += fabs(a->cells[i] / ta - b->cells[i] / tb);
	return s;
}
