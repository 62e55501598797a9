/* The adaptive method (dp_adaptive.c) on arbitrary small tables: it runs, spends exactly its
 * budget, and writes rows whose codes lie inside each column's size; the model's marginals are
 * one-way ones, pairs and triples of at most DP_ADAPTIVE_TRIPLE_CELLS cells (over merged codes).
 * (The count cap, 8 d triples, cannot bind on 7 columns: test_adaptive's focus test reaches it.) */
#include <math.h>

#include "fuzz_input.h"
#include "dp_adaptive.h"
#include "dp_random.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	ready = 0;
	fin			f = {data, size};
	uint32_t	ncols = (uint32_t) fin_range(&f, 1, 7),
				sizes[7];
	uint64_t	n = (uint64_t) fin_range(&f, 0, 300);
	int			rc;
	dp_prng		rng;
	dp_codes	t;
	dp_privsyn_params p;
	dp_privsyn_result res;
	dp_adaptive_stats st;

	if (!ready)
	{
		if (dp_random_init() != 0)
			abort();
		ready = 1;
	}
	for (uint32_t c = 0; c < ncols; c++)
		sizes[c] = (uint32_t) fin_range(&f, 1, fin_range(&f, 0, 3) == 0 ? 300 : 6);
	if (dp_codes_init(&t, ncols, n) != 0)
		return 0;
	for (uint64_t i = 0; i < n; i++)
	{
		uint16_t	row[7];

		/* a row copies the one before it in some columns: dependencies for the rounds to find */
		for (uint32_t c = 0; c < ncols; c++)
			row[c] = i > 0 && fin_range(&f, 0, 2) != 0 ? t.col[c][i - 1] : (uint16_t) fin_range(&f, 0, sizes[c] - 1);
		dp_codes_append(&t, row);
	}
	dp_privsyn_default_params(&p);
	p.rho = ldexp(1.0, (int) fin_range(&f, -12, 4));
	dp_set_threads((uint32_t) fin_range(&f, 1, 2));
	p.rows = (uint64_t) fin_range(&f, 0, 200);
	p.max_rows = 2000;
	dp_prng_seed(&rng, fin_u64(&f));
	rc = dp_adaptive_run(&t, sizes, &p, &rng, &res, &st);
	FUZZ_CHECK(rc == 0, "dp_adaptive_run failed (%d) on %u columns, %llu rows", rc, ncols, (unsigned long long) n);
	if (rc == 0)
	{
		double		spent = st.rho_oneway + st.rho_select + st.rho_measure;

		FUZZ_CHECK(spent <= p.rho && spent >= p.rho * (1 - 1e-6), "spent %.17g of rho %.17g", spent, p.rho);
		FUZZ_CHECK(st.triples_measured <= st.triples, "%u triples measured of %u", st.triples_measured, st.triples);
		FUZZ_CHECK(res.nmargs >= ncols && res.synth.ncols == ncols, "%u marginals, %u columns", res.nmargs, res.synth.ncols);
		for (uint32_t k = 0; k < res.nmargs; k++)
		{
			FUZZ_CHECK(res.margs[k].nattrs >= 1 && res.margs[k].nattrs <= 3, "a marginal of %u columns", res.margs[k].nattrs);
			FUZZ_CHECK(res.margs[k].nattrs < 3 || res.margs[k].ncells <= DP_ADAPTIVE_TRIPLE_CELLS,
					   "a triple of %llu cells", (unsigned long long) res.margs[k].ncells);
		}
		for (uint32_t c = 0; c < ncols; c++)
			for (uint64_t r = 0; r < res.synth.nrows; r++)
				FUZZ_CHECK(res.synth.col[c][r] < sizes[c], "code %u of column %u (size %u)", res.synth.col[c][r], c, sizes[c]);
		dp_privsyn_result_free(&res);
	}
	dp_codes_free(&t);
	return 0;
}
