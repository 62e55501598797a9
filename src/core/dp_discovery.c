/*
 * dp_discovery.c - the public grids of numeric discovery (the log-scale grid, and the linear
 * grid of two-stage bounds) and what is read from a noisy histogram on them: bounds and
 * quantile edges (post-processing).  See dp_discovery.h for the mechanisms' privacy claims and
 * the accounting.  Partition selection (section 1 of this file's comments) is in
 * dp_partition_select.c, and the stored domain made of released bounds and edges (section 4) in
 * dp_discovery_domain.c.
 */
#include "dp_discovery.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================================
 * 2. The public log-scale grid
 * ============================================================================================
 *
 * Layout: P cells per side.  Index P is the zero cell, P + 1 + j the j-th positive cell (by
 * increasing magnitude), P - 1 - j its mirror image.  Everything here is a function of the grid
 * parameters (public) and of the value being placed or of the noisy histogram (post-processing).
 */

#define TWO63 9223372036854775808.0	/* 2^63 as a double */

static int
log2_exact(int s)
{
	int			l = 0;

	while ((1 << l) < s)
		l++;
	return l;
}

static bool
grid_valid(const dp_loggrid *g)
{
	if (g == NULL || g->subdiv < 1 || g->subdiv > DP_LOGGRID_SUBDIV_MAX ||
		(g->subdiv & (g->subdiv - 1)) != 0 || g->kmin > g->kmax)
		return false;
	if (g->integral)
		return g->kmin == 0 && g->kmax <= 62;
	/* kmin >= -1000 keeps every boundary (s + i) 2^(k - log2 s) a normal double */
	return g->kmin >= -1000 && g->kmax <= 1023;
}

/* Integral grids: index of the first cell of octave k (k <= kmax + 1). */
static uint32_t
int_octave_offset(const dp_loggrid *g, int k)
{
	int			l = log2_exact(g->subdiv);

	if (k <= l)
		return ((uint32_t) 1 << k) - 1;
	return (((uint32_t) 1 << l) - 1) + (uint32_t) (k - l) * (uint32_t) g->subdiv;
}

static uint32_t
side_cells(const dp_loggrid *g)
{
	if (g->integral)
		return int_octave_offset(g, g->kmax + 1);
	return (uint32_t) (g->kmax - g->kmin + 1) * (uint32_t) g->subdiv;
}

int
dp_loggrid_init_int(dp_loggrid *g, int subdiv)
{
	dp_loggrid	t = {true, 0, 62, subdiv};

	if (!grid_valid(&t))
		return -1;
	*g = t;
	return 0;
}

int
dp_loggrid_init_real(dp_loggrid *g, int subdiv)
{
	dp_loggrid	t = {false, -30, 1023, subdiv};

	if (!grid_valid(&t))
		return -1;
	*g = t;
	return 0;
}

uint32_t
dp_loggrid_ncells(const dp_loggrid *g)
{
	if (!grid_valid(g))
		return 0;
	return 2 * side_cells(g) + 1;
}

/* Integral grids: positive cell of a magnitude 1 <= m <= 2^63. */
static uint32_t
int_poscell(const dp_loggrid *g, uint64_t m)
{
	int			k = 63 - __builtin_clzll(m);
	int			l = log2_exact(g->subdiv);

	if (k > g->kmax)
		return side_cells(g) - 1;
	if (k <= l)
		return (uint32_t) (m - 1);	/* one-integer cells: 1, 2, 3, ... */
	return int_octave_offset(g, k) + (uint32_t) ((m - ((uint64_t) 1 << k)) >> (k - l));
}

uint32_t
dp_loggrid_cell_int(const dp_loggrid *g, int64_t v)
{
	uint32_t	p;
	uint64_t	m;

	if (!grid_valid(g))
		return 0;
	p = side_cells(g);
	if (v == 0)
		return p;
	m = v > 0 ? (uint64_t) v : (uint64_t) 0 - (uint64_t) v;	/* |INT64_MIN| = 2^63 */
	if (v > 0)
		return p + 1 + int_poscell(g, m);
	return p - 1 - int_poscell(g, m);
}

/*
 * Real grids: positive cell of a magnitude m >= 2^kmin (or +Inf), with "a <= m < b" semantics;
 * *boundary is set when m is exactly the lower boundary a of that cell (and it is not clamped).
 */
static uint32_t
real_poscell(const dp_loggrid *g, double m, bool *boundary)
{
	int			e,
				k;
	double		fr,
				t;
	uint32_t	i;

	*boundary = false;
	if (isinf(m))
		return side_cells(g) - 1;
	fr = frexp(m, &e);			/* m = fr 2^e, fr in [0.5, 1) */
	k = e - 1;
	if (k > g->kmax)
		return side_cells(g) - 1;
	if (k < g->kmin)
		return 0;				/* not reached: callers send these to the zero cell */
	t = (2.0 * fr - 1.0) * (double) g->subdiv;	/* exact: Sterbenz, then a power of two */
	i = (uint32_t) t;
	*boundary = (t == (double) i);
	return (uint32_t) (k - g->kmin) * (uint32_t) g->subdiv + i;
}

