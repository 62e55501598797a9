/*
 * dp_binning.c - resolution that the data can afford: the two-stage release's split, its
 * refinement rule, the estimate from both stages and the bins; see dp_binning.h for the rule
 * and its privacy.
 */
#include "dp_binning.h"
#include "dp_internal.h"
#include "dp_env.h"
#include "dp_privsyn.h"

#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

bool
dp_binning_fine_range(int64_t lower, int64_t upper)
{
	/* the difference in uint64 is exact for lower <= upper: no overflow */
	return lower <= upper && (uint64_t) upper - (uint64_t) lower < DP_BINNING_MAX_VALUES;
}

uint32_t
dp_binning_wide_bins(double mass, double min_mass, uint32_t base)
{
	double		r,
				pair;

	if (!isfinite(min_mass) || !(min_mass > 0) || !isfinite(mass) || base < 1)
		return base;
	r = floor(mass / min_mass);
	if (!(r >= 1))
		return 1;
	if (r < base)
		return (uint32_t) r;	/* fewer bins than declared, each of the minimum mass */
	/* b bins with b^2 <= mass / min_mass: a pair of such columns holds min_mass a cell */
	pair = floor(sqrt(mass / min_mass));
	if (pair > DP_BINNING_WIDE_MAX_BINS)
		pair = DP_BINNING_WIDE_MAX_BINS;
	return pair > base ? (uint32_t) pair : base;
}

double
dp_binning_wide_mass(const int64_t *raw, uint32_t n, double sigma, double cap)
{
	double		sum = 0;

	if (raw == NULL || !isfinite(sigma) || sigma < 0)
		return -1;
	for (uint32_t c = 0; c < n; c++)
		sum += (double) raw[c];
	/* the n cells' noise, summed, has a standard deviation of sigma sqrt(n) */
	sum -= DP_BINNING_Z * sigma * sqrt((double) n);
	if (sum > cap)
		sum = cap;
	return sum > 0 ? sum : 0;
}

/* x rounded to the nearest multiple of m x 10^k (m in 1, 2, 5; |k| <= 22: 10^|k| is exact). */
/* the round steps m x 10^k, coarsest first within a power of ten (round edges, roundest values) */
static const int round_steps[3] = {5, 2, 1};

static double
round_to_step(double x, int m, int k)
{
	double		p = 1;

	for (int i = 0; i < (k < 0 ? -k : k); i++)
		p *= 10;
	if (k >= 0)
		return round(x / (m * p)) * (m * p);
	return round(x * p / m) * m / p;
}

/*
 * The finest decimal exponent an inner real edge keeps (dp_binning.h): 10^k <= 1.5 times the
 * narrower of its bins, and not below the type's min_exp.
 */
static int
edge_min_exp(double width, int min_exp)
{
	/* a relative 1e-9 over: a width of 0.2 / 3 read as a difference keeps the tenths */
	int			k = (int) floor(log10(1.5 * width) + 1e-9);

	return k < min_exp ? min_exp : k;
}

