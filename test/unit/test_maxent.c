/*
 * test_maxent.c - unit tests of src/core/dp_maxent.c (the maximum-entropy distribution of a
 * model's marginals over a small joint domain, and rows drawn from it) and of its use by the
 * adaptive method (dp_adaptive.h, step 5).
 *
 *  - dp_maxent_cells and dp_maxent_sweeps on hand-worked values;
 *  - the fit reproduces every marginal it is given (exact marginals of random tables, a cycle of
 *    pairs included, where no closed form exists);
 *  - it is the maximum-entropy one: for a chain (A,B), (B,C) it is P(a,b) P(b,c) / P(b) (A and C
 *    independent given B, although they are not in the table the marginals came from), and its
 *    entropy is at least that table's;
 *  - the draw: every cell gets floor or ceil of n P, n in all, with mean n P over many draws, in
 *    random order, with 2 and 3 columns and empty cells at the end;
 *  - marginals whose supports leave no cell give no distribution (0), not a false convergence;
 *  - errors and cancellation;
 *  - the adaptive method on a small domain draws its rows so (the counts of every cell against a
 *    fit of the model's marginals made apart), and not on a large one;
 *  - the blocked walk of dp_odo.h (dp_odo_runs) projects and scales as the plain odometer, and
 *    scales by one marginal and projects onto another in one pass as in two;
 *  - timing of a sweep over 2^20 cells (diagnostic).
 *
 * Fixed-seed dp_prng tables: tests of post-processing, not of privacy.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dp_adaptive.h"
#include "dp_codes.h"
#include "dp_marg.h"
#include "dp_maxent.h"
#include "dp_odo.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_jtree.h"

/* The exact marginal of t over attrs (increasing). */
static void
exact(dp_marg *m, const dp_codes *t, uint32_t nattrs, const uint32_t *attrs, const uint32_t *sizes)
{
	dp_marg_init(m, nattrs, attrs, sizes);
	dp_marg_count(m, t);
}

/* L1 distance between P's marginal over m's attributes and m, both as distributions. */
static double
fit_l1(const double *P, uint32_t d, const uint32_t *sizes, const dp_marg *m)
{
	uint64_t	ncells = dp_maxent_cells(d, sizes);
	double	   *cur = calloc(m->ncells, sizeof(double));
	double		tot = 0,
				l1 = 0;
	uint32_t	code[16] = {0};

	for (uint64_t q = 0; q < m->ncells; q++)
		tot += m->cells[q];
	for (uint64_t i = 0; i < ncells; i++)
	{
		uint64_t	idx = 0;

		for (uint32_t k = 0; k < m->nattrs; k++)
			idx += m->strides[k] * code[m->attrs[k]];
		cur[idx] += P[i];
		for (uint32_t j = d; j-- > 0;)
		{
			if (++code[j] < sizes[j])
				break;
			code[j] = 0;
		}
	}
	for (uint64_t q = 0; q < m->ncells; q++)
		l1 += fabs(cur[q] - m->cells[q] / tot);
	free(cur);
	return l1;
}

static void
test_cells(void)
{
	uint32_t	a[3] = {3, 4, 5};
	uint32_t	z[2] = {3, 0};
	uint32_t	big[5] = {65535, 65535, 65535, 65535, 65535};

	unit_check(dp_maxent_cells(3, a) == 60, "cells of 3 x 4 x 5: 60");
	unit_check(dp_maxent_cells(2, z) == 0, "a column of no code: 0 cells");
	unit_check(dp_maxent_cells(5, big) == UINT64_MAX, "65535^5 cells: too many (UINT64_MAX)");
	unit_check(dp_maxent_sweeps(60, 10) == DP_MAXENT_MAX_SWEEPS, "a small fit may run %u sweeps",
			   DP_MAXENT_MAX_SWEEPS);
	unit_check(dp_maxent_sweeps((uint64_t) 1 << 20, 1u << 12) == DP_MAXENT_MIN_SWEEPS,
			   "a huge fit still runs %u sweeps", DP_MAXENT_MIN_SWEEPS);
	unit_check(dp_maxent_sweeps((uint64_t) 1 << 20, 16) == 16, "2^20 cells, 16 marginals: 2^28 / 2^24 = 16 sweeps (%u)",
			   dp_maxent_sweeps((uint64_t) 1 << 20, 16));
}