uint32_t
dp_loggrid_cell_real(const dp_loggrid *g, double x)
{
	uint32_t	p,
				j;
	double		tiny;
	bool		boundary;

	if (!grid_valid(g))
		return 0;
	p = side_cells(g);
	if (isnan(x))
		return p;
	tiny = ldexp(1.0, g->kmin);
	if (x >= 0)
	{
		if (x < tiny)
			return p;
		return p + 1 + real_poscell(g, x, &boundary);
	}
	/* negative cells are [-b, -a): the magnitude m = -x lies in (a, b] */
	if (-x <= tiny)
		return p;
	j = real_poscell(g, -x, &boundary);
	if (boundary)
		j--;					/* m == a of cell j >= 1 (m > 2^kmin): it belongs to cell j - 1 */
	return p - 1 - j;
}

/* Integral grids: magnitudes [*a, *b] (inclusive) of positive cell j. */
static void
int_poscell_range(const dp_loggrid *g, uint32_t j, uint64_t *a, uint64_t *b)
{
	int			l = log2_exact(g->subdiv);
	uint32_t	first_wide = ((uint32_t) 1 << l) - 1;

	if (j < first_wide)
	{
		*a = *b = (uint64_t) j + 1;
		return;
	}
	else
	{
		uint32_t	r = j - first_wide;
		int			k = l + (int) (r / (uint32_t) g->subdiv);
		uint64_t	w = (uint64_t) 1 << (k - l);

		*a = ((uint64_t) 1 << k) + (uint64_t) (r % (uint32_t) g->subdiv) * w;
		*b = *a + w - 1;
	}
}

static int64_t
neg_mag(uint64_t m)
{
	return m >= ((uint64_t) 1 << 63) ? INT64_MIN : -(int64_t) m;
}

void
dp_loggrid_cell_range_int(const dp_loggrid *g, uint32_t cell, int64_t *lo, int64_t *hi_inclusive)
{
	uint32_t	p;
	uint64_t	a,
				b;

	*lo = *hi_inclusive = 0;
	if (!grid_valid(g) || !g->integral || cell >= 2 * side_cells(g) + 1)
		return;
	p = side_cells(g);
	if (cell == p)
		return;
	if (cell > p)
	{
		int_poscell_range(g, cell - p - 1, &a, &b);
		if (cell - p - 1 == p - 1)
			b = INT64_MAX;		/* the last cell takes everything beyond */
		*lo = (int64_t) a;
		*hi_inclusive = (int64_t) b;
	}
	else
	{
		int_poscell_range(g, p - 1 - cell, &a, &b);
		if (p - 1 - cell == p - 1)
			b = (uint64_t) 1 << 63;	/* ... down to INT64_MIN */
		*lo = neg_mag(b);
		*hi_inclusive = neg_mag(a);
	}
}

/* Real grids: [*a, *b) of positive cell j (b = +Inf for the last cell). */
static void
real_poscell_range(const dp_loggrid *g, uint32_t j, double *a, double *b)
{
	int			l = log2_exact(g->subdiv);
	int			k = g->kmin + (int) (j / (uint32_t) g->subdiv);
	double		i = (double) (j % (uint32_t) g->subdiv);

	*a = ldexp((double) g->subdiv + i, k - l);
	*b = j == side_cells(g) - 1 ? INFINITY : ldexp((double) g->subdiv + i + 1.0, k - l);
}

void
dp_loggrid_cell_range(const dp_loggrid *g, uint32_t cell, double *lo, double *hi)
{
	uint32_t	p;

	*lo = *hi = 0.0;
	if (!grid_valid(g) || cell >= 2 * side_cells(g) + 1)
		return;
	p = side_cells(g);
	if (g->integral)
	{
		int64_t		l,
					h;

		dp_loggrid_cell_range_int(g, cell, &l, &h);
		*lo = (double) l;
		*hi = (double) h + 1.0;
		return;
	}
	if (cell == p)
	{
		*hi = ldexp(1.0, g->kmin);
		*lo = -*hi;
	}
	else if (cell > p)
		real_poscell_range(g, cell - p - 1, lo, hi);
	else
	{
		double		a,
					b;

		real_poscell_range(g, p - 1 - cell, &a, &b);
		*lo = -b;
		*hi = -a;
	}
}

