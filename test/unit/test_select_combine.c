/*
 * test_select_combine.c - PrivSyn step 6, Combine (dp_combine): selected pairs whose triangles
 * (and larger cliques) have fewer than gamma cells become one marginal; hand-made graphs for each
 * rule and random graphs against a brute-force reference.  The other steps of dp_select are
 * test_select.c's.
 *
 * Test data come from the seeded post-processing PRNG (dp_prng): Combine draws no privacy noise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_marg.h"
#include "dp_prng.h"
#include "dp_select.h"
#include "unit.h"
#include "unit_select.h"



static int
has_set(const set_t *sets, const uint32_t *ns, uint32_t n, uint32_t k, const uint32_t *v)
{
	for (uint32_t i = 0; i < n; i++)
		if (ns[i] == k && memcmp(sets[i], v, k * sizeof(uint32_t)) == 0)
			return 1;
	return 0;
}

static void
set_edge(uint8_t *sel, double *sc, uint32_t d, uint32_t a, uint32_t b, double s)
{
	uint32_t	k = a < b ? dp_pair_index(d, a, b) : dp_pair_index(d, b, a);

	sel[k] = 1;
	sc[k] = s;
}

/*
 * Reference Combine for d <= 12 by brute force over vertex subsets (bitmasks): an independent
 * implementation of the rule documented in dp_combine, for random comparisons.
 */
static uint32_t
ref_combine(uint32_t d, const uint8_t *sel, const double *sc, const uint32_t *sz, uint32_t gamma,
			set_t *sets, uint32_t *ns)
{
	uint32_t	used = 0,
				n = 0;
	uint8_t		dropped[66] = {0};
	static uint32_t masks[4096];
	static double mscore[4096];

	for (int k = (int) (d < 8 ? d : 8); k >= 3; k--)
	{
		uint32_t	nc = 0;

		for (uint32_t s = 0; s < (1u << d); s++)
		{
			uint64_t	prod = 1;
			int			clique = 1;
			double		score = 0;

			if ((uint32_t) __builtin_popcount(s) != (uint32_t) k ||
				__builtin_popcount(s & used) > 2)
				continue;
			for (uint32_t a = 0; a < d && clique; a++)
				if (s >> a & 1)
				{
					prod *= sz[a];
					for (uint32_t b = a + 1; b < d; b++)
						if (s >> b & 1)
						{
							if (!sel[dp_pair_index(d, a, b)])
								clique = 0;
							score += sc[dp_pair_index(d, a, b)];
						}
				}
			if (!clique || prod >= gamma)
				continue;
			masks[nc] = s;
			mscore[nc] = score;
			nc++;
		}
		/* selection order: score desc, then lexicographic increasing vertex list */
		for (;;)
		{
			int			best = -1;

			for (uint32_t i = 0; i < nc; i++)
			{
				if (masks[i] == 0)
					continue;
				if (best < 0 || mscore[i] > mscore[best])
					best = (int) i;
				else if (mscore[i] == mscore[best])
				{
					/* lexicographic compare of increasing vertex lists */
					uint32_t	x = masks[i],
								y = masks[best];

					while (x && y && __builtin_ctz(x) == __builtin_ctz(y))
						x &= x - 1, y &= y - 1;
					if (x && y && __builtin_ctz(x) < __builtin_ctz(y))
						best = (int) i;
				}
			}
			if (best < 0)
				break;
			if (__builtin_popcount(masks[best] & used) <= 2)
			{
				uint32_t	j = 0;

				used |= masks[best];
				ns[n] = (uint32_t) k;
				memset(sets[n], 0, sizeof(set_t));
				for (uint32_t a = 0; a < d; a++)
					if (masks[best] >> a & 1)
					{
						sets[n][j++] = a;
						for (uint32_t b = a + 1; b < d; b++)
							if (masks[best] >> b & 1)
								dropped[dp_pair_index(d, a, b)] = 1;
					}
				n++;
			}
			masks[best] = 0;
		}
	}
	for (uint32_t a = 0, k = 0; a < d; a++)
		for (uint32_t b = a + 1; b < d; b++, k++)
			if (sel[k] && !dropped[k])
			{
				ns[n] = 2;
				memset(sets[n], 0, sizeof(set_t));
				sets[n][0] = a;
				sets[n][1] = b;
				n++;
			}
	return n;
}

