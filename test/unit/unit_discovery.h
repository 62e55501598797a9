/*
 * unit_discovery.h - what dp_discovery's unit tests (test_discovery_grid.c and
 * test_discovery_bounds.c) share: the fixed-seed generator of their synthetic DATA (splitmix64;
 * never used for privacy noise, which comes from the real sampler on unit.h's fixed stream) and
 * the qsort comparators.
 */
#ifndef DPSYNTH_UNIT_DISCOVERY_H
#define DPSYNTH_UNIT_DISCOVERY_H

#include <math.h>
#include <stdint.h>


/* ---------- fixed-seed data generator (NOT for noise) ---------- */

static uint64_t rng_state __attribute__((unused)) = 0x9e3779b97f4a7c15ULL;

static inline uint64_t
rng_next(void)
{
	uint64_t	z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline double
rng_unif(void)					/* (0, 1) */
{
	return ((double) (rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static inline double
rng_normal(void)
{
	return sqrt(-2.0 * log(rng_unif())) * cos(2.0 * M_PI * rng_unif());
}

static inline int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static inline int
cmp_dbl(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}
#endif							/* DPSYNTH_UNIT_DISCOVERY_H */