int
dp_binning_round_edges(double *edges, uint32_t n, bool integral, int min_exp)
{
	uint32_t	m = 1;
	double		prev = edges == NULL ? 0 : edges[0];	/* the edge before, as learned */

	if (edges == NULL || n < 1)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (!isfinite(edges[i]) || (i > 0 && !(edges[i] > edges[i - 1])))
			return -1;
	if (n < 3 || min_exp > 20)
		return (int) n;
	if (integral && min_exp < 0)
		min_exp = 0;
	for (uint32_t i = 1; i + 1 < n; i++)
	{
		double		x = edges[i],
					w = fmin(x - prev, edges[i + 1] - x),	/* the bins as learned */
					tol = fmin(x - edges[m - 1], edges[i + 1] - x) / (integral ? 4 : 2),
					r = x;
		int			kf,
					klo;
		bool		moved = false;

		prev = x;
		if (!isfinite(w) || w < 1e-20 || w > 1e20)
		{
			if (x > edges[m - 1])
				edges[m++] = x;
			continue;
		}
		/* integral: the steps of 1 and above that reach; reals: none finer than the bins need */
		klo = integral ? min_exp : edge_min_exp(w, min_exp);
		kf = tol > 0 ? (int) floor(log10(tol)) : klo;
		if (kf > klo)
			klo = kf;
		/* 10^kf <= tol: its nearest multiple is within tol, so the search ends there */
		for (int k = (kf + 1 > klo ? kf + 1 : klo); k >= klo && !moved && tol > 0; k--)
			for (int j = 0; j < 3 && !moved; j++)
			{
				double		c = round_to_step(x, round_steps[j], k);

				if (isfinite(c) && fabs(c - x) <= tol && c > edges[m - 1] && c < edges[i + 1])
				{
					r = c;
					moved = true;
				}
			}
		/* a real edge no round step reaches: the nearest multiple of the finest step it keeps */
		if (!moved && !integral && klo > kf)
			r = round_to_step(x, 1, klo);
		/* bins that rounding emptied merge with their neighbour */
		if (isfinite(r) && r > edges[m - 1] && r < edges[n - 1])
			edges[m++] = r;
	}
	edges[m++] = edges[n - 1];
	return (int) m;
}

/*
 * rho_1 = rho / 4 is exact (a power of two); rho - rho_1 may round up, so the next double below
 * it is taken: that is <= the exact difference whichever way the subtraction rounded.
 */
int
dp_binning_split(double rho, double *rho_coarse, double *rho_fine)
{
	double		c;

	if (!isfinite(rho) || !(rho > 0.0) || rho_coarse == NULL || rho_fine == NULL)
		return -1;
	c = rho * DP_BINNING_COARSE_SHARE;
	*rho_coarse = c;
	*rho_fine = nextafter(rho - c, 0.0);
	return 0;
}

bool
dp_binning_refine(int64_t noisy, uint32_t w, double sigma_fine)
{
	return w >= 1 && isfinite(sigma_fine) && sigma_fine >= 0 &&
		(double) noisy >= DP_BINNING_Z * sigma_fine * sqrt((double) w);
}

int
dp_binning_combine(double c1, double var1, const double *c2, uint32_t n2, double var2,
				   double *total, double *est)
{
	double		sum = 0,
				vsum,
				t;

	if (c2 == NULL || n2 == 0 || total == NULL || (n2 > 1 && est == NULL) ||
		!isfinite(var1) || !(var1 > 0) || !isfinite(var2) || !(var2 > 0) || !isfinite(c1))
		return -1;
	for (uint32_t i = 0; i < n2; i++)
		sum += c2[i];
	if (!isfinite(sum))
		return -1;
	vsum = var2 * (double) n2;	/* the variance of the sum of the stage-2 counts */
	t = (c1 / var1 + sum / vsum) / (1.0 / var1 + 1.0 / vsum);
	*total = t;
	if (est != NULL)
		for (uint32_t i = 0; i < n2; i++)
			est[i] = c2[i] + (t - sum) / (double) n2;
	return 0;
}

/* The noisy mass a bin of w values must reach (dp_binning.h). */
static double
bin_threshold(double sigma, double min_mass, uint32_t w)
{
	return fmax(1.0, fmax(min_mass, DP_BINNING_Z * sigma * sqrt((double) w)));
}

static bool
valid_range(int64_t lower, uint32_t nvalues)
{
	return nvalues >= 1 && nvalues <= DP_BINNING_MAX_VALUES && lower <= INT64_MAX - (int64_t) nvalues;
}