/* dp_combine on triangles: the gamma bar, shared columns, the order by score */
static void
test_combine_triangles(void)
{
	uint8_t		sel[66];
	double		sc[66];
	set_t		sets[66];
	uint32_t	ns[66],
				n;

	/* a triangle of small columns (2*3*4 = 24 cells) becomes one 3-set; (2,3) stays a pair */
	{
		uint32_t	sz[4] = {2, 3, 4, 5};
		const uint32_t tri[3] = {0, 1, 2},
					p23[2] = {2, 3};

		memset(sel, 0, sizeof(sel));
		memset(sc, 0, sizeof(sc));
		set_edge(sel, sc, 4, 0, 1, 10);
		set_edge(sel, sc, 4, 0, 2, 11);
		set_edge(sel, sc, 4, 1, 2, 12);
		set_edge(sel, sc, 4, 2, 3, 13);
		n = dp_combine(4, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 2 && ns[0] == 3 && has_set(sets, ns, n, 3, tri) && has_set(sets, ns, n, 2, p23),
				   "triangle of small columns -> {0,1,2} + pair {2,3}; its 3 pairs are gone (n=%u)", n);
	}

	/* a triangle with 20*20*20 = 8000 >= gamma cells stays as pairs; 10*20*25 = 5000 too (strict) */
	{
		uint32_t	sz[3] = {20, 20, 20},
					sz2[3] = {10, 20, 25},
					sz3[3] = {10, 20, 24};

		memset(sel, 0, sizeof(sel));
		set_edge(sel, sc, 3, 0, 1, 1);
		set_edge(sel, sc, 3, 0, 2, 2);
		set_edge(sel, sc, 3, 1, 2, 3);
		n = dp_combine(3, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 3 && ns[0] == 2 && ns[1] == 2 && ns[2] == 2, "triangle of 8000 cells stays 3 pairs");
		n = dp_combine(3, sel, sc, sz2, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 3 && ns[0] == 2, "triangle of exactly gamma = 5000 cells stays pairs (below is strict)");
		n = dp_combine(3, sel, sc, sz3, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 1 && ns[0] == 3, "triangle of 4800 cells is combined");
	}

	/* two triangles sharing the edge (1,2): the second shares exactly 2 columns -> both accepted */
	{
		uint32_t	sz[4] = {3, 3, 3, 3};
		const uint32_t t1[3] = {0, 1, 2},
					t2[3] = {1, 2, 3};

		memset(sel, 0, sizeof(sel));
		set_edge(sel, sc, 4, 0, 1, 5);
		set_edge(sel, sc, 4, 0, 2, 5);
		set_edge(sel, sc, 4, 1, 2, 5);
		set_edge(sel, sc, 4, 1, 3, 1);
		set_edge(sel, sc, 4, 2, 3, 1);
		n = dp_combine(4, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 2 && memcmp(sets[0], t1, sizeof(t1)) == 0 && memcmp(sets[1], t2, sizeof(t2)) == 0,
				   "two triangles sharing an edge: second shares 2 columns, both accepted, best first");
	}

	/*
	 * The "> 2 shared columns" rule.  Edges 01,02,12 (triangle A = 012, scores 9), 23,24,34
	 * (B = 234, scores 6), and 04 (score s): triangles A = 27, B = 18 and C = 024 = 15 + s.
	 *  - s = 1: C = 16 < B: accept A (used 012), B shares {2} -> accept (used 01234), C shares 3
	 *    -> rejected; pair (0,4) is in no accepted clique and stays.
	 *  - s = 20: C = 9 + 20 + 6 = 35 > A = 27 > B = 18: accept C (024), A shares {0,2} -> accept
	 *    (used 0124), B shares {2,4} -> accept: three 3-sets, no pairs left.
	 */
	{
		uint32_t	sz[5] = {3, 3, 3, 3, 3};
		const uint32_t A[3] = {0, 1, 2},
					B[3] = {2, 3, 4},
					C[3] = {0, 2, 4},
					p04[2] = {0, 4};

		memset(sel, 0, sizeof(sel));
		set_edge(sel, sc, 5, 0, 1, 9);
		set_edge(sel, sc, 5, 0, 2, 9);
		set_edge(sel, sc, 5, 1, 2, 9);
		set_edge(sel, sc, 5, 2, 3, 6);
		set_edge(sel, sc, 5, 2, 4, 6);
		set_edge(sel, sc, 5, 3, 4, 6);
		set_edge(sel, sc, 5, 0, 4, 1);
		n = dp_combine(5, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 3 && memcmp(sets[0], A, sizeof(A)) == 0 && memcmp(sets[1], B, sizeof(B)) == 0 &&
				   ns[2] == 2 && memcmp(sets[2], p04, sizeof(p04)) == 0,
				   "triangle sharing 3 columns with accepted ones is rejected; its free pair (0,4) stays");
		set_edge(sel, sc, 5, 0, 4, 20);
		n = dp_combine(5, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 3 && memcmp(sets[0], C, sizeof(C)) == 0 && memcmp(sets[1], A, sizeof(A)) == 0 &&
				   memcmp(sets[2], B, sizeof(B)) == 0,
				   "same graph, other scores: order by score changes which triangles are accepted");
	}
}