static void
test_fit_reproduces(void)
{
	uint32_t	sizes[4] = {3, 4, 2, 5};
	/* every one-way marginal, a cycle of pairs 0-1-2-3-0, and a triple */
	uint32_t	sets[9][3] = {{0}, {1}, {2}, {3}, {0, 1}, {1, 2}, {2, 3}, {0, 3}, {0, 1, 2}};
	uint32_t	nat[9] = {1, 1, 1, 1, 2, 2, 2, 2, 3};
	double		worst = 0;

	for (int seed = 0; seed < 5; seed++)
	{
		dp_prng		rng;
		dp_codes	t;
		dp_marg		m[9];
		double		P[120];
		uint32_t	nm = seed == 4 ? 9 : 8;
		int			sw;

		dp_prng_seed(&rng, 100 + seed);
		random_table(&t, 4, sizes, 2000, &rng);
		for (uint32_t k = 0; k < nm; k++)
			exact(&m[k], &t, nat[k], sets[k], sizes);
		sw = dp_maxent_fit(m, nm, 4, sizes, P, DP_MAXENT_MAX_SWEEPS, DP_MAXENT_TOL, NULL, NULL);
		for (uint32_t k = 0; k < nm; k++)
			worst = fmax(worst, fit_l1(P, 4, sizes, &m[k]));
		unit_check(sw >= 1 && sw < (int) DP_MAXENT_MAX_SWEEPS, "seed %d: converged in %d sweeps", seed, sw);
		for (uint32_t k = 0; k < nm; k++)
			dp_marg_free(&m[k]);
		dp_codes_free(&t);
	}
	unit_check(worst < 1e-8, "the fit reproduces every marginal (a cycle of pairs, a triple): worst L1 %.2e",
			   worst);
}

static void
test_maxent_property(void)
{
	uint32_t	sizes[3] = {3, 4, 3};
	uint32_t	ab[2] = {0, 1},
				bc[2] = {1, 2},
				abc[3] = {0, 1, 2};
	dp_prng		rng;
	dp_codes	t;
	dp_marg		m[2],
				full;
	double		P[36],
				worst = 0,
				h_fit = 0,
				h_true = 0,
				dep = 0;

	dp_prng_seed(&rng, 7);
	random_table(&t, 3, sizes, 5000, &rng);	/* column 2 depends on column 0 too */
	exact(&m[0], &t, 2, ab, sizes);
	exact(&m[1], &t, 2, bc, sizes);
	exact(&full, &t, 3, abc, sizes);
	unit_check(dp_maxent_fit(m, 2, 3, sizes, P, DP_MAXENT_MAX_SWEEPS, DP_MAXENT_TOL, NULL, NULL) >= 1,
			   "chain (A,B), (B,C): fitted");
	for (uint32_t a = 0; a < 3; a++)
		for (uint32_t b = 0; b < 4; b++)
			for (uint32_t c = 0; c < 3; c++)
			{
				double		pab = m[0].cells[a * 4 + b] / 5000,
							pbc = m[1].cells[b * 3 + c] / 5000,
							pb = 0,
							pt = full.cells[(a * 4 + b) * 3 + c] / 5000,
							pf = P[(a * 4 + b) * 3 + c];

				for (uint32_t c2 = 0; c2 < 3; c2++)
					pb += m[1].cells[b * 3 + c2] / 5000;
				worst = fmax(worst, fabs(pf - (pb > 0 ? pab * pbc / pb : 0)));
				dep += fabs(pt - (pb > 0 ? pab * pbc / pb : 0));
				if (pf > 0)
					h_fit -= pf * log(pf);
				if (pt > 0)
					h_true -= pt * log(pt);
			}
	unit_check(dep > 0.05, "the table itself is not A-C independent given B (L1 %.3f from it)", dep);
	unit_check(worst < 1e-9, "the fit is P(a,b) P(b,c) / P(b): worst cell off by %.2e", worst);
	unit_check(h_fit >= h_true - 1e-12, "its entropy %.6f is at least the table's %.6f", h_fit, h_true);
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);
	dp_marg_free(&full);
	dp_codes_free(&t);
}

