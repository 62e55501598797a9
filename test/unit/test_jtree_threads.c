/*
 * test_jtree_threads.c - unit tests of the junction tree fit on several threads
 * (src/core/dp_jtree_walk.c): a big clique's passes walked in ranges of an outer block's codes
 * give the same potentials, bit for bit, as one thread, on a hand-made clique and on random
 * shapes that cut both the walk's K loop and an outer block.
 *
 * Fixed-seed dp_prng tables: tests of post-processing, not of privacy.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_codes.h"
#include "dp_env.h"
#include "dp_jtree.h"
#include "dp_marg.h"
#include "dp_prng.h"
#include "unit.h"
#include "unit_jtree.h"

#define DP_JTREE_MAX_CLIQUES_TEST 16

/*
 * The fit on 1, 2 and 3 threads: a clique of 2^16 cells (16^4: marginals {0,1,2}, {1,2,3} and
 * {0,3} close a cycle) walked in ranges of an outer block's codes on each thread gives the same
 * potentials, bit for bit, as one thread (noisy marginals: several sweeps of scalings and
 * projections, onto tables that hold the outer blocks and onto tables that do not).
 */
static void
test_fit_threads(void)
{
	uint32_t	sizes[6] = {16, 16, 16, 16, 8, 4};
	const uint32_t sets[8][3] = {{0}, {3}, {0, 1, 2}, {1, 2, 3}, {0, 3}, {3, 4}, {4, 5}, {2, 5}};
	const uint32_t nat[8] = {1, 1, 3, 3, 2, 2, 2, 2};
	uint32_t	saved = dp_threads();
	dp_prng		rng;
	dp_codes	t;
	dp_marg		m[8];
	double	   *ref[16] = {NULL};
	uint32_t	nref = 0;
	uint64_t	biggest = 0;
	bool		same[4] = {true, true, true, true};
	int			sweeps[4] = {0, 0, 0, 0};

	dp_prng_seed(&rng, 4242);
	random_table(&t, 6, sizes, 40000, &rng);
	exact_all(m, &t, 8, sets, nat, sizes);
	for (uint32_t k = 0; k < 8; k++)
		for (uint64_t q = 0; q < m[k].ncells; q++)
			m[k].cells[q] = fmax(0.5, m[k].cells[q] + 6 * (dp_prng_unit(&rng) - 0.5));
	for (uint32_t th = 1; th <= 3; th++)
	{
		dp_jtree	jt;

		dp_set_threads(th);
		if (dp_jtree_build(&jt, m, 8, 6, sizes, (uint64_t) 1 << 22) != 0)
		{
			unit_check(false, "a tree for the threads' fit");
			break;
		}
		sweeps[th] = dp_jtree_fit(&jt, m, 8, 12, 0, NULL, NULL);
		for (uint32_t i = 0; i < jt.ncliques && i < 16; i++)
		{
			size_t		sz = sizeof(double) * jt.cl[i].ncells;

			if (th == 1)
			{
				ref[i] = malloc(sz);
				memcpy(ref[i], jt.cl[i].P, sz);
				nref = jt.ncliques;
				if (jt.cl[i].ncells > biggest)
					biggest = jt.cl[i].ncells;
			}
			else
				same[th] = same[th] && jt.ncliques == nref && memcmp(ref[i], jt.cl[i].P, sz) == 0;
		}
		dp_jtree_free(&jt);
	}
	dp_set_threads(saved);
	unit_check(biggest >= ((uint64_t) 1 << 16) && sweeps[1] >= 2 && sweeps[1] == sweeps[2] && sweeps[1] == sweeps[3],
			   "the threads' fit: a clique of %llu cells, %d sweeps on each thread count",
			   (unsigned long long) biggest, sweeps[1]);
	unit_check(same[2] && same[3], "the fit's potentials on 2 and 3 threads are those of 1 thread, bit for bit");
	for (uint32_t i = 0; i < 16; i++)
		free(ref[i]);
	free_margs(m, 8);
	dp_codes_free(&t);
}

/*
 * The fit on 1, 2 and 3 threads over random shapes: 4 to 6 columns of 4 to 32 codes, 3 to 7
 * noisy marginals of 1 to 3 columns, kept when a clique has 2^16 cells or more.  Every shape's
 * potentials on 2 and 3 threads are those of 1 thread, bit for bit; and the shapes walk both
 * kinds of cut (dp_jtree_test_cuts): a range of the walk's K loop, and a range of an outer block
 * that the odometer turns (a projection onto a table holding non-adjacent columns of the clique,
 * or a scaling of a clique of three runs or more).
 */
