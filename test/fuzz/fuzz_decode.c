/* Decoding (dp_decode.c): a value drawn for a bin lies in the bin (and the column's bounds when
 * they meet it), for any int64 range and any finite real range and scale; a shape inside bins
 * (dp_shape_*) is refused or gives parts inside their bin, for any pieces and edges. */
#include <math.h>
#include "fuzz_input.h"
#include "dp_decode.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	dp_prng		rng;

	dp_prng_seed(&rng, fin_u64(&f));
	while (f.n > 0)
	{
		uint64_t	op = fin_range(&f, 0, 2);

		if (op == 2)
		{
			/* a shape: a few edges and pieces from the input, valid or not */
			int64_t		iedges[9];
			double		redges[9],
						pieces[3 * 8];
			uint32_t	nb = (uint32_t) fin_range(&f, 1, 8),
						np = (uint32_t) fin_range(&f, 0, 8);
			bool		integral = fin_range(&f, 0, 1) == 0;
			dp_domain	d;
			dp_shape	s;
			int64_t		e = (int64_t) fin_range(&f, 0, 2000) - 1000;
			double		r = (double) e;

			for (uint32_t i = 0; i <= nb; i++)
			{
				iedges[i] = e;
				redges[i] = r;
				e += (int64_t) fin_range(&f, 1, 50);
				r += fin_range(&f, 0, 1) ? fin_num(&f) : (double) fin_range(&f, 1, 50);
			}
			for (uint32_t i = 0; i < 3 * np; i++)
				pieces[i] = fin_range(&f, 0, 3) == 0 ? fin_num(&f) : (double) ((int64_t) fin_range(&f, 0, 2400) - 1200);
			if (integral ? dp_domain_init_int_edges(&d, iedges, nb, false) != 0
				: dp_domain_init_real_edges(&d, redges, nb, true) != 0)
				continue;
			/* half the time through dp_shape_tidy, whose output must then be accepted when every
			 * piece alone is valid */
			if (fin_range(&f, 0, 1) == 0)
			{
				bool		each_valid = true;

				for (uint32_t i = 0; i < np; i++)
				{
					double		lo = pieces[3 * i],
								hi = pieces[3 * i + 1],
								w = pieces[3 * i + 2];

					each_valid &= isfinite(lo) && isfinite(hi) && isfinite(w) && w >= 0 &&
						(integral ? lo <= hi && lo == floor(lo) && hi == floor(hi) : lo < hi);
				}
				np = dp_shape_tidy(pieces, np, integral);
				if (each_valid)
					FUZZ_CHECK(dp_shape_init(&s, &d, pieces, np) == 0, "tidied pieces refused");
				else if (dp_shape_init(&s, &d, pieces, np) != 0)
					continue;
			}
			else if (dp_shape_init(&s, &d, pieces, np) != 0)
				continue;
			for (uint32_t b = 0; b < nb; b++)
			{
				double		lo,
							hi;

				if (!dp_shape_pick(&s, &rng, b, &lo, &hi))
					continue;
				if (integral)
					FUZZ_CHECK(lo <= hi && lo >= (double) iedges[b] && hi <= (double) (iedges[b + 1] - 1),
							   "shape part [%.17g, %.17g] not in bin [%lld, %lld]", lo, hi,
							   (long long) iedges[b], (long long) (iedges[b + 1] - 1));
				else
					FUZZ_CHECK(lo < hi && lo >= redges[b] && hi <= redges[b + 1],
							   "shape part [%.17g, %.17g) not in bin [%.17g, %.17g]", lo, hi, redges[b], redges[b + 1]);
			}
			dp_shape_free(&s);
		}
		else if (op == 0)
		{
			int64_t		a = (int64_t) fin_u64(&f),
						b = (int64_t) fin_u64(&f),
						lo = a < b ? a : b,
						hi = a < b ? b : a,
						v = dp_decode_int(&rng, lo, hi);

			FUZZ_CHECK(v >= lo && v <= hi, "int %lld not in [%lld, %lld]", (long long) v, (long long) lo, (long long) hi);
		}
		else
		{
			double		a = fin_num(&f),
						b = fin_num(&f),
						lo,
						hi,
						v;
			int			closed = (int) fin_range(&f, 0, 1),
						scale = (int) fin_range(&f, -1, 25);
			double		cl = fin_range(&f, 0, 3) == 0 ? fin_num(&f) : NAN,
						cu = fin_range(&f, 0, 3) == 0 ? fin_num(&f) : NAN;

			if (!isfinite(a) || !isfinite(b))
				continue;
			lo = a < b ? a : b;
			hi = a < b ? b : a;
			v = dp_decode_real(&rng, lo, hi, closed, scale, cl, cu);
			FUZZ_CHECK(isfinite(v), "real not finite for [%.17g, %.17g] scale %d", lo, hi, scale);
			if (scale < 0 && !(cl == cl) && !(cu == cu))
				FUZZ_CHECK(v >= lo && (v < hi || closed || lo == hi || v <= hi),
						   "%.17g not in [%.17g, %.17g%c", v, lo, hi, closed ? ']' : ')');
		}
	}
	return 0;
}
