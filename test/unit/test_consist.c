/*
 * test_consist.c - unit tests of src/core/dp_consist.c (consistency and non-negativity of noisy
 * marginals, PRIVSYN.md step 8).
 *
 *  - Norm-Sub on hand-computed examples (the arithmetic is written next to each), its properties on
 *    random inputs (total kept, no negatives, one common shift, identity on valid input);
 *  - one consistency pass on (A,B) 2x2 and (B,C) 2x3 against values worked out by hand;
 *  - one pass on random noisy marginals against an independent, naive reference written here (sets
 *    found by intersecting every subset of two or more marginals, projections by decoding cells);
 *  - the research code's update (t - s_i) * w_i, implemented here, does NOT reach agreement in one
 *    pass (why the paper's (t - s_i) / g_i is used);
 *  - dp_consist on noisy 1-, 2-, 3-way marginals of random correlated tables: projections on every
 *    shared set agree, no negative cell, one total, and the L1 error to the true marginals is not
 *    worse (by more than 1%) than before;
 *  - weights from rho (all-zero rho, a zero rho), errors, idempotence on exact marginals;
 *  - timing on an Adult-sized set of marginals (diagnostic).
 *
 * Noise is Gaussian from a fixed-seed dp_prng: these are tests of post-processing, not of privacy.
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
#include "dp_consist.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"


/* ---------- helpers ---------- */

