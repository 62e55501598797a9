/*
 * dp_odo.h - an odometer over the cells of a row-major table (the last column fastest) that
 * keeps the cell's index in a second table over some of its columns up to date as it moves:
 * step[j] is that table's stride of column j, 0 for a column it does not hold.  Used by the
 * maximum-entropy fits (dp_maxent.c over the whole joint table, dp_jtree.c over a clique) to
 * project a table onto a marginal and to scale it by a marginal's factors in one pass.
 *
 * Pure C: no PostgreSQL headers.
 */
#ifndef DP_ODO_H
#define DP_ODO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DP_ODO_MAX_COLS 64

typedef struct dp_odo
{
	uint32_t	d;
	const uint32_t *sizes;
	uint32_t	code[DP_ODO_MAX_COLS];
	uint64_t	step[DP_ODO_MAX_COLS];
	uint64_t	idx;
} dp_odo;

/* At cell 0 of a table over sizes[0..d) (d <= DP_ODO_MAX_COLS), every step 0 (the caller sets them). */
static inline void
dp_odo_start(dp_odo *o, uint32_t d, const uint32_t *sizes)
{
	o->d = d;
	o->sizes = sizes;
	o->idx = 0;
	memset(o->code, 0, sizeof(o->code));
	memset(o->step, 0, sizeof(o->step));
}

static inline void
dp_odo_next(dp_odo *o)
{
	for (uint32_t j = o->d; j-- > 0;)
	{
		o->code[j]++;
		o->idx += o->step[j];
		if (o->code[j] < o->sizes[j])
			return;
		o->idx -= o->step[j] * o->sizes[j];
		o->code[j] = 0;
	}
}


/*
 * The same walk in blocks, for one or two other tables (a and b): a table's columns grouped into
 * blocks of neighbours that each other table either all holds, with strides that make the block
 * one column of it, or all lacks (columns of size 1 join any block).  The innermost block is
 * walked by a tight loop; the odometer turns over the outer blocks only, ncells / inner times.
 * dp_odo_project and dp_odo_scale are the fits' two passes (project a table onto a, scale it by
 * a's factors); dp_odo_scale_project does both in one pass (scale by a, then project onto b).
 */
typedef struct dp_odo_runs
{
	uint32_t	nouter;
	uint64_t	sizes[DP_ODO_MAX_COLS]; /* the outer blocks', outermost first */
	uint64_t	step[2][DP_ODO_MAX_COLS];	/* their strides in a and in b */
	uint64_t	inner;			/* cells of the innermost block */
	uint64_t	istep[2];		/* its strides in a and b (0: a block the table lacks) */
	uint64_t	ncells;
} dp_odo_runs;

/* whether column j (step s[j]) extends the block of stride bstep and bsize cells, for one table */
static inline bool
dp_odo_extends(uint64_t bstep, uint64_t bsize, uint64_t sj)
{
	return bstep == 0 ? sj == 0 : sj == bstep * bsize;
}

/*
 * sa[j], sb[j]: a's and b's strides of column j, 0 for a column it lacks (sb NULL: no b;
 * d <= DP_ODO_MAX_COLS)
 */
static inline void
dp_odo_runs_init(dp_odo_runs *r, uint32_t d, const uint32_t *sizes, const uint64_t *sa,
				 const uint64_t *sb)
{
	uint64_t	bsize = 1,
				ba = 0,
				bb = 0;
	bool		open = false;
	uint32_t	n = 0;
	uint64_t	rs[DP_ODO_MAX_COLS + 1],
				ra[DP_ODO_MAX_COLS + 1],
				rb[DP_ODO_MAX_COLS + 1];

	r->ncells = 1;
	for (uint32_t j = d; j-- > 0;)
	{
		uint64_t	a = sa[j],
					b = sb ? sb[j] : 0;

		r->ncells *= sizes[j];
		if (sizes[j] == 1)
			continue;
		if (open && dp_odo_extends(ba, bsize, a) && dp_odo_extends(bb, bsize, b))
		{
			bsize *= sizes[j];
			continue;
		}
		if (open)
		{
			rs[n] = bsize;
			ra[n] = ba;
			rb[n++] = bb;
		}
		open = true;
		bsize = sizes[j];
		ba = a;
		bb = b;
	}
	if (open)
	{
		rs[n] = bsize;
		ra[n] = ba;
		rb[n++] = bb;
	}
	/* blocks innermost first: the first is the tight loop's, the rest outermost first */
	r->inner = n > 0 ? rs[0] : 1;
	r->istep[0] = n > 0 ? ra[0] : 0;
	r->istep[1] = n > 0 ? rb[0] : 0;
	r->nouter = n > 0 ? n - 1 : 0;
	for (uint32_t i = 0; i < r->nouter; i++)
	{
		r->sizes[i] = rs[n - 1 - i];
		r->step[0][i] = ra[n - 1 - i];
		r->step[1][i] = rb[n - 1 - i];
	}
}

