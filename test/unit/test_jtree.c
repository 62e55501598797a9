/*
 * test_jtree.c - unit tests of src/core/dp_jtree.c (the maximum-entropy distribution of a model's
 * marginals on a junction tree, and rows drawn from it) and of its place in dp_privsyn_sample.
 *
 *  - the tree's shape on hand-worked graphs (a chain, a cycle that must be triangulated, a column
 *    alone, a complete graph too large to hold): cliques, cells, the running intersection
 *    property, every marginal inside a clique, preorder;
 *  - the fit equals dp_maxent_fit's over the whole joint table, clique by clique (exact marginals
 *    of random tables with a cycle, a triple and a column alone), and reproduces every marginal;
 *  - the draw: in every clique, each cell holds floor or ceil of m P(cell | separator) of the m
 *    rows in its separator's cell (every root cell floor or ceil of n P); the mean count of a
 *    pair no marginal holds is n P under the maximum-entropy distribution (a chain: A and C
 *    independent given B); the rows come in random order;
 *  - noisy marginals that admit no joint table: the fit stops when it stalls;
 *  - marginals whose supports leave no cell give no distribution (0);
 *  - errors and cancellation;
 *  - dp_privsyn_draws_maxent: a small tree takes the path, a large one does not;
 *  - the fit's fused passes give the same bits as its passes apart (the kernel on random shapes,
 *    whole fits of noisy marginals);
 *  - (the fit on several threads: test_jtree_threads.c);
 *  - timing of a fit on a wide table (diagnostic).
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

#include "dp_codes.h"
#include "dp_gum.h"
#include "dp_jtree.h"
#include "dp_marg.h"
#include "dp_maxent.h"
#include "dp_privsyn.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_jtree.h"


static void
test_shapes(void)
{
	uint32_t	sizes[5] = {2, 3, 4, 5, 6};
	dp_marg		m[9];
	dp_jtree	t;
	int			rc;

	{
		/* a chain 0-1-2-3 and column 4 alone */
		const uint32_t sets[8][3] = {{0}, {1}, {2}, {3}, {4}, {0, 1}, {1, 2}, {2, 3}};
		const uint32_t nat[8] = {1, 1, 1, 1, 1, 2, 2, 2};

		shape_margs(m, 8, sets, nat, sizes);
		rc = dp_jtree_build(&t, m, 8, 5, sizes, 1000);
		unit_check(rc == 0 && t.ncliques == 4 && jtree_ok(&t, m, 8),
				   "a chain and a column alone: 4 cliques (%u), a junction tree", t.ncliques);
		/* cliques 6 + 12 + 20 + 6 cells, separators 3 + 4 + 1 (the empty one) + 1 (the root's) */
		unit_check(rc == 0 && t.cells == 44 + 9, "... of 53 cells (%llu)", (unsigned long long) t.cells);
		dp_jtree_free(&t);
		rc = dp_jtree_build(&t, m, 8, 5, sizes, 52);
		unit_check(rc == 1 && t.cl == NULL, "... too large for 52 cells: 1, nothing kept (%d)", rc);
		free_margs(m, 8);
	}
	{
		/* a cycle 0-1-2-3-0: triangulated into two cliques of 3 columns */
		const uint32_t sets[8][3] = {{0}, {1}, {2}, {3}, {0, 1}, {1, 2}, {2, 3}, {0, 3}};
		const uint32_t nat[8] = {1, 1, 1, 1, 2, 2, 2, 2};

		shape_margs(m, 8, sets, nat, sizes);
		rc = dp_jtree_build(&t, m, 8, 4, sizes, 1000);
		unit_check(rc == 0 && t.ncliques == 2 && t.cl[0].nattrs == 3 && t.cl[1].nattrs == 3 &&
				   t.cl[1].nsep == 2 && jtree_ok(&t, m, 8),
				   "a cycle of 4: two cliques of 3 columns joined on 2 (%u cliques)", t.ncliques);
		dp_jtree_free(&t);
		free_margs(m, 8);
	}
	{
		/* a complete graph over 5 columns of 64 codes: one clique of 2^30 cells */
		uint32_t	big[5] = {64, 64, 64, 64, 64};
		uint32_t	sets[10][3],
					nat[10],
					nm = 0;

		for (uint32_t i = 0; i < 5; i++)
			for (uint32_t j = i + 1; j < 5; j++)
			{
				sets[nm][0] = i;
				sets[nm][1] = j;
				nat[nm++] = 2;
			}
		{
			dp_marg		mm[10];

			for (uint32_t k = 0; k < nm; k++)
				dp_marg_init(&mm[k], nat[k], sets[k], big);
			rc = dp_jtree_build(&t, mm, nm, 5, big, (uint64_t) 1 << 22);
			unit_check(rc == 1, "a complete graph of 2^30 cells: too large for 2^22 (%d)", rc);
			rc = dp_jtree_build(&t, mm, nm, 5, big, (uint64_t) 1 << 31);
			unit_check(rc == 0 && t.ncliques == 1 && t.cl[0].ncells == ((uint64_t) 1 << 30) &&
					   t.cl[0].P == NULL, "... one clique of 2^30 cells for 2^31, no potential allocated yet");
			dp_jtree_free(&t);
			free_margs(mm, nm);
		}
	}
	{
		const uint32_t sets[2][3] = {{0, 1}, {1, 7}};
		const uint32_t nat[2] = {2, 2};
		uint32_t	s8[8] = {2, 2, 2, 2, 2, 2, 2, 2};

		shape_margs(m, 2, sets, nat, s8);
		rc = dp_jtree_build(&t, m, 2, 5, s8, 1000);
		unit_check(rc == -2, "a marginal over a column the table lacks: invalid (%d)", rc);
		free_margs(m, 2);
	}
}