static void
test_fit_threads_shapes(void)
{
	uint32_t	saved = dp_threads();
	dp_prng		rng;
	uint32_t	shapes = 0,
				differ = 0;
	uint64_t	cuts[2] = {0, 0};

	dp_prng_seed(&rng, 777);
	for (uint32_t trial = 0; trial < 4000 && shapes < 16; trial++)
	{
		uint32_t	d = 4 + (uint32_t) (dp_prng_unit(&rng) * 3),
					nm = 3 + (uint32_t) (dp_prng_unit(&rng) * 5),
					sizes[6],
					sets[7][3],
					nat[7];
		dp_codes	t;
		dp_marg		m[7];
		dp_jtree	jt;
		double	   *ref[DP_JTREE_MAX_CLIQUES_TEST] = {NULL};
		uint32_t	nref = 0;
		uint64_t	biggest = 0;
		bool		ok = true;

		for (uint32_t c = 0; c < d; c++)
			sizes[c] = 4 + (uint32_t) (dp_prng_unit(&rng) * 29);
		for (uint32_t k = 0; k < nm; k++)
		{
			uint32_t	pick[6] = {0, 1, 2, 3, 4, 5};

			nat[k] = 1 + (uint32_t) (dp_prng_unit(&rng) * 3);
			/* nat[k] distinct columns, increasing */
			for (uint32_t i = 0; i < nat[k]; i++)
			{
				uint32_t	j = i + (uint32_t) (dp_prng_unit(&rng) * (d - i)),
							tmp = pick[i];

				pick[i] = pick[j];
				pick[j] = tmp;
			}
			for (uint32_t i = 0; i < nat[k]; i++)
				for (uint32_t j = i + 1; j < nat[k]; j++)
					if (pick[j] < pick[i])
					{
						uint32_t	tmp = pick[i];

						pick[i] = pick[j];
						pick[j] = tmp;
					}
			memcpy(sets[k], pick, sizeof(uint32_t) * nat[k]);
		}
		dp_set_threads(1);
		shape_margs(m, nm, (const uint32_t (*)[3]) sets, nat, sizes);
		if (dp_jtree_build(&jt, m, nm, d, sizes, (uint64_t) 1 << 20) != 0)
		{
			free_margs(m, nm);
			continue;			/* too large a tree for this bound: not a shape of this test */
		}
		nref = jt.ncliques;
		for (uint32_t i = 0; i < jt.ncliques; i++)
			if (jt.cl[i].ncells > biggest)
				biggest = jt.cl[i].ncells;
		dp_jtree_free(&jt);
		free_margs(m, nm);
		if (biggest < ((uint64_t) 1 << 16) || nref > DP_JTREE_MAX_CLIQUES_TEST)
			continue;
		shapes++;
		random_table(&t, d, sizes, 3000, &rng);
		exact_all(m, &t, nm, (const uint32_t (*)[3]) sets, nat, sizes);
		for (uint32_t k = 0; k < nm; k++)
			for (uint64_t q = 0; q < m[k].ncells; q++)
				m[k].cells[q] = fmax(0.5, m[k].cells[q] + 4 * (dp_prng_unit(&rng) - 0.5));
		for (uint32_t th = 1; th <= 3 && ok; th++)
		{
			uint64_t	kl,
						ou;

			dp_set_threads(th);
			dp_jtree_test_cuts(&kl, &ou);
			if (dp_jtree_build(&jt, m, nm, d, sizes, (uint64_t) 1 << 20) != 0)
			{
				ok = false;
				break;
			}
			(void) dp_jtree_fit(&jt, m, nm, 4, 0, NULL, NULL);
			dp_jtree_test_cuts(&kl, &ou);
			cuts[0] += kl;
			cuts[1] += ou;
			for (uint32_t i = 0; i < jt.ncliques; i++)
			{
				size_t		sz = sizeof(double) * jt.cl[i].ncells;

				if (th == 1)
				{
					ref[i] = malloc(sz);
					memcpy(ref[i], jt.cl[i].P, sz);
					nref = jt.ncliques;
				}
				else
					ok = ok && jt.ncliques == nref && memcmp(ref[i], jt.cl[i].P, sz) == 0;
			}
			dp_jtree_free(&jt);
		}
		if (!ok)
			differ++;
		for (uint32_t i = 0; i < DP_JTREE_MAX_CLIQUES_TEST; i++)
			free(ref[i]);
		free_margs(m, nm);
		dp_codes_free(&t);
	}
	dp_set_threads(saved);
	unit_check(shapes >= 12 && differ == 0,
			   "random shapes: the fit on 2 and 3 threads is that of 1 thread, bit for bit (%u of %u shapes differ)",
			   differ, shapes);
	unit_check(cuts[0] > 0 && cuts[1] > 0,
			   "random shapes walk both cuts on threads: %llu of the K loop, %llu of an outer block",
			   (unsigned long long) cuts[0], (unsigned long long) cuts[1]);
}

int
main(void)
{
	alarm(300);
	test_fit_threads();
	test_fit_threads_shapes();
	return unit_done();
}
