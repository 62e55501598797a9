/*
 * dp_gum_kernels.h - the loops of GUM that touch the synthetic table's codes, included twice by
 * dp_gum.c: with CODE_T uint8_t (every column of the iterated marginals has at most 256 codes:
 * the working table is half the size, and a row's codes are fewer cache lines) and with CODE_T
 * uint16_t.  KFN(name) names each instance.  Not a header of its own: it uses dp_gum.c's types.
 */
/*
 * Cell indexes of rows [start, start + nb) of marginal m.  A full block has a constant trip count
 * and restrict pointers, so that gcc -O2's "very cheap" vectoriser takes the loops.
 */
static inline void
KFN(idx_first)(uint32_t *restrict idx, const CODE_T *restrict c, uint32_t s, uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++)
		idx[i] = s * c[i];
}

static inline void
KFN(idx_add)(uint32_t *restrict idx, const CODE_T *restrict c, uint32_t s, uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++)
		idx[i] += s * c[i];
}

static void
KFN(gindex_block)(const gmarg *m, CODE_T *const *col, uint32_t start, uint32_t nb, uint32_t *idx)
{
	if (nb == GUM_BLOCK)
	{
		KFN(idx_first)(idx, col[m->attrs[0]] + start, m->strides[0], GUM_BLOCK);
		for (uint32_t k = 1; k < m->nattrs; k++)
			KFN(idx_add)(idx, col[m->attrs[k]] + start, m->strides[k], GUM_BLOCK);
		return;
	}
	KFN(idx_first)(idx, col[m->attrs[0]] + start, m->strides[0], nb);
	for (uint32_t k = 1; k < m->nattrs; k++)
		KFN(idx_add)(idx, col[m->attrs[k]] + start, m->strides[k], nb);
}

/*
 * The rows of part p holding the wanted ordinals of part p: pwbeg/pwend[p][k] delimit, in want,
 * the ordinals of cell k that fall in part p, made local to the part; each is overwritten by the
 * row found.  Stops as soon as every wanted row of the part is found.
 */
static void *
KFN(scan_part)(void *arg)
{
	scanner    *sc = arg;
	gum		   *g = sc->g;
	const uint32_t p = sc->part,
				end = g->pb[p + 1];
	uint32_t   *seen = g->pseen[p],
			   *wbeg = g->pwbeg[p],
			   *wend = g->pwend[p],
			   *want = g->want;
	uint64_t	remaining = g->pwanted[p];

	for (uint32_t start = g->pb[p]; start < end && remaining > 0; start += GUM_BLOCK)
	{
		uint32_t	idx[GUM_BLOCK];
		uint32_t	nb = end - start < GUM_BLOCK ? end - start : GUM_BLOCK;

		KFN(gindex_block)(sc->m, (CODE_T *const *) g->wcol, start, nb, idx);
		for (uint32_t i = 0; i < nb; i++)
		{
			uint32_t	k = idx[i];
			uint32_t   *sk = seen + 2 * k;
			uint32_t	o = sk[0]++;

			if (o == sk[1])
			{
				uint32_t	q = wbeg[k];

				do
				{
					want[q++] = start + i;
					remaining--;
				} while (q < wend[k] && want[q] == o);
				wbeg[k] = q;
				sk[1] = q < wend[k] ? want[q] : UINT32_MAX;
			}
		}
	}
	sc->left = remaining;
	return NULL;
}

/* "replace": overwrite row's values of m's columns with the codes of cell k. */
static void
KFN(do_replace)(mover *w, uint32_t row, uint32_t k)
{
	gum		   *g = w->g;
	const gmarg *m = w->m;
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[m->comp];
	uint32_t	ncc = g->comp_cols_off[m->comp + 1] - g->comp_cols_off[m->comp];

	/* the neighbours of m only read columns of m's component */
	for (uint32_t i = 0; i < ncc; i++)
		w->vold[cc[i]] = w->vnew[cc[i]] = ((CODE_T **) g->wcol)[cc[i]][row];
	for (uint32_t a = 0; a < m->nattrs; a++)
	{
		uint16_t	code = (uint16_t) ((k / m->strides[a]) % m->sizes[a]);

		w->vnew[m->attrs[a]] = code;
		((CODE_T **) g->wcol)[m->attrs[a]][row] = (CODE_T) code;
	}
	update_counts(w, m->nbr, m->nnbr);
}

/* "duplicate": copy src's values of every column of m's component into row. */
static void
KFN(do_duplicate)(mover *w, uint32_t row, uint32_t src)
{
	gum		   *g = w->g;
	const uint32_t comp = w->m->comp;
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[comp];
	uint32_t	ncc = g->comp_cols_off[comp + 1] - g->comp_cols_off[comp];
	const gpair *pp = g->pairs[w->part] + g->comp_pairs_off[comp],
			   *pend = g->pairs[w->part] + g->comp_pairs_off[comp + 1];
	const uint16_t *vo = w->vold,
			   *vn = w->vnew;

	for (uint32_t i = 0; i < ncc; i++)
	{
		CODE_T	   *c = ((CODE_T **) g->wcol)[cc[i]];

		w->vold[cc[i]] = c[row];
		w->vnew[cc[i]] = c[src];
	}
	for (uint32_t i = 0; i < ncc; i++)
		((CODE_T **) g->wcol)[cc[i]][row] = (CODE_T) w->vnew[cc[i]];
	/* the 2-way marginals (most of them), then the others */
	for (; pp < pend; pp++)
	{
		pp->cnt[pp->stride * vo[pp->a0] + vo[pp->a1]]--;
		pp->cnt[pp->stride * vn[pp->a0] + vn[pp->a1]]++;
	}
	update_counts(w, g->comp_multi + g->comp_multi_off[comp],
				  g->comp_multi_off[comp + 1] - g->comp_multi_off[comp]);
}

/* The moves of one part, prefetching the rows of the moves a few places ahead. */
static void *
KFN(run_moves)(void *arg)
{
	mover	   *w = arg;
	gum		   *g = w->g;
	const uint32_t *list = g->mvpart[w->part];
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[w->m->comp];
	uint32_t	ncc = g->comp_cols_off[w->m->comp + 1] - g->comp_cols_off[w->m->comp];

	for (uint32_t j = w->from; j < w->to; j++)
	{
		uint32_t	i = list[j];

		if (j + GUM_PREFETCH < w->to)
		{
			uint32_t	ia = list[j + GUM_PREFETCH],
						ra = g->want[ia];

			if (g->mvdup[ia])
			{
				uint32_t	sa = g->mvarg[ia];

				for (uint32_t c = 0; c < ncc; c++)
				{
					const CODE_T *col = ((CODE_T **) g->wcol)[cc[c]];

					__builtin_prefetch(col + ra, 1);
					__builtin_prefetch(col + sa, 0);
				}
			}
			else
				for (uint32_t c = 0; c < ncc; c++)
					__builtin_prefetch(((CODE_T **) g->wcol)[cc[c]] + ra, 1);
		}
		if (g->mvdup[i])
			KFN(do_duplicate)(w, g->want[i], g->mvarg[i]);
		else
			KFN(do_replace)(w, g->want[i], g->mvarg[i]);
	}
	return NULL;
}