static void
test_draw(void)
{
	uint32_t	sizes[2] = {6, 10};
	double		P[60],
				sum = 0,
				mean[60] = {0},
				worst_mean = 0;
	uint64_t	n = 1000;
	int			draws = 2000;
	bool		bounds = true,
				total = true;
	dp_prng		rng;
	uint64_t	sorted_pairs = 0,
				pairs = 0;

	dp_prng_seed(&rng, 3);
	for (int c = 0; c < 60; c++)
		sum += P[c] = c % 7 == 0 ? 0 : dp_prng_unit(&rng) * (c < 10 ? 0.01 : 1);
	for (int c = 0; c < 60; c++)
		P[c] /= sum;
	for (int r = 0; r < draws; r++)
	{
		dp_codes	t;
		uint64_t	cnt[60] = {0},
					all = 0;

		dp_codes_init(&t, 2, n);
		if (dp_maxent_draw(P, 2, sizes, n, &rng, &t, NULL, NULL) != 0 || t.nrows != n)
		{
			unit_check(false, "a draw of %llu rows", (unsigned long long) n);
			dp_codes_free(&t);
			return;
		}
		for (uint64_t i = 0; i < n; i++)
		{
			cnt[t.col[0][i] * 10 + t.col[1][i]]++;
			if (i > 0)
			{
				pairs++;
				sorted_pairs += t.col[0][i] * 10 + t.col[1][i] >= t.col[0][i - 1] * 10 + t.col[1][i - 1];
			}
		}
		for (int c = 0; c < 60; c++)
		{
			double		np = P[c] * (double) n;

			all += cnt[c];
			mean[c] += (double) cnt[c] / draws;
			if ((double) cnt[c] < floor(np) - 1e-9 || (double) cnt[c] > ceil(np) + 1e-9)
				bounds = false;
		}
		total = total && all == n;
		dp_codes_free(&t);
	}
	for (int c = 0; c < 60; c++)
		worst_mean = fmax(worst_mean, fabs(mean[c] - P[c] * (double) n));
	unit_check(bounds, "every cell gets floor or ceil of n P (%d draws of %llu rows)", draws,
			   (unsigned long long) n);
	unit_check(total, "every draw has n rows");
	/* a cell's count varies by at most 1, so its mean over 2,000 draws errs by 0.011 (1 SE) at most */
	unit_check(worst_mean < 0.07, "the mean count is n P: worst cell off by %.4f over %d draws", worst_mean, draws);
	unit_check(sorted_pairs < pairs * 0.7, "the rows come in random order (%.2f of neighbours in cell order)",
			   (double) sorted_pairs / (double) pairs);
}


