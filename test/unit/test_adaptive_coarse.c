/*
 * test_adaptive_coarse.c - the adaptive method's coarse candidates (dp_adaptive_coarse.c): the
 * runs of an ordered column's merged codes, the shares inside them, a fine marginal summed over the
 * runs (the coarse candidate's counts: those of the rows mapped to runs), a coarse measurement
 * spread back over the fine cells, and a synthesis where the coarse pair is what keeps a relation.
 */
#include <math.h>
#include <string.h>

#include "unit.h"

#include "dp_adaptive.h"
#include "dp_adaptive_cand.h"
#include "dp_codes.h"
#include "dp_env.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "dp_random.h"
#include "dp_uncertainty.h"

/* runs are consecutive, start at 0, step by at most 1; the codes from m on are runs of their own */
static bool
runs_ok(const uint16_t *run, uint32_t size, uint32_t m, uint32_t n)
{
	if (run[0] != 0)
		return false;
	for (uint32_t c = 1; c < size; c++)
		if (run[c] != run[c - 1] + (c >= m ? 1 : 0) && !(c < m && run[c] == run[c - 1] + 1))
			return false;
	return run[size - 1] == n - 1;
}

static void
test_runs(void)
{
	double		mass[82];
	uint16_t	run[82];
	uint32_t	n,
				width[82] = {0},
				maxw = 0,
				minw = 1000;

	/* 80 ordered codes of equal mass and two more (NULL, other): 16 runs of 5, then 2 */
	for (uint32_t c = 0; c < 82; c++)
		mass[c] = c < 80 ? 100 : 7;
	n = dpa_coarse_runs(mass, 82, 80, 16, run);
	for (uint32_t c = 0; c < 80; c++)
		width[run[c]]++;
	for (uint32_t q = 0; q < 16; q++)
	{
		maxw = width[q] > maxw ? width[q] : maxw;
		minw = width[q] < minw ? width[q] : minw;
	}
	unit_check(n == 18 && runs_ok(run, 82, 80, n) && minw == 5 && maxw == 5 && run[80] == 16 && run[81] == 17,
			   "80 codes of equal mass: 16 runs of 5 codes (%u runs, widths %u-%u), NULL and other their own", n,
			   minw, maxw);

	/* a heap of half the mass at code 40: a run of its own, the rest about equal */
	for (uint32_t c = 0; c < 80; c++)
		mass[c] = c == 40 ? 7900 : 100;
	n = dpa_coarse_runs(mass, 80, 80, 16, run);
	unit_check(runs_ok(run, 80, 80, n) && run[39] != run[40] && run[41] != run[40] && n <= 16,
			   "a heap of half the mass is a run of its own (%u runs)", n);

	/* noise below zero counts as no mass; a released total of zero: equal widths */
	for (uint32_t c = 0; c < 80; c++)
		mass[c] = c % 2 ? -50 : 100;
	n = dpa_coarse_runs(mass, 80, 80, 16, run);
	unit_check(runs_ok(run, 80, 80, n) && n == 16, "negative released counts weigh nothing (%u runs)", n);
	for (uint32_t c = 0; c < 80; c++)
		mass[c] = 0;
	n = dpa_coarse_runs(mass, 80, 80, 16, run);
	unit_check(runs_ok(run, 80, 80, n) && n == 16 && run[4] == 0 && run[5] == 1,
			   "no released mass: 16 runs of equal width (%u)", n);

	/* as many codes as runs or fewer: every code its own run */
	n = dpa_coarse_runs(mass, 12, 10, 16, run);
	unit_check(n == 12 && run[0] == 0 && run[11] == 11, "10 ordered codes and 16 runs asked: no run joins codes");
}

static void
test_shares(void)
{
	double		mass[6] = {10, 30, -5, 0, 0, 4},
				share[6];
	uint16_t	run[6] = {0, 0, 0, 1, 1, 2};
	int			rc;

	memset(share, 0, sizeof(share));
	rc = dpa_coarse_shares(mass, 6, run, 3, share);
	unit_check(rc == 0 &&
			   fabs(share[0] - 0.25) < 1e-12 && fabs(share[1] - 0.75) < 1e-12 && share[2] == 0 &&
			   share[3] == 0.5 && share[4] == 0.5 && share[5] == 1,
			   "shares: in proportion to the positive released counts, evenly in a run without mass "
			   "(%.2f %.2f %.2f | %.2f %.2f | %.2f)", share[0], share[1], share[2], share[3], share[4], share[5]);
}

