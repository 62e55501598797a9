/* fuzz_input.h - reading bounded numbers out of a libFuzzer input (shared by the harnesses). */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef struct fin
{
	const uint8_t *p;
	size_t		n;
} fin;

static inline uint64_t
fin_u64(fin *f)
{
	uint64_t	v = 0;
	size_t		k = f->n < 8 ? f->n : 8;

	memcpy(&v, f->p, k);
	f->p += k;
	f->n -= k;
	return v;
}

/* an integer in [lo, hi] */
static inline int64_t
fin_range(fin *f, int64_t lo, int64_t hi)
{
	uint64_t	span = (uint64_t) hi - (uint64_t) lo + 1;	/* modular: no overflow */

	return span == 0 ? (int64_t) fin_u64(f) : (int64_t) ((uint64_t) lo + fin_u64(f) % span);
}

/* a double from the input's bits (any value: NaN, infinities, subnormals) */
static inline double
fin_double(fin *f)
{
	uint64_t	b = fin_u64(f);
	double		d;

	memcpy(&d, &b, sizeof d);
	return d;
}

/* a "reasonable" double: mostly small numbers, sometimes extreme ones */
static inline double
fin_num(fin *f)
{
	switch (fin_range(f, 0, 7))
	{
		case 0:
			return fin_double(f);
		case 1:
			return (double) fin_range(f, -1000000000LL, 1000000000LL) * 1e6;
		default:
			return (double) fin_range(f, -100000, 100000) / (double) fin_range(f, 1, 1000);
	}
}

#define FUZZ_CHECK(cond, ...) \
	do { if (!(cond)) { fprintf(stderr, "invariant failed: " __VA_ARGS__); fprintf(stderr, "\n"); abort(); } } while (0)
#endif