static double
gauss(dp_prng *p)
{
	double		u1 = 1.0 - dp_prng_unit(p),	/* (0, 1] */
				u2 = dp_prng_unit(p);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void
set_cells(dp_marg *m, const double *v)
{
	memcpy(m->cells, v, sizeof(double) * m->ncells);
}

static bool
cells_near(const dp_marg *m, const double *v, double tol)
{
	for (uint64_t c = 0; c < m->ncells; c++)
		if (!(fabs(m->cells[c] - v[c]) <= tol))
			return false;
	return true;
}

static double
min_cell(const dp_marg *m, uint32_t n)
{
	double		lo = INFINITY;

	for (uint32_t i = 0; i < n; i++)
		for (uint64_t c = 0; c < m[i].ncells; c++)
			if (m[i].cells[c] < lo)
				lo = m[i].cells[c];
	return lo;
}

/* Index in the set (attrs a[0..na), sizes from m) of cell c of m, by decoding (naive). */
static uint64_t
ref_cell(const dp_marg *m, uint32_t na, const uint32_t *a, uint64_t c)
{
	uint64_t	o = 0;

	for (uint32_t j = 0; j < na; j++)
		for (uint32_t k = 0; k < m->nattrs; k++)
			if (m->attrs[k] == a[j])
				o = o * m->sizes[k] + dp_marg_code(m, c, k);
	return o;
}

static uint64_t
ref_set_cells(const dp_marg *m, uint32_t na, const uint32_t *a)
{
	uint64_t	n = 1;

	for (uint32_t j = 0; j < na; j++)
		for (uint32_t k = 0; k < m->nattrs; k++)
			if (m->attrs[k] == a[j])
				n *= m->sizes[k];
	return n;
}

/* Projection of m on the sorted attribute set a (naive); out has ref_set_cells cells. */
static void
ref_project(const dp_marg *m, uint32_t na, const uint32_t *a, double *out)
{
	memset(out, 0, sizeof(double) * ref_set_cells(m, na, a));
	for (uint64_t c = 0; c < m->ncells; c++)
		out[ref_cell(m, na, a, c)] += m->cells[c];
}

static uint32_t
inter(const dp_marg *x, const dp_marg *y, uint32_t *out)
{
	uint32_t	n = 0;

	for (uint32_t i = 0; i < x->nattrs; i++)
		for (uint32_t j = 0; j < y->nattrs; j++)
			if (x->attrs[i] == y->attrs[j])
				out[n++] = x->attrs[i];
	return n;
}

/*
 * Largest disagreement between two marginals' projections on their shared attributes (the total
 * when they share none), over all pairs and cells, relative to max(|a|, |b|, 1).  Agreement on
 * every pairwise intersection is agreement on every shared set.
 */
static double
max_disagreement(const dp_marg *m, uint32_t n)
{
	double		worst = 0;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
		{
			uint32_t	a[DP_MARG_MAX_ATTRS];
			uint32_t	na = inter(&m[i], &m[j], a);
			uint64_t	nc = ref_set_cells(&m[i], na, a);
			double	   *pi = malloc(sizeof(double) * nc),
					   *pj = malloc(sizeof(double) * nc);

			ref_project(&m[i], na, a, pi);
			ref_project(&m[j], na, a, pj);
			for (uint64_t c = 0; c < nc; c++)
			{
				double		den = fmax(1.0, fmax(fabs(pi[c]), fabs(pj[c]))),
							d = fabs(pi[c] - pj[c]) / den;

				if (!(d <= worst))
					worst = d;
			}
			free(pi);
			free(pj);
		}
	return worst;
}

/* ---------- naive reference pass (independent of dp_consist.c) ---------- */

typedef enum
{
	UPDATE_PAPER,				/* + (t - s_i) / g_i: PrivSyn paper, NIST precursor */
	UPDATE_RESEARCH				/* + (t - s_i) * w_i: the authors' research code */
} update_rule;

typedef struct
{
	uint32_t	n;
	uint32_t	a[DP_MARG_MAX_ATTRS];
} ref_set;

static int
ref_set_cmp(const void *pa, const void *pb)
{
	const ref_set *x = pa,
			   *y = pb;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (uint32_t k = 0; k < x->n; k++)
		if (x->a[k] != y->a[k])
			return x->a[k] < y->a[k] ? -1 : 1;
	return 0;
}

/*
 * One pass: the total (weights rho / cells), then every intersection of two or more marginals
 * (found by intersecting every subset of at least two of them: n <= 16), by increasing size; for
 * each, t = sum_i w_i s_i with w_i proportional to rho_i / g_i, and the chosen update.
 */
static void
ref_pass(dp_marg *m, uint32_t n, update_rule rule)
{
	ref_set    *sets = malloc(sizeof(ref_set) * ((size_t) 1 << n));
	uint32_t	nsets = 0;

	/* the empty set first: it is the total */
	sets[nsets++] = (ref_set) {0};
	for (uint64_t mask = 0; mask < ((uint64_t) 1 << n); mask++)
	{
		ref_set		s;
		bool		have = false;

		if (__builtin_popcountll(mask) < 2)
			continue;
		memset(&s, 0, sizeof(s));
		for (uint32_t i = 0; i < n; i++)
		{
			if (!(mask >> i & 1))
				continue;
			if (!have)
			{
				s.n = m[i].nattrs;
				memcpy(s.a, m[i].attrs, sizeof(uint32_t) * s.n);
				have = true;
			}
			else
			{
				ref_set		t;

				memset(&t, 0, sizeof(t));
				for (uint32_t k = 0; k < s.n; k++)
					if (dp_marg_contains(&m[i], 1, &s.a[k]))
						t.a[t.n++] = s.a[k];
				s = t;
			}
		}
		if (s.n == 0)
			continue;
		for (uint32_t q = 0; q < nsets && have; q++)
			if (ref_set_cmp(&sets[q], &s) == 0)
				have = false;
		if (have)
			sets[nsets++] = s;
	}
	qsort(sets, nsets, sizeof(ref_set), ref_set_cmp);

	for (uint32_t q = 0; q < nsets; q++)
	{
		uint32_t	mem[64],
					nmem = 0;
		uint64_t	nc = 0;
		double	  **proj,
				   *t,
					wsum = 0,
					w[64];

		for (uint32_t i = 0; i < n; i++)
			if (dp_marg_contains(&m[i], sets[q].n, sets[q].a))
				mem[nmem++] = i;
		if (nmem < 2)
			continue;
		nc = ref_set_cells(&m[mem[0]], sets[q].n, sets[q].a);
		proj = malloc(sizeof(double *) * nmem);
		t = calloc(nc, sizeof(double));
		for (uint32_t k = 0; k < nmem; k++)
		{
			proj[k] = malloc(sizeof(double) * nc);
			ref_project(&m[mem[k]], sets[q].n, sets[q].a, proj[k]);
			w[k] = m[mem[k]].rho / ((double) m[mem[k]].ncells / (double) nc);
			wsum += w[k];
		}
		for (uint32_t k = 0; k < nmem; k++)
		{
			w[k] /= wsum;
			for (uint64_t c = 0; c < nc; c++)
				t[c] += w[k] * proj[k][c];
		}
		for (uint32_t k = 0; k < nmem; k++)
		{
			dp_marg    *x = &m[mem[k]];
			double		g = (double) x->ncells / (double) nc;

			for (uint64_t c = 0; c < x->ncells; c++)
			{
				uint64_t	o = ref_cell(x, sets[q].n, sets[q].a, c);
				double		diff = t[o] - proj[k][o];

				x->cells[c] += rule == UPDATE_PAPER ? diff / g : diff * w[k];
			}
			free(proj[k]);
		}
		free(proj);
		free(t);
	}
	free(sets);
}

/* ---------- Norm-Sub ---------- */

static void
test_normsub_examples(void)
{
	uint32_t	col_sizes[1] = {0},
				attr = 0;
	dp_marg		m;

	/*
	 * [5, -2, 3, 1, -1] to total 6: the positives sum to 9 > 6, so delta > 0.  Level 1 gives
	 * (5-1) + (3-1) + max(1-1, 0) = 4 + 2 + 0 = 6, so delta = 1: [4, 0, 2, 0, 0].
	 */
	col_sizes[0] = 5;
	dp_marg_init(&m, 1, &attr, col_sizes);
	set_cells(&m, (double[]) {5, -2, 3, 1, -1});
	dp_normsub(&m, 6);
	unit_check(cells_near(&m, (double[]) {4, 0, 2, 0, 0}, 1e-12),
			   "normsub [5,-2,3,1,-1] to 6 = [4,0,2,0,0] (delta 1)");
	dp_marg_free(&m);

	/*
	 * [10, 4, 3, 2, 1, -5] to total 9: positives 20.  Round 1: (20-9)/5 = 2.2 drops 2 and 1;
	 * round 2: {10,4,3} sum 17, (17-9)/3 = 8/3 drops none: delta = 8/3, giving
	 * [22/3, 4/3, 1/3, 0, 0, 0] (sum 27/3 = 9).
	 */
	col_sizes[0] = 6;
	dp_marg_init(&m, 1, &attr, col_sizes);
	set_cells(&m, (double[]) {10, 4, 3, 2, 1, -5});
	dp_normsub(&m, 9);
	unit_check(cells_near(&m, (double[]) {22.0 / 3, 4.0 / 3, 1.0 / 3, 0, 0, 0}, 1e-12),
			   "normsub [10,4,3,2,1,-5] to 9 = [22/3,4/3,1/3,0,0,0] (delta 8/3)");

	/*
	 * [10, 3, 2.5, 1, 1, 1] to 6, three rounds: 12.5/6 = 2.083 keeps {10,3,2.5}; 9.5/3 = 3.17
	 * keeps {10}; 4/1 = 4 keeps {10}: delta 4, [6, 0, 0, 0, 0, 0].
	 */
	set_cells(&m, (double[]) {10, 3, 2.5, 1, 1, 1});
	dp_normsub(&m, 6);
	unit_check(cells_near(&m, (double[]) {6, 0, 0, 0, 0, 0}, 1e-12),
			   "normsub [10,3,2.5,1,1,1] to 6 = [6,0,0,0,0,0] (delta 4, three rounds)");

	/*
	 * Deficit: [3, -1, 1, 0, 0, 2] to 10: positives 6 < 10, the 4 missing go to the 3 positive
	 * cells (4/3 each); the negative and zero cells stay 0: [13/3, 0, 7/3, 0, 0, 10/3].
	 */
	set_cells(&m, (double[]) {3, -1, 1, 0, 0, 2});
	dp_normsub(&m, 10);
	unit_check(cells_near(&m, (double[]) {13.0 / 3, 0, 7.0 / 3, 0, 0, 10.0 / 3}, 1e-12),
			   "normsub deficit [3,-1,1,0,0,2] to 10 = [13/3,0,7/3,0,0,10/3]");

	/* no positive cell: the total spread over all cells, 12 / 6 = 2 */
	set_cells(&m, (double[]) {-1, 0, -2, 0, -0.5, -3});
	dp_normsub(&m, 12);
	unit_check(cells_near(&m, (double[]) {2, 2, 2, 2, 2, 2}, 0), "normsub with no positive cell: uniform");

	/* total <= 0 or NaN: zeros */
	set_cells(&m, (double[]) {1, 2, -3, 4, 5, 6});
	dp_normsub(&m, 0);
	unit_check(cells_near(&m, (double[]) {0, 0, 0, 0, 0, 0}, 0), "normsub to total 0: zeros");
	set_cells(&m, (double[]) {1, 2, -3, 4, 5, 6});
	dp_normsub(&m, -5);
	unit_check(cells_near(&m, (double[]) {0, 0, 0, 0, 0, 0}, 0), "normsub to a negative total: zeros");
	set_cells(&m, (double[]) {1, 2, -3, 4, 5, 6});
	dp_normsub(&m, NAN);
	unit_check(cells_near(&m, (double[]) {0, 0, 0, 0, 0, 0}, 0), "normsub to NaN: zeros");

	/* identity on a valid marginal: [1, 2, 0, 3.5, 0, 0.25] with its own total 6.75 */
	set_cells(&m, (double[]) {1, 2, 0, 3.5, 0, 0.25});
	dp_normsub(&m, 6.75);
	unit_check(cells_near(&m, (double[]) {1, 2, 0, 3.5, 0, 0.25}, 0), "normsub is the identity on a valid marginal");

	/* a tiny total against a large mass: level 1e6 - 1e-3, only the top cell keeps anything */
	set_cells(&m, (double[]) {1e6, 1, 2, 3, 1e6 - 1, -1});
	dp_normsub(&m, 1e-3);
	unit_check(cells_near(&m, (double[]) {1e-3, 0, 0, 0, 0, 0}, 1e-9), "normsub to a tiny total: the top cell keeps it");
	dp_marg_free(&m);

	/*
	 * Rounding at the level: total = the big cell, seven positive cells below its half-ulp (in units
	 * of 2^-44: 3, 3.5, 3, 3, 2, 1, 3.5).  Exactly, the level is 16/6 units (the 2 and the 1 drop).
	 * In floating point the sums over S no longer see the tiny cells, and an iteration that filters
	 * on the last estimate alone ((pos - total) / cnt, which can go down) cycled here forever
	 * between two sets; the threshold must only rise.  (Found in an Adult-sized run of dp_consist:
	 * after a pass, hundreds of cells of 1e-12 against a total of 48791.)
	 */
	col_sizes[0] = 8;
	dp_marg_init(&m, 1, &attr, col_sizes);
	set_cells(&m, (double[]) {0x1.424p+10, 0x1.8p-43, 0x1.cp-43, 0x1.8p-43, 0x1.8p-43, 0x1p-43, 0x1p-44, 0x1.cp-43});
	dp_normsub(&m, 0x1.424p+10);
	unit_check(min_cell(&m, 1) >= 0 && fabs(dp_marg_total(&m) - 1289) <= 1e-12 && fabs(m.cells[0] - 1289) <= 1e-12,
			   "normsub ends when rounding hides the small cells (total %.17g)", dp_marg_total(&m));
	dp_marg_free(&m);
}

static void
test_normsub_random(void)
{
	dp_prng		p;
	uint32_t	sizes[2] = {37, 23},
				attrs[2] = {0, 1};
	int			ntrials = 500;
	bool		ok_total = true,
				ok_nonneg = true,
				ok_shift = true,
				ok_ident = true;

	dp_prng_seed(&p, 20240611);
	for (int tr = 0; tr < ntrials; tr++)
	{
		dp_marg		m,
					orig;
		double		mean = 20 * dp_prng_unit(&p) - 5,
					sd = 1 + 10 * dp_prng_unit(&p),
					total = 1000 * dp_prng_unit(&p) + 1e-3,
					delta = NAN,
					s = 0;
		bool		anypos = false;

		dp_marg_init(&m, 2, attrs, sizes);
		for (uint64_t c = 0; c < m.ncells; c++)
			m.cells[c] = mean + sd * gauss(&p);
		if (tr % 10 == 0)		/* now and then no positive cell at all */
			for (uint64_t c = 0; c < m.ncells; c++)
				m.cells[c] = -fabs(m.cells[c]);
		dp_marg_copy(&orig, &m);
		dp_normsub(&m, total);
		for (uint64_t c = 0; c < m.ncells; c++)
		{
			s += m.cells[c];
			if (m.cells[c] < 0)
				ok_nonneg = false;
		}
		if (!(fabs(s - total) <= 1e-9 * total + 1e-12))
			ok_total = false;

		for (uint64_t c = 0; c < m.ncells; c++)
			if (orig.cells[c] > 0)
				anypos = true;
		if (!anypos)
		{
			for (uint64_t c = 0; c < m.ncells; c++)
				if (m.cells[c] != total / (double) m.ncells)
					ok_shift = false;
		}
		else
		{
			/* one common shift: out = in - delta on the kept cells; dropped cells were <= delta */
			for (uint64_t c = 0; c < m.ncells; c++)
				if (m.cells[c] > 0)
				{
					double		d = orig.cells[c] - m.cells[c];

					if (isnan(delta))
						delta = d;
					else if (fabs(d - delta) > 1e-9 * (1 + fabs(delta)))
						ok_shift = false;
				}
			for (uint64_t c = 0; c < m.ncells; c++)
				if (m.cells[c] == 0 && orig.cells[c] > 0 && delta > 0 && orig.cells[c] > delta + 1e-9)
					ok_shift = false;
			if (delta < 0)		/* deficit: exactly the originally positive cells are non-zero */
				for (uint64_t c = 0; c < m.ncells; c++)
					if ((orig.cells[c] > 0) != (m.cells[c] > 0))
						ok_shift = false;
		}

		/* identity on the (valid) result */
		memcpy(orig.cells, m.cells, sizeof(double) * m.ncells);
		dp_normsub(&m, dp_marg_total(&m));
		for (uint64_t c = 0; c < m.ncells; c++)
			if (fabs(m.cells[c] - orig.cells[c]) > 1e-9 * total)
				ok_ident = false;
		dp_marg_free(&m);
		dp_marg_free(&orig);
	}
	unit_check(ok_total, "normsub random (%d): total kept to 1e-9", ntrials);
	unit_check(ok_nonneg, "normsub random: no negative cell");
	unit_check(ok_shift, "normsub random: one common shift, dropped cells below it (uniform when none positive)");
	unit_check(ok_ident, "normsub random: identity on its own output");
}

/* ---------- one pass, by hand ---------- */

/*
 * A (col 0, 2 codes), B (col 1, 2 codes), C (col 2, 3 codes).
 * M1 over (A,B) = [10, 20, 30, 40] (a0b0 a0b1 a1b0 a1b1), total 100, rho 1, 4 cells.
 * M2 over (B,C) = [12, 15, 9, 25, 22, 14] (b0c0 b0c1 b0c2 b1c0 b1c1 b1c2), total 97, rho 3, 6 cells.
 *
 * Total: weights rho/c = 1/4 and 3/6, normalized 1/3 and 2/3: T = 100/3 + 2*97/3 = 98.
 *   M1 += (98-100)/4 = -1/2 -> [9.5, 19.5, 29.5, 39.5], B projection [39, 59];
 *   M2 += (98-97)/6 = 1/6 -> B projection [36.5, 61.5].
 * Set {B}: g1 = 2, g2 = 3; weights rho/g = 1/2 and 1, normalized 1/3 and 2/3:
 *   t = [39/3 + 2*36.5/3, 59/3 + 2*61.5/3] = [112/3, 182/3] (sum 98).
 *   M1 += (t - s1)/2 = [-5/6, +5/6] per B code -> [26/3, 61/3, 86/3, 121/3];
 *   M2 += (t - s2)/3 = [+5/18, -5/18] -> b0 cells +1/6+5/18 = +4/9, b1 cells +1/6-5/18 = -1/9:
 *   [12+4/9, 15+4/9, 9+4/9, 25-1/9, 22-1/9, 14-1/9].
 */
static void
make_abc(dp_marg *m)
{
	uint32_t	col_sizes[3] = {2, 2, 3};

	dp_marg_init(&m[0], 2, (uint32_t[]) {0, 1}, col_sizes);
	dp_marg_init(&m[1], 2, (uint32_t[]) {2, 1}, col_sizes);	/* stored sorted: (B, C) */
	set_cells(&m[0], (double[]) {10, 20, 30, 40});
	set_cells(&m[1], (double[]) {12, 15, 9, 25, 22, 14});
	m[0].rho = 1;
	m[1].rho = 3;
}

static void
test_pass_by_hand(void)
{
	dp_marg		m[2];
	double		e1[4] = {26.0 / 3, 61.0 / 3, 86.0 / 3, 121.0 / 3},
				e2[6] = {12 + 4.0 / 9, 15 + 4.0 / 9, 9 + 4.0 / 9, 25 - 1.0 / 9, 22 - 1.0 / 9, 14 - 1.0 / 9};
	double		pb1[2],
				pb2[2];
	uint32_t	b = 1;

	make_abc(m);
	unit_check(dp_consist_pass(m, 2) == 0, "pass (A,B)+(B,C): returns 0");
	unit_check(cells_near(&m[0], e1, 1e-12), "pass: (A,B) = [26/3, 61/3, 86/3, 121/3]");
	unit_check(cells_near(&m[1], e2, 1e-12), "pass: (B,C) = [12+4/9, 15+4/9, 9+4/9, 25-1/9, 22-1/9, 14-1/9]");
	ref_project(&m[0], 1, &b, pb1);
	ref_project(&m[1], 1, &b, pb2);
	unit_check(fabs(pb1[0] - pb2[0]) < 1e-12 && fabs(pb1[1] - pb2[1]) < 1e-12 &&
			   fabs(pb1[0] - 112.0 / 3) < 1e-12 && fabs(pb1[1] - 182.0 / 3) < 1e-12,
			   "pass: both B projections = weighted average [112/3, 182/3]");
	unit_check(fabs(dp_marg_total(&m[0]) - 98) < 1e-12 && fabs(dp_marg_total(&m[1]) - 98) < 1e-12,
			   "pass: both totals = 98");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);

	/* the naive reference agrees on this example */
	make_abc(m);
	ref_pass(m, 2, UPDATE_PAPER);
	unit_check(cells_near(&m[0], e1, 1e-12) && cells_near(&m[1], e2, 1e-12),
			   "reference pass gives the same hand values");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);

	/*
	 * The research code's update, + (t - s_i) * w_i with the same weights, the total included:
	 *   total: M1 += (98-100) * 1/3 = -2/3 per cell, B projection b0 40 - 4/3 = 116/3;
	 *          M2 += (98-97) * 2/3 per cell, b0 36 + 2 = 38 = 114/3 (totals 97.33 and 101: unequal);
	 *   {B}:   t(b0) = 116/9 + 2/3 * 114/3 = 344/9;
	 *          M1 b0 += 2 cells * (344/9 - 348/9) * 1/3 = -8/27 -> 1036/27 = 38.370;
	 *          M2 b0 += 3 cells * (344/9 - 342/9) * 2/3 = 4/9 -> 1038/27 = 38.444.
	 * They disagree (by 2/27) after the pass.
	 */
	make_abc(m);
	ref_pass(m, 2, UPDATE_RESEARCH);
	ref_project(&m[0], 1, &b, pb1);
	ref_project(&m[1], 1, &b, pb2);
	unit_check(fabs(pb1[0] - 1036.0 / 27) < 1e-12 && fabs(pb2[0] - 1038.0 / 27) < 1e-12,
			   "research update: B projections 1036/27 and 1038/27 after one pass (disagree by %.4f)",
			   fabs(pb1[0] - pb2[0]));
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);
}