/*
 * A fine pair and triple summed over the runs equal the marginals of the rows mapped to runs, and a
 * coarse marginal spread over the fine cells by the shares keeps every run's total.
 */
static void
test_sum_expand(void)
{
	enum {N = 5000, A = 30, B = 4, C = 25};
	uint32_t	sizes[3] = {A, B, C};
	uint16_t	runa[A],
				runc[C],
			   *runs[3] = {runa, NULL, runc};
	double		massa[A],
				massc[C],
				sharea[A],
				sharec[C],
			   *shares[3] = {sharea, NULL, sharec};
	uint32_t	csize[3];
	Coarse		co = {3, runs, csize, shares};
	Cand		pair = {2, {0, 1, 0}, A * B, 0, -1, 0, false, 0},
				pair2 = {2, {0, 2, 0}, A * C, 0, -1, 0, false, 0},
				triple = {3, {0, 1, 2}, A * B * C, 0, -1, 0, false, 0};
	static uint32_t fine[A * B * C],
				coarse[A * B * C],
				direct[A * B * C];
	static double fd[A * B * C],
				cd[A * B * C],
				back[A * B * C];
	uint16_t	rows[N][3];
	dp_prng		rng;
	bool		same = true,
				kept = true;
	double		tot = 0;

	dp_prng_seed(&rng, 5);
	for (uint32_t i = 0; i < N; i++)
	{
		rows[i][0] = (uint16_t) (dp_prng_below(&rng, A / 2) + dp_prng_below(&rng, A / 2 + 1));
		rows[i][1] = (uint16_t) dp_prng_below(&rng, B);
		rows[i][2] = (uint16_t) dp_prng_below(&rng, C);
	}
	memset(massa, 0, sizeof(massa));
	memset(massc, 0, sizeof(massc));
	for (uint32_t i = 0; i < N; i++)
	{
		massa[rows[i][0]]++;
		massc[rows[i][2]]++;
	}
	/* the last code of each is a NULL cell after the ordered ones */
	csize[0] = dpa_coarse_runs(massa, A, A - 1, 8, runa);
	csize[1] = B;
	csize[2] = dpa_coarse_runs(massc, C, C - 1, 6, runc);
	dpa_coarse_shares(massa, A, runa, csize[0], sharea);
	dpa_coarse_shares(massc, C, runc, csize[2], sharec);

	/* the pair (a, b), the pair (a, c) and the triple */
	for (int w = 0; w < 3; w++)
	{
		const Cand *f = w == 0 ? &pair : w == 1 ? &pair2 : &triple;
		uint64_t	ncoarse = 1;

		memset(fine, 0, sizeof(fine));
		memset(direct, 0, sizeof(direct));
		for (uint32_t k = 0; k < f->nattrs; k++)
			ncoarse *= csize[f->attrs[k]];
		for (uint32_t i = 0; i < N; i++)
		{
			uint64_t	q = 0,
						r = 0;

			for (uint32_t k = 0; k < f->nattrs; k++)
			{
				uint32_t	a = f->attrs[k];

				q = q * sizes[a] + rows[i][a];
				r = r * csize[a] + (runs[a] ? runs[a][rows[i][a]] : rows[i][a]);
			}
			fine[q]++;
			direct[r]++;
		}
		dpa_coarse_sum_u32(&co, f, sizes, fine, coarse);
		for (uint64_t q = 0; q < ncoarse; q++)
			same &= coarse[q] == direct[q];
		for (uint64_t q = 0; q < f->cells; q++)
			fd[q] = fine[q];
		dpa_coarse_sum(&co, f, sizes, fd, cd);
		for (uint64_t q = 0; q < ncoarse; q++)
			same &= cd[q] == (double) direct[q];
		/* spread back and summed again: every run's total as measured */
		for (uint64_t q = 0; q < ncoarse; q++)
			cd[q] = direct[q] + 0.5;	/* a measurement need not be an integer */
		dpa_coarse_expand(&co, f, sizes, cd, back);
		dpa_coarse_sum(&co, f, sizes, back, fd);
		for (uint64_t q = 0; q < ncoarse; q++)
			kept &= fabs(fd[q] - cd[q]) < 1e-9 * (1 + fabs(cd[q]));
		if (w == 2)
			for (uint64_t q = 0; q < f->cells; q++)
				tot += back[q];
	}
	unit_check(csize[0] < A && csize[2] < C && same,
			   "a fine pair or triple summed over the runs (%u and %u of %u and %u codes) is the marginal of the rows mapped to runs",
			   csize[0], csize[2], A, C);
	unit_check(kept && fabs(tot - (N + 0.5 * csize[0] * B * csize[2])) < 1e-6,
			   "a coarse measurement spread over the fine cells by the shares keeps every run's total");
}