/* ---------------------------------------------------------------------------------------------
 * Post-processing of a noisy histogram on the grid: bounds and quantile edges.
 *
 * Each cell is given a continuous extent [l, h) for interpolation: real cells their range (the
 * infinite outer bound of an end cell replaced by the largest finite double), integral cells
 * [lo, hi_inclusive + 1) (integer v occupies [v, v + 1)), and the real zero cell is an atom at 0.
 * Positions are computed in long double (exact for int64 on x86-64) and converted at the end.
 * ------------------------------------------------------------------------------------------- */

typedef struct extent
{
	long double l,
				h;
	bool		atom;			/* the real zero cell: the single value 0 */
	int64_t		ilo,
				ihi;			/* integral grids: the integers of the cell */
} extent;

static void
cell_extent(const dp_loggrid *g, uint32_t cell, extent *e)
{
	e->atom = false;
	e->ilo = e->ihi = 0;
	if (g->integral)
	{
		dp_loggrid_cell_range_int(g, cell, &e->ilo, &e->ihi);
		e->l = (long double) e->ilo;
		e->h = (long double) e->ihi + 1.0L;
		return;
	}
	if (cell == side_cells(g))
	{
		e->atom = true;
		e->l = e->h = 0.0L;
		return;
	}
	{
		double		lo,
					hi;

		dp_loggrid_cell_range(g, cell, &lo, &hi);
		if (isinf(lo))
			lo = -DBL_MAX;
		if (isinf(hi))
			hi = DBL_MAX;
		e->l = lo;
		e->h = hi;
	}
}

static void
log_cell_extent(const void *grid, uint32_t cell, extent *e)
{
	cell_extent(grid, cell, e);
}

/* A position inside a cell: integral grids use floor(x) clamped to the cell's integers. */
static long double
clamp_ld(long double x, long double lo, long double hi)
{
	return x < lo ? lo : (x > hi ? hi : x);
}

/* int64 -> double, rounding toward zero (so that the result stays within the int64 range). */
static double
int_to_double_tz(int64_t v)
{
	double		d = (double) v;

	if (v > 0 && (d >= TWO63 || (int64_t) d > v))
		d = nextafter(d, 0.0);
	else if (v < 0 && d > -TWO63 && (int64_t) d < v)
		d = nextafter(d, 0.0);
	return d;
}

static int64_t
floor_to_int64(long double x)
{
	x = floorl(x);
	if (x >= (long double) TWO63)
		return INT64_MAX;
	if (x <= -(long double) TWO63)
		return INT64_MIN;
	return (int64_t) x;
}

/*
 * Finds the position of cumulative mass t in weights w[c] (c in [c0, c1]) and returns the
 * interpolated point; *cell gets the cell.  Takes the first cell with positive weight whose
 * cumulative mass reaches t.  total must be > 0.
 */
/* a grid's cell extents: the log-scale grid's (cell_extent) or the linear grid's (lin_cell_extent) */
typedef void (*extent_fn) (const void *grid, uint32_t cell, extent *e);

static long double
mass_position(const void *grid, extent_fn ext, const int64_t *noisy, uint32_t c0, uint32_t c1,
			  long double t, uint32_t *cell)
{
	long double cum = 0.0L;
	uint32_t	last = c0;
	extent		e;

	for (uint32_t c = c0; c <= c1; c++)
	{
		long double w = noisy[c] > 0 ? (long double) noisy[c] : 0.0L;

		if (w <= 0.0L)
			continue;
		last = c;
		if (cum + w >= t)
		{
			long double fr = clamp_ld((t - cum) / w, 0.0L, 1.0L);

			ext(grid, c, &e);
			*cell = c;
			return e.atom ? 0.0L : e.l + fr * (e.h - e.l);
		}
		cum += w;
	}
	/* rounding left t just above the total: the end of the last weighted cell */
	ext(grid, last, &e);
	*cell = last;
	return e.atom ? 0.0L : e.h;
}

/* z = sqrt(2 ln(2 ncells / beta)), beta = 0.001: sub-Gaussian tail bound, union over blocks. */
static long double
significance_z(uint32_t ncells)
{
	return sqrtl(2.0L * logl(2.0L * (long double) ncells / 0.001L));
}

/*
 * When a block of len cells counts as significant: its noisy sum reaches
 * max(1, sqrt(z^2 + g) * sigma * sqrt(len)), with g = 0 for the bounds (one z for every block)
 * and g = 2 ln len for denoising: a false block of len cells keeps about len * 0.4 sigma of
 * phantom mass, so longer blocks need a higher z (a level's expected phantom mass then shrinks
 * as its blocks grow).
 */
typedef struct block_rule
{
	long double z,
				sigma;
	bool		grow;
} block_rule;

static long double
rule_threshold(const block_rule *r, uint64_t len)
{
	long double z2 = r->z * r->z + (r->grow ? 2.0L * logl((long double) len) : 0.0L);
	long double t = sqrtl(z2) * r->sigma * sqrtl((long double) len);

	return t < 1.0L ? 1.0L : t;
}

