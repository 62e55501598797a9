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

/*
 * The moves [from, to) of one part, in batches of g->batch: each move's row is changed at once
 * (its codes prefetched a few moves ahead), and the old and new codes of the component's columns
 * are written to the part's buffers, column by column; then batch_counts moves the counts of
 * each marginal concerned, one marginal at a time over the whole batch, so that its counts stay
 * in L1.  Duplicates change every column of the component, so every marginal of the component
 * is updated; replaces change m's columns only, so only m's neighbours are.  The moves of one
 * cell are consecutive in the list (visit builds it cell by cell), so a replace decodes its cell
 * into codes only when the cell differs from the previous replace's.
 */
/*
 * Lazy counting: the moves change rows and record nothing.  Column by column over the whole chunk
 * rather than move by move: a duplicate writes every column of the component, and on a wide one
 * (bench/wide.sh: 100 columns of n bytes each, 60 MB at 600,000 rows) the move-by-move order
 * misses the cache on every column of every move, while one column at a time streams that
 * column (n bytes) through the cache once for all the chunk's moves.  Measured on the wide
 * table's model, 600,000 rows (dp_sample, 2-core VM): 347 -> 219 CPU seconds, the same rows.
 * What is left is memory traffic: a visit moves a few percent of the rows, so nearly every cache
 * line of every column is read and written (ordering the duplicates by source row did not
 * help).  The moves are independent (see mover: distinct destinations, and no source is a
 * destination), so the order changes no row.
 */
static void
KFN(run_moves_lazy)(mover *w, const uint32_t *cc, uint32_t ncc)
{
	gum		   *g = w->g;
	const gmarg *m = w->m;
	const uint32_t *list = g->mvpart[w->part];
	uint32_t   *restrict drow = g->lzdrow[w->part],
			   *restrict dsrc = g->lzdsrc[w->part],
			   *restrict rrow = g->lzrrow[w->part],
			   *restrict rcell = g->lzrcell[w->part];
	CODE_T	  **col = (CODE_T **) g->wcol;
	uint32_t	nd = 0,
				nr = 0;

	for (uint32_t j = w->from; j < w->to; j++)
	{
		uint32_t	i = list[j];

		if (g->mvdup[i])
		{
			drow[nd] = g->want[i];
			dsrc[nd++] = g->mvarg[i];
		}
		else
		{
			rrow[nr] = g->want[i];
			rcell[nr++] = g->mvarg[i];
		}
	}
	/* "duplicate": src's codes of every column of the component into row */
	for (uint32_t c = 0; c < ncc; c++)
	{
		CODE_T	   *restrict cp = col[cc[c]];

		for (uint32_t t = 0; t < nd; t++)
			cp[drow[t]] = cp[dsrc[t]];
	}
	/* "replace": row's codes of m's columns from its cell (a cell's moves are consecutive) */
	for (uint32_t a = 0; a < m->nattrs; a++)
	{
		CODE_T	   *restrict cp = col[m->attrs[a]];
		const uint32_t s = m->strides[a],
					z = m->sizes[a];
		uint32_t	lastk = UINT32_MAX;	/* no cell: cells are < 2^32 - 1 */
		CODE_T		v = 0;

		for (uint32_t t = 0; t < nr; t++)
		{
			if (rcell[t] != lastk)
			{
				lastk = rcell[t];
				v = (CODE_T) ((lastk / s) % z);
			}
			cp[rrow[t]] = v;
		}
	}
}

static void *
KFN(run_moves)(void *arg)
{
	mover	   *w = arg;
	gum		   *g = w->g;
	const gmarg *m = w->m;
	const uint32_t *list = g->mvpart[w->part];
	const uint32_t *cc = g->comp_cols + g->comp_cols_off[m->comp];
	const uint32_t ncc = g->comp_cols_off[m->comp + 1] - g->comp_cols_off[m->comp],
				B = g->batch;
	CODE_T	  **col = (CODE_T **) g->wcol;
	uint16_t   *dold = g->bdold[w->part],
			   *dnew = g->bdnew[w->part],
			   *rold = g->brold[w->part],
			   *rnew = g->brnew[w->part];
	uint32_t	mpos[DP_MARG_MAX_ATTRS],
				lastk = UINT32_MAX;	/* no cell: cells are < 2^32 - 1 */
	uint16_t	code[DP_MARG_MAX_ATTRS] = {0};
	/* rows of a working table that fits in cache need no prefetching */
	const bool	prefetch = (size_t) g->n * ncc * sizeof(CODE_T) > GUM_PREFETCH_MIN_BYTES;

	if (g->lazy)
	{
		KFN(run_moves_lazy)(w, cc, ncc);
		return NULL;
	}
	for (uint32_t a = 0; a < m->nattrs; a++)
		mpos[a] = g->colpos[m->attrs[a]];
	for (uint32_t j0 = w->from; j0 < w->to; j0 += B)
	{
		uint32_t	j1 = w->to - j0 < B ? w->to : j0 + B,
					nd = 0,
					nr = 0;

		for (uint32_t j = j0; j < j1; j++)
		{
			uint32_t	i = list[j],
						row = g->want[i];

			if (prefetch && j + GUM_PREFETCH < w->to)
			{
				uint32_t	ia = list[j + GUM_PREFETCH],
							ra = g->want[ia];

				for (uint32_t c = 0; c < ncc; c++)
					__builtin_prefetch(col[cc[c]] + ra, 1);
				if (g->mvdup[ia])
				{
					uint32_t	sa = g->mvarg[ia];

					for (uint32_t c = 0; c < ncc; c++)
						__builtin_prefetch(col[cc[c]] + sa, 0);
				}
			}
			if (g->mvdup[i])
			{
				/* "duplicate": copy src's codes of every column of the component into row */
				uint32_t	src = g->mvarg[i];

				for (uint32_t c = 0; c < ncc; c++)
				{
					CODE_T	   *cp = col[cc[c]],
								o = cp[row],
								v = cp[src];

					cp[row] = v;
					dold[(size_t) c * B + nd] = o;
					dnew[(size_t) c * B + nd] = v;
				}
				nd++;
			}
			else
			{
				/* "replace": overwrite row's codes of m's columns with those of cell k */
				uint32_t	k = g->mvarg[i];

				if (k != lastk)
				{
					for (uint32_t a = 0; a < m->nattrs; a++)
						code[a] = (uint16_t) ((k / m->strides[a]) % m->sizes[a]);
					lastk = k;
				}
				for (uint32_t c = 0; c < ncc; c++)
					rold[(size_t) c * B + nr] = rnew[(size_t) c * B + nr] = col[cc[c]][row];
				for (uint32_t a = 0; a < m->nattrs; a++)
				{
					rnew[(size_t) mpos[a] * B + nr] = code[a];
					col[m->attrs[a]][row] = (CODE_T) code[a];
				}
				nr++;
			}
		}
		batch_counts(w, dold, dnew, nd, g->comp_margs + g->comp_margs_off[m->comp],
					 g->comp_margs_off[m->comp + 1] - g->comp_margs_off[m->comp]);
		batch_counts(w, rold, rnew, nr, m->nbr, m->nnbr);
	}
	return NULL;
}