/* P (the whole joint table over sizes[0..d)) summed onto clique c, as a table like c->P */
static void
joint_onto(const double *P, uint32_t d, const uint32_t *sizes, const dp_jtree_clique *c, double *out)
{
	uint32_t	code[16] = {0};
	uint64_t	ncells = dp_maxent_cells(d, sizes);

	memset(out, 0, sizeof(double) * c->ncells);
	for (uint64_t i = 0; i < ncells; i++)
	{
		uint64_t	idx = 0;

		for (uint32_t a = 0; a < c->nattrs; a++)
			idx = idx * c->sizes[a] + code[c->attrs[a]];
		out[idx] += P[i];
		for (uint32_t j = d; j-- > 0;)
		{
			if (++code[j] < sizes[j])
				break;
			code[j] = 0;
		}
	}
}

/* got (initialised here over m's attributes): clique c's sums onto them (c holds them all) */
static void
clique_onto_marg(const dp_jtree_clique *c, const dp_marg *m, const uint32_t *sizes, dp_marg *got)
{
	dp_odo		o;
	uint64_t	s = 1;

	dp_marg_init(got, m->nattrs, m->attrs, sizes);
	dp_odo_start(&o, c->nattrs, c->sizes);
	for (uint32_t a = m->nattrs; a-- > 0;)
		for (uint32_t b = 0; b < c->nattrs; b++)
			if (c->attrs[b] == m->attrs[a])
			{
				o.step[b] = s;
				s *= sizes[m->attrs[a]];
			}
	for (uint64_t x = 0; x < c->ncells; x++, dp_odo_next(&o))
		got->cells[o.idx] += c->P[x];
}

/*
 * dp_jtree_build_greedy: the one-way marginals always, then each k-way marginal in order while the
 * tree stays within the bound; a later one that fits is kept after an earlier one that did not,
 * and one inside a clique is kept as it is.
 */
static void
test_greedy(void)
{
	uint32_t	sizes[5] = {2, 3, 4, 5, 6};
	/* one-ways, the chain 0-1-2-3, {3,4} (81 cells with the chain), {0,4}, {0,1} again */
	const uint32_t sets[11][3] = {{0}, {1}, {2}, {3}, {4}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}, {0, 1}};
	const uint32_t nat[11] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
	dp_marg		m[11],
				kept[11];
	dp_jtree	t,
				ref;
	uint32_t	nkept = 0;
	int			rc;

	shape_margs(m, 11, sets, nat, sizes);
	/* 80 cells: {3,4} would make 81; {0,4} then fits (60) */
	rc = dp_jtree_build_greedy(&t, m, 11, 5, 5, sizes, 80, kept, &nkept);
	unit_check(rc == 0 && nkept == 10 && kept[7].attrs[0] == 2 && kept[7].attrs[1] == 3 &&
			   kept[8].attrs[0] == 0 && kept[8].attrs[1] == 4 && kept[9].attrs[0] == 0 && kept[9].attrs[1] == 1,
			   "within 80 cells: the chain, {0,4} after {3,4} was left out, {0,1} again (%u kept)", nkept);
	unit_check(rc == 0 && t.cells <= 80 && jtree_ok(&t, kept, nkept) &&
			   dp_jtree_build(&ref, kept, nkept, 5, sizes, 80) == 0 && ref.cells == t.cells,
			   "... a junction tree of the kept marginals, as dp_jtree_build makes it (%llu cells)",
			   (unsigned long long) t.cells);
	dp_jtree_free(&ref);
	dp_jtree_free(&t);
	rc = dp_jtree_build_greedy(&t, m, 11, 5, 5, sizes, 81, kept, &nkept);
	unit_check(rc == 0 && nkept == 10 && kept[8].attrs[0] == 3 && t.cells == 81,
			   "within 81 cells: the chain and {3,4}, not {0,4} (%u kept, %llu cells)", nkept,
			   (unsigned long long) t.cells);
	dp_jtree_free(&t);
	rc = dp_jtree_build_greedy(&t, m, 11, 5, 5, sizes, 1000, kept, &nkept);
	unit_check(rc == 0 && nkept == 11, "within 1,000 cells: all 11 (%u)", nkept);
	dp_jtree_free(&t);
	rc = dp_jtree_build_greedy(&t, m, 11, 5, 5, sizes, 20, kept, &nkept);
	unit_check(rc == 1 && nkept == 0 && t.cl == NULL, "the one-way marginals alone over 20 cells: 1, nothing kept (%d)", rc);
	unit_check(dp_jtree_build_greedy(&t, m, 11, 0, 5, sizes, 1000, kept, &nkept) == -2,
			   "no marginal to keep first: invalid");
	free_margs(m, 11);
}