/* The outer odometer: the indices into a and b of the next innermost block */
typedef struct dp_odo_outer
{
	uint64_t	code[DP_ODO_MAX_COLS];
	uint64_t	ia,
				ib;
} dp_odo_outer;

static inline void
dp_odo_outer_next_n(const dp_odo_runs *r, dp_odo_outer *o, uint32_t n)
{
	for (uint32_t j = n; j-- > 0;)
	{
		o->code[j]++;
		o->ia += r->step[0][j];
		o->ib += r->step[1][j];
		if (o->code[j] < r->sizes[j])
			return;
		o->ia -= r->step[0][j] * r->sizes[j];
		o->ib -= r->step[1][j] * r->sizes[j];
		o->code[j] = 0;
	}
}

static inline void
dp_odo_outer_next(const dp_odo_runs *r, dp_odo_outer *o)
{
	dp_odo_outer_next_n(r, o, r->nouter);
}

/*
 * The walks below go over the innermost outer block in a loop of their own (K blocks of L cells,
 * strides ka and kb in a and b) and turn the odometer over the others once per K blocks: the same
 * blocks in the same order as one odometer step per block, with less work per block (blocks are
 * often a few cells).
 */
typedef struct dp_odo_k
{
	uint64_t	K,
				ka,
				kb;
	uint32_t	nup;			/* the outer blocks the odometer turns */
} dp_odo_k;

static inline dp_odo_k
dp_odo_k_of(const dp_odo_runs *r)
{
	dp_odo_k	k = {1, 0, 0, 0};

	if (r->nouter > 0)
	{
		k.K = r->sizes[r->nouter - 1];
		k.ka = r->step[0][r->nouter - 1];
		k.kb = r->step[1][r->nouter - 1];
		k.nup = r->nouter - 1;
	}
	return k;
}

#define DP_ODO_INLINE static inline __attribute__((always_inline))

/*
 * Each walk's K blocks of L cells from p (indices ia in a, ib in b), in a function of its own so
 * that the walk calls it with L = 2 as a constant (the innermost column of two codes, common in
 * the fits: a tight loop of two cells costs more than its cells) and with any other L.
 */
DP_ODO_INLINE void
dp_odo_project_blocks(const double *p, double *out, uint64_t K, uint64_t L, uint64_t is, uint64_t ka,
					  uint64_t ia)
{
	uint64_t	b = 0;

	if (is == 0)
	{
		/*
		 * Every block sums into one cell of out: two blocks at a time, each with its own sum
		 * from zero in cell order, added to out in block order (the same bits as one block at a
		 * time), so that the two chains of additions overlap.
		 */
		for (; b + 1 < K; b += 2, p += 2 * L, ia += 2 * ka)
		{
			const double *p2 = p + L;
			double		s = 0,
						s2 = 0;

			for (uint64_t j = 0; j < L; j++)
			{
				s += p[j];
				s2 += p2[j];
			}
			out[ia] += s;
			out[ia + ka] += s2;
		}
		if (b < K)
		{
			double		s = 0;

			for (uint64_t j = 0; j < L; j++)
				s += p[j];
			out[ia] += s;
		}
	}
	else if (is == 1)
		for (; b < K; b++, p += L, ia += ka)
		{
			double	   *q = out + ia;

			for (uint64_t j = 0; j < L; j++)
				q[j] += p[j];
		}
	else
		for (; b < K; b++, p += L, ia += ka)
			for (uint64_t j = 0; j < L; j++)
				out[ia + j * is] += p[j];
}