/* ---------- random tables ---------- */

#define RC 7
static const uint32_t rsizes[RC] = {4, 3, 5, 2, 6, 3, 4};

/* A table of n rows with correlated columns (each column mostly a function of the previous two). */
static void
make_table(dp_codes *t, uint32_t ncols, const uint32_t *sizes, uint64_t n, dp_prng *p)
{
	uint16_t	row[64];

	dp_codes_init(t, ncols, n);
	for (uint64_t i = 0; i < n; i++)
	{
		/* skewed first column */
		uint32_t	u = (uint32_t) dp_prng_below(p, sizes[0]);

		row[0] = (uint16_t) (u * (uint32_t) dp_prng_below(p, sizes[0]) / sizes[0]);
		for (uint32_t j = 1; j < ncols; j++)
		{
			if (dp_prng_unit(p) < 0.7)
				row[j] = (uint16_t) ((row[j - 1] * 7 + j + (j > 1 ? row[j - 2] : 0)) % sizes[j]);
			else
				row[j] = (uint16_t) dp_prng_below(p, sizes[j]);
		}
		dp_codes_append(t, row);
	}
}

/*
 * True and noisy marginals over sets[i] = {nattrs, attrs...}: rho split over them by c^(2/3)
 * (PRIVSYN.md step 7), Gaussian noise of variance 1 / (2 rho_i) on every cell.
 */