static long double
noisy_sum(const int64_t *noisy, uint64_t from, uint64_t to)
{
	long double s = 0.0L;

	for (uint64_t c = from; c < to; c++)
		s += (long double) noisy[c];
	return s;
}

/*
 * Calls fn(arg, start, end) for every MINIMAL significant block [start, end) of the histogram:
 * dyadic blocks of 1, 2, 4, ... cells (the last block of a level may be shorter); a block is
 * significant by the rule (rule_threshold); minimal blocks are those
 * neither of whose halves is significant: so a heavy cell (a spike at 0, say) does not drag the
 * empty cells that share a big block with it along, while diffuse mass that no single cell shows
 * is still found by a larger block.  Returns whether there was one.
 */
static bool
minimal_blocks(const int64_t *noisy, uint32_t n, const block_rule *rule,
			   void (*fn) (void *arg, uint64_t start, uint64_t end), void *arg)
{
	bool		found = false;

	for (uint64_t len = 1;; len *= 2)
	{
		for (uint64_t start = 0; start < n; start += len)
		{
			uint64_t	end = start + len < n ? start + len : n;
			uint64_t	mid = start + len / 2;
			bool		minimal;

			if (len == 1)
				minimal = (long double) noisy[start] >= rule_threshold(rule, 1);
			else
			{
				long double sl,
							sr;

				if (mid >= end)
					continue;	/* the same cells as its left half, tested at the level below */
				sl = noisy_sum(noisy, start, mid);
				sr = noisy_sum(noisy, mid, end);
				minimal = sl + sr >= rule_threshold(rule, end - start) &&
					sl < rule_threshold(rule, mid - start) && sr < rule_threshold(rule, end - mid);
			}
			if (minimal)
			{
				found = true;
				fn(arg, start, end);
			}
		}
		if (len >= n)
			break;
	}
	return found;
}

typedef struct span_arg
{
	uint32_t	lo,
				hi;
} span_arg;

static void
span_add(void *arg, uint64_t start, uint64_t end)
{
	span_arg   *s = arg;

	if (start < s->lo)
		s->lo = (uint32_t) start;
	if (end - 1 > s->hi)
		s->hi = (uint32_t) (end - 1);
}

/*
 * Core of the bounds, on either grid (its ncells cells, their extents by ext): on success the
 * cells of the two quantiles and the interpolated positions.  Returns 0, 1 (nothing
 * significant) or -1 (invalid arguments; the caller has checked the grid).
 */
static int
bounds_core(const void *grid, extent_fn ext, uint32_t n, const int64_t *noisy, double sigma,
			double tail, long double *xlo, uint32_t *lo_cell, long double *xhi, uint32_t *hi_cell)
{
	block_rule	rule;
	span_arg	span;
	long double total = 0.0L;

	if (noisy == NULL || !isfinite(sigma) || sigma < 0.0 || !(tail >= 0.0 && tail < 0.5))
		return -1;
	rule.z = significance_z(n);
	rule.sigma = (long double) sigma;
	rule.grow = false;
	span.lo = n;
	span.hi = 0;
	/* the span is the union of the minimal significant blocks */
	if (!minimal_blocks(noisy, n, &rule, span_add, &span))
		return 1;
	for (uint32_t c = span.lo; c <= span.hi; c++)
		total += noisy[c] > 0 ? (long double) noisy[c] : 0.0L;
	if (!(total > 0.0L))
		return 1;				/* not reached: a significant block has positive mass */
	*xlo = mass_position(grid, ext, noisy, span.lo, span.hi, (long double) tail * total, lo_cell);
	*xhi = mass_position(grid, ext, noisy, span.lo, span.hi,
						 (1.0L - (long double) tail) * total, hi_cell);
	return 0;
}

/* bounds_core on the log-scale grid */
static int
log_bounds_core(const dp_loggrid *g, const int64_t *noisy, double sigma, double tail,
				long double *xlo, uint32_t *lo_cell, long double *xhi, uint32_t *hi_cell)
{
	if (!grid_valid(g))
		return -1;
	return bounds_core(g, log_cell_extent, dp_loggrid_ncells(g), noisy, sigma, tail, xlo, lo_cell,
					   xhi, hi_cell);
}

static void
mask_add(void *arg, uint64_t start, uint64_t end)
{
	memset((uint8_t *) arg + start, 1, end - start);
}

