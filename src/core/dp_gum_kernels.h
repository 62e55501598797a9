/*
 * dp_gum_kernels.h - the loops of GUM that touch the synthetic table's codes, included three
 * times by dp_gum_update.c (_u8, _u16 and the grouped _g8): with CODE_T uint8_t (every column of the
 * iterated marginals has at most 256 codes: the working table is half the size, and a row's
 * codes are fewer cache lines) and with CODE_T uint16_t.  KFN(name) names each instance.  Not a
 * header of its own: it uses dp_gum_internal.h's types.
 *
 * KS(S) is the distance between two rows' codes of one column: 1 in the column-major instances
 * (_u8, _u16: the parameter S is not read, and the loops are the same as with plain indexing), S in
 * the grouped instance (_g8: 8-bit codes of a wide component stored S bytes to a row, see "Grouped
 * layout" in dp_gum_store.c).
 */
/*
 * Cell indexes of rows [start, start + nb) of marginal m.  A full block has a constant trip count
 * and restrict pointers, so that gcc -O2's "very cheap" vectoriser takes the loops.
 */
static inline void
KFN(idx_first)(uint32_t *restrict idx, const CODE_T *restrict c, uint32_t s, uint32_t nb, uint32_t S)
{
	for (uint32_t i = 0; i < nb; i++)
		idx[i] = s * c[(size_t) i * KS(S)];
}

static inline void
KFN(idx_add)(uint32_t *restrict idx, const CODE_T *restrict c, uint32_t s, uint32_t nb, uint32_t S)
{
	for (uint32_t i = 0; i < nb; i++)
		idx[i] += s * c[(size_t) i * KS(S)];
}

static void
KFN(gindex_block)(const gmarg *m, CODE_T *const *col, uint32_t start, uint32_t nb, uint32_t *idx,
				  uint32_t S)
{
	const size_t off = (size_t) start * KS(S);

	if (KS(S) > 1 && m->nattrs == 2)
	{
		/* grouped: both codes of a row in one loop (two strided loops cost twice as much) */
		const CODE_T *restrict c0 = col[m->attrs[0]] + off,
				   *restrict c1 = col[m->attrs[1]] + off;
		const uint32_t s0 = m->strides[0],
					s1 = m->strides[1];

		for (uint32_t i = 0; i < nb; i++)
			idx[i] = s0 * c0[(size_t) i * KS(S)] + s1 * c1[(size_t) i * KS(S)];
		return;
	}
	if (nb == GUM_BLOCK)
	{
		KFN(idx_first)(idx, col[m->attrs[0]] + off, m->strides[0], GUM_BLOCK, S);
		for (uint32_t k = 1; k < m->nattrs; k++)
			KFN(idx_add)(idx, col[m->attrs[k]] + off, m->strides[k], GUM_BLOCK, S);
		return;
	}
	KFN(idx_first)(idx, col[m->attrs[0]] + off, m->strides[0], nb, S);
	for (uint32_t k = 1; k < m->nattrs; k++)
		KFN(idx_add)(idx, col[m->attrs[k]] + off, m->strides[k], nb, S);
}

/*
 * The rows of part p holding the wanted ordinals of part p: pwbeg/pwend[p][k] delimit, in want,
 * the ordinals of cell k that fall in part p, made local to the part; each is overwritten by the
 * row found.  Stops as soon as every wanted row of the part is found.  When the visit's recount
 * kept the rows' cells (g->idx_of == m, grouped layout), they are read from g->rowidx instead of
 * being computed again.
 */
