/*
 * unit_gum.h - what GUM's unit tests (test_gum.c, test_gum_errors.c, test_gum_adult.c) share:
 * exact marginals of a table as GUM's targets, their normalised L1 against a table, a correlated
 * source table from a hash, and a monotonic clock for the reported run times.
 */
#ifndef DPSYNTH_UNIT_GUM_H
#define DPSYNTH_UNIT_GUM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dp_codes.h"
#include "dp_marg.h"


static inline double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* exact marginal of table t over attrs */
static inline void
exact_marg(dp_marg *m, const dp_codes *t, uint32_t nattrs, const uint32_t *attrs, const uint32_t *sizes)
{
	if (dp_marg_init(m, nattrs, attrs, sizes) != 0)
	{
		fprintf(stderr, "dp_marg_init failed\n");
		exit(2);
	}
	dp_marg_count(m, t);
}

/* normalised L1 between target m and the same marginal of table t */
static inline double
l1_of(const dp_marg *m, const dp_codes *t, const uint32_t *sizes)
{
	dp_marg		s;
	double		e;

	exact_marg(&s, t, m->nattrs, m->attrs, sizes);
	e = dp_marg_l1(m, &s, true);
	dp_marg_free(&s);
	return e;
}

/* adds every 1-way marginal of t (ncols columns) to targets[*nt] */
static inline void
add_one_ways(dp_marg *targets, uint32_t *nt, const dp_codes *t, const uint32_t *sizes)
{
	for (uint32_t c = 0; c < t->ncols; c++)
		exact_marg(&targets[(*nt)++], t, 1, &c, sizes);
}

static inline void
free_targets(dp_marg *targets, uint32_t nt)
{
	for (uint32_t i = 0; i < nt; i++)
		dp_marg_free(&targets[i]);
}

static inline uint64_t
hash64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* a correlated source table: column j depends on column j-1 (and on column 0 for j >= 2) */
static inline void
make_source(dp_codes *t, uint32_t ncols, const uint32_t *sizes, uint64_t nrows, uint64_t salt)
{
	uint16_t	row[64];

	dp_codes_init(t, ncols, nrows);
	for (uint64_t i = 0; i < nrows; i++)
	{
		uint64_t	h = hash64(i * 7919 + salt);

		for (uint32_t j = 0; j < ncols; j++)
		{
			uint64_t	hh = hash64(h + j);
			uint32_t	v;

			if (j == 0)
				v = (uint32_t) ((hh % 100) * (hh % 100) / 10000.0 * sizes[0]);	/* skewed */
			else if (hh % 10 < 7)
				v = (row[j - 1] + (j >= 2 ? row[0] : 0)) % sizes[j];
			else
				v = (uint32_t) ((hh >> 20) % sizes[j]);
			row[j] = (uint16_t) (v % sizes[j]);
		}
		dp_codes_append(t, row);
	}
}
#endif							/* DPSYNTH_UNIT_GUM_H */