/* dp_combine on larger cliques: one set below gamma, triangles above, at most DP_MARG_MAX_ATTRS columns */
static void
test_combine_cliques(void)
{
	uint8_t		sel[66];
	double		sc[66];
	set_t		sets[66];
	uint32_t	ns[66],
				n;

	memset(sc, 0, sizeof(sc));

	/* a 4-clique of small columns becomes one 4-set (no sub-triangles, no pairs) */
	{
		uint32_t	sz[5] = {2, 3, 4, 5, 6};
		const uint32_t q[4] = {0, 1, 3, 4};

		memset(sel, 0, sizeof(sel));
		for (uint32_t a = 0; a < 5; a++)
			for (uint32_t b = a + 1; b < 5; b++)
				if (a != 2 && b != 2)
					set_edge(sel, sc, 5, a, b, a + b);
		n = dp_combine(5, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 1 && ns[0] == 4 && memcmp(sets[0], q, sizeof(q)) == 0,
				   "4-clique {0,1,3,4} of 180 cells -> one 4-set");
	}

	/*
	 * A 4-clique of 10^4 cells (>= gamma) with triangles of 1000: the best triangle (by score)
	 * then another sharing 2 columns; the remaining two share 3; one pair is left.
	 * Scores: (0,1)=10, (0,2)=9, (0,3)=1, (1,2)=8, (1,3)=2, (2,3)=3.  Triangles: 012 = 27,
	 * 123 = 13, 023 = 13, 013 = 13.  Accept 012; ties at 13 by lexicographic order: 013 shares
	 * {0,1} -> accept (used 0123); 023, 123 share 3 -> rejected.  Pairs inside accepted: 01,02,12,
	 * 03,13; left: (2,3).
	 */
	{
		uint32_t	sz[4] = {10, 10, 10, 10};
		const uint32_t t012[3] = {0, 1, 2},
					t013[3] = {0, 1, 3},
					p23[2] = {2, 3};

		memset(sel, 0, sizeof(sel));
		set_edge(sel, sc, 4, 0, 1, 10);
		set_edge(sel, sc, 4, 0, 2, 9);
		set_edge(sel, sc, 4, 0, 3, 1);
		set_edge(sel, sc, 4, 1, 2, 8);
		set_edge(sel, sc, 4, 1, 3, 2);
		set_edge(sel, sc, 4, 2, 3, 3);
		n = dp_combine(4, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		unit_check(n == 3 && memcmp(sets[0], t012, sizeof(t012)) == 0 &&
				   memcmp(sets[1], t013, sizeof(t013)) == 0 && memcmp(sets[2], p23, sizeof(p23)) == 0,
				   "4-clique above gamma: triangles 012 then 013 (score tie -> lexicographic), pair (2,3) left");
	}

	/* a 10-clique of binary columns: the first set has DP_MARG_MAX_ATTRS = 8 columns */
	{
		uint32_t	sz[10];
		int			ok = 1;

		memset(sel, 0, sizeof(sel));
		for (uint32_t a = 0; a < 10; a++)
		{
			sz[a] = 2;
			for (uint32_t b = a + 1; b < 10; b++)
				set_edge(sel, sc, 10, a, b, 100 - a - b);
		}
		n = dp_combine(10, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
		for (uint32_t i = 0; i < n; i++)
			ok &= ns[i] <= DP_MARG_MAX_ATTRS;
		unit_check(n != DP_SELECT_ERROR && ns[0] == 8 && ok, "10-clique of binary columns: first set has 8 columns (n=%u)", n);
		unit_check(dp_combine(10, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 1) == DP_SELECT_ERROR,
				   "max_sets too small is an error");
	}
}

/* dp_combine on random graphs against the brute-force reference */
static void
test_combine_random(void)
{
	uint8_t		sel[66];
	double		sc[66];
	set_t		sets[66];
	uint32_t	ns[66],
				n;

	memset(sc, 0, sizeof(sc));

	/* random graphs against the brute-force reference */
	{
		dp_prng		p;
		int			ok = 1,
					cases = 1000;
		set_t		rs[66];
		uint32_t	rn[66],
					r;

		dp_prng_seed(&p, 2024);
		for (int c = 0; c < cases && ok; c++)
		{
			uint32_t	d = 3 + (uint32_t) dp_prng_below(&p, 8),
						m = d * (d - 1) / 2,
						sz[12];
			double		dens = 0.3 + 0.6 * dp_prng_unit(&p);

			for (uint32_t j = 0; j < d; j++)
				sz[j] = 1 + (uint32_t) dp_prng_below(&p, c % 2 ? 30 : 8);
			for (uint32_t k = 0; k < m; k++)
			{
				sel[k] = dp_prng_unit(&p) < dens;
				/* integer scores: ties happen and exercise the lexicographic order */
				sc[k] = (double) dp_prng_below(&p, 6);
			}
			n = dp_combine(d, sel, sc, sz, DP_COMBINE_GAMMA, sets, ns, 66);
			r = ref_combine(d, sel, sc, sz, DP_COMBINE_GAMMA, rs, rn);
			if (n != r || memcmp(ns, rn, n * sizeof(uint32_t)) != 0 || memcmp(sets, rs, n * sizeof(set_t)) != 0)
			{
				ok = 0;
				unit_diag("mismatch in case %d (d=%u): %u sets vs reference %u", c, d, n, r);
			}
			/* every selected pair lies in some output set */
			for (uint32_t a = 0; a < d && ok; a++)
				for (uint32_t b = a + 1; b < d && ok; b++)
					if (sel[dp_pair_index(d, a, b)])
					{
						int			in = 0;

						for (uint32_t i = 0; i < n; i++)
						{
							int			ha = 0,
										hb = 0;

							for (uint32_t j = 0; j < ns[i]; j++)
								ha |= sets[i][j] == a, hb |= sets[i][j] == b;
							in |= ha && hb;
						}
						ok &= in;
					}
		}
		unit_check(ok, "random graphs (d 3..10): dp_combine equals a brute-force reference, every selected pair covered");
	}
}

int
main(void)
{
	test_combine_triangles();
	test_combine_cliques();
	test_combine_random();
	return unit_done();
}
