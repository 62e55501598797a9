/*
 * sampler_bench.c - throwaway throughput check of the exact samplers.
 * gcc -std=gnu11 -O2 -Isrc/core -o /tmp/sampler_bench bench/sampler_bench.c \
 *     src/core/dp_sampler.c src/core/dp_random.c -lsodium -lm && /tmp/sampler_bench
 */
#include <stdio.h>
#include <time.h>

#include "dp_random.h"
#include "dp_sampler.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(void)
{
	static const double sigmas[] = {1, 10, 100, 1000, 1e4, 1e6};
	size_t		i;

	if (dp_random_init() != 0)
		return 1;
	for (i = 0; i < sizeof(sigmas) / sizeof(sigmas[0]); i++)
	{
		dp_dgauss	g;
		long		n = 2000000,
					j;
		long long	acc = 0;
		double		t0,
					t1;

		dp_dgauss_init(&g, sigmas[i] * sigmas[i]);
		t0 = now();
		for (j = 0; j < n; j++)
			acc += dp_dgauss_sample(&g);
		t1 = now();
		printf("dgauss sigma=%-8g %8.0f samples/s (%.0f ns/sample) [%lld]\n",
			   sigmas[i], n / (t1 - t0), (t1 - t0) / n * 1e9, acc & 1);
	}
	{
		long		n = 2000000,
					j;
		long long	acc = 0;
		double		t0 = now(),
					t1;

		for (j = 0; j < n; j++)
			acc += dp_dlaplace_sample(1, 100);
		t1 = now();
		printf("dlaplace t/s=100     %8.0f samples/s [%lld]\n", n / (t1 - t0), acc & 1);
	}
	return 0;
}
