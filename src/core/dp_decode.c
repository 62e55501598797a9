/*
 * dp_decode.c - a cell (bin) back to a typed value (see dp_decode.h).
 *
 * Post-processing only: the bins are public and the randomness is dp_prng's.
 *
 * Reals with a scale.  For scale s <= 22, 10^s is exact in a double, and for |k| < 2^52 the
 * correctly rounded quotient v = k / 10^s is within half an ulp of k * 10^-s while the ulp is
 * below 10^-s; so "%.*f" with s decimals prints exactly the decimal k * 10^-s and strtod gives v
 * back.  Distinct k give distinct, increasing v.  In that regime ("lattice") the multiples in a
 * bin are the integers k of a range found by ceil/floor and corrected by exact comparisons of
 * k / 10^s with the bounds, and one is drawn uniformly.  Beyond it (huge magnitudes, where doubles
 * are as coarse as the multiples, or s > 22) a uniform double is rounded by printing and
 * parsing ("snap"), which is idempotent: snap(snap(x)) == snap(x).
 */
#include "dp_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |k| below this keeps k / 10^s exact to print (see above); 2^51 leaves room for k +/- 1. */
#define LATTICE_LIMIT 2251799813685248.0	/* 2^51 */
#define MAX_EXACT_POW10 22
/* every finite double is a multiple of 10^-s for s >= 1074 (its binary expansion ends there) */
#define MAX_USEFUL_SCALE 1074
/* "%.*f" of a double with up to MAX_USEFUL_SCALE decimals: sign, 309 digits, point, decimals */
#define SNAP_BUFSIZE (1 + 309 + 1 + MAX_USEFUL_SCALE + 1 + 16)
#define MAX_TRIES 64
#define SNAP_TRIES 200