/* Three columns, the last cells empty: the last cell with mass takes what rounding leaves. */
static void
test_draw_three(void)
{
	uint32_t	sizes[3] = {2, 3, 4};
	double		P[24],
				sum = 0;
	bool		ok = true;
	dp_prng		rng;

	dp_prng_seed(&rng, 9);
	for (int c = 0; c < 24; c++)
		sum += P[c] = c >= 19 ? 0 : 0.2 + dp_prng_unit(&rng);
	for (int c = 0; c < 24; c++)
		P[c] /= sum;
	for (int r = 0; r < 500 && ok; r++)
	{
		dp_codes	t;
		uint64_t	cnt[24] = {0},
					all = 0,
					n = 700 + (uint64_t) r;

		dp_codes_init(&t, 3, n);
		ok = dp_maxent_draw(P, 3, sizes, n, &rng, &t, NULL, NULL) == 0 && t.nrows == n;
		for (uint64_t i = 0; ok && i < n; i++)
			cnt[(t.col[0][i] * 3 + t.col[1][i]) * 4 + t.col[2][i]]++;
		for (int c = 0; ok && c < 24; c++)
		{
			double		np = P[c] * (double) n;

			all += cnt[c];
			ok = (double) cnt[c] >= floor(np) - 1e-9 && (double) cnt[c] <= ceil(np) + 1e-9;
		}
		ok = ok && all == n;
		dp_codes_free(&t);
	}
	unit_check(ok, "3 columns, the last 5 cells empty, 500 draws of 700-1,199 rows: floor or ceil of n P in every cell, none in the empty ones, n in all");
}

/* Marginals whose supports leave no cell: no distribution (0), not a false convergence. */
static void
test_collapse(void)
{
	uint32_t	sizes[3] = {2, 2, 2};
	uint32_t	xy[2] = {0, 1},
				yz[2] = {1, 2},
				xz[2] = {0, 2};
	dp_marg		m[3];
	double		P[8];
	int			rc;

	dp_marg_init(&m[0], 2, xy, sizes);
	dp_marg_init(&m[1], 2, yz, sizes);
	dp_marg_init(&m[2], 2, xz, sizes);
	/* x = y, y = z, and x != z: each pair agrees with the others on every shared column */
	m[0].cells[0] = m[0].cells[3] = 50;
	m[1].cells[0] = m[1].cells[3] = 50;
	m[2].cells[1] = m[2].cells[2] = 50;
	rc = dp_maxent_fit(m, 3, 3, sizes, P, 50, DP_MAXENT_TOL, NULL, NULL);
	unit_check(rc == 0, "x = y, y = z, x != z: no distribution, the fit returns 0 (%d)", rc);
	for (int k = 0; k < 3; k++)
		dp_marg_free(&m[k]);
}

static int
cancel_at_third(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	int		   *calls = arg;

	(void) iter;
	(void) iters;
	(void) err;
	return ++*calls >= 3;
}

static void
test_errors(void)
{
	uint32_t	sizes[2] = {2, 3};
	uint32_t	a0[1] = {0},
				a01[2] = {0, 1};
	dp_marg		m[2];
	double		P[6];
	dp_codes	t;
	dp_prng		rng;
	int			calls = 0,
				rc;

	dp_prng_seed(&rng, 1);
	dp_marg_init(&m[0], 1, a0, sizes);
	dp_marg_init(&m[1], 2, a01, sizes);
	for (uint64_t q = 0; q < 6; q++)
		m[1].cells[q] = (double) q;
	m[0].cells[0] = 3;
	m[0].cells[1] = 12;
	unit_check(dp_maxent_fit(m, 0, 2, sizes, P, 10, 0, NULL, NULL) == -2, "no marginal: -2");
	unit_check(dp_maxent_fit(m, 2, 1, sizes, P, 10, 0, NULL, NULL) == -2, "an attribute beyond the columns: -2");
	m[0].cells[0] = m[0].cells[1] = -1;
	unit_check(dp_maxent_fit(m, 2, 2, sizes, P, 10, 0, NULL, NULL) == -2, "a marginal with no positive cell: -2");
	m[0].cells[0] = 3;
	m[0].cells[1] = 12;
	rc = dp_maxent_fit(m, 2, 2, sizes, P, 10, 0, cancel_at_third, &calls);
	unit_check(rc == -1 && calls == 3, "the progress callback cancels: %d after %d calls", rc, calls);
	unit_check(dp_maxent_fit(m, 2, 2, sizes, P, 10, 1e-12, NULL, NULL) >= 1, "a valid fit");
	dp_codes_init(&t, 2, 8);
	unit_check(dp_maxent_draw(P, 2, sizes, (uint64_t) 1 << 32, &rng, &t, NULL, NULL) == -2, "2^32 rows: -2");
	unit_check(dp_maxent_draw(P, 2, sizes, 0, &rng, &t, NULL, NULL) == 0 && t.nrows == 0, "0 rows: none");
	for (int c = 0; c < 6; c++)
		P[c] = 0;
	unit_check(dp_maxent_draw(P, 2, sizes, 5, &rng, &t, NULL, NULL) == -2, "a distribution with no positive cell: -2");
	dp_codes_free(&t);
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);
}