/*
 * An ordered column of 80 values (every value 100 rows of 8,000) and a binary column that follows
 * it (1 below value 40, 5% flipped), beside four columns of noise, at rho 0.05: the pair at the
 * values (160 cells) costs too much to be measured well, at the runs (16 or more of them) it is
 * cheap.  The model keeps the 80 codes, and the rows keep the pair's relation: 0.939 of the rows
 * below 40 hold 1 over these 5 seeds, 0.869 with every pair at the values only (the build before
 * the coarse pairs).
 */
static void
test_synthesis(void)
{
	enum {N = 8000, V = 80, D = 6};
	uint32_t	sizes[D] = {V + 1, 2, 5, 5, 5, 5};
	uint32_t	ordered[D] = {V, 0, 0, 0, 0, 0};
	double		worst = 1,
				sum = 0;
	uint32_t	measured = 0,
				seen_min = V,
				flagged = 0,
				wrong_flag = 0,
				covered_by_spread = 0;
	const int	runs = 5;

	for (int s = 0; s < runs; s++)
	{
		dp_codes	t;
		dp_privsyn_params p;
		dp_privsyn_result res;
		dp_adaptive_stats st;
		dp_prng		rng;
		uint64_t	hit = 0,
					low = 0;
		uint32_t	seen = 0;
		uint8_t		used[V + 1] = {0};
		int			rc;

		dp_prng_seed(&rng, 100 + s);
		dp_codes_init(&t, D, N);
		for (uint32_t i = 0; i < N; i++)
		{
			uint16_t	row[D];

			row[0] = (uint16_t) (i % V);
			row[1] = (uint16_t) ((row[0] < V / 2) ^ (dp_prng_below(&rng, 20) == 0));
			for (uint32_t j = 2; j < D; j++)
				row[j] = (uint16_t) dp_prng_below(&rng, 5);
			dp_codes_append(&t, row);
		}
		dp_privsyn_default_params(&p);
		p.rho = 0.05;
		p.ordered = ordered;
		rc = dp_adaptive_run(&t, sizes, &p, &rng, &res, &st);
		if (rc != 0)
		{
			worst = 0;
			dp_codes_free(&t);
			break;
		}
		measured += st.coarse_measured > 0;
		/* a coarse measurement's fine marginal is marked spread, and no interval comes from it */
		{
			uint32_t	nspread = 0,
						pair[2] = {0, 1};
			int32_t		cover = dp_unc_cover(res.margs, res.nmargs, 2, pair, NULL);

			for (uint32_t k = 0; k < res.nmargs; k++)
				if (res.margs[k].spread)
				{
					nspread++;
					wrong_flag += res.margs[k].nattrs < 2 || res.margs[k].attrs[0] != 0;
				}
			flagged += st.coarse_measured > 0 && nspread > 0;
			covered_by_spread += cover >= 0 && res.margs[cover].spread;
		}
		for (uint64_t i = 0; i < res.synth.nrows; i++)
		{
			uint16_t	a = res.synth.col[0][i];

			if (a <= V && !used[a]++)
				seen++;
			if (a < V / 2)
			{
				low++;
				hit += res.synth.col[1][i] == 1;
			}
		}
		{
			double		f = low ? (double) hit / (double) low : 0;

			worst = f < worst ? f : worst;
			sum += f;
		}
		seen_min = seen < seen_min ? seen : seen_min;
		dp_privsyn_result_free(&res);
		dp_codes_free(&t);
	}
	unit_check(measured == (uint32_t) runs, "a coarse pair is measured in %u of %d calls", measured, runs);
	unit_check(flagged == measured && wrong_flag == 0,
			   "... its fine marginal is marked spread in %u of them, only marginals holding the ordered column (%u others)",
			   flagged, wrong_flag);
	unit_check(covered_by_spread == 0, "... and no interval comes from a spread marginal (%u did)", covered_by_spread);
	unit_check(seen_min >= V - 4, "... the model keeps the values: the rows take %u of 80 at least", seen_min);
	unit_check(worst > 0.88 && sum / runs > 0.91,
			   "... and the rows keep the pair: the binary column is 1 in %.3f of the rows below value 40 at worst "
			   "(mean %.3f, 0.95 real)", worst, sum / runs);
}