int
dp_binning_int(const int64_t *noisy, uint32_t nvalues, int64_t lower, double sigma,
			   double min_mass, int64_t *edges, uint32_t *nedges)
{
	uint32_t	start[DP_BINNING_MAX_VALUES];	/* each bin's first value (offset from lower) */
	double		mass[DP_BINNING_MAX_VALUES];	/* each bin's noisy mass */
	uint32_t	nb = 0,
				v = 0,
				pending = 0;	/* a run joined to the next value's bin starts here */
	double		pending_mass = 0;
	bool		has_pending = false;
	double		t1 = bin_threshold(sigma, min_mass, 1);

	if (noisy == NULL || !valid_range(lower, nvalues) || !isfinite(sigma) || sigma < 0 ||
		!isfinite(min_mass) || min_mass < 0 ||
		edges == NULL || nedges == NULL)
		return -1;
	while (v < nvalues)
	{
		uint32_t	r = v,
					first = nb,
					bstart = v;
		double		m = 0;

		if ((double) noisy[v] >= t1)
		{
			/* a resolved value: a bin of its own (with a lighter run before it, if one joined) */
			start[nb] = has_pending ? pending : v;
			mass[nb++] = (double) noisy[v] + (has_pending ? pending_mass : 0);
			has_pending = false;
			v++;
			continue;
		}
		/* a run [v, r) of unresolved values, cut greedily into bins that reach the threshold */
		while (r < nvalues && (double) noisy[r] < t1)
			r++;
		for (uint32_t u = v; u < r; u++)
		{
			m += (double) noisy[u];
			if (m >= bin_threshold(sigma, min_mass, u - bstart + 1))
			{
				start[nb] = bstart;
				mass[nb++] = m;
				bstart = u + 1;
				m = 0;
			}
		}
		if (bstart < r)
		{
			if (nb > first)
				mass[nb - 1] += m;	/* the remainder joins the run's last bin */
			else if (r < nvalues && (nb == 0 || (double) noisy[r] < mass[nb - 1]))
			{
				/* the whole run joins the resolved value after it, the lighter neighbour */
				has_pending = true;
				pending = bstart;
				pending_mass = m;
			}
			else if (nb > 0)
				mass[nb - 1] += m;	/* ... or the bin before it */
			else
			{
				start[nb] = bstart;	/* the whole range: one bin */
				mass[nb++] = m;
			}
		}
		v = r;
	}
	for (uint32_t b = 0; b < nb; b++)
		edges[b] = lower + (int64_t) start[b];
	edges[nb] = lower + (int64_t) nvalues;
	*nedges = nb + 1;
	return 0;
}

static bool
increasing(const int64_t *e, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (e[i] <= e[i - 1])
			return false;
	return true;
}

/* Marks the block edges (and the values inside blocks); false on an invalid block. */
static bool
mark_blocks(int64_t lower, uint32_t nvalues, uint32_t nblocks, const int64_t *block_lo,
			const int64_t *block_hi, const int64_t *block_edges, const uint32_t *block_nedges,
			bool *mark, bool *block_edge, bool *inblock)
{
	uint32_t	off = 0;
	int64_t		prev_hi = -1;

	for (uint32_t k = 0; k < nblocks; k++)
	{
		int64_t		lo = block_lo[k] - lower,
					hi = block_hi[k] - lower;
		uint32_t	ne = block_nedges[k];
		const int64_t *be = block_edges + off;

		if (lo <= prev_hi || lo > hi || hi >= (int64_t) nvalues || ne < 3 || ne > (uint32_t) (hi - lo + 2) ||
			be[0] != block_lo[k] || be[ne - 1] != block_hi[k] + 1 || !increasing(be, ne))
			return false;
		for (int64_t v = lo + 1; v <= hi; v++)
			mark[v] = false;
		for (int64_t v = lo; v <= hi; v++)
			inblock[v] = true;
		for (uint32_t i = 0; i < ne; i++)
			mark[be[i] - lower] = block_edge[be[i] - lower] = true;
		prev_hi = hi;
		off += ne;
	}
	return true;
}