/*
 * The adaptive method: a small joint domain is drawn by maximum entropy over the whole table, a
 * large one with a small junction tree on the tree (test_jtree.c: one whose tree is large, by GUM).
 */
static void
test_adaptive(void)
{
	uint32_t	small[5] = {3, 4, 2, 5, 2};
	uint32_t	large[5] = {64, 64, 64, 8, 2};
	for (int k = 0; k < 2; k++)
	{
		const uint32_t *sizes = k == 0 ? small : large;
		dp_prng		rng;
		dp_codes	t;
		dp_privsyn_params p;
		dp_privsyn_result res;
		dp_adaptive_stats st;
		dp_marg		mt,
					ms;
		/* a pair of few cells: (0, 1) of the small domain, (3, 4) of the large one */
		uint32_t	ab[2] = {k == 0 ? 0 : 3, k == 0 ? 1 : 4};
		int			rc;

		dp_prng_seed(&rng, 11 + k);
		random_table(&t, 5, sizes, 3000, &rng);
		dp_privsyn_default_params(&p);
		p.rho = 1.0;
		rc = dp_adaptive_run(&t, sizes, &p, &rng, &res, &st);
		if (rc != 0)
		{
			unit_check(false, "adaptive run on a %s domain", k == 0 ? "small" : "large");
			dp_codes_free(&t);
			continue;
		}
		/* the large one's junction tree is small (dp_jtree.h): maximum entropy there too */
		unit_check(st.final_maxent && !st.final_warm,
				   "a %s joint domain (%llu cells): rows drawn %s", k == 0 ? "small" : "large",
				   (unsigned long long) dp_maxent_cells(5, res.merged_sizes),
				   st.final_maxent ? "by maximum entropy" : "by GUM");
		if (k == 0)
		{
			bool		merged = false,
						ok = true;
			uint64_t	nc = dp_maxent_cells(5, res.merged_sizes);
			double	   *P = malloc(sizeof(double) * nc);
			uint64_t   *cnt = calloc(nc, sizeof(uint64_t));

			for (uint32_t j = 0; j < 5; j++)
				merged = merged || res.merged_sizes[j] != sizes[j];
			if (merged)
				ok = false;		/* not checked: reported as a skip below */
			else if (dp_maxent_fit(res.margs, res.nmargs, 5, res.merged_sizes, P,
								   dp_maxent_sweeps(nc, res.nmargs), DP_MAXENT_TOL, NULL, NULL) < 1)
				ok = false;
			else
			{
				for (uint64_t i = 0; i < res.synth.nrows; i++)
				{
					uint64_t	c = 0;

					for (uint32_t j = 0; j < 5; j++)
						c = c * sizes[j] + res.synth.col[j][i];
					cnt[c]++;
				}
				for (uint64_t c = 0; c < nc && ok; c++)
				{
					double		np = P[c] * (double) res.synth.nrows;

					ok = (double) cnt[c] >= floor(np) - 1e-6 && (double) cnt[c] <= ceil(np) + 1e-6;
				}
			}
			if (merged)
				unit_skip("small domain: every cell of the synthetic rows holds floor or ceil of n P",
						  "the small domain merged a code");
			else
				unit_check(ok, "small domain: every cell of the synthetic rows holds floor or ceil of n P, P fitted to the model's marginals apart");
			free(P);
			free(cnt);
		}
		exact(&mt, &t, 2, ab, sizes);
		exact(&ms, &res.synth, 2, ab, sizes);
		unit_check(dp_marg_l1(&mt, &ms, true) < 0.1, "%s domain: the synthetic rows keep the (%u, %u) pair (L1 %.3f)",
				   k == 0 ? "small" : "large", ab[0], ab[1], dp_marg_l1(&mt, &ms, true));
		unit_check(res.synth.nrows > 2800 && res.synth.nrows < 3200, "%llu rows", (unsigned long long) res.synth.nrows);
		dp_marg_free(&mt);
		dp_marg_free(&ms);
		dp_privsyn_result_free(&res);
		dp_codes_free(&t);
	}
}