static void
publish(const dp_codes *t, const uint32_t *sizes, uint32_t nm, const uint32_t (*sets)[4],
		double rho, dp_prng *p, dp_marg *truth, dp_marg *noisy)
{
	double		s = 0;

	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_init(&truth[i], sets[i][0], &sets[i][1], sizes);
		dp_marg_count(&truth[i], t);
		s += pow((double) truth[i].ncells, 2.0 / 3);
	}
	for (uint32_t i = 0; i < nm; i++)
	{
		double		r = rho * pow((double) truth[i].ncells, 2.0 / 3) / s,
					sigma = sqrt(1 / (2 * r));

		dp_marg_copy(&noisy[i], &truth[i]);
		noisy[i].rho = r;
		for (uint64_t c = 0; c < noisy[i].ncells; c++)
			noisy[i].cells[c] += sigma * gauss(p);
	}
}

static double
mean_l1(const dp_marg *a, const dp_marg *b, uint32_t n)
{
	double		s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += dp_marg_l1(&a[i], &b[i], false);
	return s / n;
}

/* nattrs, attrs...: 7 one-way, 6 two-way, 3 three-way = 16 */
static const uint32_t rsets[][4] = {
	{1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6},
	{2, 0, 1}, {2, 1, 2}, {2, 2, 3}, {2, 0, 4}, {2, 4, 5}, {2, 3, 6},
	{3, 0, 1, 4}, {3, 2, 5, 6}, {3, 1, 3, 5},
};

