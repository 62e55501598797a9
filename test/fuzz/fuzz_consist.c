/* Consistency (dp_consist.c) on arbitrary small marginals with arbitrary noisy cells: every cell
 * ends >= 0 and every marginal sums to the common total it returns; Norm-Sub alone likewise. */
#include <math.h>
#include "fuzz_input.h"
#include "dp_consist.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	uint32_t	ncols = (uint32_t) fin_range(&f, 1, 5),
				sizes[5],
				nm = (uint32_t) fin_range(&f, 1, 6);
	dp_marg		m[6];
	uint32_t	made = 0;
	double		scale = 1;		/* the largest input magnitude: rounding is relative to it */

	for (uint32_t c = 0; c < ncols; c++)
		sizes[c] = (uint32_t) fin_range(&f, 1, 6);
	for (uint32_t i = 0; i < nm; i++)
	{
		uint32_t	attrs[3],
					na = 0;

		for (uint32_t c = 0; c < ncols && na < 3; c++)
			if (fin_range(&f, 0, 1))
				attrs[na++] = c;
		if (na == 0)
			attrs[na++] = (uint32_t) fin_range(&f, 0, ncols - 1);
		if (dp_marg_init(&m[made], na, attrs, sizes) != 0)
			continue;
		for (uint64_t k = 0; k < m[made].ncells; k++)
		{
			m[made].cells[k] = fin_range(&f, 0, 15) == 0 ? fin_double(&f) : fin_num(&f);
			if (isfinite(m[made].cells[k]) && fabs(m[made].cells[k]) > scale)
				scale = fabs(m[made].cells[k]);
		}
		m[made].rho = fin_range(&f, 0, 7) == 0 ? fin_double(&f) : (double) fin_range(&f, 1, 1000) / 100.0;
		made++;
	}
	if (made > 0)
	{
		double		total;
#ifdef FUZZ_DEBUG
		for (uint32_t i = 0; i < made; i++)
		{
			fprintf(stderr, "marg %u rho %.17g attrs %u:", i, m[i].rho, m[i].nattrs);
			for (uint64_t k = 0; k < m[i].ncells; k++)
				fprintf(stderr, " %.6g", m[i].cells[k]);
			fprintf(stderr, "\n");
		}
#endif
		total = dp_consist(m, made, (int) fin_range(&f, 0, 50));

		if (total >= 0)
			for (uint32_t i = 0; i < made; i++)
			{
				double		s = 0;

				for (uint64_t k = 0; k < m[i].ncells; k++)
				{
					FUZZ_CHECK(m[i].cells[k] >= 0 && isfinite(m[i].cells[k]), "cell %g", m[i].cells[k]);
					s += m[i].cells[k];
				}
				FUZZ_CHECK(fabs(s - total) <= 1e-9 * (scale + fabs(total)) * (double) (m[i].ncells + 1),
						   "marginal %u sums to %.17g, not %.17g", i, s, total);
			}
		else
		{
			/* malformed input (a cell or rho not finite): untouched; Norm-Sub must still cope */
			double		t = fin_num(&f);

			for (uint64_t k = 0; k < m[0].ncells; k++)
				if (!isfinite(m[0].cells[k]))
					m[0].cells[k] = 0;
			dp_normsub(&m[0], t);
			for (uint64_t k = 0; k < m[0].ncells; k++)
				FUZZ_CHECK(m[0].cells[k] >= 0, "normsub cell %g", m[0].cells[k]);
		}
	}
	for (uint32_t i = 0; i < made; i++)
		dp_marg_free(&m[i]);
	return 0;
}