DP_ODO_INLINE void
dp_odo_scale_blocks(double *p, const double *f, uint64_t K, uint64_t L, uint64_t is, uint64_t ka, uint64_t ia)
{
	if (is == 0)
		for (uint64_t b = 0; b < K; b++, p += L, ia += ka)
		{
			double		g = f[ia];

			for (uint64_t j = 0; j < L; j++)
				p[j] *= g;
		}
	else if (is == 1)
		for (uint64_t b = 0; b < K; b++, p += L, ia += ka)
		{
			const double *q = f + ia;

			for (uint64_t j = 0; j < L; j++)
				p[j] *= q[j];
		}
	else
		for (uint64_t b = 0; b < K; b++, p += L, ia += ka)
			for (uint64_t j = 0; j < L; j++)
				p[j] *= f[ia + j * is];
}

/*
 * Two consecutive blocks of L cells at p (the second at p + L) scaled by f (block one's factors
 * from f[ia], block two's from f[ia + ka], stride sa; sa == 0: one factor a block) and summed,
 * each block's sum from zero in cell order into *s and *s2: the two chains of additions overlap.
 */
DP_ODO_INLINE void
dp_odo_scale_sum2(double *p, const double *f, uint64_t L, uint64_t sa, uint64_t ka, uint64_t ia,
				  double *s_out, double *s2_out)
{
	double	   *p2 = p + L,
				s = 0,
				s2 = 0;

	if (sa == 0)
	{
		double		g = f[ia],
					g2 = f[ia + ka];

		for (uint64_t j = 0; j < L; j++)
		{
			s += p[j] *= g;
			s2 += p2[j] *= g2;
		}
	}
	else
		for (uint64_t j = 0; j < L; j++)
		{
			s += p[j] *= f[ia + j * sa];
			s2 += p2[j] *= f[ia + ka + j * sa];
		}
	*s_out = s;
	*s2_out = s2;
}

DP_ODO_INLINE void
dp_odo_scale_project_blocks(double *p, const double *f, double *out, uint64_t K, uint64_t L, uint64_t sa,
							uint64_t sb, uint64_t ka, uint64_t kb, uint64_t ia, uint64_t ib)
{
	uint64_t	b = 0;

	if (sb == 0 && kb == 0 && K > 1)
	{
		/*
		 * The K blocks all sum into out[ib] (a column a holds and b lacks between them): the
		 * same additions in the same order, the running cell kept in a register rather than
		 * stored and loaded again between blocks.
		 */
		double		acc = out[ib];

		for (; b + 1 < K; b += 2, p += 2 * L, ia += 2 * ka)
		{
			double		s,
						s2;

			dp_odo_scale_sum2(p, f, L, sa, ka, ia, &s, &s2);
			acc += s;
			acc += s2;
		}
		if (b < K)
		{
			double		s = 0;

			for (uint64_t j = 0; j < L; j++)
				s += p[j] *= f[ia + j * sa];
			acc += s;
		}
		out[ib] = acc;
	}
	else if (sb == 0)
	{
		/*
		 * Every block sums into one cell of out: two blocks at a time, each with its own sum in
		 * the same order as alone and added to out in block order, so the results are the same
		 * bits, while the two chains of additions overlap (one chain waits on each addition).
		 */
		for (; b + 1 < K; b += 2, p += 2 * L, ia += 2 * ka, ib += 2 * kb)
		{
			double		s,
						s2;

			dp_odo_scale_sum2(p, f, L, sa, ka, ia, &s, &s2);
			out[ib] += s;
			out[ib + kb] += s2;
		}
		if (b < K)
		{
			double		s = 0;

			for (uint64_t j = 0; j < L; j++)
				s += p[j] *= f[ia + j * sa];
			out[ib] += s;
		}
	}
	else if (sa == 1 && sb == 1)
		for (; b < K; b++, p += L, ia += ka, ib += kb)
		{
			const double *q = f + ia;
			double	   *u = out + ib;

			for (uint64_t j = 0; j < L; j++)
				u[j] += p[j] *= q[j];
		}
	else
		for (; b < K; b++, p += L, ia += ka, ib += kb)
			for (uint64_t j = 0; j < L; j++)
				out[ib + j * sb] += p[j] *= f[ia + j * sa];
}

