/* The maximum-entropy fits and draws (dp_maxent.c over the whole joint table, dp_jtree.c on a
 * junction tree) on arbitrary marginals: any attribute sets of 1-3 of up to 7 columns, cells
 * anything (negative, zero, NaN, huge), any cell bound.  The tree is a junction tree holding every
 * marginal; the fits return a documented code; a fitted distribution draws exactly n rows with
 * codes inside the sizes, and each root-clique (or joint) cell gets floor or ceil of n P. */
#include <math.h>

#include "fuzz_input.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "../unit/unit_jtree.h"

/* every cell of table P (cells of it) drawn floor or ceil of n P / sum(P) times, by counts cnt */
static void
check_counts(const double *P, const uint64_t *cnt, uint64_t cells, uint64_t n)
{
	double		sum = 0;

	for (uint64_t c = 0; c < cells; c++)
		sum += P[c] > 0 ? P[c] : 0;
	for (uint64_t c = 0; c < cells && sum > 0; c++)
	{
		double		e = (P[c] > 0 ? P[c] : 0) / sum * (double) n;

		FUZZ_CHECK((double) cnt[c] >= floor(e - 1e-6) && (double) cnt[c] <= ceil(e + 1e-6),
				   "cell %llu: %llu rows for n P = %g", (unsigned long long) c, (unsigned long long) cnt[c], e);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	uint32_t	d = (uint32_t) fin_range(&f, 1, 7),
				nm = (uint32_t) fin_range(&f, 1, 8),
				sizes[7];
	uint64_t	n = (uint64_t) fin_range(&f, 0, 300),
				max_cells = (uint64_t) fin_range(&f, 1, 5000);
	dp_marg		m[8];
	dp_jtree	t;
	dp_prng		rng;
	int			rc;

	for (uint32_t j = 0; j < d; j++)
		sizes[j] = (uint32_t) fin_range(&f, 1, 5);
	for (uint32_t k = 0; k < nm; k++)
	{
		uint32_t	at[3],
					na = (uint32_t) fin_range(&f, 1, d < 3 ? d : 3);

		for (uint32_t a = 0; a < na; a++)
			at[a] = (uint32_t) fin_range(&f, 0, d - 1);
		if (dp_marg_init(&m[k], na, at, sizes) != 0)
		{
			/* a repeated attribute: one column instead */
			FUZZ_CHECK(dp_marg_init(&m[k], 1, at, sizes) == 0, "a one-way marginal");
		}
		for (uint64_t q = 0; q < m[k].ncells; q++)
			m[k].cells[q] = fin_range(&f, 0, 3) == 0 ? fin_num(&f) : (double) fin_range(&f, 0, 50);
	}
	dp_prng_seed(&rng, fin_u64(&f));

	rc = dp_jtree_build(&t, m, nm, d, sizes, max_cells);
	FUZZ_CHECK(rc == 0 || rc == 1, "dp_jtree_build: %d", rc);
	if (rc == 0)
	{
		FUZZ_CHECK(jtree_ok(&t, m, nm), "not a junction tree holding every marginal");
		FUZZ_CHECK(t.cells <= max_cells, "%llu cells over the bound %llu", (unsigned long long) t.cells,
				   (unsigned long long) max_cells);
		rc = dp_jtree_fit(&t, m, nm, (uint32_t) fin_range(&f, 1, 30), 1e-9, NULL, NULL);
		FUZZ_CHECK(rc >= -2 && rc != -1, "dp_jtree_fit: %d", rc);
		if (rc > 0)
		{
			dp_codes	out;
			uint64_t   *cnt = calloc(t.cl[0].ncells, sizeof(uint64_t));

			dp_codes_init(&out, d, n);
			FUZZ_CHECK(dp_jtree_draw(&t, n, &rng, &out, NULL, NULL) == 0 && out.nrows == n, "a draw of %llu rows",
					   (unsigned long long) n);
			for (uint64_t r = 0; r < n; r++)
			{
				uint64_t	idx = 0;

				for (uint32_t j = 0; j < d; j++)
					FUZZ_CHECK(out.col[j][r] < sizes[j], "code %u of column %u", out.col[j][r], j);
				for (uint32_t a = 0; a < t.cl[0].nattrs; a++)
					idx = idx * t.cl[0].sizes[a] + out.col[t.cl[0].attrs[a]][r];
				cnt[idx]++;
			}
			check_counts(t.cl[0].P, cnt, t.cl[0].ncells, n);
			free(cnt);
			dp_codes_free(&out);
		}
		dp_jtree_free(&t);
	}

	{
		uint64_t	cells = dp_maxent_cells(d, sizes);
		double	   *P = malloc(sizeof(double) * cells);

		rc = dp_maxent_fit(m, nm, d, sizes, P, (uint32_t) fin_range(&f, 1, 30), 1e-9, NULL, NULL);
		FUZZ_CHECK(rc >= -2 && rc != -1, "dp_maxent_fit: %d", rc);
		if (rc > 0)
		{
			dp_codes	out;
			uint64_t   *cnt = calloc(cells, sizeof(uint64_t));

			dp_codes_init(&out, d, n);
			FUZZ_CHECK(dp_maxent_draw(P, d, sizes, n, &rng, &out, NULL, NULL) == 0 && out.nrows == n,
					   "a draw of %llu rows", (unsigned long long) n);
			for (uint64_t r = 0; r < n; r++)
			{
				uint64_t	idx = 0;

				for (uint32_t j = 0; j < d; j++)
					idx = idx * sizes[j] + out.col[j][r];
				cnt[idx]++;
			}
			check_counts(P, cnt, cells, n);
			free(cnt);
			dp_codes_free(&out);
		}
		free(P);
	}
	for (uint32_t k = 0; k < nm; k++)
		dp_marg_free(&m[k]);
	return 0;
}
