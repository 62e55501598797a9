/*
 * unit_jtree.h - helpers shared by the maximum-entropy tests (test_maxent.c, test_jtree.c,
 * test_jtree_threads.c) and fuzz_maxent.c: marginals of a table, a random table with dependent
 * columns, and the junction tree's invariants.
 */
#ifndef DPSYNTH_UNIT_JTREE_H
#define DPSYNTH_UNIT_JTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_codes.h"
#include "dp_jtree.h"
#include "dp_marg.h"
#include "dp_prng.h"

/* Exact marginals of t: sets[k][0..nat[k]) (increasing) */
static void __attribute__((unused))
exact_all(dp_marg *m, const dp_codes *t, uint32_t nm, const uint32_t (*sets)[3], const uint32_t *nat,
		  const uint32_t *sizes)
{
	for (uint32_t k = 0; k < nm; k++)
	{
		dp_marg_init(&m[k], nat[k], sets[k], sizes);
		dp_marg_count(&m[k], t);
	}
}

/* Marginals with no cells counted, for shapes only */
static void __attribute__((unused))
shape_margs(dp_marg *m, uint32_t nm, const uint32_t (*sets)[3], const uint32_t *nat, const uint32_t *sizes)
{
	for (uint32_t k = 0; k < nm; k++)
	{
		dp_marg_init(&m[k], nat[k], sets[k], sizes);
		for (uint64_t q = 0; q < m[k].ncells; q++)
			m[k].cells[q] = 1;
	}
}

static void __attribute__((unused))
free_margs(dp_marg *m, uint32_t nm)
{
	for (uint32_t k = 0; k < nm; k++)
		dp_marg_free(&m[k]);
}

/* A random table of n rows over sizes[0..d), each column depending on the one before. */
static void __attribute__((unused))
random_table(dp_codes *t, uint32_t d, const uint32_t *sizes, uint64_t n, dp_prng *rng)
{
	uint16_t	row[64];	/* d <= 64 */

	dp_codes_init(t, d, n);
	for (uint64_t i = 0; i < n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
		{
			if (j > 0 && dp_prng_unit(rng) < 0.6)
				row[j] = (uint16_t) ((row[j - 1] + (j == 2 ? row[0] : 0)) % sizes[j]);
			else
				row[j] = (uint16_t) dp_prng_below(rng, sizes[j]);
		}
		dp_codes_append(t, row);
	}
}

/*
 * The tree's invariants: parents numbered before their children, depth, separators equal to
 * the intersections, the running intersection property (the cliques holding a column form one
 * subtree: exactly one of them has a parent without it), every marginal inside a clique, cells.
 */
static bool __attribute__((unused))
jtree_ok(const dp_jtree *t, const dp_marg *m, uint32_t nm)
{
	uint64_t	cells = 0;

	for (uint32_t i = 0; i < t->ncliques; i++)
	{
		const dp_jtree_clique *c = &t->cl[i];
		uint64_t	nc = 1,
					ns = 1;

		if ((i == 0) != (c->parent < 0) || (i > 0 && (uint32_t) c->parent >= i))
			return false;
		if (i > 0 && c->depth != t->cl[c->parent].depth + 1)
			return false;
		for (uint32_t a = 0; a < c->nattrs; a++)
			nc *= c->sizes[a];
		for (uint32_t s = 0; s < c->nsep; s++)
		{
			if (c->attrs[c->sep_here[s]] != t->cl[c->parent].attrs[c->sep_there[s]])
				return false;
			ns *= c->sizes[c->sep_here[s]];
		}
		if (i > 0)
		{
			uint32_t	shared = 0;

			for (uint32_t a = 0; a < c->nattrs; a++)
				for (uint32_t b = 0; b < t->cl[c->parent].nattrs; b++)
					shared += c->attrs[a] == t->cl[c->parent].attrs[b];
			if (shared != c->nsep)
				return false;
		}
		if (nc != c->ncells || ns != c->sep_cells)
			return false;
		cells += nc + ns;
	}
	if (cells != t->cells)
		return false;
	for (uint32_t j = 0; j < t->d; j++)
	{
		uint32_t	tops = 0;

		for (uint32_t i = 0; i < t->ncliques; i++)
		{
			const dp_jtree_clique *c = &t->cl[i];
			bool		has = false,
						phas = false;

			for (uint32_t a = 0; a < c->nattrs; a++)
				has = has || c->attrs[a] == j;
			for (uint32_t a = 0; c->parent >= 0 && a < t->cl[c->parent].nattrs; a++)
				phas = phas || t->cl[c->parent].attrs[a] == j;
			tops += has && !phas;
		}
		if (tops != 1)
			return false;
	}
	for (uint32_t k = 0; k < nm; k++)
	{
		bool		in = false;

		for (uint32_t i = 0; i < t->ncliques && !in; i++)
		{
			uint32_t	hits = 0;

			for (uint32_t a = 0; a < m[k].nattrs; a++)
				for (uint32_t b = 0; b < t->cl[i].nattrs; b++)
					hits += m[k].attrs[a] == t->cl[i].attrs[b];
			in = hits == m[k].nattrs;
		}
		if (!in)
			return false;
	}
	return true;
}

#endif