/* One pass: removes one edge of a thin bin next to a block; false when there is none. */
static bool
merge_one_sliver(uint32_t nvalues, bool *mark, const bool *block_edge, const bool *inblock,
				 const double *mass, double floor_mass)
{
	uint32_t	a = 0;

	while (a < nvalues)
	{
		uint32_t	b = a + 1;
		double		m = mass[a];

		while (b < nvalues && !mark[b])
			m += mass[b++];
		if (!inblock[a] && (block_edge[a] || block_edge[b]) && m < floor_mass)
		{
			if (a > 0 && !block_edge[a])
			{
				mark[a] = false;
				return true;
			}
			if (b < nvalues && !block_edge[b])
			{
				mark[b] = false;
				return true;
			}
		}
		a = b;
	}
	return false;
}

int
dp_binning_merge(const int64_t *coarse, uint32_t ncoarse, int64_t lower, uint32_t nvalues,
				 uint32_t nblocks, const int64_t *block_lo, const int64_t *block_hi,
				 const int64_t *block_edges, const uint32_t *block_nedges,
				 const double *mass, double min_mass, int64_t *edges, uint32_t *nedges)
{
	bool		mark[DP_BINNING_MAX_VALUES + 1],
				block_edge[DP_BINNING_MAX_VALUES + 1],
				inblock[DP_BINNING_MAX_VALUES + 1];
	uint32_t	n = 0;

	if (coarse == NULL || mass == NULL || edges == NULL || nedges == NULL || !valid_range(lower, nvalues) ||
		ncoarse < 2 || ncoarse > nvalues + 1 || coarse[0] != lower ||
		coarse[ncoarse - 1] != lower + (int64_t) nvalues || !increasing(coarse, ncoarse) ||
		(nblocks > 0 && (block_lo == NULL || block_hi == NULL || block_edges == NULL || block_nedges == NULL)) ||
		!isfinite(min_mass) || min_mass < 0)
		return -1;
	for (uint32_t v = 0; v < nvalues; v++)
		if (!isfinite(mass[v]))
			return -1;
	memset(mark, 0, sizeof(mark));
	memset(block_edge, 0, sizeof(block_edge));
	memset(inblock, 0, sizeof(inblock));
	for (uint32_t i = 0; i < ncoarse; i++)
		mark[coarse[i] - lower] = true;
	if (!mark_blocks(lower, nvalues, nblocks, block_lo, block_hi, block_edges, block_nedges,
					 mark, block_edge, inblock))
		return -1;
	/* each pass removes an edge: at most nvalues passes */
	while (merge_one_sliver(nvalues, mark, block_edge, inblock, mass, fmax(1.0, min_mass)))
		;
	for (uint32_t v = 0; v <= nvalues; v++)
		if (mark[v])
			edges[n++] = lower + (int64_t) v;
	*nedges = n;
	return 0;
}

int
dp_binning_shape_weights(const dp_shape_cell *c, uint32_t k, double *w)
{
	double		mass = 0,
				width = 0,
				q = 0,
				v = 0,
				shrink;

	if (c == NULL || w == NULL)
		return -1;
	for (uint32_t i = 0; i < k; i++)
	{
		mass += c[i].count;
		width += c[i].width;
		v += c[i].var;
	}
	if (k == 0 || !(mass > 0) || !(width > 0))
		return -1;
	for (uint32_t i = 0; i < k; i++)
	{
		double		dev = c[i].count - mass * c[i].width / width;

		q += dev * dev;
	}
	shrink = q > 0 ? fmax(0.0, 1 - v / q) : 0;
	for (uint32_t i = 0; i < k; i++)
	{
		double		u = mass * c[i].width / width;

		w[i] = u + shrink * (c[i].count - u);
	}
	return 0;
}