static const double pow10_exact[MAX_EXACT_POW10 + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

int64_t
dp_decode_int(dp_prng *p, int64_t lo, int64_t hi)
{
	uint64_t	span;

	if (lo >= hi)
		return lo;
	/* width - 1 in unsigned arithmetic: no overflow even for [INT64_MIN, INT64_MAX] */
	span = (uint64_t) hi - (uint64_t) lo;
	if (span == UINT64_MAX)
		return (int64_t) dp_prng_next(p);
	return (int64_t) ((uint64_t) lo + dp_prng_below(p, span + 1));
}

static inline bool
in_interval(double v, double lo, double hi, bool closed)
{
	return v >= lo && (closed ? v <= hi : v < hi);
}

/*
 * Uniform double on [lo, hi) / [lo, hi], lo and hi finite.  lo + u * (hi - lo) rounds into
 * [lo, hi] (rounding is monotone); the rare hi of an open interval is rejected and redrawn.  When
 * hi - lo overflows, the width is taken in two halves.
 */
static double
uniform_in(dp_prng *p, double lo, double hi, bool closed)
{
	double		w = hi - lo;

	if (!(lo < hi))
		return lo;
	for (int t = 0; t < MAX_TRIES; t++)
	{
		double		u = dp_prng_unit(p),
					v;

		if (isfinite(w))
			v = lo + u * w;
		else
		{
			double		half = hi * 0.5 - lo * 0.5;

			v = (lo + u * half) + u * half;
		}
		if (in_interval(v, lo, hi, closed))
			return v;
	}
	return lo;					/* only for intervals a few ulps wide: ~2^-64 */
}

/* ---------- lattice regime: values k / 10^s ---------- */

static inline double
lattice_value(int64_t k, double pw)
{
	return (double) k / pw;
}

/* smallest k with k / 10^s >= x */
static int64_t
lattice_ceil(double x, double pw)
{
	int64_t		k = (int64_t) ceil(x * pw);

	while (lattice_value(k, pw) < x)
		k++;
	while (lattice_value(k - 1, pw) >= x)
		k--;
	return k;
}

/* largest k with k / 10^s <= x */
static int64_t
lattice_floor(double x, double pw)
{
	int64_t		k = (int64_t) floor(x * pw);

	while (lattice_value(k, pw) > x)
		k--;
	while (lattice_value(k + 1, pw) <= x)
		k++;
	return k;
}

static inline bool
in_column(double v, double cl, double cu)
{
	return v >= cl && v <= cu;
}

/* The multiple nearest to mid inside [cl, cu]; if there is none, the one nearest to mid. */
static double
lattice_fallback(double mid, double pw, double cl, double cu)
{
	int64_t		kf = lattice_floor(mid, pw);
	double		a = lattice_value(kf, pw),
				b = lattice_value(kf + 1, pw);
	double		nearest = (mid - a <= b - mid) ? a : b,
				other = (nearest == a) ? b : a;

	if (in_column(nearest, cl, cu))
		return nearest;
	if (in_column(other, cl, cu))
		return other;
	/* mid lies outside the column (the bin sticks out of it): the first multiple inside */
	if (mid < cl)
	{
		double		v = lattice_value(lattice_ceil(cl, pw), pw);

		if (in_column(v, cl, cu))
			return v;
	}
	else if (mid > cu)
	{
		double		v = lattice_value(lattice_floor(cu, pw), pw);

		if (in_column(v, cl, cu))
			return v;
	}
	return nearest;				/* no multiple in the column at all */
}

/* ---------- beyond the lattice: round by printing ---------- */

static double
snap(double x, int scale)
{
	char		buf[SNAP_BUFSIZE];

	/* PostgreSQL backends run with LC_NUMERIC=C, so the decimal point is '.' */
	snprintf(buf, sizeof(buf), "%.*f", scale, x);
	return strtod(buf, NULL);
}

double
dp_decode_real(dp_prng *p, double lo, double hi, bool hi_closed, int scale,
			   double col_lower, double col_upper)
{
	double		elo = lo,
				ehi = hi;
	bool		eclosed = hi_closed;
	double		cl = -INFINITY,
				cu = INFINITY;
	double		mid;

	if (!isfinite(lo) || !isfinite(hi) || lo > hi)
		return isfinite(lo) ? lo : (isfinite(hi) ? hi : 0.0);	/* caller error */

	/* intersect with the column's bounds (NaN compares false: no constraint) */
	if (col_lower > elo)
		elo = col_lower;
	if (col_upper < ehi)
	{
		ehi = col_upper;
		eclosed = true;
	}
	if (elo < ehi || (elo == ehi && eclosed))
	{
		if (col_lower > -INFINITY)
			cl = col_lower;
		if (col_upper < INFINITY)
			cu = col_upper;
	}
	else
	{
		/* the bounds miss the bin: a caller error, the bin wins */
		elo = lo;
		ehi = hi;
		eclosed = hi_closed;
	}

	if (scale < 0 || scale >= MAX_USEFUL_SCALE)
		return uniform_in(p, elo, ehi, eclosed);

	mid = lo * 0.5 + hi * 0.5;
	if (scale <= MAX_EXACT_POW10 &&
		fmax(fabs(lo), fabs(hi)) * pow10_exact[scale] < LATTICE_LIMIT)
	{
		double		pw = pow10_exact[scale];
		int64_t		klo = lattice_ceil(elo, pw),
					khi = eclosed ? lattice_floor(ehi, pw) : lattice_ceil(ehi, pw) - 1;

		if (klo <= khi)
			return lattice_value(klo + (int64_t) dp_prng_below(p, (uint64_t) (khi - klo) + 1), pw);
		return lattice_fallback(mid, pw, cl, cu);
	}

	/*
	 * Doubles about as coarse as the multiples, or scale > 22: draw a uniform double and round it
	 * by printing.  Drawing on the interval widened by half a step on each side and rejecting what
	 * rounds outside gives every multiple inside the same rounding cell width 10^-scale, so the
	 * draw is uniform over them (up to the double grid).  With at least one multiple inside, a try
	 * succeeds with probability above 1/3, so SNAP_TRIES fail together with probability < 1e-35.
	 */
	{
		double		halfstep = 0.5 * pow(10.0, -scale);

		for (int t = 0; t < SNAP_TRIES; t++)
		{
			double		v = snap(uniform_in(p, elo - halfstep, ehi + halfstep, true), scale);

			if (in_interval(v, elo, ehi, eclosed))
				return v;
		}
	}

	/*
	 * No multiple in the interval (with overwhelming probability): the one nearest the midpoint,
	 * moved by one step at a time into the column's bounds if it lies outside them.
	 */
	{
		double		step = pow(10.0, -scale);
		double		v = snap(mid, scale);

		for (int i = 0; i < 4 && v < cl; i++)
			v = snap(fmax(v + step, nextafter(v, INFINITY)), scale);
		for (int i = 0; i < 4 && v > cu; i++)
			v = snap(fmin(v - step, nextafter(v, -INFINITY)), scale);
		if (!in_column(v, cl, cu))
			v = snap(mid, scale);	/* no multiple in the column at all */
		return v;
	}
}

/* ---- shapes inside bins (dp_decode.h) ---- */

#include "dp_env.h"
#include "dp_internal.h"

static bool
shape_valid(bool integral, const double *pieces, uint32_t npieces)
{
	for (uint32_t i = 0; i < npieces; i++)
	{
		double		lo = pieces[3 * i],
					hi = pieces[3 * i + 1],
					w = pieces[3 * i + 2];

		if (!isfinite(lo) || !isfinite(hi) || !isfinite(w) || w < 0)
			return false;
		if (integral ? (lo > hi || lo != floor(lo) || hi != floor(hi)) : !(lo < hi))
			return false;
		/* increasing and disjoint */
		if (i > 0 && (integral ? !(lo > pieces[3 * i - 2]) : !(lo >= pieces[3 * i - 2])))
			return false;
	}
	return true;
}

int
dp_shape_init(dp_shape *s, const dp_domain *d, const double *pieces, uint32_t npieces)
{
	bool		integral = d->kind == DP_DOMAIN_INT_BINS;
	uint32_t	maxparts,
				n = 0,
				j = 0;

	memset(s, 0, sizeof(*s));
	if ((d->kind != DP_DOMAIN_INT_BINS && d->kind != DP_DOMAIN_REAL_BINS) || d->nvalues == 0 ||
		(npieces > 0 && !pieces) || !shape_valid(integral, pieces, npieces))
		return -1;
	/* a piece is cut by at most the bins it spans: parts <= pieces + bins */
	maxparts = npieces + d->nvalues;
	s->nbins = d->nvalues;
	s->start = dp_alloc(sizeof(uint32_t) * (d->nvalues + 1));
	s->lo = dp_alloc(sizeof(double) * maxparts);
	s->hi = dp_alloc(sizeof(double) * maxparts);
	s->cum = dp_alloc(sizeof(double) * maxparts);
	s->phase = dp_alloc(sizeof(double) * d->nvalues);
	if (!s->start || !s->lo || !s->hi || !s->cum || !s->phase)
	{
		dp_shape_free(s);
		return -1;
	}
	for (uint32_t b = 0; b < d->nvalues; b++)
	{
		double		blo,
					bhi,
					cum = 0;

		if (integral)
		{
			int64_t		l,
						h;

			dp_int_bin_range(d, b, &l, &h);
			blo = (double) l;
			bhi = (double) h;
		}
		else
			dp_real_bin_range(d, b, &blo, &bhi);
		s->start[b] = n;
		s->phase[b] = -1;
		/* the first piece that may reach into this bin (bins and pieces both increase) */
		while (j < npieces && (integral ? pieces[3 * j + 1] < blo : pieces[3 * j + 1] <= blo))
			j++;
		for (uint32_t k = j; k < npieces && (integral ? pieces[3 * k] <= bhi : pieces[3 * k] < bhi); k++)
		{
			double		plo = pieces[3 * k],
						phi = pieces[3 * k + 1],
						w = pieces[3 * k + 2],
						olo = plo > blo ? plo : blo,
						ohi = phi < bhi ? phi : bhi,
						part;

			if (integral)
				part = olo <= ohi ? w * ((ohi - olo + 1) / (phi - plo + 1)) : 0;
			else
				part = olo < ohi ? w * ((ohi - olo) / (phi - plo)) : 0;
			if (!(part > 0) || !isfinite(part))
				continue;
			cum += part;
			s->lo[n] = olo;
			s->hi[n] = ohi;
			s->cum[n] = cum;
			n++;
		}
	}
	s->start[d->nvalues] = n;
	return 0;
}

static int
piece_cmp(const void *a, const void *b)
{
	double		x = ((const double *) a)[0],
				y = ((const double *) b)[0];

	return x < y ? -1 : x > y;
}

uint32_t
dp_shape_tidy(double *pieces, uint32_t npieces, bool integral)
{
	uint32_t	m = 0;

	qsort(pieces, npieces, sizeof(double) * 3, piece_cmp);
	for (uint32_t i = 0; i < npieces; i++)
	{
		double	   *cur = &pieces[3 * i];

		if (m > 0 && (integral ? cur[0] <= pieces[3 * m - 2] : cur[0] < pieces[3 * m - 2]))
		{
			if (cur[1] > pieces[3 * m - 2])
				pieces[3 * m - 2] = cur[1];
			pieces[3 * m - 1] += cur[2];
			continue;
		}
		memmove(&pieces[3 * m], cur, sizeof(double) * 3);
		m++;
	}
	return m;
}

void
dp_shape_free(dp_shape *s)
{
	dp_free(s->start);
	dp_free(s->lo);
	dp_free(s->hi);
	dp_free(s->cum);
	dp_free(s->phase);
	memset(s, 0, sizeof(*s));
}

/* 1 / phi, the golden ratio's inverse: the step of dp_shape_pick's sequence in a bin */
#define SHAPE_STEP 0.61803398874989484820

bool
dp_shape_pick(dp_shape *s, dp_prng *p, uint32_t bin, double *lo, double *hi)
{
	uint32_t	a,
				b;
	double		u,
				ph;

	if (!s->start || bin >= s->nbins)
		return false;
	a = s->start[bin];
	b = s->start[bin + 1];
	if (a == b)
		return false;
	/* the bin's next point of frac(u_b + k / phi), u_b drawn at its first pick */
	ph = s->phase[bin];
	if (!(ph >= 0 && ph < 1))
		ph = dp_prng_unit(p);
	u = ph * s->cum[b - 1];
	ph += SHAPE_STEP;
	s->phase[bin] = ph >= 1 ? ph - 1 : ph;
	if (!(u < s->cum[b - 1]))
		u = 0;					/* (ph < 1 and a positive total: never) */
	/* the first part whose cumulative weight exceeds u (u < total, so one does) */
	while (a + 1 < b)
	{
		uint32_t	m = a + (b - a - 1) / 2;

		if (s->cum[m] > u)
			b = m + 1;
		else
			a = m + 1;
	}
	*lo = s->lo[a];
	*hi = s->hi[a];
	return true;
}

/* ---------- rows: a chunk of a table's synthetic rows ---------- */

/* The most helper buffers at once: a helper whose chunk the caller took may still be writing its
 * own; past this many such, the next chunk is decoded on the caller's thread. */
#define ROWDEC_MAX_POOL 8
/* After a chunk whose helper had not finished, the next 1, 2, 4, ... chunks (at most this many)
 * are decoded here with no helper: on a machine with no core to spare, a helper's dropped work
 * only takes time from the caller's own thread. */
#define ROWDEC_MAX_BACKOFF 32

/* A chunk's values, and the state its decoding starts from and ends with (a helper's copy) */
typedef struct dp_rowbuf
{
	uint64_t  **val;
	uint8_t   **isnull;
	dp_prng		rng;
	dp_shape   *shape;			/* per column: the shape, with phase[] of its own */
	dp_shape  **shapep;			/* per column: the shape decoding uses (own: the caller's) */
	double	  **phase;
	uint64_t   *kept;
	bool	   *kept_null;
	int			writing;		/* a helper may still write it (atomic) */
	int			outcome;		/* 0 running, 1 done by the helper, 2 taken by the caller (atomic) */
	uint64_t	p0;
	dp_rowdec  *r;
} dp_rowbuf;

/* one value of a bin column: its code's bin (or NULL, or the fallback bin), the part of it the
 * shape picks, a uniform draw there; the same draws as the row-by-row decoding */
static void
rowcol_value(const dp_rowcol *c, dp_shape *shape, dp_prng *rng, uint64_t row, uint64_t *val, bool *isnull)
{
	const dp_domain *d = c->d;
	dp_code		code = c->codes[row];
	double		plo,
				phi;

	*isnull = false;
	if (code >= d->nvalues)
	{
		if (!c->notnull)
		{
			*isnull = true;
			*val = 0;
			return;
		}
		code = c->fallback_code;
	}
	if (c->kind == DP_ROWCOL_INT)
	{
		int64_t		lo,
					hi,
					v;

		dp_int_bin_range(d, code, &lo, &hi);
		if (dp_shape_pick(shape, rng, code, &plo, &phi))
		{
			lo = (int64_t) plo;
			hi = (int64_t) phi;
		}
		v = dp_decode_int(rng, lo, hi);
		memcpy(val, &v, sizeof(v));
	}
	else
	{
		double		lo,
					hi,
					v;
		bool		closed = (uint32_t) code + 1 == d->nvalues;

		dp_real_bin_range(d, code, &lo, &hi);
		if (dp_shape_pick(shape, rng, code, &plo, &phi))
		{
			closed = closed && phi == hi;
			lo = plo;
			hi = phi;
		}
		v = dp_decode_real(rng, lo, hi, closed, c->scale, d->edges[0], d->edges[d->nvalues]);
		memcpy(val, &v, sizeof(v));
	}
}

/* positions [p0, p0 + chunk) into val / isnull, from and onto the state given */
static void
rowdec_chunk(const dp_rowdec *r, uint64_t p0, uint64_t **val, uint8_t **isnull, dp_prng *rng,
			 dp_shape *const *shape, uint64_t *kept, bool *kept_null)
{
	uint64_t	p1 = p0 + r->chunk < r->npos ? p0 + r->chunk : r->npos;

	for (uint64_t p = p0; p < p1; p++)
	{
		uint64_t	i = p - p0;
		uint64_t	row = r->order ? r->order[p] : p;
		bool		starts = r->order && (p == 0 || r->unit[p] != r->unit[p - 1]);

		for (uint32_t j = 0; j < r->ncols; j++)
		{
			const dp_rowcol *c = &r->cols[j];
			bool		nul = false;

			if (c->kind == DP_ROWCOL_RANDOM128)
			{
				val[j][2 * i] = dp_prng_next(rng);
				val[j][2 * i + 1] = dp_prng_next(rng);
			}
			else if (c->unit_constant && r->order)
			{
				if (starts)
				{
					rowcol_value(c, shape[j], rng, row, &kept[j], &nul);
					kept_null[j] = nul;
				}
				val[j][i] = kept[j];
				nul = kept_null[j];
			}
			else
				rowcol_value(c, shape[j], rng, row, &val[j][i], &nul);
			isnull[j][i] = nul;
		}
	}
}

/* a helper: the chunk from its buffer's copy of the state; published unless the caller took it */
static void *
rowdec_helper(void *arg)
{
	dp_rowbuf  *b = arg;
	int			running = 0;

	rowdec_chunk(b->r, b->p0, b->val, b->isnull, &b->rng, b->shapep, b->kept, b->kept_null);
	(void) __atomic_compare_exchange_n(&b->outcome, &running, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	__atomic_store_n(&b->writing, 0, __ATOMIC_RELEASE);
	return NULL;
}

static void
rowbuf_free(dp_rowbuf *b, uint32_t ncols)
{
	if (!b)
		return;
	for (uint32_t j = 0; j < ncols; j++)
	{
		if (b->val)
			dp_free(b->val[j]);
		if (b->isnull)
			dp_free(b->isnull[j]);
		if (b->phase)
			dp_free(b->phase[j]);
	}
	dp_free(b->val);
	dp_free(b->isnull);
	dp_free(b->phase);
	dp_free(b->shape);
	dp_free(b->shapep);
	dp_free(b->kept);
	dp_free(b->kept_null);
	dp_free(b);
}

/* a buffer for a chunk, and (helper) room for a copy of the state; NULL when memory runs out */
static dp_rowbuf *
rowbuf_new(const dp_rowdec *r, bool helper)
{
	dp_rowbuf  *b = dp_zalloc(sizeof(dp_rowbuf));
	uint32_t	n = r->ncols > 0 ? r->ncols : 1;

	if (!b)
		return NULL;
	b->r = (dp_rowdec *) r;
	b->val = dp_zalloc(sizeof(uint64_t *) * n);
	b->isnull = dp_zalloc(sizeof(uint8_t *) * n);
	b->shapep = dp_zalloc(sizeof(dp_shape *) * n);
	if (helper)
	{
		b->phase = dp_zalloc(sizeof(double *) * n);
		b->shape = dp_zalloc(sizeof(dp_shape) * n);
		b->kept = dp_zalloc(sizeof(uint64_t) * n);
		b->kept_null = dp_zalloc(sizeof(bool) * n);
	}
	if (!b->val || !b->isnull || !b->shapep || (helper && (!b->phase || !b->shape || !b->kept || !b->kept_null)))
	{
		rowbuf_free(b, 0);
		return NULL;
	}
	for (uint32_t j = 0; j < r->ncols; j++)
	{
		const dp_rowcol *c = &r->cols[j];

		b->shapep[j] = helper ? &b->shape[j] : c->shape;
		b->val[j] = dp_alloc(sizeof(uint64_t) * (c->kind == DP_ROWCOL_RANDOM128 ? 2 : 1) * r->chunk);
		b->isnull[j] = dp_alloc(r->chunk);
		if (!b->val[j] || !b->isnull[j])
		{
			rowbuf_free(b, r->ncols);
			return NULL;
		}
		if (helper && c->kind != DP_ROWCOL_RANDOM128 && c->shape->phase)
		{
			b->phase[j] = dp_alloc(sizeof(double) * c->shape->nbins);
			if (!b->phase[j])
			{
				rowbuf_free(b, r->ncols);
				return NULL;
			}
		}
	}
	return b;
}

int
dp_rowdec_init(dp_rowdec *r, const dp_rowcol *cols, uint32_t ncols, const uint64_t *order, const int64_t *unit,
			   uint64_t npos, uint64_t chunk, dp_prng *rng, bool threads)
{
	uint32_t	n = ncols > 0 ? ncols : 1;

	memset(r, 0, sizeof(*r));
	r->cols = cols;
	r->ncols = ncols;
	r->order = order;
	r->unit = unit;
	r->npos = npos;
	r->chunk = chunk < 1 ? 1 : chunk;
	r->rng = rng;
	r->threads = threads && npos > r->chunk;
	r->ntasks = npos > r->chunk ? (npos + r->chunk - 1) / r->chunk : 1;
	r->kept = dp_zalloc(sizeof(uint64_t) * n);
	r->kept_null = dp_zalloc(sizeof(bool) * n);
	r->pool = dp_zalloc(sizeof(dp_rowbuf *) * ROWDEC_MAX_POOL);
	r->task = dp_zalloc(sizeof(dp_task) * r->ntasks);
	r->own = rowbuf_new(r, false);
	if (!r->kept || !r->kept_null || !r->pool || !r->task || !r->own)
	{
		dp_rowdec_free(r);
		return -1;
	}
	return 0;
}

/* the chunk at next_p0 decoded here, from the caller's state, into its own buffer */
static void
rowdec_here(dp_rowdec *r)
{
	rowdec_chunk(r, r->next_p0, r->own->val, r->own->isnull, r->rng, r->own->shapep, r->kept, r->kept_null);
	r->current = r->own;
}

/* a helper on the chunk at next_p0, from a copy of the caller's state (none when no buffer is
 * free and none can be had) */
static void
rowdec_ahead(dp_rowdec *r)
{
	dp_rowbuf  *b = NULL;
	uint64_t	c = r->next_p0 / r->chunk;

	for (uint32_t k = 0; k < r->npool && !b; k++)
		if (r->pool[k] != r->current && !__atomic_load_n(&r->pool[k]->writing, __ATOMIC_ACQUIRE))
			b = r->pool[k];
	if (!b && r->npool < ROWDEC_MAX_POOL && (b = rowbuf_new(r, true)) != NULL)
		r->pool[r->npool++] = b;
	if (!b)
		return;
	b->p0 = r->next_p0;
	b->rng = *r->rng;
	for (uint32_t j = 0; j < r->ncols; j++)
	{
		const dp_rowcol *col = &r->cols[j];

		b->kept[j] = r->kept[j];
		b->kept_null[j] = r->kept_null[j];
		if (col->kind == DP_ROWCOL_RANDOM128)
			continue;
		b->shape[j] = *col->shape;
		if (col->shape->phase)
		{
			memcpy(b->phase[j], col->shape->phase, sizeof(double) * col->shape->nbins);
			b->shape[j].phase = b->phase[j];
		}
	}
	b->outcome = 0;
	b->writing = 1;
	r->ahead = b;
	dp_task_start(&r->task[c], rowdec_helper, b, true);
}

void
dp_rowdec_next(dp_rowdec *r)
{
	dp_rowbuf  *b = r->ahead;
	int			running = 0;

	r->ahead = NULL;
	if (b && !__atomic_compare_exchange_n(&b->outcome, &running, 2, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
	{
		/* the helper finished: its values, and its state after the chunk */
		*r->rng = b->rng;
		for (uint32_t j = 0; j < r->ncols; j++)
		{
			const dp_rowcol *col = &r->cols[j];

			r->kept[j] = b->kept[j];
			r->kept_null[j] = b->kept_null[j];
			if (col->kind != DP_ROWCOL_RANDOM128 && col->shape->phase)
				memcpy(col->shape->phase, b->phase[j], sizeof(double) * col->shape->nbins);
		}
		r->current = b;
		r->helped++;
		r->backoff = 0;
	}
	else
	{
		rowdec_here(r);			/* no helper, or one not done: here (its work is dropped) */
		if (b)
		{
			/* a late helper (a busy machine): the next few chunks here, more after each miss */
			r->backoff = r->backoff == 0 ? 1 : r->backoff < ROWDEC_MAX_BACKOFF ? 2 * r->backoff : r->backoff;
			r->skip = r->backoff;
		}
	}
	r->p0 = r->next_p0;
	r->val = r->current->val;
	r->isnull = r->current->isnull;
	r->next_p0 += r->chunk;
	/* the threads of the chunks before, ended by now as a rule: joined without waiting */
	for (uint64_t c = r->reaped; c < r->p0 / r->chunk; c++)
		if (dp_task_try_reap(&r->task[c]) && c == r->reaped)
			r->reaped++;
	if (r->threads && r->next_p0 < r->npos)
	{
		if (r->skip > 0)
			r->skip--;
		else
			rowdec_ahead(r);
	}
}

void
dp_rowdec_abandon(dp_rowdec *r)
{
	for (uint64_t c = 0; r->task && c < r->ntasks; c++)
		dp_task_abandon(&r->task[c]);
	r->ahead = NULL;
}

void
dp_rowdec_free(dp_rowdec *r)
{
	dp_rowdec_abandon(r);
	for (uint32_t k = 0; r->pool && k < r->npool; k++)
		rowbuf_free(r->pool[k], r->ncols);
	rowbuf_free(r->own, r->ncols);
	dp_free(r->pool);
	dp_free(r->task);
	dp_free(r->kept);
	dp_free(r->kept_null);
	memset(r, 0, sizeof(*r));
}
