/* Discovery (dp_discovery.c, dp_partition_select.c, dp_discovery_domain.c): partition-selection
 * thresholds, log-grid cells, bounds, denoising and quantile edges on arbitrary noisy histograms.
 * Invariants: a value lies in its grid cell's range; bounds come out ordered; quantile edges
 * strictly increase within [lower, upper].
 * And the path from a release to the stored domain (src/discover.c's release_bounds and
 * edges_from_histogram, after the charge): whatever the noisy histograms and released bounds,
 * over the value range of every type discovery learns, the bounds, bins and learned edges pass
 * dpsynth.domains' CHECK and load as src/domain.c loads them. */
#include <float.h>
#include <math.h>
#include "fuzz_input.h"
#include "dp_discovery.h"
#include "dp_domain.h"

/* the values of each type discovery learns (src/domain.c, dpsynth_value_range) */
static const struct
{
	bool		integral;
	double		lo,
				hi;
}			types[] = {
	{true, -32768.0, 32767.0},	/* int2 */
	{true, -2147483648.0, 2147483647.0},	/* int4 */
	{true, -9223372036854775808.0, 9223372036854775808.0},	/* int8 */
	{true, -2451545.0, 2145031948.0},	/* date (days) */
	{true, -211813488000000000.0, 9223371331199999999.0},	/* timestamp[tz] (microseconds) */
	{false, -FLT_MAX, FLT_MAX},	/* float4 */
	{false, -DBL_MAX, DBL_MAX},	/* float8, numeric */
};

/* A 'bins' row: the catalog's CHECK, the type's values, and src/domain.c's init_numeric. */
static void
check_bins(bool integral, double lower, double upper, uint32_t bins, double tl, double th)
{
	dp_domain	d;

	FUZZ_CHECK(isfinite(lower) && isfinite(upper) && lower < upper && bins >= 1 && bins <= 65535,
			   "stored bins violate the CHECK: [%.17g, %.17g] %u", lower, upper, bins);
	FUZZ_CHECK(lower >= tl && upper <= th, "bounds [%.17g, %.17g] outside the type", lower, upper);
	if (integral)
	{
		int64_t    *e = malloc(sizeof(int64_t) * (bins + 1));

		FUZZ_CHECK(lower == floor(lower) && upper == floor(upper) && fabs(lower) <= 9007199254740992.0 &&
				   fabs(upper) <= 9007199254740992.0, "integral bounds [%.17g, %.17g] not exact", lower, upper);
		FUZZ_CHECK(dp_int_equal_edges((int64_t) lower, (int64_t) upper, bins, e) == 0 &&
				   dp_domain_init_int_edges(&d, e, bins, true) == 0,
				   "integral bins do not load: [%.17g, %.17g] %u", lower, upper, bins);
		free(e);
	}
	else
	{
		double	   *e = malloc(sizeof(double) * (bins + 1));

		FUZZ_CHECK(dp_real_equal_edges(lower, upper, bins, e) == 0 && dp_domain_init_real_edges(&d, e, bins, true) == 0,
				   "real bins do not load: [%.17g, %.17g] %u", lower, upper, bins);
		free(e);
	}
}

/* Learned edges (float8[]): as init_numeric loads them. */
static void
check_edges(bool integral, const double *edges, uint32_t n)
{
	dp_domain	d;

	FUZZ_CHECK(n >= 2 && n <= 65536, "%u learned edges", n);
	if (integral)
	{
		int64_t    *e = malloc(sizeof(int64_t) * n);

		for (uint32_t i = 0; i < n; i++)
		{
			FUZZ_CHECK(isfinite(edges[i]) && fabs(edges[i]) <= 4611686018427387904.0, "edge %.17g", edges[i]);
			e[i] = (int64_t) edges[i];
		}
		FUZZ_CHECK(dp_domain_init_int_edges(&d, e, n - 1, true) == 0, "integral edges do not load");
		free(e);
	}
	else
		FUZZ_CHECK(dp_domain_init_real_edges(&d, edges, n - 1, true) == 0, "real edges do not load");
}

/* What the release path reads from the input, taken first (the histograms use up the rest). */
typedef struct release_in
{
	int			type;
	bool		raw;			/* any released doubles instead of the grids' bounds */
	bool		found;
	double		lo,
				hi;
	uint32_t	nbins;
} release_in;

static void
release_in_read(fin *f, release_in *r)
{
	r->type = (int) fin_range(f, 0, 6);
	r->raw = fin_range(f, 0, 3) == 0;
	r->found = fin_range(f, 0, 1) == 1;
	r->lo = fin_range(f, 0, 1) ? fin_double(f) : fin_num(f) * pow(2.0, (double) fin_range(f, 0, 1000));
	r->hi = fin_range(f, 0, 1) ? fin_double(f) : fin_num(f) * pow(2.0, (double) fin_range(f, 0, 1000));
	r->nbins = (uint32_t) fin_range(f, 1, 64);
}

/*
 * release_bounds on a noisy log-grid histogram (stage 1) and a noisy linear one over its span
 * (stage 2, counts from the input), then the learned edges, as src/discover.c makes them.
 */
