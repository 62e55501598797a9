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
