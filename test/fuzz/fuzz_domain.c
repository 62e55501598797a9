/* Domains, binning and encoding (dp_domain.c): arbitrary bounds, bins, points, labels and values.
 * Invariants: every encoded value is a code of the domain; a number inside the bounds encodes to
 * the bin whose range holds it, one outside them to the end bin on its side (clamped, README);
 * NaN to the NULL cell; labels are found again. */
#include "fuzz_input.h"
#include "dp_domain.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	dp_domain	d;
	int			kind = (int) fin_range(&f, 0, 2);
	uint32_t	nbins = (uint32_t) fin_range(&f, 1, 300);
	int			has_null = (int) fin_range(&f, 0, 1);

	if (kind == 0)
	{
		int64_t		lower = fin_range(&f, -(1LL << 62), 1LL << 62),
					upper = fin_range(&f, -(1LL << 62), 1LL << 62);
		int64_t    *edges = malloc(sizeof(int64_t) * (nbins + 1));
		int64_t		points[4];
		uint32_t	npoints = (uint32_t) fin_range(&f, 0, 4);
		int64_t    *all = malloc(sizeof(int64_t) * (nbins + 1 + 2 * 4));
		uint32_t	nall;

		for (uint32_t i = 0; i < npoints; i++)
			points[i] = fin_range(&f, lower < upper ? lower : upper, lower < upper ? upper : lower);
		if (dp_int_equal_edges(lower, upper, nbins, edges) == 0)
		{
			nall = dp_int_edges_with_points(edges, nbins + 1, points, npoints, all);
			if (nall >= 2 && dp_domain_init_int_edges(&d, all, nall - 1, has_null) == 0)
			{
#ifdef FUZZ_DEBUG
				fprintf(stderr, "int [%lld, %lld] %u bins, %u points, %u edges, null %d\n", (long long) lower,
						(long long) upper, nbins, npoints, nall, has_null);
				for (uint32_t b = 0; b < nall; b++)
					fprintf(stderr, " e%u=%lld", b, (long long) all[b]);
				fprintf(stderr, "\n");
#endif
				for (int k = 0; k < 64 && f.n > 0; k++)
				{
					int64_t		v = has_null ? fin_range(&f, INT64_MIN / 2, INT64_MAX / 2)
						: fin_range(&f, all[0], all[nall - 1] - 1);	/* NOT NULL: values in range only */
					dp_code		c = dp_encode_int(&d, v);

					FUZZ_CHECK(c < nall - 1, "int code %u of %u bins", c, nall - 1);
					if (v < all[0])
						FUZZ_CHECK(c == 0, "%lld below the bounds in bin %u", (long long) v, c);
					else if (v >= all[nall - 1])	/* integer edges: the last one is exclusive */
						FUZZ_CHECK(c == nall - 2, "%lld above the bounds in bin %u", (long long) v, c);
					else
					{
						int64_t		lo, hi;

						dp_int_bin_range(&d, c, &lo, &hi);
						FUZZ_CHECK(v >= lo && v <= hi, "%lld not in bin %u [%lld, %lld]", (long long) v, c, (long long) lo, (long long) hi);
					}
				}
				for (uint32_t b = 0; b + 1 < nall && b < 64; b++)
				{
					int64_t		lo, hi;

					dp_int_bin_range(&d, b, &lo, &hi);
					FUZZ_CHECK(dp_encode_int(&d, lo) == b && dp_encode_int(&d, hi) == b, "bin %u ends encode elsewhere", b);
				}
			}
		}
		free(edges);
		free(all);
	}
	else if (kind == 1)
	{
		double		lower = fin_num(&f),
					upper = fin_num(&f);
		double	   *edges = malloc(sizeof(double) * (nbins + 1));

		if (dp_real_equal_edges(lower, upper, nbins, edges) == 0 &&
			dp_domain_init_real_edges(&d, edges, nbins, has_null) == 0)
		{
#ifdef FUZZ_DEBUG
			fprintf(stderr, "real [%.17g, %.17g] %u bins, null %d:", lower, upper, nbins, has_null);
			for (uint32_t b = 0; b <= nbins && b < 12; b++)
				fprintf(stderr, " %.17g", edges[b]);
			fprintf(stderr, "\n");
#endif
			for (int k = 0; k < 64 && f.n > 0; k++)
			{
				double		x = fin_num(&f);
				dp_code		c;

				if (!has_null && !(x >= edges[0] && x <= edges[nbins]))
					continue;		/* NOT NULL: the caller clamps into the domain */
				c = dp_encode_real(&d, x);

				FUZZ_CHECK(c < dp_domain_ncodes(&d), "real code %u of %u", c, dp_domain_ncodes(&d));
				if (x != x)
					FUZZ_CHECK(c == dp_encode_null(&d), "NaN not in the NULL cell");
				else if (x < edges[0])
					FUZZ_CHECK(c == 0, "%.17g below the bounds in bin %u", x, c);
				else if (x > edges[nbins])
					FUZZ_CHECK(c == nbins - 1, "%.17g above the bounds in bin %u", x, c);
				else
				{
					double		lo, hi;

					FUZZ_CHECK(c < nbins, "%.17g inside the bounds in code %u", x, c);
					dp_real_bin_range(&d, c, &lo, &hi);
					FUZZ_CHECK(x >= lo && (x < hi || (c == nbins - 1 && x <= hi)), "%.17g not in bin %u [%.17g, %.17g)", x, c, lo, hi);
				}
			}
		}
		free(edges);
	}
	else
	{
		uint32_t	n = (uint32_t) fin_range(&f, 1, 64);
		const char **labels = malloc(sizeof(char *) * n);
		uint32_t   *lens = malloc(sizeof(uint32_t) * n);
		int32_t    *slots = malloc(sizeof(int32_t) * dp_catmap_slots_needed(n));

		for (uint32_t i = 0; i < n; i++)
		{
			lens[i] = (uint32_t) fin_range(&f, 0, 6);
			if (lens[i] > f.n)
				lens[i] = (uint32_t) f.n;
			labels[i] = (const char *) f.p;
			f.p += lens[i];
			f.n -= lens[i];
		}
		if (dp_domain_init_categories(&d, labels, lens, n, slots, has_null) == 0)
		{
			char		buf[64];

			for (uint32_t i = 0; i < n; i++)
			{
				dp_code		c = dp_encode_label(&d, labels[i], lens[i]);

				FUZZ_CHECK(c == i, "label %u encodes to %u", i, c);
				(void) dp_code_label(&d, c, buf, sizeof buf);
			}
			for (int k = 0; k < 16 && f.n > 0; k++)
			{
				size_t		len = (size_t) fin_range(&f, 0, 6);

				if (len > f.n)
					len = f.n;
				FUZZ_CHECK(dp_encode_label(&d, (const char *) f.p, len) < dp_domain_ncodes(&d), "label code range");
				f.p += len;
				f.n -= len;
			}
		}
		free(labels);
		free(lens);
		free(slots);
	}
	return 0;
}