/* The three passes of the fits, walked alike (dp_odo_walk). */
typedef enum dp_odo_op
{
	DP_ODO_PROJECT,				/* out += P projected onto a */
	DP_ODO_SCALE,				/* P times f, f over a */
	DP_ODO_SCALE_PROJECT		/* both, projected onto b */
} dp_odo_op;

/* One walk's K blocks of L cells from p for pass op (see the *_blocks functions). */
DP_ODO_INLINE void
dp_odo_blocks(dp_odo_op op, const dp_odo_runs *r, const dp_odo_k *k, const dp_odo_outer *o, double *p,
			  const double *f, double *out, uint64_t L)
{
	switch (op)
	{
		case DP_ODO_PROJECT:
			dp_odo_project_blocks(p, out, k->K, L, r->istep[0], k->ka, o->ia);
			break;
		case DP_ODO_SCALE:
			dp_odo_scale_blocks(p, f, k->K, L, r->istep[0], k->ka, o->ia);
			break;
		case DP_ODO_SCALE_PROJECT:
			dp_odo_scale_project_blocks(p, f, out, k->K, L, r->istep[0], r->istep[1], k->ka, k->kb, o->ia, o->ib);
			break;
	}
}

/* One pass op over P's cells, with L == 2 as a constant where the innermost run is 2 (every
 * caller passes op as a constant: the switch folds away). */
DP_ODO_INLINE void
dp_odo_walk(const dp_odo_runs *r, dp_odo_op op, double *P, const double *f, double *out)
{
	dp_odo_outer o = {{0}, 0, 0};
	const dp_odo_k k = dp_odo_k_of(r);
	const uint64_t L = r->inner,
				KL = k.K * L;

	for (uint64_t i = 0; i < r->ncells; i += KL, dp_odo_outer_next_n(r, &o, k.nup))
	{
		if (L == 2)
			dp_odo_blocks(op, r, &k, &o, P + i, f, out, 2);
		else
			dp_odo_blocks(op, r, &k, &o, P + i, f, out, L);
	}
}

/* out[0..) += P projected onto a: a's sums of P's cells (out zeroed by the caller) */
static inline void
dp_odo_project(const dp_odo_runs *r, const double *P, double *out)
{
	dp_odo_walk(r, DP_ODO_PROJECT, (double *) P, NULL, out);
}

/* P's cells times f's, f over a */
static inline void
dp_odo_scale(const dp_odo_runs *r, double *P, const double *f)
{
	dp_odo_walk(r, DP_ODO_SCALE, P, f, NULL);
}

/*
 * dp_odo_scale by f over a, then dp_odo_project onto b into out (zeroed by the caller), in one
 * pass: the same cells as the two calls, with one read and write of P.
 */
static inline void
dp_odo_scale_project(const dp_odo_runs *r, double *P, const double *f, double *out)
{
	dp_odo_walk(r, DP_ODO_SCALE_PROJECT, P, f, out);
}

/*
 * One update's pass of the fits: P scaled by f (over a, strides sa); with a next table b (sb not
 * NULL) also projected onto it into out (out_cells, zeroed here), in the same pass.
 */
static inline void
dp_odo_scale_next(uint32_t d, const uint32_t *sizes, const uint64_t *sa, const uint64_t *sb,
				  double *P, const double *f, double *out, uint64_t out_cells)
{
	dp_odo_runs r;

	dp_odo_runs_init(&r, d, sizes, sa, sb);
	if (sb)
	{
		memset(out, 0, sizeof(double) * out_cells);
		dp_odo_scale_project(&r, P, f, out);
	}
	else
		dp_odo_scale(&r, P, f);
}

#endif							/* DP_ODO_H */