static void *
KFN(scan_part)(void *arg)
{
	scanner    *sc = arg;
	gum		   *g = sc->g;
	const uint32_t p = sc->part,
				end = g->pb[p + 1];
	uint32_t   *left = g->pleft[p],
			   *wbeg = g->pwbeg[p],
			   *wend = g->pwend[p],
			   *want = g->want;
	uint64_t	remaining = g->pwanted[p];
	const uint32_t S = g->cstride[sc->m->comp];
	const bool	kept = g->idx_of == sc->m;

	for (uint32_t start = g->pb[p]; start < end && remaining > 0; start += GUM_BLOCK)
	{
		uint32_t	buf[GUM_BLOCK];
		const uint32_t *idx = buf;
		uint32_t	nb = end - start < GUM_BLOCK ? end - start : GUM_BLOCK;

		if (kept)
			idx = g->rowidx + start;
		else
			KFN(gindex_block)(sc->m, (CODE_T *const *) g->wcol, start, nb, buf, S);
		for (uint32_t i = 0; i < nb; i++)
		{
			uint32_t	k = idx[i];

			if (--left[k] == 0)
			{
				/* this row is cell k's wanted ordinal o (perhaps wanted more than once) */
				uint32_t	q = wbeg[k],
							o = want[q];

				do
				{
					want[q++] = start + i;
					remaining--;
				} while (q < wend[k] && want[q] == o);
				wbeg[k] = q;
				/* UINT32_MAX: nothing more wanted, never reached since a table has fewer than
				 * UINT32_MAX rows (dp_gum refuses n >= UINT32_MAX) */
				left[k] = q < wend[k] ? want[q] - o : UINT32_MAX;
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
 * (a hundred columns of n bytes each) the move-by-move order misses the cache on every column
 * of every move, while one column at a time streams that column (n bytes) through the cache
 * once for all the chunk's moves.  What is left is memory traffic: a visit moves a few percent of the rows, so nearly every cache
 * line of every column is read and written (ordering the duplicates by source row did not
 * help).  The moves are independent (see mover: distinct destinations, and no source is a
 * destination), so the order changes no row.
 */
static void
KFN(run_moves_lazy)(mover *w, const uint32_t *cc, uint32_t ncc, uint32_t S)
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
	if (KS(S) > 1)
	{
		/*
		 * Grouped layout: a row's codes are S consecutive bytes of each of the component's groups,
		 * so move by move, a group's slice at a time (the moves' rows prefetched ahead).
		 */
		CODE_T	   *const *gb = (CODE_T *const *) g->grp + g->cgrp_off[m->comp];
		const uint32_t ngr = g->cgrp_off[m->comp + 1] - g->cgrp_off[m->comp];
		const size_t sz = (size_t) KS(S) * sizeof(CODE_T);

		for (uint32_t t = 0; t < nd; t++)
		{
			if (t + GUM_PREFETCH < nd)
				for (uint32_t q = 0; q < ngr; q++)
				{
					const CODE_T *a = gb[q] + (size_t) drow[t + GUM_PREFETCH] * KS(S),
							   *b = gb[q] + (size_t) dsrc[t + GUM_PREFETCH] * KS(S);

					__builtin_prefetch(a, 1);
					__builtin_prefetch(a + KS(S) - 1, 1);
					__builtin_prefetch(b, 0);
					__builtin_prefetch(b + KS(S) - 1, 0);
				}
			for (uint32_t q = 0; q < ngr; q++)
				copy_slice((uint8_t *) (gb[q] + (size_t) drow[t] * KS(S)),
						   (const uint8_t *) (gb[q] + (size_t) dsrc[t] * KS(S)), sz);
		}
	}
	else
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
			cp[(size_t) rrow[t] * KS(S)] = v;
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
	const uint32_t S = g->cstride[m->comp];

	if (g->lazy)
	{
		KFN(run_moves_lazy)(w, cc, ncc, S);
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

				if (KS(S) > 1)
				{
					/* grouped: a row is one slice of each group */
					CODE_T	   *const *gb = (CODE_T *const *) g->grp + g->cgrp_off[m->comp];
					const uint32_t ngr = g->cgrp_off[m->comp + 1] - g->cgrp_off[m->comp];

					for (uint32_t q = 0; q < ngr; q++)
					{
						__builtin_prefetch(gb[q] + (size_t) ra * KS(S), 1);
						__builtin_prefetch(gb[q] + (size_t) ra * KS(S) + KS(S) - 1, 1);
					}
					if (g->mvdup[ia])
					{
						uint32_t	sa = g->mvarg[ia];

						for (uint32_t q = 0; q < ngr; q++)
						{
							__builtin_prefetch(gb[q] + (size_t) sa * KS(S), 0);
							__builtin_prefetch(gb[q] + (size_t) sa * KS(S) + KS(S) - 1, 0);
						}
					}
				}
				else
				{
					for (uint32_t c = 0; c < ncc; c++)
						__builtin_prefetch(col[cc[c]] + ra, 1);
					if (g->mvdup[ia])
					{
						uint32_t	sa = g->mvarg[ia];

						for (uint32_t c = 0; c < ncc; c++)
							__builtin_prefetch(col[cc[c]] + sa, 0);
					}
				}
			}
			if (g->mvdup[i])
			{
				/* "duplicate": copy src's codes of every column of the component into row */
				uint32_t	src = g->mvarg[i];

				for (uint32_t c = 0; c < ncc; c++)
				{
					CODE_T	   *cp = col[cc[c]],
								o = cp[(size_t) row * KS(S)],
								v = cp[(size_t) src * KS(S)];

					cp[(size_t) row * KS(S)] = v;
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
					rold[(size_t) c * B + nr] = rnew[(size_t) c * B + nr] = col[cc[c]][(size_t) row * KS(S)];
				for (uint32_t a = 0; a < m->nattrs; a++)
				{
					rnew[(size_t) mpos[a] * B + nr] = code[a];
					col[m->attrs[a]][(size_t) row * KS(S)] = (CODE_T) code[a];
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