static void
test_fit_matches_full(void)
{
	uint32_t	sizes[6] = {3, 4, 2, 5, 3, 2};
	/* one-way marginals, a cycle 0-1-2-3-0, a pair 3-4, a triple 1-2-5 */
	const uint32_t sets[12][3] = {{0}, {1}, {2}, {3}, {4}, {5}, {0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4}, {1, 2, 5}};
	const uint32_t nat[12] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3};
	double		worst = 0,
				worst_l1 = 0;
	bool		shaped = true;

	for (int seed = 0; seed < 4; seed++)
	{
		dp_prng		rng;
		dp_codes	t;
		dp_marg		m[12];
		dp_jtree	jt;
		double		P[720];
		int			sw,
					sj;

		dp_prng_seed(&rng, 200 + seed);
		random_table(&t, 6, sizes, 3000, &rng);
		exact_all(m, &t, 12, sets, nat, sizes);
		sw = dp_maxent_fit(m, 12, 6, sizes, P, 2000, 1e-12, NULL, NULL);
		if (dp_jtree_build(&jt, m, 12, 6, sizes, 10000) != 0)
		{
			unit_check(false, "seed %d: a tree", seed);
			continue;
		}
		shaped = shaped && jtree_ok(&jt, m, 12);
		sj = dp_jtree_fit(&jt, m, 12, 2000, 1e-12, NULL, NULL);
		unit_check(sw >= 1 && sw < 2000 && sj >= 1 && sj < 2000,
				   "seed %d: both fits converge (whole table %d sweeps, tree %d)", seed, sw, sj);
		for (uint32_t i = 0; i < jt.ncliques; i++)
		{
			double		q[720];

			joint_onto(P, 6, sizes, &jt.cl[i], q);
			for (uint64_t c = 0; c < jt.cl[i].ncells; c++)
				worst = fmax(worst, fabs(q[c] - jt.cl[i].P[c]));
		}
		/* every marginal reproduced, read from the smallest clique holding it */
		for (uint32_t k = 0; k < 12; k++)
		{
			for (uint32_t i = 0; i < jt.ncliques; i++)
			{
				dp_marg		got;
				double		tot = dp_marg_total(&m[k]),
							l1 = 0;
				uint32_t	hits = 0;

				for (uint32_t a = 0; a < m[k].nattrs; a++)
					for (uint32_t b = 0; b < jt.cl[i].nattrs; b++)
						hits += m[k].attrs[a] == jt.cl[i].attrs[b];
				if (hits != m[k].nattrs)
					continue;
				clique_onto_marg(&jt.cl[i], &m[k], sizes, &got);
				for (uint64_t c = 0; c < got.ncells; c++)
					l1 += fabs(got.cells[c] - m[k].cells[c] / tot);
				worst_l1 = fmax(worst_l1, l1);
				dp_marg_free(&got);
			}
		}
		dp_jtree_free(&jt);
		free_margs(m, 12);
		dp_codes_free(&t);
	}
	unit_check(shaped, "the trees of a cycle, a pair and a triple are junction trees");
	unit_check(worst < 1e-9, "every clique of the tree's fit equals the whole table's fit there (worst %.2e)", worst);
	unit_check(worst_l1 < 1e-9, "every clique holding a marginal reproduces it (worst L1 %.2e)", worst_l1);
}

/*
 * Draw checks on a fitted tree: n rows; in every clique, each cell's count within floor or ceil
 * of m P(cell) / P(separator cell) for the m rows in its separator cell.
 */