static void
test_random_pass_vs_reference(void)
{
	uint32_t	nm = sizeof(rsets) / sizeof(rsets[0]);
	dp_marg		truth[16],
				a[16],
				b[16],
				c[16];
	dp_codes	t;
	dp_prng		p;
	double		worst = 0;

	dp_prng_seed(&p, 7);
	make_table(&t, RC, rsizes, 3000, &p);
	publish(&t, rsizes, nm, rsets, 0.5, &p, truth, a);
	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_copy(&b[i], &a[i]);
		dp_marg_copy(&c[i], &a[i]);
	}
	unit_check(max_disagreement(a, nm) > 1e-2, "random noisy marginals disagree before (max rel %.3g)",
			   max_disagreement(a, nm));
	unit_check(dp_consist_pass(a, nm) == 0, "random pass returns 0");
	ref_pass(b, nm, UPDATE_PAPER);
	for (uint32_t i = 0; i < nm; i++)
		for (uint64_t k = 0; k < a[i].ncells; k++)
			worst = fmax(worst, fabs(a[i].cells[k] - b[i].cells[k]));
	unit_check(worst < 1e-9, "one pass = naive reference on 16 random marginals (max diff %.2g)", worst);
	unit_check(max_disagreement(a, nm) < 1e-9, "one pass: all shared projections agree (max rel %.2g)",
			   max_disagreement(a, nm));

	/* the research code's update does not reach agreement in one pass */
	ref_pass(c, nm, UPDATE_RESEARCH);
	unit_check(max_disagreement(c, nm) > 1e-2,
			   "research update (t - s_i) * w_i: projections still disagree after one pass (max rel %.3g)",
			   max_disagreement(c, nm));

	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_free(&truth[i]);
		dp_marg_free(&a[i]);
		dp_marg_free(&b[i]);
		dp_marg_free(&c[i]);
	}
	dp_codes_free(&t);
}

