/* GUM (dp_gum.c) on arbitrary small targets: it runs, writes n rows with codes inside each
 * column's size, and its incremental, lazy and automatic counting give the same rows. */
#include "fuzz_input.h"
#include "dp_gum.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	uint32_t	ncols = (uint32_t) fin_range(&f, 1, 6),
				sizes[6],
				nt = 0;
	uint64_t	n = (uint64_t) fin_range(&f, 0, 400);
	dp_marg		tg[16];
	dp_codes	out[3];
	uint64_t	seed = fin_u64(&f);
	int			rc[3];

	for (uint32_t c = 0; c < ncols; c++)
		sizes[c] = (uint32_t) fin_range(&f, 1, fin_range(&f, 0, 3) == 0 ? 300 : 5);
	/* every column has a 1-way target, then some 2- and 3-way ones */
	for (uint32_t c = 0; c < ncols && nt < 16; c++)
		if (dp_marg_init(&tg[nt], 1, &c, sizes) == 0)
			nt++;
	while (nt < 16 && f.n > 0 && fin_range(&f, 0, 3) != 0)
	{
		uint32_t	attrs[3],
					na = 0;

		for (uint32_t c = 0; c < ncols && na < 3; c++)
			if (fin_range(&f, 0, 1))
				attrs[na++] = c;
		if (na >= 2 && dp_marg_init(&tg[nt], na, attrs, sizes) == 0)
			nt++;
	}
	for (uint32_t i = 0; i < nt; i++)
		for (uint64_t k = 0; k < tg[i].ncells; k++)
			tg[i].cells[k] = (double) fin_range(&f, -5, 50);
	for (int mode = 0; mode < 3; mode++)
	{
		dp_gum_params p;
		dp_prng		rng;

		dp_gum_default_params(&p);
		p.iterations = 6;
		dp_set_threads((uint32_t) (1 + mode % 2));
		p.counting = mode == 0 ? DP_GUM_COUNT_INCREMENTAL : mode == 1 ? DP_GUM_COUNT_LAZY : DP_GUM_COUNT_AUTO;
		dp_prng_seed(&rng, seed);
		dp_codes_init(&out[mode], ncols, 0);
		rc[mode] = dp_gum_run(tg, nt, ncols, sizes, n, &p, &rng, &out[mode]);
	}
	FUZZ_CHECK(rc[0] == rc[1] && rc[1] == rc[2], "modes disagree on the result %d %d %d", rc[0], rc[1], rc[2]);
	if (rc[0] == 0)
		for (int mode = 0; mode < 3; mode++)
		{
			FUZZ_CHECK(out[mode].nrows == n, "%llu rows, not %llu", (unsigned long long) out[mode].nrows, (unsigned long long) n);
			for (uint32_t c = 0; c < ncols; c++)
				for (uint64_t r = 0; r < n; r++)
				{
					FUZZ_CHECK(out[mode].col[c][r] < sizes[c], "code %u of column %u (size %u)", out[mode].col[c][r], c, sizes[c]);
					FUZZ_CHECK(out[mode].col[c][r] == out[0].col[c][r], "counting mode %d gives other rows", mode);
				}
		}
	for (int mode = 0; mode < 3; mode++)
		dp_codes_free(&out[mode]);
	for (uint32_t i = 0; i < nt; i++)
		dp_marg_free(&tg[i]);
	return 0;
}
