/*
 * dp_counts.c - see dp_counts.h for the privacy claim, the arithmetic and the refusals.
 */
#include "dp_counts.h"

#include <math.h>
#include <stdbool.h>

#include "dp_internal.h"

#define TWO63 9223372036854775808.0	/* 2^63 as a double */
#define F64_CHUNK 256			/* cells converted per call of dp_noise_counts */

/*
 * The sampler's own precondition (num, den, t >= 1, den t < 2^64, 2 num den t^2 < 2^128: it
 * abort()s otherwise) and dp_dgauss_init's range of sigma^2, with room for its rounding up.
 */
static bool
dgauss_ok(const dp_dgauss *g)
{
	unsigned __int128 dt,
				m;
	double		s2;

	if (g == NULL || g->num == 0 || g->den == 0 || g->t == 0)
		return false;
	dt = (unsigned __int128) g->den * g->t;
	if ((dt >> 64) != 0 ||
		__builtin_mul_overflow(dt * g->t, (unsigned __int128) g->num, &m) ||
		__builtin_mul_overflow(m, (unsigned __int128) 2, &m))
		return false;
	s2 = (double) g->num / (double) g->den;
	return s2 >= DP_DGAUSS_SIGMA2_MIN * 0.5 && s2 <= DP_DGAUSS_SIGMA2_MAX * 2.0;
}

/* a + b clamped to the int64 range (the exact sum, then post-processing). */
static int64_t
sat_add(int64_t a, int64_t b)
{
	int64_t		r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int
dp_noise_counts(const dp_dgauss *g, const int64_t *in, int64_t *out, size_t n)
{
	if (!dgauss_ok(g))
		return dp_invalid("the counts' noise scale is not a valid discrete Gaussian");
	if (n == 0)
		return 0;
	if (in == NULL || out == NULL)
		return dp_invalid("the counts to release are missing");
	/* every count is checked before the first draw: a refusal draws nothing and writes nothing */
	for (size_t i = 0; i < n; i++)
		if (in[i] < 0)
			return dp_invalid("a count to release is negative");
	/* Every cell gets noise, whatever its count: skipping empty cells would reveal them. */
	for (size_t i = 0; i < n; i++)
		out[i] = sat_add(in[i], dp_dgauss_sample(g));
	return 0;
}

int
dp_noise_counts_f64(const dp_dgauss *g, const double *in, double *out, size_t n)
{
	int64_t		buf[F64_CHUNK];

	if (!dgauss_ok(g))
		return dp_invalid("the counts' noise scale is not a valid discrete Gaussian");
	if (n == 0)
		return 0;
	if (in == NULL || out == NULL)
		return dp_invalid("the counts to release are missing");
	for (size_t i = 0; i < n; i++)
		if (!(in[i] >= 0) || isinf(in[i]) || in[i] != floor(in[i]))
			return dp_invalid("a count to release is negative, not finite or not an integer");
	/* chunks in cell order: the draws are dp_noise_counts' on the whole vector */
	for (size_t i0 = 0; i0 < n; i0 += F64_CHUNK)
	{
		size_t		len = n - i0 < F64_CHUNK ? n - i0 : F64_CHUNK;

		for (size_t j = 0; j < len; j++)
			buf[j] = in[i0 + j] >= TWO63 ? INT64_MAX : (int64_t) in[i0 + j];
		if (dp_noise_counts(g, buf, buf, len) != 0)
			return -2;			/* unreachable: everything was checked above */
		for (size_t j = 0; j < len; j++)
			out[i0 + j] = (double) buf[j];
	}
	return 0;
}
