/*
 * dp_counts.c - see dp_counts.h for the privacy claim.
 */
#include "dp_counts.h"

void
dp_counts_release(int64_t *counts, size_t n, const dp_dgauss *noise)
{
	/* Every cell gets noise, whatever its count: skipping empty cells would reveal them. */
	for (size_t i = 0; i < n; i++)
		counts[i] += dp_dgauss_sample(noise);
}