/*
 * dp_odo_runs (dp_odo.h): the blocked walk projects and scales exactly as the plain odometer
 * does, on random shapes (columns of size 1, none held, all held, held ones apart and together).
 */
static void
test_runs(void)
{
	dp_prng		rng;
	int			bad_p = 0,
				bad_s = 0,
				bad_f = 0,
				cases = 0;
	double		worst = 0;

	dp_prng_seed(&rng, 21);
	for (int c = 0; c < 2000; c++)
	{
		uint32_t	d = 1 + (uint32_t) dp_prng_below(&rng, 7),
					sizes[8],
					held[8];
		uint64_t	n = 1,
					step[DP_ODO_MAX_COLS] = {0},
					m = 1;
		double	   *P,
				   *Q,
				   *a,
				   *b,
				   *f;
		dp_odo		o;
		dp_odo_runs r;

		for (uint32_t j = 0; j < d; j++)
		{
			sizes[j] = 1 + (uint32_t) dp_prng_below(&rng, 5);
			held[j] = c % 7 == 0 ? 0 : c % 7 == 1 ? 1 : (uint32_t) dp_prng_below(&rng, 2);
			n *= sizes[j];
		}
		for (uint32_t j = d; j-- > 0;)
			if (held[j])
			{
				step[j] = m;
				m *= sizes[j];
			}
		P = malloc(sizeof(double) * n);
		Q = malloc(sizeof(double) * n);
		a = calloc(m, sizeof(double));
		b = calloc(m, sizeof(double));
		f = malloc(sizeof(double) * m);
		for (uint64_t i = 0; i < n; i++)
			P[i] = Q[i] = dp_prng_unit(&rng);
		for (uint64_t q = 0; q < m; q++)
			f[q] = dp_prng_unit(&rng);
		dp_odo_start(&o, d, sizes);
		memcpy(o.step, step, sizeof(uint64_t) * d);
		for (uint64_t i = 0; i < n; i++, dp_odo_next(&o))
			a[o.idx] += P[i];
		dp_odo_runs_init(&r, d, sizes, step, NULL);
		dp_odo_project(&r, P, b);
		for (uint64_t q = 0; q < m; q++)
		{
			double		e = fabs(a[q] - b[q]) / (1 + fabs(a[q]));

			bad_p += e > 1e-13;
			worst = e > worst ? e : worst;
		}
		dp_odo_start(&o, d, sizes);
		memcpy(o.step, step, sizeof(uint64_t) * d);
		for (uint64_t i = 0; i < n; i++, dp_odo_next(&o))
			P[i] *= f[o.idx];
		dp_odo_scale(&r, Q, f);
		for (uint64_t i = 0; i < n; i++)
			bad_s += P[i] != Q[i];
		/* scale by a, project onto b (another random subset) in one pass */
		{
			uint64_t	stepb[DP_ODO_MAX_COLS] = {0},
						mb = 1;
			double	   *ua,
					   *ub,
					   *R = malloc(sizeof(double) * n);

			for (uint32_t j = d; j-- > 0;)
				if (dp_prng_below(&rng, 2))
				{
					stepb[j] = mb;
					mb *= sizes[j];
				}
			ua = calloc(mb, sizeof(double));
			ub = calloc(mb, sizeof(double));
			for (uint64_t i = 0; i < n; i++)
				R[i] = Q[i] = dp_prng_unit(&rng);
			dp_odo_start(&o, d, sizes);
			memcpy(o.step, step, sizeof(uint64_t) * d);
			for (uint64_t i = 0; i < n; i++, dp_odo_next(&o))
				Q[i] *= f[o.idx];
			dp_odo_start(&o, d, sizes);
			memcpy(o.step, stepb, sizeof(uint64_t) * d);
			for (uint64_t i = 0; i < n; i++, dp_odo_next(&o))
				ua[o.idx] += Q[i];
			dp_odo_runs_init(&r, d, sizes, step, stepb);
			dp_odo_scale_project(&r, R, f, ub);
			for (uint64_t i = 0; i < n; i++)
				bad_f += R[i] != Q[i];
			for (uint64_t q = 0; q < mb; q++)
				bad_f += fabs(ua[q] - ub[q]) / (1 + fabs(ua[q])) > 1e-13;
			free(R);
			free(ua);
			free(ub);
		}
		cases++;
		free(P);
		free(Q);
		free(a);
		free(b);
		free(f);
	}
	unit_check(bad_p == 0, "the blocked walk projects as the odometer: %d cells off over %d shapes (worst relative %.1e)",
			   bad_p, cases, worst);
	unit_check(bad_s == 0, "... and scales exactly as it: %d cells differ", bad_s);
	/* blocks of 2^32 cells and more keep their size (no walk: the tables are never allocated) */
	{
		uint32_t	big[3] = {65536, 65536, 3};
		uint64_t	none[3] = {0, 0, 0},
					last[3] = {0, 0, 1};
		dp_odo_runs r;
		bool		ok;

		dp_odo_runs_init(&r, 2, big, none, NULL);
		ok = r.inner == ((uint64_t) 1 << 32) && r.nouter == 0 && r.istep[0] == 0;
		dp_odo_runs_init(&r, 3, big, last, NULL);
		ok = ok && r.inner == 3 && r.istep[0] == 1 && r.nouter == 1 && r.sizes[0] == ((uint64_t) 1 << 32) &&
			r.step[0][0] == 0 && r.ncells == ((uint64_t) 3 << 32);
		unit_check(ok, "a block of 2^32 cells keeps its size (inner %llu, outer blocks %u)",
				   (unsigned long long) r.inner, r.nouter);
	}
	unit_check(bad_f == 0, "scaling by one marginal and projecting onto another in one pass: as the two passes (%d cells differ)",
			   bad_f);
}