/* the median of v[0 .. n - 1], n >= 1 (v is sorted in place) */
static double
median_of(double *v, uint32_t n)
{
	qsort(v, n, sizeof(double), dp_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* x a multiple of m (also negative x) */
static bool
multiple_of(int64_t x, int64_t m)
{
	return x % m == 0;
}

uint32_t
dp_binning_heap_spread(double lo, double hi, double weight, double mult, double *pieces)
{
	double		sum = 0;
	uint32_t	n = 0;

	for (double x = lo; x < hi; x++)
		sum += multiple_of((int64_t) x, DP_BINNING_HEAP_STEP) ? mult : 1;
	for (double x = lo; x < hi; x++, n++)
	{
		pieces[3 * n] = x;
		pieces[3 * n + 1] = x;
		pieces[3 * n + 2] = weight * (multiple_of((int64_t) x, DP_BINNING_HEAP_STEP) ? mult : 1) / sum;
	}
	return n;
}

/* the ratios of dp_binning_heap_multiplier kept: enough for a median (a column's multiples of ten) */
#define HEAP_MAX_RATIOS 256

double
dp_binning_heap_multiplier(const double *value, const bool *known, uint32_t n, int64_t lower,
						   double sigma)
{
	uint32_t	tested = 0,
				shows = 0,
				otested = 0,
				oshows = 0,
				nr = 0;
	double		bar = DP_BINNING_HEAP_Z * sigma * sqrt(1.5),
				r[HEAP_MAX_RATIOS],
				m;

	if (value == NULL || known == NULL || !isfinite(sigma) || !(sigma > 0))
		return 1;
	/* the test: excesses over the two neighbours' mean at the multiples and at the others */
	for (uint32_t i = 1; i + 1 < n; i++)
	{
		int64_t		x = lower + (int64_t) i;
		bool		show;

		if (!known[i - 1] || !known[i] || !known[i + 1])
			continue;
		show = value[i] - 0.5 * (value[i - 1] + value[i + 1]) > bar;
		if (multiple_of(x, DP_BINNING_HEAP_STEP))
		{
			tested++;
			shows += show;
		}
		else if (!multiple_of(x, 5))
		{
			otested++;
			oshows += show;
		}
	}
	if (shows < DP_BINNING_HEAP_MIN || 2 * shows < tested || otested == 0 ||
		(double) shows * otested < DP_BINNING_HEAP_RATE * oshows * tested)
		return 1;
	/* the multiplier: the median ratio of a multiple to its neighbours that are no multiple of 5 */
	for (uint32_t i = 0; i < n && nr < HEAP_MAX_RATIOS; i++)
	{
		double		base = 0;
		int			nb = 0;

		if (!known[i] || !multiple_of(lower + (int64_t) i, DP_BINNING_HEAP_STEP))
			continue;
		for (int64_t j = (int64_t) i - 2; j <= (int64_t) i + 2; j++)
		{
			if (j < 0 || j >= (int64_t) n || !known[j] || multiple_of(lower + j, 5))
				continue;
			base += value[j];
			nb++;
		}
		if (nb < 2 || !(base / nb > sigma))
			continue;
		r[nr++] = value[i] / (base / nb);
	}
	if (nr < DP_BINNING_HEAP_MIN)
		return 1;
	m = median_of(r, nr);
	return isfinite(m) ? fmin(fmax(m, 1.0), DP_BINNING_HEAP_MAX_MULT) : 1;
}

bool
dp_binning_roundest(double lo, double hi, double *x)
{
	int			k;

	if (x == NULL || !isfinite(lo) || !isfinite(hi) || !(hi > lo))
		return false;
	/* from the first power of ten above both ends down: the first step with a multiple inside */
	k = (int) floor(log10(fmax(fmax(fabs(lo), fabs(hi)), 1e-300))) + 1;
	for (int kk = k; kk > k - DP_BINNING_ROUNDEST_DIGITS; kk--)
		for (int j = 0; j < 3; j++)
		{
			double		s = round_steps[j] * pow(10.0, kk),
						first = ceil(lo / s),
						last = ceil(hi / s) - 1;	/* multiples first .. last in [lo, hi) */

			/* the quotients may round: only multiples that lie in [lo, hi) as doubles count */
			if (first * s < lo)
				first += 1;
			if (last * s >= hi)
				last -= 1;
			if ((last + 1) * s < hi)
				last += 1;
			if (last < first)
				continue;
			if (last > first)
				return false;	/* two equally round values: no one of them */
			*x = round_to_step(first * s, round_steps[j], kk);
			return *x >= lo && *x < hi;
		}
	return false;
}

uint32_t
dp_binning_heap_points(const double *edges, uint32_t nbins, const double *counts, double *point)
{
	uint32_t	n = 0;

	if (edges == NULL || counts == NULL || point == NULL)
		return 0;
	for (uint32_t j = 0; j < nbins; j++)
	{
		double		w = edges[j + 1] - edges[j],
					d = counts[j] / w,
					nb = 0;

		point[j] = NAN;
		if (!isfinite(d) || !(counts[j] > 0) || !(w > 0))
			continue;
		/* the neighbours' densities (a negative count: no mass there) */
		if (j > 0 && edges[j] > edges[j - 1])
			nb = fmax(nb, counts[j - 1] / (edges[j] - edges[j - 1]));
		if (j + 1 < nbins && edges[j + 2] > edges[j + 1])
			nb = fmax(nb, counts[j + 1] / (edges[j + 2] - edges[j + 1]));
		if (!(d >= DP_BINNING_HEAP_RATIO * nb))
			continue;
		if (dp_binning_roundest(edges[j], edges[j + 1], &point[j]))
			n++;
		else
			point[j] = NAN;
	}
	return n;
}

/* x a multiple of s, up to the rounding of the quotient (0 is; another x below s is not) */
static bool
on_step(double x, double s)
{
	double		q = x / s,
				r = round(q);

	return fabs(q - r) < 1e-9 * fmax(1.0, fabs(q)) && (r != 0 || x == 0);
}

uint32_t
dp_binning_heap_mates(const double *edges, uint32_t nbins, const double *counts, double *point)
{
	uint32_t	npoints = 0,
				n = 0;
	double		step = NAN,
				background = 0;

	if (edges == NULL || counts == NULL || point == NULL)
		return 0;
	for (uint32_t j = 0; j < nbins; j++)
		npoints += isfinite(point[j]);
	if (npoints < 2)
		return 0;
	/* the coarsest round step that every point is a multiple of */
	for (int k = 15; k >= -15 && !isfinite(step); k--)
		for (int i = 0; i < 3 && !isfinite(step); i++)
		{
			double		s = round_steps[i] * pow(10.0, k);
			bool		all = true;

			for (uint32_t j = 0; j < nbins && all; j++)
				if (isfinite(point[j]) && !on_step(point[j], s))
					all = false;
			if (all)
				step = s;
		}
	if (!isfinite(step))
		return 0;
	/* the background: the median density of the bins that do not start on the step */
	{
		double	   *bg = dp_alloc(sizeof(double) * (nbins + 1));
		uint32_t	nbg = 0;

		if (bg == NULL)
			return 0;
		for (uint32_t j = 0; j < nbins; j++)
		{
			double		w = edges[j + 1] - edges[j];

			if (!isfinite(point[j]) && w > 0 && !on_step(edges[j], step))
				bg[nbg++] = fmax(counts[j], 0) / w;
		}
		if (nbg > 0)
			background = median_of(bg, nbg);
		dp_free(bg);
		if (nbg == 0)
			return 0;
	}
	for (uint32_t j = 0; j < nbins; j++)
	{
		double		w = edges[j + 1] - edges[j];

		if (isfinite(point[j]) || !(counts[j] > 0) || !(w > 0) || w > step * (1 + 1e-9) ||
			!on_step(edges[j], step) || !(counts[j] / w >= DP_BINNING_HEAP_RATIO * background))
			continue;
		point[j] = edges[j];
		n++;
	}
	return n;
}

/* The rare-value merge of a column's released one-way counts (dp_privsyn.h). */
uint32_t
dp_rare_merge(const double *noisy, uint32_t size, uint32_t ordered, double rare_below,
			  uint16_t *code_map, uint32_t *nmerged)
{
	int32_t		rare_rep = -1,
				partner = -1;
	uint32_t	nrare = 0,
				next = 0;
	uint32_t   *rep = dp_alloc(sizeof(uint32_t) * (size > 0 ? size : 1)),
			   *newc = dp_alloc(sizeof(uint32_t) * (size > 0 ? size : 1));

	*nmerged = 0;
	if (!rep || !newc)
	{
		dp_free(rep);
		dp_free(newc);
		return 0;				/* no memory for the maps: the caller reports it */
	}
	if (ordered > size)
		ordered = size;
	for (uint32_t k = 0; k < size; k++)
		rep[k] = k;

	/*
	 * The ordered codes [0, ordered): each maximal run of consecutive rare codes is one group;
	 * a run that is still below the threshold in all joins the lighter of its (non-rare)
	 * neighbours.  A code is only ever merged with its neighbours, so a merged code stays an
	 * interval and its split keeps values where they were.
	 */
	for (uint32_t k = 0; k < ordered;)
	{
		uint32_t	k1 = k;
		double		mass = 0;

		if (!(noisy[k] < rare_below))
		{
			k++;
			continue;
		}
		while (k1 < ordered && noisy[k1] < rare_below)
			mass += noisy[k1++];
		/* [k, k1) is a run of rare codes; k - 1 and k1 (when inside) are not rare */
		if (mass < rare_below && (k > 0 || k1 < ordered))
		{
			uint32_t	to = k == 0 ? k1 : k1 >= ordered ? k - 1 :
				noisy[k - 1] <= noisy[k1] ? k - 1 : k1;

			for (uint32_t q = k; q < k1; q++)
				rep[q] = to;
		}
		else
			for (uint32_t q = k; q < k1; q++)
				rep[q] = k;
		k = k1;
	}

	/*
	 * The other codes (all of a category column; the NULL cell of a binned one): the rare ones
	 * are merged into one code, when there are at least two of them.  A lone rare code
	 * (typically the NULL/other cell of a column that has none, such as income's) joins the most
	 * populous other code rather than being kept as a code of its own: it would otherwise add a
	 * near-empty row of cells, pure noise, to every marginal holding the column.  The merged
	 * code's rows share its partner's joint with every other column; with no data on the rare
	 * code's own joint, the bulk's conditionals are the least wrong guess, whereas a small partner
	 * would impose its own, often atypical, ones.  Decided from the released counts only.
	 */
	for (uint32_t k = ordered; k < size; k++)
		nrare += noisy[k] < rare_below;
	if (nrare == 1 && size > 1)
	{
		for (uint32_t k = 0; k < size; k++)
			if (!(noisy[k] < rare_below) && (partner < 0 || noisy[k] > noisy[partner]))
				partner = (int32_t) k;
	}
	if (nrare >= 2 || partner >= 0)
		for (uint32_t k = ordered; k < size; k++)
			if (noisy[k] < rare_below)
			{
				if (rare_rep < 0)
					rare_rep = partner >= 0 ? partner : (int32_t) k;
				rep[k] = (uint32_t) rare_rep;
			}

	/* merged codes numbered in the order of their first original code */
	for (uint32_t k = 0; k < size; k++)
		newc[k] = UINT32_MAX;
	for (uint32_t k = 0; k < size; k++)
	{
		if (newc[rep[k]] == UINT32_MAX)
			newc[rep[k]] = next++;
		code_map[k] = (uint16_t) newc[rep[k]];
	}
	/* codes that share their merged code with another */
	for (uint32_t k = 0; k < size; k++)
		newc[k] = 0;
	for (uint32_t k = 0; k < size; k++)
		newc[code_map[k]]++;
	for (uint32_t k = 0; k < size; k++)
		*nmerged += newc[code_map[k]] > 1;
	dp_free(rep);
	dp_free(newc);
	return next;
}
