/* Decoding (dp_decode.c): a value drawn for a bin lies in the bin (and the column's bounds when
 * they meet it), for any int64 range and any finite real range and scale. */
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
		if (fin_range(&f, 0, 1) == 0)
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