static void
test_random_consist(void)
{
	uint32_t	nm = sizeof(rsets) / sizeof(rsets[0]);
	int			nseeds = 8;
	double		rhos[4] = {0.05, 0.3, 2, 20};
	bool		ok_agree = true,
				ok_nonneg = true,
				ok_total = true,
				ok_ret = true;
	double		l1_before = 0,
				l1_after = 0,
				worst_dis = 0;

	for (int sd = 0; sd < nseeds; sd++)
	{
		dp_marg		truth[16],
					noisy[16],
					orig[16];
		dp_codes	t;
		dp_prng		p;
		double		total,
					dis;

		dp_prng_seed(&p, 1000 + sd);
		make_table(&t, RC, rsizes, 2000 + 1000 * (uint64_t) sd, &p);
		publish(&t, rsizes, nm, rsets, rhos[sd % 4], &p, truth, noisy);
		for (uint32_t i = 0; i < nm; i++)
			dp_marg_copy(&orig[i], &noisy[i]);
		total = dp_consist(noisy, nm, 0);
		if (!(total > 0))
			ok_ret = false;
		for (uint32_t i = 0; i < nm; i++)
			if (!(fabs(dp_marg_total(&noisy[i]) - total) <= 1e-9 * total))
				ok_total = false;
		if (!(min_cell(noisy, nm) >= 0))
			ok_nonneg = false;
		dis = max_disagreement(noisy, nm);
		worst_dis = fmax(worst_dis, dis);
		if (!(dis <= 1e-6))
			ok_agree = false;
		l1_before += mean_l1(orig, truth, nm);
		l1_after += mean_l1(noisy, truth, nm);
		unit_diag("seed %d rho %.2g rows %lu: total %.2f, mean L1 %.2f -> %.2f, min noisy cell %.1f, "
				  "max disagreement %.2g",
				  sd, rhos[sd % 4], (unsigned long) t.nrows, total,
				  mean_l1(orig, truth, nm), mean_l1(noisy, truth, nm), min_cell(orig, nm), dis);
		for (uint32_t i = 0; i < nm; i++)
		{
			dp_marg_free(&truth[i]);
			dp_marg_free(&noisy[i]);
			dp_marg_free(&orig[i]);
		}
		dp_codes_free(&t);
	}
	unit_check(ok_ret, "dp_consist returns a positive total (%d seeds)", nseeds);
	unit_check(ok_total, "dp_consist: every marginal sums to the returned total");
	unit_check(ok_nonneg, "dp_consist: no negative cell");
	unit_check(ok_agree, "dp_consist: projections on every shared set agree to 1e-6 relative (max %.2g)", worst_dis);
	unit_check(l1_after <= 1.01 * l1_before, "dp_consist: mean L1 to the truth %.2f -> %.2f (not worse by > 1%%)",
			   l1_before / nseeds, l1_after / nseeds);
}

/* ---------- weights, errors, idempotence ---------- */