/*
 * The coarse pairs only where the rounds bound the model's junction tree (at most 131,072 released
 * rows): the same 80-value ordered column beside a binary one, on 20,000 rows and on 200,000.
 */
static void
test_big_table(void)
{
	uint32_t	sizes[2] = {81, 2},
				ordered[2] = {80, 0},
				cols[2] = {0, 0};
	uint64_t	n[2] = {20000, 200000};

	for (int w = 0; w < 2; w++)
	{
		dp_codes	t;
		dp_privsyn_params p;
		dp_privsyn_result res;
		dp_adaptive_stats st;
		dp_prng		rng;

		dp_prng_seed(&rng, 7);
		dp_codes_init(&t, 2, n[w]);
		for (uint64_t i = 0; i < n[w]; i++)
		{
			uint16_t	row[2];

			row[0] = (uint16_t) (i % 80);
			row[1] = (uint16_t) (row[0] < 40);
			dp_codes_append(&t, row);
		}
		dp_privsyn_default_params(&p);
		p.rho = 0.001;
		p.ordered = ordered;
		p.rows = 1000;
		if (dp_adaptive_run(&t, sizes, &p, &rng, &res, &st) == 0)
		{
			cols[w] = st.coarse_cols + 1;
			dp_privsyn_result_free(&res);
		}
		dp_codes_free(&t);
	}
	unit_check(cols[0] == 2 && cols[1] == 1,
			   "coarse pairs on 20,000 rows (%d column), none on 200,000 (%d), where the rounds bound no tree",
			   (int) cols[0] - 1, (int) cols[1] - 1);
}

/*
 * The same rows on 1 and 3 scoring threads under the same noise: a coarse twin is scored by the
 * thread of its fine one, whatever its index.  24 columns (300 candidates and 23 twins over an
 * estimate of 8,192 rows: past SCORE_THREAD_WORK, so split over threads), one of them ordered with
 * 80 values.
 */
static void
test_threads(void)
{
	enum {N = 10000, D = 24};
	uint32_t	sizes[D],
				ordered[D] = {80};
	dp_codes	t;
	dp_privsyn_result res[2];
	dp_adaptive_stats st[2];
	dp_prng		rng;
	int			rc[2];
	bool		same;

	for (uint32_t j = 0; j < D; j++)
		sizes[j] = j == 0 ? 81 : 3;
	dp_prng_seed(&rng, 11);
	dp_codes_init(&t, D, N);
	for (uint32_t i = 0; i < N; i++)
	{
		uint16_t	row[D];

		row[0] = (uint16_t) (i % 80);
		for (uint32_t j = 1; j < D; j++)
			row[j] = (uint16_t) (j % 2 ? (row[0] * 3 / 80 + dp_prng_below(&rng, 2)) % 3 : dp_prng_below(&rng, 3));
		dp_codes_append(&t, row);
	}
	for (int w = 0; w < 2; w++)
	{
		dp_privsyn_params p;

		dp_set_threads(w == 0 ? 1 : 3);
		dp_random_test_seed(UNIT_TEST_SEED);
		dp_prng_seed(&rng, 12);
		dp_privsyn_default_params(&p);
		p.rho = 0.1;
		p.ordered = ordered;
		rc[w] = dp_adaptive_run(&t, sizes, &p, &rng, &res[w], &st[w]);
	}
	dp_set_threads(1);
	same = rc[0] == 0 && rc[1] == 0 && res[0].synth.nrows == res[1].synth.nrows;
	for (uint32_t c = 0; same && c < D; c++)
		same = memcmp(res[0].synth.col[c], res[1].synth.col[c], sizeof(uint16_t) * res[0].synth.nrows) == 0;
	unit_check(same && st[0].coarse_cands > 0 && st[0].coarse_measured == st[1].coarse_measured,
			   "1 and 3 threads: the same rows under the same noise (%u coarse candidates, %u measured)",
			   rc[0] == 0 ? st[0].coarse_cands : 0, rc[0] == 0 ? st[0].coarse_measured : 0);
	for (int w = 0; w < 2; w++)
		if (rc[w] == 0)
			dp_privsyn_result_free(&res[w]);
	dp_codes_free(&t);
}

int
main(void)
{
	if (dp_random_init() != 0)
	{
		printf("not ok 1 - libsodium\n1..1\n");
		return 1;
	}
	test_runs();
	test_shares();
	test_sum_expand();
	test_synthesis();
	test_big_table();
	test_threads();
	return unit_done();
}