int64_t
dp_loggrid_denoise(const dp_loggrid *g, int64_t *noisy, double sigma, double z, uint8_t *scratch)
{
	uint32_t	n;
	int64_t		kept = 0;
	block_rule	rule = {(long double) z, (long double) sigma, true};

	if (!grid_valid(g) || noisy == NULL || scratch == NULL || !isfinite(sigma) || sigma < 0.0 ||
		!isfinite(z) || z < 0.0)
		return -1;
	n = dp_loggrid_ncells(g);
	memset(scratch, 0, n);
	minimal_blocks(noisy, n, &rule, mask_add, scratch);
	for (uint32_t c = 0; c < n; c++)
	{
		if (scratch[c])
			kept++;
		else
			noisy[c] = 0;
	}
	return kept;
}

int
dp_loggrid_bounds_int(const dp_loggrid *g, const int64_t *noisy, double sigma, double tail,
					  int64_t *lower, int64_t *upper)
{
	long double xlo,
				xhi;
	uint32_t	clo,
				chi;
	extent		e;
	int			rc;

	if (g == NULL || !g->integral)
		return -1;
	rc = log_bounds_core(g, noisy, sigma, tail, &xlo, &clo, &xhi, &chi);
	if (rc != 0)
		return rc;
	cell_extent(g, clo, &e);
	*lower = floor_to_int64(clamp_ld(xlo, e.l, (long double) e.ihi));
	cell_extent(g, chi, &e);
	*upper = floor_to_int64(clamp_ld(xhi, e.l, (long double) e.ihi));
	if (*upper < *lower)
		*upper = *lower;		/* not reached: positions are monotone in the mass */
	return 0;
}

int
dp_loggrid_bounds(const dp_loggrid *g, const int64_t *noisy, double sigma, double tail,
				  double *lower, double *upper)
{
	long double xlo,
				xhi;
	uint32_t	clo,
				chi;
	int			rc;

	if (g == NULL)
		return -1;
	if (g->integral)
	{
		int64_t		l,
					u;

		rc = dp_loggrid_bounds_int(g, noisy, sigma, tail, &l, &u);
		if (rc == 0)
		{
			*lower = int_to_double_tz(l);
			*upper = int_to_double_tz(u);
		}
		return rc;
	}
	rc = log_bounds_core(g, noisy, sigma, tail, &xlo, &clo, &xhi, &chi);
	if (rc != 0)
		return rc;
	*lower = (double) xlo;
	*upper = (double) xhi;
	if (*upper < *lower)
		*upper = *lower;
	return 0;
}

/*
 * Output of the quantile edges: interior positions are converted to the grid's type (integral
 * grids: the nearest integer; with dbl set, then to a double rounded toward zero) and appended
 * when strictly between the last edge and upper.
 */
typedef struct edge_out
{
	bool		integral;
	int64_t    *ie;				/* integral grid, int64 output (else NULL) */
	double	   *de;				/* double output (else NULL) */
	uint32_t	k;				/* edges written */
	int64_t		ilast,			/* integral grids: the last edge, as an integer */
				iupper;
	double		dupper;
} edge_out;

static void
edge_put(edge_out *o, long double x, bool force)
{
	if (o->integral)
	{
		int64_t		v = force ? o->iupper : floor_to_int64(x + 0.5L);

		if (!force && (v >= o->iupper || v <= o->ilast))
			return;
		if (o->ie != NULL)
			o->ie[o->k++] = v;
		else
		{
			double		d = int_to_double_tz(v);

			/* beyond 2^53 neighbours may merge; for upper, replace the merged edge */
			if (d <= o->de[o->k - 1])
			{
				if (!force)
					return;
				o->k--;
			}
			o->de[o->k++] = d;
		}
		o->ilast = v;
		return;
	}
	{
		double		d = force ? o->dupper : (double) x;

		if (!force && (d >= o->dupper || d <= o->de[o->k - 1]))
			return;
		o->de[o->k++] = d;
	}
}

/* mass of cell c inside [rlo, rhi]: max(noisy, 0) (or 1) times the fraction of its extent inside */
static long double
cell_mass_in(const dp_loggrid *g, const int64_t *noisy, uint32_t c, bool fallback,
			 long double rlo, long double rhi, extent *e, long double *ol, long double *oh)
{
	long double w = fallback ? 1.0L : (noisy[c] > 0 ? (long double) noisy[c] : 0.0L);

	if (w <= 0.0L)
		return 0.0L;
	cell_extent(g, c, e);
	if (e->atom)
	{
		*ol = *oh = 0.0L;
		return rlo <= 0.0L && 0.0L <= rhi ? w : 0.0L;
	}
	*ol = e->l > rlo ? e->l : rlo;
	*oh = e->h < rhi ? e->h : rhi;
	if (!(*oh > *ol))
		return 0.0L;
	return w * ((*oh - *ol) / (e->h - e->l));
}

/*
 * The nbins - 1 interior quantile positions (non-decreasing) of the mass inside the continuous
 * range [rlo, rhi] (integral grids: rlo = lower, rhi = upper + 1, integer v occupying [v, v+1)),
 * passed to edge_put.
 */