/*
 * The block sums of dp_odo_project and dp_odo_scale_project (run side by side, dp_odo.h) are the
 * same bits as one block at a time, each block's sum from zero in cell order and added to its
 * output cell in block order (the walk as it was written first, kept here as the reference), on
 * random shapes where several blocks share an output cell.
 */
static void
ref_blocks(const dp_odo_runs *r, double *P, const double *f, double *out)
{
	dp_odo_outer o = {{0}, 0, 0};
	const uint64_t L = r->inner;
	const bool	scale = f != NULL;

	for (uint64_t i = 0; i < r->ncells; i += L, dp_odo_outer_next(r, &o))
	{
		double		s = 0;

		for (uint64_t j = 0; j < L; j++)
			s += scale ? (P[i + j] *= f[o.ia + j * r->istep[0]]) : P[i + j];
		out[scale ? o.ib : o.ia] += s;
	}
}

static void
test_runs_bits(void)
{
	dp_prng		rng;
	int			bad = 0,
				cases = 0;

	dp_prng_seed(&rng, 29);
	for (int c = 0; c < 3000; c++)
	{
		uint32_t	d = 2 + (uint32_t) dp_prng_below(&rng, 5),
					sizes[8];
		uint64_t	n = 1,
					ma = 1,
					mb = 1,
					sa[DP_ODO_MAX_COLS] = {0},
					sb[DP_ODO_MAX_COLS] = {0};
		double	   *P,
				   *Q,
				   *f,
				   *oa,
				   *ob;
		dp_odo_runs r;

		for (uint32_t j = 0; j < d; j++)
		{
			sizes[j] = 1 + (uint32_t) dp_prng_below(&rng, 6);
			n *= sizes[j];
		}
		/* b holds no inner column (the summing case); a any subset of b's columns and others */
		for (uint32_t j = d; j-- > 0;)
		{
			bool		inb = j + 1 < d && dp_prng_below(&rng, 2),
						ina = dp_prng_below(&rng, 3) == 0;

			if (inb)
			{
				sb[j] = mb;
				mb *= sizes[j];
			}
			if (ina)
			{
				sa[j] = ma;
				ma *= sizes[j];
			}
		}
		P = malloc(sizeof(double) * n);
		Q = malloc(sizeof(double) * n);
		f = malloc(sizeof(double) * ma);
		oa = calloc(mb, sizeof(double));
		ob = calloc(mb, sizeof(double));
		for (uint64_t i = 0; i < n; i++)
			P[i] = Q[i] = dp_prng_unit(&rng) * 1e3;
		for (uint64_t q = 0; q < ma; q++)
			f[q] = dp_prng_unit(&rng) + 0.5;
		/* the projection onto b alone */
		dp_odo_runs_init(&r, d, sizes, sb, NULL);
		if (r.istep[0] == 0)
		{
			ref_blocks(&r, P, NULL, oa);
			dp_odo_project(&r, Q, ob);
			bad += memcmp(oa, ob, sizeof(double) * mb) != 0;
			cases++;
		}
		/* scaled by a, projected onto b, in one pass */
		dp_odo_runs_init(&r, d, sizes, sa, sb);
		if (r.istep[1] == 0)
		{
			memset(oa, 0, sizeof(double) * mb);
			memset(ob, 0, sizeof(double) * mb);
			ref_blocks(&r, P, f, oa);
			dp_odo_scale_project(&r, Q, f, ob);
			bad += memcmp(oa, ob, sizeof(double) * mb) != 0 || memcmp(P, Q, sizeof(double) * n) != 0;
			cases++;
		}
		free(P);
		free(Q);
		free(f);
		free(oa);
		free(ob);
	}
	unit_check(bad == 0 && cases > 1000, "block sums side by side: the same bits as one block at a time (%d of %d cases differ)",
			   bad, cases);
}

