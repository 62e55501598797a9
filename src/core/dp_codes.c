/*
 * dp_codes.c - the column-major encoded table (see dp_codes.h).
 */
#include "dp_codes.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dp_env.h"

#define DEFAULT_CAP 1024
#define COUNT_BLOCK 1024		/* rows whose cell indexes are built together */

/* Records that a table of ncols x rows codes could not be allocated; returns -1. */
static int
no_room(uint32_t ncols, uint64_t rows)
{
	dp_fail(DP_ERR_NOMEM, "could not allocate an encoded table of %u columns and %llu rows",
			ncols, (unsigned long long) rows);
	return -1;
}

int
dp_codes_init(dp_codes *t, uint32_t ncols, uint64_t initial_cap)
{
	memset(t, 0, sizeof(*t));
	if (initial_cap == 0)
		initial_cap = DEFAULT_CAP;
	if (initial_cap > SIZE_MAX / sizeof(uint16_t))
		return no_room(ncols, initial_cap);
	if (ncols > 0)
	{
		t->col = dp_alloc(sizeof(uint16_t *) * ncols);
		if (t->col == NULL)
			return no_room(ncols, initial_cap);
		for (uint32_t j = 0; j < ncols; j++)
		{
			t->col[j] = dp_alloc(sizeof(uint16_t) * (size_t) initial_cap);
			if (t->col[j] == NULL)
			{
				while (j-- > 0)
					dp_free(t->col[j]);
				dp_free(t->col);
				t->col = NULL;
				return no_room(ncols, initial_cap);
			}
		}
	}
	t->ncols = ncols;
	t->cap = initial_cap;
	return 0;
}

/*
 * Grows every column to new_cap rows.  Columns are reallocated one by one; if one fails, those
 * already grown keep their larger blocks, which is harmless: cap stays the old (smaller) value,
 * valid for all of them.
 */
static int
grow(dp_codes *t)
{
	uint64_t	new_cap = t->cap + t->cap / 2 + 16;

	if (new_cap > SIZE_MAX / sizeof(uint16_t))
		return no_room(t->ncols, new_cap);
	for (uint32_t j = 0; j < t->ncols; j++)
	{
		uint16_t   *p = dp_realloc(t->col[j], sizeof(uint16_t) * (size_t) new_cap);

		if (p == NULL)
			return no_room(t->ncols, new_cap);
		t->col[j] = p;
	}
	t->cap = new_cap;
	return 0;
}

int
dp_codes_append(dp_codes *t, const uint16_t *row)
{
	if (t->nrows == t->cap && grow(t) != 0)
		return -1;
	for (uint32_t j = 0; j < t->ncols; j++)
		t->col[j][t->nrows] = row[j];
	t->nrows++;
	return 0;
}

void
dp_codes_keep(dp_codes *t, uint32_t ncols)
{
	if (t->col == NULL || ncols >= t->ncols)
		return;
	for (uint32_t j = ncols; j < t->ncols; j++)
		dp_free(t->col[j]);
	t->ncols = ncols;
}

void
dp_codes_free(dp_codes *t)
{
	if (t->col != NULL)
	{
		for (uint32_t j = 0; j < t->ncols; j++)
			dp_free(t->col[j]);
		dp_free(t->col);
	}
	t->col = NULL;
	t->ncols = 0;
	t->nrows = 0;
	t->cap = 0;
}

void
dp_codes_count(const dp_codes *t, const uint32_t *cols, uint32_t ncols_sel,
			   const uint32_t *ncodes, int64_t *counts)
{
	size_t		idx[COUNT_BLOCK];
	bool		bad[COUNT_BLOCK];
	size_t		stride;

	if (ncols_sel == 0)
	{
		counts[0] += (int64_t) t->nrows;
		return;
	}

	/*
	 * Column-major: for a block of rows, add each selected column's contribution to their cell
	 * indexes in turn (sequential reads of one column at a time), then count the cells.
	 */
	for (uint64_t start = 0; start < t->nrows; start += COUNT_BLOCK)
	{
		size_t		n = (size_t) (t->nrows - start < COUNT_BLOCK ? t->nrows - start : COUNT_BLOCK);
		bool		any_bad = false;

		memset(idx, 0, sizeof(idx[0]) * n);
		stride = 1;
		for (uint32_t k = ncols_sel; k-- > 0;)
		{
			const uint16_t *c = t->col[cols[k]] + start;
			uint32_t	m = ncodes[k];

			for (size_t i = 0; i < n; i++)
			{
				idx[i] += (size_t) c[i] * stride;
				any_bad |= c[i] >= m;
			}
			stride *= m;
		}
		if (!any_bad)
		{
			for (size_t i = 0; i < n; i++)
				counts[idx[i]]++;
			continue;
		}
		/* a caller bug: find and skip the rows with an out-of-range code */
		memset(bad, 0, sizeof(bad[0]) * n);
		for (uint32_t k = 0; k < ncols_sel; k++)
		{
			const uint16_t *c = t->col[cols[k]] + start;

			for (size_t i = 0; i < n; i++)
				bad[i] |= c[i] >= ncodes[k];
		}
		for (size_t i = 0; i < n; i++)
			if (!bad[i])
				counts[idx[i]]++;
	}
}