static void
edges_core(const dp_loggrid *g, const int64_t *noisy, long double rlo, long double rhi,
		   uint32_t nbins, edge_out *out)
{
	uint32_t	n = dp_loggrid_ncells(g);
	uint32_t	c0,
				c1,
				c;
	long double total = 0.0L,
				cum = 0.0L;
	bool		fallback = false;
	extent		e;
	long double ol,
				oh;

	/* only cells that can intersect the range (with one cell of slack each side) */
	if (g->integral)
	{
		c0 = dp_loggrid_cell_int(g, floor_to_int64(rlo));
		c1 = dp_loggrid_cell_int(g, floor_to_int64(rhi - 1.0L));
	}
	else
	{
		c0 = dp_loggrid_cell_real(g, (double) rlo);
		c1 = dp_loggrid_cell_real(g, (double) rhi);
	}
	if (c0 > 0)
		c0--;
	if (c1 + 1 < n)
		c1++;

	/* with no mass inside at all, every cell counts 1: log-spaced edges */
	for (int pass = 0; pass < 2 && !(total > 0.0L); pass++)
	{
		fallback = pass == 1;
		total = 0.0L;
		for (c = c0; c <= c1; c++)
			total += cell_mass_in(g, noisy, c, fallback, rlo, rhi, &e, &ol, &oh);
	}
	if (!(total > 0.0L))
		return;

	c = c0;
	for (uint32_t i = 1; i < nbins; i++)
	{
		long double t = total * (long double) i / (long double) nbins;

		/* the search resumes in the cell where the previous quantile was found */
		for (; c <= c1; c++)
		{
			long double m = cell_mass_in(g, noisy, c, fallback, rlo, rhi, &e, &ol, &oh);

			if (m <= 0.0L)
				continue;
			if (cum + m >= t)
			{
				edge_put(out, e.atom ? 0.0L : ol + clamp_ld((t - cum) / m, 0.0L, 1.0L) * (oh - ol),
						 false);
				break;
			}
			cum += m;
		}
	}
}

static bool
is_int64_double(double v)
{
	return isfinite(v) && v == floor(v) && v >= -TWO63 && v <= TWO63;
}

static int64_t
double_to_int64(double v)
{
	return v >= TWO63 ? INT64_MAX : (int64_t) v;
}

/* Shared body.  Integral grids with int64 output: ie set; otherwise de set. */
static int
quantile_edges(const dp_loggrid *g, const int64_t *noisy, long double rlo, long double rhi,
			   int64_t ilower, int64_t iupper, double dlower, double dupper, uint32_t nbins,
			   int64_t *ie, double *de, uint32_t *nedges)
{
	edge_out	o = {g->integral, ie, de, 1, ilower, iupper, dupper};

	/* the first edge: lower */
	if (ie != NULL)
		ie[0] = ilower;
	else
		de[0] = g->integral ? int_to_double_tz(ilower) : dlower;
	if (g->integral ? ilower == iupper : dlower == dupper)
	{
		*nedges = 1;
		return 0;
	}
	if (nbins > 1)
		edges_core(g, noisy, rlo, rhi, nbins, &o);
	edge_put(&o, 0.0L, true);
	*nedges = o.k;
	return 0;
}

int
dp_loggrid_quantile_edges_int(const dp_loggrid *g, const int64_t *noisy, int64_t lower,
							  int64_t upper, uint32_t nbins, int64_t *edges, uint32_t *nedges)
{
	if (!grid_valid(g) || !g->integral || noisy == NULL || edges == NULL || nedges == NULL ||
		nbins < 1 || lower > upper)
		return -1;
	return quantile_edges(g, noisy, (long double) lower, (long double) upper + 1.0L, lower, upper,
						  0.0, 0.0, nbins, edges, NULL, nedges);
}

int
dp_loggrid_quantile_edges(const dp_loggrid *g, const int64_t *noisy, double lower, double upper,
						  uint32_t nbins, double *edges, uint32_t *nedges)
{
	if (!grid_valid(g) || noisy == NULL || edges == NULL || nedges == NULL || nbins < 1 ||
		!isfinite(lower) || !isfinite(upper) || lower > upper)
		return -1;
	if (g->integral)
	{
		int64_t		il,
					iu;

		if (!is_int64_double(lower) || !is_int64_double(upper))
			return -1;
		il = double_to_int64(lower);
		iu = double_to_int64(upper);
		return quantile_edges(g, noisy, (long double) il, (long double) iu + 1.0L, il, iu, 0.0,
							  0.0, nbins, NULL, edges, nedges);
	}
	return quantile_edges(g, noisy, (long double) lower, (long double) upper, 0, 0, lower, upper,
						  nbins, NULL, edges, nedges);
}

