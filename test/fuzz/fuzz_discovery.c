/* Discovery (dp_discovery.c): partition-selection thresholds, log-grid cells, bounds, denoising and
 * quantile edges on arbitrary noisy histograms.  Invariants: a value lies in its grid cell's
 * range; bounds come out ordered; quantile edges strictly increase within [lower, upper]. */
#include <math.h>
#include "fuzz_input.h"
#include "dp_discovery.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	dp_loggrid	g;
	int			integral = (int) fin_range(&f, 0, 1),
				subdiv = (int) fin_range(&f, 1, 16);
	uint32_t	nc;
	int64_t    *noisy;
	uint8_t    *scratch;
	double		sigma = fin_range(&f, 0, 7) == 0 ? fin_double(&f) : (double) fin_range(&f, 0, 10000) / 10.0;

	if ((integral ? dp_loggrid_init_int(&g, subdiv) : dp_loggrid_init_real(&g, subdiv)) != 0)
		return 0;
	nc = dp_loggrid_ncells(&g);
	noisy = calloc(nc, sizeof(int64_t));
	scratch = calloc(nc, 1);
	/* a sparse histogram: a few cells with counts, plus noise-like values */
	for (int k = 0; k < 32 && f.n > 0; k++)
		noisy[fin_range(&f, 0, nc - 1)] = fin_range(&f, -100000, 1000000);
	for (int k = 0; k < 16 && f.n > 0; k++)
	{
		uint32_t	cell;

		if (integral)
		{
			int64_t		v = (int64_t) fin_u64(&f),
						lo,
						hi;

			cell = dp_loggrid_cell_int(&g, v);
			FUZZ_CHECK(cell < nc, "cell %u of %u", cell, nc);
			dp_loggrid_cell_range_int(&g, cell, &lo, &hi);
			FUZZ_CHECK(v >= lo && v <= hi, "%lld not in cell %u [%lld, %lld]", (long long) v, cell, (long long) lo, (long long) hi);
		}
		else
		{
			double		x = fin_double(&f);

			if (!isfinite(x))
				continue;
			cell = dp_loggrid_cell_real(&g, x);
			FUZZ_CHECK(cell < nc, "cell %u of %u", cell, nc);
		}
	}
	{
		double		lower,
					upper;
		int			rc = dp_loggrid_bounds(&g, noisy, sigma, (double) fin_range(&f, 0, 499) / 1000.0, &lower, &upper);

		if (rc == 0)
		{
			uint32_t	nbins = (uint32_t) fin_range(&f, 1, 64),
						nedges = 0;
			double	   *edges = malloc(sizeof(double) * (nbins + 1));

			FUZZ_CHECK(lower <= upper, "bounds [%.17g, %.17g]", lower, upper);
			if (dp_loggrid_denoise(&g, noisy, sigma, 3.0, scratch) >= 0 &&
				dp_loggrid_quantile_edges(&g, noisy, lower, upper, nbins, edges, &nedges) == 0)
			{
				FUZZ_CHECK(nedges >= 1 && nedges <= nbins + 1, "%u edges for %u bins", nedges, nbins);
				FUZZ_CHECK(edges[0] == lower && edges[nedges - 1] == upper, "edges do not span the bounds");
				for (uint32_t i = 1; i < nedges; i++)
					FUZZ_CHECK(edges[i] > edges[i - 1], "edges not increasing at %u", i);
			}
			free(edges);
		}
	}
	{
		dp_dgauss	dg;
		double		s2 = (double) fin_range(&f, 1, 1000000) / 100.0;
		double		delta = pow(10.0, -(double) fin_range(&f, 1, 300));

		if (dp_dgauss_init(&dg, s2) == 0)
		{
			int64_t		t = dp_partition_threshold(&dg, delta);

			if (t >= 2)
				FUZZ_CHECK(dp_partition_delta(&dg, t) <= delta * (1 + 1e-9), "threshold %lld gives delta above %g", (long long) t, delta);
		}
	}
	free(noisy);
	free(scratch);
	return 0;
}