static void
test_weights_and_errors(void)
{
	dp_marg		m[2];
	uint32_t	col_sizes[3] = {2, 2, 3};
	double		tot;

	/* all rho 0: weights 1/c: T = (100/4 + 97/6) / (1/4 + 1/6) = (25 + 97/6) * 12/5 = 98.8 */
	make_abc(m);
	m[0].rho = m[1].rho = 0;
	dp_consist_pass(m, 2);
	unit_check(fabs(dp_marg_total(&m[0]) - 98.8) < 1e-12 && fabs(dp_marg_total(&m[1]) - 98.8) < 1e-12,
			   "all rho 0: equal rho, total 98.8");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);

	/* one rho 0 while the other is positive: it has weight 0, the other's total wins */
	make_abc(m);
	m[0].rho = 0;
	tot = dp_consist(m, 2, 0);
	unit_check(fabs(tot - 97) < 1e-12 && fabs(dp_marg_total(&m[0]) - 97) < 1e-9,
			   "rho 0 next to rho 3: weight 0, total 97");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);

	/* rescaling every rho changes nothing */
	{
		dp_marg		r[2];

		make_abc(m);
		make_abc(r);
		r[0].rho *= 1e-3;
		r[1].rho *= 1e-3;
		dp_consist_pass(m, 2);
		dp_consist_pass(r, 2);
		unit_check(cells_near(&m[0], r[0].cells, 1e-12) && cells_near(&m[1], r[1].cells, 1e-12),
				   "weights depend on rho ratios only");
		for (int i = 0; i < 2; i++)
		{
			dp_marg_free(&m[i]);
			dp_marg_free(&r[i]);
		}
	}

	/* errors: nothing, mismatched sizes, a marginal without cells */
	unit_check(dp_consist(m, 0, 0) == -1 && dp_consist_pass(m, 0) == -1, "nmargs 0: -1");
	make_abc(m);
	m[1].sizes[0] = 3;			/* B has 2 codes in M1, "3" in M2 */
	unit_check(dp_consist(m, 2, 0) == -1 && m[0].cells[0] == 10 && m[1].cells[0] == 12,
			   "mismatched attribute sizes: -1, untouched");
	m[1].sizes[0] = 2;
	{
		double	   *keep = m[1].cells;

		m[1].cells = NULL;
		unit_check(dp_consist_pass(m, 2) == -1 && m[0].cells[0] == 10, "marginal without cells: -1");
		m[1].cells = keep;
	}
	m[1].cells[4] = NAN;
	unit_check(dp_consist(m, 2, 0) == -1 && m[0].cells[0] == 10, "a NaN cell: -1, untouched");
	m[1].cells[4] = 22;
	m[0].rho = INFINITY;
	unit_check(dp_consist(m, 2, 0) == -1 && m[0].cells[0] == 10, "an infinite rho: -1, untouched");
	m[0].rho = 1;
	m[1].ncells = 5;
	unit_check(dp_consist_pass(m, 2) == -1 && m[0].cells[0] == 10, "ncells not the product of the sizes: -1");
	m[1].ncells = 6;
	unit_check(fabs(dp_consist(m, 2, 0) - 98) < 1e-12, "then the same marginals, repaired: total 98");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);

	/* one marginal: Norm-Sub to its own total 8: delta (9 - 8)/2 = 0.5 */
	dp_marg_init(&m[0], 1, (uint32_t[]) {2}, col_sizes);
	set_cells(&m[0], (double[]) {6, -1, 3});
	m[0].rho = 0.5;
	tot = dp_consist(m, 1, 0);
	unit_check(tot == 8 && cells_near(&m[0], (double[]) {5.5, 0, 2.5}, 1e-12),
			   "one marginal [6,-1,3]: total 8, Norm-Sub [5.5, 0, 2.5]");
	dp_marg_free(&m[0]);

	/* disjoint marginals share only the total */
	dp_marg_init(&m[0], 1, (uint32_t[]) {0}, col_sizes);
	dp_marg_init(&m[1], 1, (uint32_t[]) {2}, col_sizes);
	set_cells(&m[0], (double[]) {4, 6});
	set_cells(&m[1], (double[]) {1, 2, 3});
	m[0].rho = m[1].rho = 1;
	/* weights 1/2 and 1/3 -> 3/5, 2/5: T = 6 + 2.4 = 8.4; m0 += -1.6/2, m1 += 2.4/3 */
	tot = dp_consist(m, 2, 0);
	unit_check(fabs(tot - 8.4) < 1e-12 && cells_near(&m[0], (double[]) {3.2, 5.2}, 1e-12) &&
			   cells_near(&m[1], (double[]) {1.8, 2.8, 3.8}, 1e-12),
			   "disjoint marginals: common total 8.4 by shifts");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);
}

static void
test_idempotent_on_truth(void)
{
	uint32_t	nm = sizeof(rsets) / sizeof(rsets[0]);
	dp_marg		truth[16],
				noisy[16],
				x[16];
	dp_codes	t;
	dp_prng		p;
	double		worst = 0,
				tot;

	dp_prng_seed(&p, 99);
	make_table(&t, RC, rsizes, 1500, &p);
	publish(&t, rsizes, nm, rsets, 1, &p, truth, noisy);
	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_copy(&x[i], &truth[i]);
		x[i].rho = noisy[i].rho;
	}
	tot = dp_consist(x, nm, 0);
	for (uint32_t i = 0; i < nm; i++)
		for (uint64_t k = 0; k < x[i].ncells; k++)
			worst = fmax(worst, fabs(x[i].cells[k] - truth[i].cells[k]));
	unit_check(fabs(tot - 1500) < 1e-9 && worst < 1e-9,
			   "exact marginals are left as they are (total %.12g, max change %.2g)", tot, worst);

	/* and a second dp_consist on a consistent output changes nothing */
	tot = dp_consist(noisy, nm, 0);
	for (uint32_t i = 0; i < nm; i++)
		memcpy(x[i].cells, noisy[i].cells, sizeof(double) * x[i].ncells);
	dp_consist(noisy, nm, 0);
	worst = 0;
	for (uint32_t i = 0; i < nm; i++)
		for (uint64_t k = 0; k < x[i].ncells; k++)
			worst = fmax(worst, fabs(x[i].cells[k] - noisy[i].cells[k]));
	unit_check(worst < 1e-6 * tot, "dp_consist twice = once (max change %.2g)", worst);
	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_free(&truth[i]);
		dp_marg_free(&noisy[i]);
		dp_marg_free(&x[i]);
	}
	dp_codes_free(&t);
}