static void
test_timing(void)
{
	uint32_t	sizes[5] = {16, 16, 16, 16, 16};
	uint32_t	nm = 0;
	dp_marg		m[15];
	dp_prng		rng;
	dp_codes	t;
	double	   *P = malloc(sizeof(double) * ((size_t) 1 << 20));
	struct timespec a,
				b;
	int			sw;

	dp_prng_seed(&rng, 5);
	random_table(&t, 5, sizes, 20000, &rng);
	for (uint32_t i = 0; i < 5; i++)
		for (uint32_t j = i + 1; j < 5; j++)
		{
			uint32_t	at[2] = {i, j};

			exact(&m[nm++], &t, 2, at, sizes);
		}
	clock_gettime(CLOCK_MONOTONIC, &a);
	sw = dp_maxent_fit(m, nm, 5, sizes, P, 5, 0, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	unit_check(sw == 5, "5 sweeps over 2^20 cells and %u pairs", nm);
	unit_diag("one sweep over 2^20 cells and %u pairs: %.3f s", nm,
			  ((double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) * 1e-9) / 5);
	for (uint32_t k = 0; k < nm; k++)
		dp_marg_free(&m[k]);
	dp_codes_free(&t);
	free(P);
}

int
main(void)
{
	alarm(300);
	test_cells();
	test_fit_reproduces();
	test_maxent_property();
	test_draw();
	test_draw_three();
	test_collapse();
	test_errors();
	test_adaptive();
	test_runs();
	test_runs_bits();
	test_timing();
	return unit_done();
}