static void
release_to_domain(fin *f, const release_in *r, const dp_loggrid *g, int64_t *noisy, double sigma)
{
	int			t = r->type;
	bool		integral = g->integral,
				found = false,
				coarse_found = false;
	double		clo = 0,
				chi = 0,
				lo = 0,
				hi = 0,
				slo,
				shi,
				lower,
				upper;
	uint32_t	bins;

	if (types[t].integral != integral)
		t = integral ? t % 5 : 5 + t % 2;
	if (integral)
	{
		int64_t		l,
					h;

		if (dp_loggrid_bounds_int(g, noisy, sigma, 0.001, &l, &h) == 0)
		{
			clo = (double) l, chi = (double) h;
			coarse_found = true;
		}
		if (dp_loggrid_bounds_int(g, noisy, sigma, DP_BOUNDS_SPAN_TAIL, &l, &h) == 0 &&
			dp_span_widen_int(&l, &h) == 0)
		{
			dp_lingrid	lg;

			slo = fmin(fmax((double) l, -DP_DISCOVERED_INT_LIMIT), DP_DISCOVERED_INT_LIMIT - 1);
			shi = fmax(fmin((double) h, DP_DISCOVERED_INT_LIMIT), slo + 1);
			if (dp_lingrid_init_int(&lg, dp_double_to_int64_sat(slo), dp_double_to_int64_sat(shi)) == 0)
			{
				int64_t    *cells = calloc(lg.ncells, sizeof(int64_t)),
							il,
							ih;

				for (int k = 0; k < 16 && f->n > 0; k++)
					cells[fin_range(f, 0, lg.ncells - 1)] = fin_range(f, -1000, 100000);
				if (dp_lingrid_bounds_int(&lg, cells, sigma, 0.001, &il, &ih) == 0)
				{
					lo = (double) il, hi = (double) ih;
					found = true;
				}
				free(cells);
			}
		}
		if (found && coarse_found)
		{
			int64_t		il = dp_double_to_int64_sat(lo),
						ih = dp_double_to_int64_sat(hi);

			if (dp_bounds_reconcile_int(g, dp_double_to_int64_sat(clo), dp_double_to_int64_sat(chi), &il, &ih) >= 0)
				lo = (double) il, hi = (double) ih;
		}
	}
	else
	{
		coarse_found = dp_loggrid_bounds(g, noisy, sigma, 0.001, &clo, &chi) == 0;
		if (dp_loggrid_bounds(g, noisy, sigma, DP_BOUNDS_SPAN_TAIL, &slo, &shi) == 0 &&
			dp_span_widen_real(&slo, &shi) == 0)
		{
			dp_lingrid	lg;

			slo = fmin(fmax(slo, -DP_DISCOVERED_REAL_LIMIT), DP_DISCOVERED_REAL_LIMIT);
			shi = fmin(fmax(shi, -DP_DISCOVERED_REAL_LIMIT), DP_DISCOVERED_REAL_LIMIT);
			if (slo < shi && dp_lingrid_init_real(&lg, slo, shi) == 0)
			{
				int64_t    *cells = calloc(lg.ncells, sizeof(int64_t));

				for (int k = 0; k < 16 && f->n > 0; k++)
					cells[fin_range(f, 0, lg.ncells - 1)] = fin_range(f, -1000, 100000);
				found = dp_lingrid_bounds_real(&lg, cells, sigma, 0.001, &lo, &hi) == 0;
				free(cells);
			}
		}
		if (found && coarse_found)
			(void) dp_bounds_reconcile(g, clo, chi, &lo, &hi);
	}
	if (!found && coarse_found)
	{
		lo = clo, hi = chi;
		found = true;
	}
	/* sometimes any released doubles at all */
	if (r->raw)
	{
		lo = r->lo;
		hi = r->hi;
		found = r->found;
	}
	FUZZ_CHECK(dp_discovered_bounds(integral, found, lo, hi, types[t].lo, types[t].hi, 32, &lower, &upper, &bins) == 0,
			   "dp_discovered_bounds refused a type's range");
	check_bins(integral, lower, upper, bins, types[t].lo, types[t].hi);

	/* dp_discover's learned edges inside the stored bounds (edges_from_histogram) */
	{
		uint32_t	nbins = r->nbins,
					nedges = 0;
		double	   *edges = malloc(sizeof(double) * (nbins + 2));

		if (integral)
		{
			int64_t    *ie = malloc(sizeof(int64_t) * (nbins + 1));

			if (dp_loggrid_quantile_edges_int(g, noisy, (int64_t) lower, (int64_t) upper, nbins, ie, &nedges) == 0 &&
				nedges >= 2)
			{
				ie[nedges - 1] = (int64_t) upper + 1;
				for (uint32_t i = 0; i < nedges; i++)
					edges[i] = (double) ie[i];
			}
			else
				nedges = 0;
			free(ie);
		}
		else if (dp_loggrid_quantile_edges(g, noisy, lower, upper, nbins, edges, &nedges) != 0)
			nedges = 0;
		nedges = dp_discovered_edges(integral, edges, nedges, lower, upper);
		check_edges(integral, edges, nedges);
		free(edges);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	release_in	r;
	dp_loggrid	g;
	int			integral = (int) fin_range(&f, 0, 1),
				subdiv = (int) fin_range(&f, 1, 16);
	uint32_t	nc;
	int64_t    *noisy;
	uint8_t    *scratch;
	double		sigma = fin_range(&f, 0, 7) == 0 ? fin_double(&f) : (double) fin_range(&f, 0, 10000) / 10.0;

	release_in_read(&f, &r);
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
	if (isfinite(sigma) && sigma >= 0)
		release_to_domain(&f, &r, &g, noisy, sigma);
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