/* ============================================================================================
 * 3. Two-stage bounds (dp_discovery.h, section 3)
 * ============================================================================================ */

/*
 * rho_1 = rho / 4 is exact (a power of two); rho - rho_1 may round up, so the next double below
 * it is taken: that is <= the exact difference whichever way the subtraction rounded.
 */
int
dp_bounds_split(double rho, double *rho_coarse, double *rho_fine)
{
	double		c;

	if (!isfinite(rho) || !(rho > 0.0) || rho_coarse == NULL || rho_fine == NULL)
		return -1;
	c = rho * DP_BOUNDS_COARSE_SHARE;
	*rho_coarse = c;
	*rho_fine = nextafter(rho - c, 0.0);
	return 0;
}

int
dp_span_widen_int(int64_t *lo, int64_t *hi)
{
	long double w;

	if (lo == NULL || hi == NULL || *lo > *hi)
		return -1;
	/* exact in long double (64-bit mantissa); floor_to_int64 saturates at the int64 range */
	w = ceill(((long double) *hi - (long double) *lo) / 2.0L);
	if (w < 1.0L)
		w = 1.0L;
	*lo = floor_to_int64((long double) *lo - w);
	*hi = floor_to_int64((long double) *hi + w);
	return 0;
}

static double
clamp_finite(long double x)
{
	if (x > (long double) DBL_MAX)
		return DBL_MAX;
	if (x < -(long double) DBL_MAX)
		return -DBL_MAX;
	return (double) x;
}

int
dp_span_widen_real(double *lo, double *hi)
{
	long double w;

	if (lo == NULL || hi == NULL || !isfinite(*lo) || !isfinite(*hi) || *lo > *hi)
		return -1;
	w = ((long double) *hi - (long double) *lo) / 2.0L;
	if (!(w > 0.0L))			/* one point: half its magnitude, or 1 around 0 */
		w = fabsl((long double) *lo) > 1.0L ? fabsl((long double) *lo) / 2.0L : 0.5L;
	*lo = clamp_finite((long double) *lo - w);
	*hi = clamp_finite((long double) *hi + w);
	return 0;
}

int
dp_lingrid_init_int(dp_lingrid *g, int64_t lo, int64_t hi)
{
	unsigned __int128 range;
	uint64_t	w = 1;

	if (g == NULL || lo > hi)
		return -1;
	range = (unsigned __int128) ((__int128) hi - (__int128) lo) + 1;	/* up to 2^64 */
	while ((range + w - 1) / w > DP_LINGRID_CELLS_MAX)
		w *= 2;
	memset(g, 0, sizeof(*g));
	g->integral = true;
	g->ilo = lo;
	g->iwidth = w;
	g->ncells = (uint32_t) ((range + w - 1) / w);
	return 0;
}

int
dp_lingrid_init_real(dp_lingrid *g, double lo, double hi)
{
	double		w;

	if (g == NULL || !isfinite(lo) || !isfinite(hi) || !(lo < hi))
		return -1;
	w = (hi - lo) / DP_LINGRID_CELLS_MAX;
	if (!isfinite(w) || !(w > 0.0))
		return -1;
	memset(g, 0, sizeof(*g));
	g->lo = lo;
	g->width = w;
	g->ncells = DP_LINGRID_CELLS_MAX;
	return 0;
}

static bool
lingrid_valid(const dp_lingrid *g)
{
	if (g == NULL || g->ncells < 1 || g->ncells > DP_LINGRID_CELLS_MAX)
		return false;
	return g->integral ? g->iwidth >= 1 : isfinite(g->lo) && isfinite(g->width) && g->width > 0;
}

/* Values below the grid go to cell 0, above it to the last cell: one cell per row, always. */
uint32_t
dp_lingrid_cell_int(const dp_lingrid *g, int64_t v)
{
	uint64_t	c;

	if (!lingrid_valid(g) || !g->integral || v <= g->ilo)
		return 0;
	c = ((uint64_t) v - (uint64_t) g->ilo) / g->iwidth;	/* v > ilo: the difference is exact */
	return c >= g->ncells ? g->ncells - 1 : (uint32_t) c;
}

uint32_t
dp_lingrid_cell_real(const dp_lingrid *g, double x)
{
	double		t;

	if (!lingrid_valid(g) || g->integral)
		return 0;
	t = (x - g->lo) / g->width;
	if (!(t >= 0.0))
		return 0;				/* below, -Inf (and NaN, which callers do not pass) */
	return t >= (double) g->ncells ? g->ncells - 1 : (uint32_t) t;
}

