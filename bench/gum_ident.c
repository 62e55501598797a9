/*
 * gum_ident.c - fingerprints of the rows dp_gum_run produces for fixed seeds, to show that a
 * change of GUM's code leaves its output byte for byte as it was (a refactor) or to see what a
 * behaviour change moves.  No server, no noise: the targets are exact marginals of the bundled
 * Adult table (test/unit/adult_data.h), perturbed by a seeded generator so that GUM has work to
 * do, and every configuration runs dp_gum_run with its own fixed seed.  One line per
 * configuration: its name, the rows' FNV-1a 64 hash (every column's codes, row by row) and the
 * return code; run it before and after a change and diff the outputs.
 *
 * Configurations: Adult's 15 columns (peeled leaves, a core with 2- and 3-way targets) at 32,561
 * and 300,000 rows, 1 and 2 threads, each counting mode, warm starts of fewer and of more rows
 * than asked for; Adult's columns three times side by side (45 columns, one component of more
 * than GUM_GROUP_MIN_COLS columns: the grouped layout) in both layouts; and dp_privsyn_sample's
 * coarse-to-fine levels are not exercised here (they call dp_gum_run, which these cover).
 *
 * Usage (from the checkout's top): make bench/bin/gum_ident && bench/bin/gum_ident > before.txt
 */
#include "dp_gum.h"
#include "dp_prng.h"
#include "../test/unit/adult_data.h"
#include "rows_hash.h"


/* an exact marginal of t over attrs, its cells scaled by a seeded factor in [0.8, 1.2] */
static void
noisy_marg(dp_marg *m, const dp_codes *t, uint32_t nattrs, const uint32_t *attrs,
		   const uint32_t *sizes, dp_prng *rng)
{
	if (dp_marg_init(m, nattrs, attrs, sizes) != 0)
		exit(2);
	dp_marg_count(m, t);
	for (uint64_t k = 0; k < m->ncells; k++)
		m->cells[k] *= 0.8 + 0.4 * dp_prng_unit(rng);
}

static void
run(const char *name, const dp_marg *tg, uint32_t nt, uint32_t ncols, const uint32_t *sizes,
	uint64_t n, const dp_gum_params *p, uint64_t seed)
{
	dp_prng		rng;
	dp_codes	out;
	int			rc;

	dp_prng_seed(&rng, seed);
	dp_codes_init(&out, ncols, 0);
	rc = dp_gum_run(tg, nt, ncols, sizes, n, p, &rng, &out);
	printf("%-28s %016llx rc %d rows %llu\n", name, (unsigned long long) fnv_rows(&out), rc,
		   (unsigned long long) out.nrows);
	fflush(stdout);
	dp_codes_free(&out);
}

/* targets over t: pairs (j, j + 1) and (j, j + 2) of the first `core` columns, one triple, the
 * last columns as leaves (j, 0), and every one-way marginal */
static uint32_t
make_targets(dp_marg *tg, const dp_codes *t, const uint32_t *sizes, uint32_t ncols, uint32_t core,
			 uint64_t seed)
{
	dp_prng		rng;
	uint32_t	nt = 0;

	dp_prng_seed(&rng, seed);
	for (uint32_t j = 0; j < core; j++)
		for (uint32_t d = 1; d <= 2; d++)
			if (j + d < core)
			{
				uint32_t	at[2] = {j, j + d};

				noisy_marg(&tg[nt++], t, 2, at, sizes, &rng);
			}
	{
		uint32_t	at[3] = {0, 3, 5};

		noisy_marg(&tg[nt++], t, 3, at, sizes, &rng);
	}
	for (uint32_t j = core; j < ncols; j++)
	{
		uint32_t	at[2] = {j % ADULT_COLS == 0 ? 1 : 0, j};

		noisy_marg(&tg[nt++], t, 2, at, sizes, &rng);
	}
	for (uint32_t j = 0; j < ncols; j++)
		noisy_marg(&tg[nt++], t, 1, &j, sizes, &rng);
	return nt;
}