/* ---------- Adult-sized timing ---------- */

static void
test_adult_sized(double rho)
{
	/*
	 * Adult's 15 columns after binning (age, workclass, fnlwgt, education, education-num, marital,
	 * occupation, relationship, race, sex, capital-gain, capital-loss, hours, country, income)
	 */
	static const uint32_t asz[15] = {10, 9, 10, 16, 16, 7, 15, 6, 5, 2, 10, 10, 10, 42, 2};
	static const uint32_t tri[8][3] = {
		{3, 4, 6}, {0, 3, 6}, {2, 3, 4}, {6, 9, 13}, {3, 13, 14}, {1, 6, 7}, {10, 11, 12}, {0, 5, 12}
	};
	uint32_t	sets[64][4];
	uint32_t	nm = 0;
	dp_marg		truth[64],
				noisy[64],
				orig[64];
	dp_codes	t;
	dp_prng		p;
	struct timespec t0,
				t1;
	double		ms,
				total,
				dis;
	uint64_t	cells = 0;

	memset(sets, 0, sizeof(sets));
	for (uint32_t j = 0; j < 15; j++)
	{
		sets[nm][0] = 1;
		sets[nm++][1] = j;
	}
	/* 30 two-way marginals: a ring plus skips */
	for (uint32_t j = 0; j < 15; j++)
		for (uint32_t d = 1; d <= 2; d++)
		{
			sets[nm][0] = 2;
			sets[nm][1] = j;
			sets[nm++][2] = (j + d) % 15;
		}
	/* 8 three-way marginals of 700 to 3840 cells */
	for (int k = 0; k < 8; k++)
	{
		sets[nm][0] = 3;
		memcpy(&sets[nm][1], tri[k], sizeof(tri[k]));
		nm++;
	}
	dp_prng_seed(&p, 48842);
	make_table(&t, 15, asz, 48842, &p);
	publish(&t, asz, nm, (const uint32_t (*)[4]) sets, rho, &p, truth, noisy);
	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_copy(&orig[i], &noisy[i]);
		cells += noisy[i].ncells;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	total = dp_consist(noisy, nm, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
	dis = max_disagreement(noisy, nm);
	unit_diag("Adult-sized, rho %g: %u marginals, %lu cells, %lu rows: dp_consist %.1f ms, total %.1f, "
			  "mean L1 %.1f -> %.1f, max disagreement %.2g",
			  rho, nm, (unsigned long) cells, (unsigned long) t.nrows, ms, total,
			  mean_l1(orig, truth, nm), mean_l1(noisy, truth, nm), dis);
	unit_check(total > 0 && min_cell(noisy, nm) >= 0 && dis < 1e-6,
			   "Adult-sized, rho %g: non-negative and consistent", rho);
	unit_check(mean_l1(noisy, truth, nm) <= 1.01 * mean_l1(orig, truth, nm), "Adult-sized, rho %g: L1 not worse", rho);
	for (uint32_t i = 0; i < nm; i++)
	{
		dp_marg_free(&truth[i]);
		dp_marg_free(&noisy[i]);
		dp_marg_free(&orig[i]);
	}
	dp_codes_free(&t);
}

/*
 * Found by fuzzing (test/fuzz/fuzz_consist.c): a huge but finite rho (1.76e156) with a huge cell
 * made the weighted total overflow, and Norm-Sub then wrote NaN cells; later cells near DBL_MAX did
 * the same inside a pass.  Weights are now relative to the largest rho, and cells beyond
 * DP_CONSIST_MAX_CELL (1e100; no count comes near) are refused like a malformed input.
 */
static void
test_huge_values(void)
{
	uint32_t	sizes[3] = {1, 1, 3},
				a3[3] = {0, 1, 2},
				a1[1] = {2};
	dp_marg		m[2];
	double		total;
	bool		finite = true;

	dp_marg_init(&m[0], 3, a3, sizes);
	dp_marg_init(&m[1], 1, a1, sizes);
	m[0].cells[0] = 33.99;
	m[0].cells[1] = -141.415;
	m[0].cells[2] = 1.7565805777393029e+96;
	m[0].rho = 1.7565805777393029e+156;
	m[1].rho = 0;
	total = dp_consist(m, 2, 0);
	for (int i = 0; i < 2; i++)
		for (uint64_t k = 0; k < m[i].ncells; k++)
			finite &= isfinite(m[i].cells[k]) && m[i].cells[k] >= 0;
	unit_check(total >= 0 && finite, "huge rho and cell: total %g, every cell finite and >= 0", total);
	m[0].cells[0] = 102.9;
	m[0].cells[1] = -1.7976931348623157e308;
	unit_check(dp_consist(m, 2, 0) == -1 && m[0].cells[0] == 102.9, "a cell beyond 1e100: refused, untouched");
	dp_marg_free(&m[0]);
	dp_marg_free(&m[1]);
}

int
main(void)
{
	alarm(300);					/* a hang (as in the Norm-Sub rounding case) fails, not blocks */
	test_normsub_examples();
	test_huge_values();
	test_normsub_random();
	test_pass_by_hand();
	test_random_pass_vs_reference();
	test_random_consist();
	test_weights_and_errors();
	test_idempotent_on_truth();
	test_adult_sized(0.5);
	test_adult_sized(0.002);	/* very noisy: the iteration cap is reached */
	return unit_done();
}