/* [*l, *h) of cell c as positions (integral: integer v occupies [v, v + 1)). */
static void
lin_extent(const dp_lingrid *g, uint32_t c, long double *l, long double *h)
{
	if (g->integral)
	{
		*l = (long double) g->ilo + (long double) c * (long double) g->iwidth;
		*h = *l + (long double) g->iwidth;
		return;
	}
	*l = (long double) g->lo + (long double) c * (long double) g->width;
	*h = *l + (long double) g->width;
}

static void
lin_cell_extent(const void *grid, uint32_t c, extent *e)
{
	e->atom = false;
	e->ilo = e->ihi = 0;
	lin_extent(grid, c, &e->l, &e->h);
}

/* bounds_core on the linear grid */
static int
lin_bounds_core(const dp_lingrid *g, const int64_t *noisy, double sigma, double tail,
				long double *xlo, uint32_t *clo, long double *xhi, uint32_t *chi)
{
	if (!lingrid_valid(g))
		return -1;
	return bounds_core(g, lin_cell_extent, g->ncells, noisy, sigma, tail, xlo, clo, xhi, chi);
}

int
dp_lingrid_bounds_int(const dp_lingrid *g, const int64_t *noisy, double sigma, double tail,
					  int64_t *lower, int64_t *upper)
{
	long double xlo,
				xhi,
				l,
				h;
	uint32_t	clo,
				chi;
	int			rc;

	if (g == NULL || !g->integral || lower == NULL || upper == NULL)
		return -1;
	rc = lin_bounds_core(g, noisy, sigma, tail, &xlo, &clo, &xhi, &chi);
	if (rc != 0)
		return rc;
	/* the integer holding each position, kept inside its cell (the end of a cell is outside) */
	lin_extent(g, clo, &l, &h);
	*lower = floor_to_int64(clamp_ld(xlo, l, h - 1.0L));
	lin_extent(g, chi, &l, &h);
	*upper = floor_to_int64(clamp_ld(xhi, l, h - 1.0L));
	if (*upper < *lower)
		*upper = *lower;		/* not reached: positions are monotone in the mass */
	return 0;
}

int
dp_lingrid_bounds_real(const dp_lingrid *g, const int64_t *noisy, double sigma, double tail,
					   double *lower, double *upper)
{
	long double xlo,
				xhi;
	uint32_t	clo,
				chi;
	int			rc;

	if (g == NULL || g->integral || lower == NULL || upper == NULL)
		return -1;
	rc = lin_bounds_core(g, noisy, sigma, tail, &xlo, &clo, &xhi, &chi);
	if (rc != 0)
		return rc;
	*lower = clamp_finite(xlo);
	*upper = clamp_finite(xhi);
	if (*upper < *lower)
		*upper = *lower;
	return 0;
}

/* dp_discovery.h: stage 2 refines stage 1's bound inside the coarse cell it fell in, or beyond. */
int
dp_bounds_reconcile_int(const dp_loggrid *g, int64_t coarse_lo, int64_t coarse_hi,
						int64_t *lower, int64_t *upper)
{
	int64_t		a,
				b;
	int			replaced = 0;

	if (!grid_valid(g) || !g->integral || lower == NULL || upper == NULL ||
		coarse_lo > coarse_hi || *lower > *upper)
		return -1;
	dp_loggrid_cell_range_int(g, dp_loggrid_cell_int(g, coarse_lo), &a, &b);
	if (*lower > b)
	{
		*lower = coarse_lo;
		replaced++;
	}
	dp_loggrid_cell_range_int(g, dp_loggrid_cell_int(g, coarse_hi), &a, &b);
	if (*upper < a)
	{
		*upper = coarse_hi;
		replaced++;
	}
	if (*upper < *lower)		/* only one side replaced, the other beyond it: stage 1 whole */
	{
		*lower = coarse_lo;
		*upper = coarse_hi;
	}
	return replaced;
}

int
dp_bounds_reconcile(const dp_loggrid *g, double coarse_lo, double coarse_hi, double *lower,
					double *upper)
{
	double		a,
				b;
	int			replaced = 0;

	if (!grid_valid(g) || g->integral || lower == NULL || upper == NULL ||
		!isfinite(coarse_lo) || !isfinite(coarse_hi) || coarse_lo > coarse_hi ||
		!isfinite(*lower) || !isfinite(*upper) || *lower > *upper)
		return -1;
	/* a cell is [a, b): a bound inside it or at its end (the interpolation's last point) stays */
	dp_loggrid_cell_range(g, dp_loggrid_cell_real(g, coarse_lo), &a, &b);
	if (*lower > b)
	{
		*lower = coarse_lo;
		replaced++;
	}
	dp_loggrid_cell_range(g, dp_loggrid_cell_real(g, coarse_hi), &a, &b);
	if (*upper < a)
	{
		*upper = coarse_hi;
		replaced++;
	}
	if (*upper < *lower)
	{
		*lower = coarse_lo;
		*upper = coarse_hi;
	}
	return replaced;
}