static bool
draw_ok(const dp_jtree *t, const dp_codes *rows, uint64_t n)
{
	if (rows->nrows != n)
		return false;
	for (uint32_t i = 0; i < t->ncliques; i++)
	{
		const dp_jtree_clique *c = &t->cl[i];
		uint64_t   *cnt = calloc(c->ncells, sizeof(uint64_t));
		uint64_t   *scnt = calloc(c->sep_cells, sizeof(uint64_t));
		double	   *sp = calloc(c->sep_cells, sizeof(double));
		bool		ok = true;

		for (uint64_t r = 0; r < n; r++)
		{
			uint64_t	idx = 0,
						s = 0;

			for (uint32_t a = 0; a < c->nattrs; a++)
				idx = idx * c->sizes[a] + rows->col[c->attrs[a]][r];
			for (uint32_t q = 0; q < c->nsep; q++)
				s = s * c->sizes[c->sep_here[q]] + rows->col[c->attrs[c->sep_here[q]]][r];
			cnt[idx]++;
			scnt[s]++;
		}
		for (uint64_t x = 0; x < c->ncells; x++)
		{
			uint64_t	s = 0,
						rest = x;
			uint32_t	code[DP_JTREE_MAX_ATTRS];

			for (uint32_t a = c->nattrs; a-- > 0;)
			{
				code[a] = (uint32_t) (rest % c->sizes[a]);
				rest /= c->sizes[a];
			}
			for (uint32_t q = 0; q < c->nsep; q++)
				s = s * c->sizes[c->sep_here[q]] + code[c->sep_here[q]];
			sp[s] += c->P[x];
		}
		for (uint64_t x = 0; x < c->ncells && ok; x++)
		{
			uint64_t	s = 0,
						rest = x;
			uint32_t	code[DP_JTREE_MAX_ATTRS];
			double		e;

			for (uint32_t a = c->nattrs; a-- > 0;)
			{
				code[a] = (uint32_t) (rest % c->sizes[a]);
				rest /= c->sizes[a];
			}
			for (uint32_t q = 0; q < c->nsep; q++)
				s = s * c->sizes[c->sep_here[q]] + code[c->sep_here[q]];
			e = sp[s] > 0 ? (double) scnt[s] * c->P[x] / sp[s] : 0;
			ok = (double) cnt[x] >= floor(e - 1e-6) && (double) cnt[x] <= ceil(e + 1e-6);
		}
		free(cnt);
		free(scnt);
		free(sp);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * A chain (0,1), (1,2): the maximum-entropy P(a, c) is sum_b P(a,b) P(b,c) / P(b); the table's
 * columns 0 and 2 are dependent given 1 (random_table), so the draw's (0, 2) pair must follow
 * the formula, not the table.  Mean over 2,000 draws of 500 rows.
 */
static void
test_draw(void)
{
	uint32_t	sizes[3] = {3, 4, 5};
	const uint32_t sets[2][3] = {{0, 1}, {1, 2}};
	const uint32_t nat[2] = {2, 2};
	dp_prng		rng,
				draw;
	dp_codes	t;
	dp_marg		m[2];
	dp_jtree	jt;
	double		mean[15] = {0},
				expect[15] = {0},
				pb[4] = {0},
				zmax = 0;
	bool		all_ok = true,
				shuffled = false;
	const int	R = 2000;
	const uint64_t n = 500;

	dp_prng_seed(&rng, 31);
	dp_prng_seed(&draw, 32);
	random_table(&t, 3, sizes, 4000, &rng);
	exact_all(m, &t, 2, sets, nat, sizes);
	if (dp_jtree_build(&jt, m, 2, 3, sizes, 1000) != 0 || dp_jtree_fit(&jt, m, 2, 100, 1e-12, NULL, NULL) < 1)
	{
		unit_check(false, "a chain: built and fitted");
		return;
	}
	/* the expectation from the marginals themselves */
	{
		double		n01 = dp_marg_total(&m[0]);

		for (uint32_t b = 0; b < 4; b++)
			for (uint32_t a = 0; a < 3; a++)
				pb[b] += m[0].cells[a * 4 + b] / n01;
		for (uint32_t a = 0; a < 3; a++)
			for (uint32_t c = 0; c < 5; c++)
				for (uint32_t b = 0; b < 4; b++)
					if (pb[b] > 0)
						expect[a * 5 + c] += (m[0].cells[a * 4 + b] / n01) * (m[1].cells[b * 5 + c] / n01) / pb[b];
	}
	for (int r = 0; r < R; r++)
	{
		dp_codes	out;

		dp_codes_init(&out, 3, n);
		if (dp_jtree_draw(&jt, n, &draw, &out, NULL, NULL) != 0)
		{
			all_ok = false;
			dp_codes_free(&out);
			break;
		}
		all_ok = all_ok && draw_ok(&jt, &out, n);
		for (uint64_t i = 0; i < n; i++)
			mean[out.col[0][i] * 5 + out.col[2][i]] += 1.0 / R;
		for (uint64_t i = 1; i < n && !shuffled; i++)
			shuffled = out.col[0][i] < out.col[0][i - 1];
		dp_codes_free(&out);
	}
	unit_check(all_ok, "2,000 draws of 500 rows: every cell of every clique floor or ceil of m P(cell | separator)");
	for (int x = 0; x < 15; x++)
	{
		/* a count's sd in one draw is at most sqrt(n p); the mean's sqrt(n p / R) */
		double		sd = sqrt(fmax(n * expect[x], 1) / R);

		zmax = fmax(zmax, fabs(mean[x] - n * expect[x]) / sd);
	}
	unit_check(zmax < 5, "the mean count of every (0, 2) cell is n sum_b P(a,b) P(b,c) / P(b): worst %.2f sd", zmax);
	unit_check(shuffled, "the rows come in random order, not sorted by the root's cells");
	dp_jtree_free(&jt);
	free_margs(m, 2);
	dp_codes_free(&t);
}

static int	cancel_at(void *arg, const dp_progress *pr);

/* rows [lo, lo + n) of t as a table of their own (the same columns' memory, no copy) */
static dp_codes
rows_view(const dp_codes *t, uint64_t lo, uint64_t n)
{
	dp_codes	v = *t;

	v.col = malloc(sizeof(uint16_t *) * t->ncols);
	for (uint32_t j = 0; j < t->ncols; j++)
		v.col[j] = t->col[j] + lo;
	v.nrows = n;
	v.cap = n;
	return v;
}

/*
 * dp_jtree_draw_chunked: chunk 0 or n and more is dp_jtree_draw (the same rows from the same
 * generator); smaller chunks give the same rows on 1 and 2 threads (and leave the caller's
 * generator where the same number of outputs leaves it), each chunk a stratified draw of its own
 * rows (every clique's cell floor or ceil of m P(cell | separator) within the chunk), the last
 * chunk shorter; its heartbeat cancels.
 */
static void
test_draw_chunked(void)
{
	uint32_t	sizes[4] = {3, 4, 5, 6};
	const uint32_t sets[3][3] = {{0, 1}, {1, 2}, {2, 3}};
	const uint32_t nat[3] = {2, 2, 2};
	const uint64_t n = 10007,
				chunk = 2500;
	dp_prng		rng,
				a,
				b;
	dp_codes	t,
				whole,
				ref,
				one,
				two;
	dp_marg		m[3];
	dp_jtree	jt;
	bool		same = true,
				each = true,
				differ = false;
	uint32_t	saved = dp_threads();
	int			left;

	dp_prng_seed(&rng, 41);
	random_table(&t, 4, sizes, 4000, &rng);
	exact_all(m, &t, 3, sets, nat, sizes);
	if (dp_jtree_build(&jt, m, 3, 4, sizes, 1000) != 0 || dp_jtree_fit(&jt, m, 3, 100, 1e-12, NULL, NULL) < 1)
	{
		unit_check(false, "a chain of 4: built and fitted");
		return;
	}
	/* chunk 0 and chunk >= n: dp_jtree_draw's rows */
	dp_prng_seed(&a, 5);
	dp_codes_init(&ref, 4, n);
	dp_jtree_draw(&jt, n, &a, &ref, NULL, NULL);
	for (uint64_t c = 0; c <= n; c += n)
	{
		dp_prng_seed(&b, 5);
		dp_codes_init(&whole, 4, n);
		unit_check(dp_jtree_draw_chunked(&jt, n, c, &b, &whole, NULL, NULL) == 0 && whole.nrows == n,
				   "chunk %llu of %llu rows: drawn", (unsigned long long) c, (unsigned long long) n);
		for (uint32_t j = 0; j < 4 && same; j++)
			same = memcmp(whole.col[j], ref.col[j], sizeof(uint16_t) * n) == 0;
		same = same && dp_prng_next(&a) == dp_prng_next(&b);
		dp_codes_free(&whole);
		dp_prng_seed(&a, 5);
		dp_codes_free(&ref);
		dp_codes_init(&ref, 4, n);
		dp_jtree_draw(&jt, n, &a, &ref, NULL, NULL);
	}
	unit_check(same, "chunk 0 and chunk n: the rows of dp_jtree_draw, the generator left where it leaves it");
	/* smaller chunks: the same rows on 1 and 2 threads */
	dp_set_threads(1);
	dp_prng_seed(&a, 6);
	dp_codes_init(&one, 4, n);
	unit_check(dp_jtree_draw_chunked(&jt, n, chunk, &a, &one, NULL, NULL) == 0 && one.nrows == n,
			   "chunks of 2,500 of 10,007 rows on one thread: drawn");
	dp_set_threads(2);
	dp_prng_seed(&b, 6);
	dp_codes_init(&two, 4, n);
	unit_check(dp_jtree_draw_chunked(&jt, n, chunk, &b, &two, NULL, NULL) == 0 && two.nrows == n,
			   "... and on two");
	same = dp_prng_next(&a) == dp_prng_next(&b);
	for (uint32_t j = 0; j < 4 && same; j++)
		same = memcmp(one.col[j], two.col[j], sizeof(uint16_t) * n) == 0;
	unit_check(same, "chunks: the same rows on 1 and 2 threads, the generator left at the same place");
	/* 3 and 4 threads: 5 chunks, a multiple of neither */
	for (uint32_t th = 3; th <= 4; th++)
	{
		dp_codes	more;

		dp_set_threads(th);
		dp_prng_seed(&b, 6);
		dp_codes_init(&more, 4, n);
		same = dp_jtree_draw_chunked(&jt, n, chunk, &b, &more, NULL, NULL) == 0 && more.nrows == n;
		for (uint32_t j = 0; j < 4 && same; j++)
			same = memcmp(one.col[j], more.col[j], sizeof(uint16_t) * n) == 0;
		unit_check(same, "chunks: the same rows on %u threads as on one", th);
		dp_codes_free(&more);
	}
	for (uint64_t lo = 0; lo < n; lo += chunk)
	{
		uint64_t	len = n - lo < chunk ? n - lo : chunk;
		dp_codes	v = rows_view(&one, lo, len);

		each = each && draw_ok(&jt, &v, len);
		free(v.col);
	}
	unit_check(each, "every chunk (4 of 2,500 rows and one of 7): each clique's cells floor or ceil of m P within it");
	dp_prng_seed(&a, 6);
	dp_codes_init(&whole, 4, n);
	dp_jtree_draw(&jt, n, &a, &whole, NULL, NULL);
	for (uint32_t j = 0; j < 4 && !differ; j++)
		differ = memcmp(whole.col[j], one.col[j], sizeof(uint16_t) * n) != 0;
	unit_check(differ, "chunks draw other rows than one draw of them all from the same generator");
	dp_codes_free(&whole);
	dp_codes_init(&whole, 4, 200000);
	left = 2;
	unit_check(dp_jtree_draw_chunked(&jt, 200000, 20000, &a, &whole, cancel_at, &left) == -1,
			   "a chunked draw of 200,000 rows cancelled by its heartbeat between chunks: -1");
	dp_set_threads(saved);
	dp_codes_free(&whole);
	dp_codes_free(&one);
	dp_codes_free(&two);
	dp_codes_free(&ref);
	dp_jtree_free(&jt);
	free_margs(m, 3);
	dp_codes_free(&t);
}

/*
 * Noisy marginals of a triangle (0,1), (1,2), (0,2) that admit no joint table: the fit stops when
 * a sweep no longer cuts the worst misfit (DP_JTREE_STALL), long before 2,000 sweeps, with every
 * marginal closer to its target than the uniform start was.
 */
static void
test_stall(void)
{
	uint32_t	sizes[3] = {4, 5, 6};
	const uint32_t sets[3][3] = {{0, 1}, {1, 2}, {0, 2}};
	const uint32_t nat[3] = {2, 2, 2};
	dp_marg		m[3];
	dp_jtree	jt;
	dp_prng		rng;
	int			rc;
	bool		closer = true;

	dp_prng_seed(&rng, 41);
	shape_margs(m, 3, sets, nat, sizes);
	for (int k = 0; k < 3; k++)
		for (uint64_t q = 0; q < m[k].ncells; q++)
			m[k].cells[q] = 1 + 100 * dp_prng_unit(&rng) * dp_prng_unit(&rng);
	rc = dp_jtree_build(&jt, m, 3, 3, sizes, 1000);
	if (rc == 0)
		rc = dp_jtree_fit(&jt, m, 3, 2000, 1e-12, NULL, NULL);
	for (int k = 0; k < 3 && rc > 0; k++)
	{
		/* the clique is the whole triangle: project it onto the pair */
		dp_marg		got;
		double		tot = dp_marg_total(&m[k]),
					l1 = 0,
					l1u = 0;

		clique_onto_marg(&jt.cl[0], &m[k], sizes, &got);
		for (uint64_t c = 0; c < got.ncells; c++)
		{
			l1 += fabs(got.cells[c] - m[k].cells[c] / tot);
			l1u += fabs(1.0 / (double) got.ncells - m[k].cells[c] / tot);
		}
		closer = closer && l1 < l1u;
		dp_marg_free(&got);
	}
	unit_check(rc >= 2 && rc < 2000 && closer,
			   "marginals that admit no joint table: the fit stalls and stops (%d sweeps), every marginal closer than uniform", rc);
	dp_jtree_free(&jt);
	free_margs(m, 3);
}

/* x = y and y = z but x != z: no cell survives; the fit says so (0) */
static void
test_collapse(void)
{
	uint32_t	sizes[3] = {2, 2, 2};
	const uint32_t sets[3][3] = {{0, 1}, {1, 2}, {0, 2}};
	const uint32_t nat[3] = {2, 2, 2};
	dp_marg		m[3];
	dp_jtree	jt;
	int			rc;

	shape_margs(m, 3, sets, nat, sizes);
	for (int k = 0; k < 3; k++)
		for (uint64_t q = 0; q < 4; q++)
			m[k].cells[q] = (k < 2 ? (q == 0 || q == 3) : (q == 1 || q == 2)) ? 10 : 0;
	rc = dp_jtree_build(&jt, m, 3, 3, sizes, 1000);
	if (rc == 0)
		rc = dp_jtree_fit(&jt, m, 3, 50, 1e-9, NULL, NULL);
	unit_check(rc == 0, "supports that leave no cell: no distribution (0, got %d)", rc);
	{
		dp_codes	out;
		dp_prng		rng;

		dp_prng_seed(&rng, 3);
		dp_codes_init(&out, 3, 10);
		unit_check(dp_jtree_draw(&jt, 10, &rng, &out, NULL, NULL) == -2 && out.nrows == 0,
				   "... and no draw from it (invalid, no row)");
		dp_codes_free(&out);
	}
	dp_jtree_free(&jt);
	free_margs(m, 3);
}

static int
cancel_at(void *arg, const dp_progress *pr)
{
	uint32_t	iter = (uint32_t) pr->done;
	uint32_t	iters = (uint32_t) pr->total;
	double		err = pr->err;
	int		   *left = arg;

	(void) iter;
	(void) iters;
	(void) err;
	return --(*left) <= 0;
}

static void
test_errors(void)
{
	uint32_t	sizes[3] = {3, 4, 5};
	const uint32_t sets[3][3] = {{0, 1}, {1, 2}, {0, 2}};
	const uint32_t nat[3] = {2, 2, 2};
	dp_marg		m[3];
	dp_jtree	jt;
	dp_codes	out;
	dp_prng		rng;
	int			left,
				rc;

	dp_prng_seed(&rng, 9);
	shape_margs(m, 3, sets, nat, sizes);
	rc = dp_jtree_build(&jt, m, 2, 3, sizes, 1000);
	dp_codes_init(&out, 3, 10);
	unit_check(rc == 0 && dp_jtree_draw(&jt, 10, &rng, &out, NULL, NULL) == -2,
			   "a draw from a tree not fitted: invalid");
	unit_check(dp_jtree_fit(&jt, m, 3, 10, 1e-9, NULL, NULL) == -2,
			   "a marginal in no clique of the tree ((0, 2) on a chain): invalid");
	left = 3;
	unit_check(dp_jtree_fit(&jt, m, 2, 100, 0, cancel_at, &left) == -1, "a fit cancelled by its progress callback: -1");
	rc = dp_jtree_fit(&jt, m, 2, 5, 0, NULL, NULL);
	unit_check(rc >= 1 && rc <= 5, "5 sweeps asked: 1 to 5 run (%d)", rc);
	left = 2;
	unit_check(dp_jtree_draw(&jt, 200000, &rng, &out, cancel_at, &left) == -1,
			   "a draw of 200,000 rows cancelled by its heartbeat: -1");
	dp_codes_free(&out);
	dp_codes_init(&out, 2, 10);
	unit_check(dp_jtree_draw(&jt, 10, &rng, &out, NULL, NULL) == -2, "a draw into rows of another width: invalid");
	dp_codes_free(&out);
	dp_jtree_free(&jt);
	free_margs(m, 3);
}

/* dp_privsyn_draws_maxent: a chain of 12 columns of 64 codes (a domain of 2^72) takes the tree,
 * a complete graph of 5 such columns (one clique of 2^30) does not, nor anything with jtree_cells 0 */
static void
test_predicate(void)
{
	uint32_t	sizes[12];
	dp_marg		m[12];
	dp_privsyn_result model;
	dp_gum_params g;

	for (uint32_t j = 0; j < 12; j++)
		sizes[j] = 64;
	memset(&model, 0, sizeof(model));
	model.merged_sizes = sizes;
	model.total = 1000;
	model.margs = m;
	dp_gum_default_params(&g);
	g.maxent_cells = (uint64_t) 1 << 20;
	g.jtree_cells = (uint64_t) 1 << 22;
	for (uint32_t j = 0; j + 1 < 12; j++)
	{
		uint32_t	at[2] = {j, j + 1};

		dp_marg_init(&m[j], 2, at, sizes);
	}
	model.nmargs = 11;
	unit_check(dp_privsyn_draws_maxent(&model, 12, &g), "a chain of 12 columns of 64 codes: maximum entropy on its tree");
	g.jtree_cells = 0;
	unit_check(!dp_privsyn_draws_maxent(&model, 12, &g), "... not with jtree_cells 0 (PrivSyn's parameters)");
	free_margs(m, 11);
	g.jtree_cells = (uint64_t) 1 << 22;
	model.nmargs = 0;
	for (uint32_t i = 0; i < 5; i++)
		for (uint32_t j = i + 1; j < 5; j++)
		{
			uint32_t	at[2] = {i, j};

			dp_marg_init(&m[model.nmargs++], 2, at, sizes);
		}
	unit_check(!dp_privsyn_draws_maxent(&model, 5, &g), "a complete graph of 5 such columns (2^30 cells): GUM");
	free_margs(m, model.nmargs);
}


/* strides of a table over the columns of in[0..d) that are set, row-major in column order (0: not held) */
static void
subset_steps(uint32_t d, const uint32_t *sizes, const bool *in, uint64_t *step)
{
	uint64_t	s = 1;

	for (uint32_t j = d; j-- > 0;)
	{
		step[j] = in[j] ? s : 0;
		if (in[j])
			s *= sizes[j];
	}
}

/*
 * The fit's fused passes (dp_jtree_fit: a clique's scaling deferred into its next projection)
 * give the same bits as the passes apart.  (1) The kernel: on random shapes (columns of 1 to 5
 * codes, random tables a and b), wherever dp_jtree_same_sums allows the fusion, dp_odo_scale_project
 * writes the same cells and the same sums as dp_odo_scale then dp_odo_project; where it does not,
 * some sums differ (so the check is needed).  (2) Whole fits of noisy, inconsistent marginals
 * (random tables plus noise; several sweeps until the fit stalls), fused and apart (the seam
 * dp_jtree_test_no_fuse), on trees of one clique and of several: every clique's and separator's
 * potential the same bits, the same sweeps.
 */
static void
test_fused_passes(void)
{
	dp_prng		rng;
	uint32_t	fused = 0,
				bad = 0,
				apart_differ = 0,
				fits = 0,
				fits_bad = 0;

	dp_prng_seed(&rng, 4242);
	for (int trial = 0; trial < 4000; trial++)
	{
		uint32_t	d = 1 + (uint32_t) dp_prng_below(&rng, 6),
					sizes[6];
		bool		ina[6],
					inb[6];
		uint64_t	sa[DP_ODO_MAX_COLS] = {0},
					sb[DP_ODO_MAX_COLS] = {0},
					n = 1,
					na = 1,
					nb = 1;
		dp_odo_runs both,
					alone,
					ra;
		double	   *P0,
				   *P1,
				   *f,
				   *o0,
				   *o1;
		bool		same;

		for (uint32_t j = 0; j < d; j++)
		{
			sizes[j] = 1 + (uint32_t) dp_prng_below(&rng, 5);
			ina[j] = dp_prng_below(&rng, 2) == 1;
			inb[j] = dp_prng_below(&rng, 2) == 1;
			n *= sizes[j];
			na *= ina[j] ? sizes[j] : 1;
			nb *= inb[j] ? sizes[j] : 1;
		}
		subset_steps(d, sizes, ina, sa);
		subset_steps(d, sizes, inb, sb);
		P0 = malloc(sizeof(double) * n);
		P1 = malloc(sizeof(double) * n);
		f = malloc(sizeof(double) * na);
		o0 = calloc(nb, sizeof(double));
		o1 = calloc(nb, sizeof(double));
		for (uint64_t q = 0; q < n; q++)
			P0[q] = P1[q] = dp_prng_unit(&rng) * pow(2.0, (double) dp_prng_below(&rng, 40) - 20);
		for (uint64_t q = 0; q < na; q++)
			f[q] = 0.5 + dp_prng_unit(&rng);
		dp_odo_runs_init(&ra, d, sizes, sa, NULL);
		dp_odo_runs_init(&alone, d, sizes, sb, NULL);
		dp_odo_runs_init(&both, d, sizes, sa, sb);
		dp_odo_scale(&ra, P0, f);
		dp_odo_project(&alone, P0, o0);
		dp_odo_scale_project(&both, P1, f, o1);
		same = memcmp(P0, P1, sizeof(double) * n) == 0 && memcmp(o0, o1, sizeof(double) * nb) == 0;
		if (dp_jtree_same_sums(&both, &alone))
		{
			fused++;
			bad += !same;
		}
		else
			apart_differ += !same;
		free(P0);
		free(P1);
		free(f);
		free(o0);
		free(o1);
	}
	unit_check(fused > 1000 && bad == 0,
			   "where the fit fuses a scaling and a projection, the same bits as the two passes (%u shapes, %u differ)",
			   fused, bad);
	unit_check(apart_differ > 0, "... and where it does not, the one pass differs on some shapes (%u)", apart_differ);

	for (int seed = 0; seed < 16; seed++)
	{
		/* the first four: 3 columns and every pair, one clique (a sweep's last visit and the
		 * next sweep's first in the same clique, with no move between) */
		uint32_t	d = seed < 4 ? 3 : 5 + (uint32_t) dp_prng_below(&rng, 4),
					sizes[8],
					sets[40][3],
					nat[40],
					nm = 0;
		dp_codes	t;
		dp_marg		m[40];
		dp_jtree	jt[2];
		int			sw[2];
		bool		same = true;

		for (uint32_t j = 0; j < d; j++)
		{
			sizes[j] = (seed < 4 ? 2 : 1) + (uint32_t) dp_prng_below(&rng, 6);
			sets[nm][0] = j;
			nat[nm++] = 1;
		}
		/* pairs and triples at random, increasing columns */
		for (uint32_t k = 0; k < 3 * d && seed < 4; k++)
			if (k < 3)
			{
				sets[nm][0] = k == 2 ? 1 : 0;
				sets[nm][1] = k == 0 ? 1 : 2;
				nat[nm++] = 2;
			}
		for (uint32_t k = 0; k < 3 * d && seed >= 4; k++)
		{
			uint32_t	a = (uint32_t) dp_prng_below(&rng, d),
						b = (uint32_t) dp_prng_below(&rng, d),
						c = (uint32_t) dp_prng_below(&rng, d);

			if (a == b)
				continue;
			if (a > b)
			{
				uint32_t	x = a;

				a = b;
				b = x;
			}
			sets[nm][0] = a;
			sets[nm][1] = b;
			nat[nm] = 2;
			if (k % 4 == 3 && c > b)
			{
				sets[nm][2] = c;
				nat[nm] = 3;
			}
			nm++;
		}
		random_table(&t, d, sizes, 2000, &rng);
		exact_all(m, &t, nm, (const uint32_t (*)[3]) sets, nat, sizes);
		/* noise: marginals that admit no joint table */
		for (uint32_t k = 0; k < nm; k++)
			for (uint64_t q = 0; q < m[k].ncells; q++)
				m[k].cells[q] = fmax(0.5, m[k].cells[q] + 40 * (dp_prng_unit(&rng) - 0.5));
		for (int h = 0; h < 2; h++)
		{
			memset(&jt[h], 0, sizeof(jt[h]));
			if (dp_jtree_build(&jt[h], m, nm, d, sizes, 1 << 20) != 0)
				same = false;
			dp_jtree_test_no_fuse(h == 1);
			sw[h] = same ? dp_jtree_fit(&jt[h], m, nm, 200, 1e-12, NULL, NULL) : -9;
			dp_jtree_test_no_fuse(false);
		}
		same = same && sw[0] == sw[1] && sw[0] >= 1 && jt[0].ncliques == jt[1].ncliques;
		for (uint32_t i = 0; same && i < jt[0].ncliques; i++)
			same = memcmp(jt[0].cl[i].P, jt[1].cl[i].P, sizeof(double) * jt[0].cl[i].ncells) == 0 &&
				memcmp(jt[0].cl[i].S, jt[1].cl[i].S, sizeof(double) * jt[0].cl[i].sep_cells) == 0;
		fits++;
		fits_bad += !same;
		dp_jtree_free(&jt[0]);
		dp_jtree_free(&jt[1]);
		free_margs(m, nm);
		dp_codes_free(&t);
	}
	unit_check(fits_bad == 0, "fits of noisy marginals, fused and apart: the same potentials, bit for bit, and sweeps (%u of %u differ)",
			   fits_bad, fits);
}

/* A wide table: 40 columns of 6 codes, a chain and every third triple (diagnostic timing). */
static void
test_timing(void)
{
	uint32_t	sizes[40];
	dp_marg		m[80];
	uint32_t	nm = 0;
	dp_prng		rng;
	dp_codes	t;
	dp_jtree	jt;
	struct timespec a,
				b;
	int			sw = 0;

	for (uint32_t j = 0; j < 40; j++)
		sizes[j] = 6;
	dp_prng_seed(&rng, 77);
	random_table(&t, 40, sizes, 5000, &rng);
	for (uint32_t j = 0; j + 1 < 40; j++)
	{
		uint32_t	at[2] = {j, j + 1};

		dp_marg_init(&m[nm], 2, at, sizes);
		dp_marg_count(&m[nm++], &t);
	}
	for (uint32_t j = 0; j + 5 < 40; j += 3)
	{
		uint32_t	at[3] = {j, j + 2, j + 5};

		dp_marg_init(&m[nm], 3, at, sizes);
		dp_marg_count(&m[nm++], &t);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (dp_jtree_build(&jt, m, nm, 40, sizes, (uint64_t) 1 << 22) == 0)
	{
		sw = dp_jtree_fit(&jt, m, nm, 20, 0, NULL, NULL);
		clock_gettime(CLOCK_MONOTONIC, &b);
		unit_check(sw >= 1 && sw <= 20, "a wide table: %d sweeps run", sw);
		unit_diag("40 columns, %u marginals: a tree of %u cliques, %llu cells; one sweep %.4f s", nm,
				  jt.ncliques, (unsigned long long) jt.cells,
				  ((double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) * 1e-9) / (sw > 0 ? sw : 1));
		dp_jtree_free(&jt);
	}
	else
		unit_check(false, "a wide table: a tree");
	free_margs(m, nm);
	dp_codes_free(&t);
}

int
main(void)
{
	alarm(300);
	test_shapes();
	test_greedy();
	test_fit_matches_full();
	test_draw();
	test_draw_chunked();
	test_stall();
	test_collapse();
	test_errors();
	test_predicate();
	test_fused_passes();
	test_timing();
	return unit_done();
}