int
main(int argc, char **argv)
{
	acol	   *cols = calloc(ADULT_COLS, sizeof(acol));
	uint32_t	sizes[ADULT_COLS],
				wsizes[3 * ADULT_COLS];
	dp_codes	src,
				wide,
				warm_small,
				warm_big;
	dp_marg    *tg = calloc(1024, sizeof(dp_marg)),
			   *wtg = calloc(1024, sizeof(dp_marg));
	uint32_t	nt,
				nwt;
	uint16_t	row[3 * ADULT_COLS];
	dp_gum_params p;
	dp_prng		rng;
	char		name[64];

	(void) argc;
	argv0 = argv[0];
	if (!load_adult(&src, cols, sizes, UINT64_MAX))
	{
		fprintf(stderr, "run from the checkout's top: data/adult not found\n");
		return 2;
	}
	nt = make_targets(tg, &src, sizes, ADULT_COLS, 12, 11);

	/* Adult: sizes, threads, counting modes */
	for (int n = 0; n < 2; n++)
		for (uint32_t threads = 1; threads <= 2; threads++)
			for (int counting = 0; counting <= 2; counting++)
			{
				uint64_t	rows = n == 0 ? src.nrows : 300000;

				dp_gum_default_params(&p);
				p.iterations = 30;
				dp_set_threads(threads);
				p.counting = counting;
				snprintf(name, sizeof(name), "adult n%llu t%u c%d", (unsigned long long) rows, threads, counting);
				run(name, tg, nt, ADULT_COLS, sizes, rows, &p, 100 + n);
			}
	/* no early stop, 60 iterations: the alpha decay and the best table */
	dp_gum_default_params(&p);
	p.iterations = 60;
	p.tolerance = -1;
	run("adult n32561 full60", tg, nt, ADULT_COLS, sizes, src.nrows, &p, 7);

	/* warm starts: fewer rows (copies) and more rows (a draw) than asked for */
	dp_codes_init(&warm_small, ADULT_COLS, 0);
	dp_codes_init(&warm_big, ADULT_COLS, 0);
	dp_gum_default_params(&p);
	p.iterations = 10;
	dp_prng_seed(&rng, 3);
	if (dp_gum_run(tg, nt, ADULT_COLS, sizes, 8192, &p, &rng, &warm_small) != 0 ||
		dp_gum_run(tg, nt, ADULT_COLS, sizes, 50000, &p, &rng, &warm_big) != 0)
		return 1;
	for (uint32_t threads = 1; threads <= 2; threads++)
	{
		dp_gum_default_params(&p);
		p.iterations = 5;
		dp_set_threads(threads);
		p.start = &warm_small;
		snprintf(name, sizeof(name), "adult warm<n t%u", threads);
		run(name, tg, nt, ADULT_COLS, sizes, 131072, &p, 21);
		p.start = &warm_big;
		snprintf(name, sizeof(name), "adult warm>n t%u", threads);
		run(name, tg, nt, ADULT_COLS, sizes, 20000, &p, 22);
		p.iterations = 0;
		snprintf(name, sizeof(name), "adult warm>n iters0 t%u", threads);
		run(name, tg, nt, ADULT_COLS, sizes, 20000, &p, 23);
	}

	/* wide: Adult three times side by side, rows shifted, one component of 36 core columns */
	for (uint32_t j = 0; j < 3 * ADULT_COLS; j++)
		wsizes[j] = sizes[j % ADULT_COLS];
	dp_codes_init(&wide, 3 * ADULT_COLS, src.nrows);
	for (uint64_t i = 0; i < src.nrows; i++)
	{
		for (uint32_t j = 0; j < 3 * ADULT_COLS; j++)
			row[j] = src.col[j % ADULT_COLS][(i + 7 * (j / ADULT_COLS)) % src.nrows];
		dp_codes_append(&wide, row);
	}
	nwt = make_targets(wtg, &wide, wsizes, 3 * ADULT_COLS, 36, 12);
	for (int layout = 0; layout <= 1; layout++)
		for (uint32_t threads = 1; threads <= 2; threads++)
			for (int counting = 0; counting <= 2; counting++)
			{
				dp_gum_default_params(&p);
				p.iterations = 8;
				dp_set_threads(threads);
				p.counting = counting;
				p.layout = layout;
				snprintf(name, sizeof(name), "wide l%d t%u c%d", layout, threads, counting);
				run(name, wtg, nwt, 3 * ADULT_COLS, wsizes, 100000, &p, 200 + layout);
			}
	return 0;
}
