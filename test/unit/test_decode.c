/*
 * test_decode.c - unit and statistical tests of src/core/dp_decode.c (bin -> typed value).
 *
 * Every case draws N values (10^5) and checks that each lies in
 * its bin (and the column's bounds), exactly in double comparison.  For numeric scales the set of
 * admissible values is computed independently: the decimal strings of k * 10^-scale are built
 * from the integer k and parsed with strtod, and a value is admissible when that double lies in
 * the bin; each draw must print ("%.*f") and parse back to itself, and be admissible.
 * Uniformity is Pearson's chi-square against equiprobable cells (the admissible values, or
 * equal-width sub-bins) at false-alarm rate ALPHA = 1e-6 per check, critical values from the
 * regularized incomplete gamma function.  Seeds are fixed, so the outcome is reproducible; over a
 * random choice of seeds, a correct decoder would fail one of the fewer than 40 chi-square checks
 * with probability below 4e-5.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_decode.h"
#include "dp_prng.h"
#include "unit.h"

#define ALPHA 1e-6

static const long N = 100000;
static dp_prng rng;

#include "unit_stats.h"

/* counts[i] against expected n * w[i] / sum(w) (w NULL: equiprobable) */
static void
check_counts(const long *counts, const double *w, long k, long n, const char *what)
{
	double		wsum = 0,
				stat = 0,
				crit = chisq_crit(k - 1, ALPHA);

	for (long i = 0; i < k; i++)
		wsum += w ? w[i] : 1.0;
	for (long i = 0; i < k; i++)
	{
		double		e = n * (w ? w[i] : 1.0) / wsum;

		stat += (counts[i] - e) * (counts[i] - e) / e;
	}
	unit_check(stat <= crit, "%s: chi-square %.2f <= %.2f (df %ld, alpha %g, n %ld)",
			   what, stat, crit, k - 1, ALPHA, n);
}

/* ---------- integers ---------- */

static void
int_case(int64_t lo, int64_t hi, const char *what)
{
	uint64_t	span = (uint64_t) hi - (uint64_t) lo;	/* width - 1 */
	long		k = span < 1000 ? (long) span + 1 : 100;
	long	   *counts = calloc(k, sizeof(long));
	double	   *w = calloc(k, sizeof(double));
	long		bad = 0;

	for (long i = 0; i < N; i++)
	{
		int64_t		v = dp_decode_int(&rng, lo, hi);
		uint64_t	off = (uint64_t) v - (uint64_t) lo;

		if (v < lo || v > hi)
		{
			bad++;
			continue;
		}
		if (span < 1000)
			counts[off]++;
		else
			counts[(long) (((unsigned __int128) off * k) / ((unsigned __int128) span + 1))]++;
	}
	unit_check(bad == 0, "int %s [%" PRId64 ", %" PRId64 "]: %ld draws inside", what, lo, hi, N);
	if (span > 0)
	{
		/* exact cell weights: the number of integers falling in each sub-bin */
		for (long c = 0; c < k; c++)
		{
			unsigned __int128 W = (unsigned __int128) span + 1;
			unsigned __int128 a = (W * c + k - 1) / k,
						b = (W * (c + 1) + k - 1) / k;

			w[c] = (double) (b - a);
		}
		check_counts(counts, w, k, N, what);
	}
	free(counts);
	free(w);
}

static void
test_int(void)
{
	int			bad = 0;

	int_case(0, 9, "digits");
	int_case(-5, 5, "negative to positive");
	int_case(-1000, -3, "negative");
	int_case(5, 5, "point mass");
	int_case(INT64_MIN, INT64_MAX, "full int64");
	int_case(INT64_MIN, INT64_MAX - 1, "int64 minus one (2^64 - 1 values)");
	int_case(INT64_MIN, INT64_MIN + 2, "bottom of int64");
	int_case(INT64_MAX - 2, INT64_MAX, "top of int64");
	int_case(-(INT64_C(3) << 61), (INT64_C(3) << 61) - 1, "3 * 2^62 values");
	int_case(-2451545, 2958465, "dates as days");
	int_case(INT64_C(-210866803200000000), INT64_C(9223371331200000000), "timestamps as microseconds");
	for (int i = 0; i < 100; i++)
		bad += dp_decode_int(&rng, 5, 5) != 5;
	unit_check(bad == 0, "[5, 5] always gives 5");
	unit_check(dp_decode_int(&rng, 7, 3) == 7, "lo > hi (caller error) gives lo");
}

/* ---------- reals ---------- */

/* printing with scale decimals and parsing gives x back */
static bool
round_trips(double x, int scale)
{
	char		buf[1500];

	snprintf(buf, sizeof(buf), "%.*f", scale, x);
	return strtod(buf, NULL) == x;
}

static bool
inside(double v, double lo, double hi, bool closed)
{
	return v >= lo && (closed ? v <= hi : v < hi);
}

/* the double of the decimal k * 10^-scale, built from the digits of k (independent of the code) */
static double
decimal_value(int64_t k, int scale)
{
	char		digits[64],
				buf[256];
	uint64_t	mag = k < 0 ? (uint64_t) 0 - (uint64_t) k : (uint64_t) k;
	int			len = snprintf(digits, sizeof(digits), "%" PRIu64, mag);

	if (scale == 0)
		snprintf(buf, sizeof(buf), "%s%s", k < 0 ? "-" : "", digits);
	else if (len > scale)
		snprintf(buf, sizeof(buf), "%s%.*s.%s", k < 0 ? "-" : "", len - scale, digits,
				 digits + len - scale);
	else
	{
		char		zeros[64];

		memset(zeros, '0', (size_t) (scale - len));
		zeros[scale - len] = '\0';
		snprintf(buf, sizeof(buf), "%s0.%s%s", k < 0 ? "-" : "", zeros, digits);
	}
	return strtod(buf, NULL);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * A scaled case with at most a few thousand admissible values: they are enumerated from the
 * decimal strings, every draw must be one of them, and all must be equally likely.
 */
static void
scaled_case(double lo, double hi, bool closed, int scale, double cl, double cu, const char *what)
{
	double		elo = fmax(lo, cl),
				ehi = fmin(hi, cu);
	bool		eclosed = cu < hi ? true : closed;
	double		pw = pow(10, scale);
	int64_t		k0 = (int64_t) floor(elo * pw) - 3,
				k1 = (int64_t) ceil(ehi * pw) + 3;
	double	   *vals = malloc(sizeof(double) * (size_t) (k1 - k0 + 1));
	long	   *counts;
	long		m = 0,
				bad_in = 0,
				bad_rt = 0,
				bad_set = 0;

	if (isnan(cl))
		elo = lo;
	if (isnan(cu))
	{
		ehi = hi;
		eclosed = closed;
	}
	for (int64_t k = k0; k <= k1; k++)
	{
		double		v = decimal_value(k, scale);

		if (inside(v, elo, ehi, eclosed))
			vals[m++] = v;
	}
	counts = calloc(m ? m : 1, sizeof(long));
	for (long i = 0; i < N; i++)
	{
		double		v = dp_decode_real(&rng, lo, hi, closed, scale, cl, cu);
		double	   *hit;

		bad_in += !inside(v, elo, ehi, eclosed);
		bad_rt += !round_trips(v, scale);
		hit = bsearch(&v, vals, m, sizeof(double), cmp_double);
		if (hit)
			counts[hit - vals]++;
		else
			bad_set++;
	}
	unit_check(m > 0 && bad_in == 0 && bad_rt == 0 && bad_set == 0,
			   "scale %d %s [%.17g, %.17g%c: %ld draws inside, print/parse back, among the %ld multiples "
			   "(outside %ld, no round trip %ld, not a multiple %ld)",
			   scale, what, elo, ehi, eclosed ? ']' : ')', N, m, bad_in, bad_rt, bad_set);
	if (m > 1)
		check_counts(counts, NULL, m, N, what);
	free(vals);
	free(counts);
}

/* Unconstrained or wide: inside, round trip, uniform over nsub equal-width sub-bins. */
static void
wide_case_n(double lo, double hi, bool closed, int scale, int NSUB, const char *what)
{
	long		counts[64] = {0};
	long		bad_in = 0,
				bad_rt = 0;
	double		half = hi * 0.5 - lo * 0.5;

	for (long i = 0; i < N; i++)
	{
		double		v = dp_decode_real(&rng, lo, hi, closed, scale, -INFINITY, INFINITY);
		double		f = (v * 0.5 - lo * 0.5) / half;	/* position in [0, 1] */
		int			c = (int) (f * NSUB);

		bad_in += !inside(v, lo, hi, closed);
		if (scale >= 0)
			bad_rt += !round_trips(v, scale);
		counts[c < 0 ? 0 : c >= NSUB ? NSUB - 1 : c]++;
	}
	unit_check(bad_in == 0 && bad_rt == 0,
			   "scale %d %s [%.17g, %.17g%c: %ld draws inside%s (outside %ld, no round trip %ld)",
			   scale, what, lo, hi, closed ? ']' : ')', N, scale >= 0 ? ", print/parse back" : "",
			   bad_in, bad_rt);
	check_counts(counts, NULL, NSUB, N, what);
}

static void
wide_case(double lo, double hi, bool closed, int scale, const char *what)
{
	wide_case_n(lo, hi, closed, scale, 20, what);
}

static void
test_unconstrained(void)
{
	int			bad = 0;
	double		one_up = nextafter(1.0, 2.0);

	wide_case(0, 1, false, -1, "unit interval");
	wide_case(0, 1, true, -1, "closed unit interval");
	wide_case(-7.5, -2.5, false, -1, "negative");
	wide_case(-1e300, 1e300, true, -1, "huge (width overflows)");
	wide_case(-DBL_MAX, DBL_MAX, false, -1, "all finite doubles");
	/* 512 doubles 1/8 apart, 128 per sub-bin (sub-bins aligned with the double grid) */
	wide_case_n(1e15, 1e15 + 64, false, -1, 4, "coarse doubles");
	wide_case(4.9e-324, 1e-320, false, -1, "subnormal");

	for (int i = 0; i < 1000; i++)
	{
		bad += dp_decode_real(&rng, 3.25, 3.25, true, -1, -INFINITY, INFINITY) != 3.25;
		bad += dp_decode_real(&rng, 1.0, one_up, false, -1, -INFINITY, INFINITY) != 1.0;
		bad += dp_decode_real(&rng, -2.0, -2.0, false, -1, NAN, NAN) != -2.0;
	}
	unit_check(bad == 0, "point masses: [p, p] and [p, nextafter(p)) give p");

	bad = 0;
	{
		double		lo = 1.0,
					hi = nextafter(nextafter(1.0, 2.0), 2.0);	/* two doubles */
		long		c1 = 0;

		for (long i = 0; i < N; i++)
		{
			double		v = dp_decode_real(&rng, lo, hi, false, -1, -INFINITY, INFINITY);

			bad += !(v >= lo && v < hi);
			c1 += v == one_up;
		}
		unit_check(bad == 0 && c1 > 0 && c1 < N, "two-ulp bin: inside, both doubles occur (%ld of %ld)",
				   c1, N);
	}

	/* column bounds inside the bin */
	bad = 0;
	for (long i = 0; i < N; i++)
	{
		double		v = dp_decode_real(&rng, 0, 10, false, -1, 2, 3);

		bad += !(v >= 2 && v <= 3);
	}
	unit_check(bad == 0, "column bounds [2, 3] inside bin [0, 10): draws stay in [2, 3]");
	bad = 0;
	for (long i = 0; i < N; i++)
	{
		double		v = dp_decode_real(&rng, 0, 10, false, -1, 5, INFINITY);

		bad += !(v >= 5 && v < 10);
	}
	unit_check(bad == 0, "column lower bound 5 in bin [0, 10): draws in [5, 10)");
	bad = 0;
	for (long i = 0; i < 1000; i++)
	{
		double		v = dp_decode_real(&rng, 0, 10, false, -1, 20, 30);

		bad += !(v >= 0 && v < 10);
	}
	unit_check(bad == 0, "column bounds missing the bin (caller error): the bin wins");
}

static void
test_scaled(void)
{
	scaled_case(0, 1, false, 2, NAN, NAN, "cents");
	scaled_case(0, 1, true, 2, NAN, NAN, "cents, closed");
	scaled_case(-10.5, 10.5, false, 0, NAN, NAN, "integers");
	scaled_case(0.5, 3.5, true, 0, NAN, NAN, "integers, ties at the edges");
	scaled_case(0.1, 0.3, false, 1, NAN, NAN, "0.3 excluded");
	scaled_case(0.1 + 0.2, 0.7, false, 1, NAN, NAN, "0.30000000000000004 excludes 0.3");
	scaled_case(-2.5, -1.25, false, 1, NAN, NAN, "negative");
	scaled_case(-1.005, -0.995, false, 2, NAN, NAN, "one multiple");
	scaled_case(0.1234565, 0.1235, true, 6, NAN, NAN, "micro");
	scaled_case(-0.0005, 0.0005, false, 6, NAN, NAN, "micro around zero");
	scaled_case(1e12, 1e12 + 0.5, false, 3, NAN, NAN, "large lattice");
	scaled_case(0, 1e-28, false, 30, NAN, NAN, "scale 30");
	scaled_case(0, 10, false, 2, 2.005, 3.001, "column bounds");
	scaled_case(0, 10, false, 2, 2.005, INFINITY, "column lower bound");

	/* wide bins with a scale: inside, round trip, uniform by sub-bins */
	wide_case(0, 1000, false, 2, "wide");
	wide_case(-123456.789, 98765.4321, true, 6, "wide, scale 6");
	/* doubles 1/64 apart, coarser than the cents: 128 per sub-bin, aligned */
	wide_case_n(1e14, 1e14 + 8, false, 2, 4, "coarse doubles");
	wide_case(-1e300, 1e300, true, 2, "huge");
	wide_case(1, 2, false, 25, "scale 25");
}

static void
test_fallback(void)
{
	int			bad = 0;
	double		v;

	for (int i = 0; i < 100; i++)
	{
		bad += dp_decode_real(&rng, 0.121, 0.124, false, 2, -INFINITY, INFINITY) != 0.12;
		bad += dp_decode_real(&rng, -0.124, -0.121, false, 2, -INFINITY, INFINITY) != -0.12;
		bad += dp_decode_real(&rng, 2.2, 2.7, false, 0, -INFINITY, INFINITY) != 2.0;
		bad += dp_decode_real(&rng, 2.6, 2.9, false, 0, -INFINITY, INFINITY) != 3.0;
		bad += dp_decode_real(&rng, 5, 5, true, 2, -INFINITY, INFINITY) != 5.0;
		bad += dp_decode_real(&rng, 0.123, 0.123, true, 2, -INFINITY, INFINITY) != 0.12;
	}
	unit_check(bad == 0, "bins narrower than 10^-scale: the multiple nearest the midpoint");

	bad = 0;
	for (int i = 0; i < 100; i++)
	{
		/* nearest (0.12) is below the column: the next one (0.13) */
		bad += dp_decode_real(&rng, 0.121, 0.124, false, 2, 0.121, 0.5) != 0.13;
		/* the column holds no multiple at all: the nearest to the midpoint */
		bad += dp_decode_real(&rng, 0.121, 0.124, false, 2, 0.121, 0.124) != 0.12;
		/* bin [0, 0.5) meets the column [0.499, 7] only in [0.499, 0.5): 0.50 is in the column */
		bad += dp_decode_real(&rng, 0, 0.5, false, 2, 0.499, 7) != 0.5;
	}
	unit_check(bad == 0, "fallback honours the column bounds");

	v = dp_decode_real(&rng, 0.125, nextafter(0.125, 1), false, 2, -INFINITY, INFINITY);
	unit_check(v == 0.12 || v == 0.13, "[0.125, next double) at scale 2 gives 0.12 or 0.13 (%.17g)", v);
	v = dp_decode_real(&rng, 1e-31, 2e-31, false, 25, -INFINITY, INFINITY);
	unit_check(v == 0 && round_trips(v, 25), "[1e-31, 2e-31) at scale 25 gives 0");
	v = dp_decode_real(&rng, 1e-31, 2e-31, false, 25, 1e-31, 1);
	unit_check(v == 1e-25 && round_trips(v, 25), "... with column [1e-31, 1]: 1e-25 (%.17g)", v);
}

/*
 * Random bins of all magnitudes, random scales, sometimes column bounds cutting into the bin:
 * always inside (or a legitimate fallback: the interval narrower than one step), always inside the
 * column bounds (unless the column is narrower than one step), always round trips.
 */
static void
test_fuzz(void)
{
	static const int scales[] = {-1, 0, 1, 2, 3, 4, 6, 9, 15, 25};
	long		cases = N / 2,
				bad_in = 0,
				bad_col = 0,
				bad_rt = 0,
				fallbacks = 0,
				with_cols = 0;

	for (long t = 0; t < cases; t++)
	{
		double		mag = pow(10, -12 + 30 * dp_prng_unit(&rng));
		double		lo = (dp_prng_unit(&rng) < 0.5 ? -1 : 1) * mag * dp_prng_unit(&rng);
		double		width = (dp_prng_unit(&rng) < 0.5 ? mag : fabs(lo) + 1e-300) *
			pow(10, -17 * dp_prng_unit(&rng));
		double		hi = lo + width;
		bool		closed = dp_prng_below(&rng, 2) == 0;
		int			scale = scales[dp_prng_below(&rng, sizeof(scales) / sizeof(scales[0]))];
		double		cl = -INFINITY,
					cu = INFINITY,
					elo,
					ehi;
		bool		eclosed;
		double		v,
					step = scale < 0 ? 0 : pow(10, -scale);

		if (!(hi > lo))
			hi = nextafter(lo, INFINITY);
		if (dp_prng_below(&rng, 3) == 0)
		{
			/* column bounds that cut the bin from inside (and never miss it entirely) */
			cl = lo + (hi - lo) * 0.5 * dp_prng_unit(&rng);
			cu = hi - (hi - lo) * 0.5 * dp_prng_unit(&rng);
			if (cu < cl)
				cu = cl;
			with_cols++;
		}
		elo = fmax(lo, cl);
		ehi = fmin(hi, cu);
		eclosed = cu < hi ? true : closed;
		v = dp_decode_real(&rng, lo, hi, closed, scale, cl, cu);
		if (scale >= 0)
			bad_rt += !round_trips(v, scale);
		if (!inside(v, elo, ehi, eclosed))
		{
			/* legitimate only if the interval is narrower than one step */
			if (scale >= 0 && ehi - elo < step)
				fallbacks++;
			else if (++bad_in < 5)
				unit_diag("outside: [%.17g, %.17g%c col [%.17g, %.17g] scale %d -> %.17g", lo, hi,
						  closed ? ']' : ')', cl, cu, scale, v);
		}
		if (!(v >= cl && v <= cu) && !(scale >= 0 && cu - cl < step))
			bad_col++;
	}
	unit_check(bad_in == 0 && bad_col == 0 && bad_rt == 0,
			   "fuzz: %ld random bins and scales (%ld with column bounds): all inside or narrower than "
			   "a step (%ld), within the column, all round trip (outside %ld, outside column %ld, "
			   "no round trip %ld)", cases, with_cols, fallbacks, bad_in, bad_col, bad_rt);
}

/*
 * Shapes inside bins (dp_shape_*): a bin's value is drawn from the pieces that overlap it, by
 * weight in proportion to the part of each piece inside the bin, uniformly inside the part; a
 * bin no weighted piece overlaps has no shape and consumes no randomness; invalid pieces are
 * refused.
 */
static void
test_shape(void)
{
	static const int64_t iedges[] = {0, 23, 60, 101};
	/* bin 0 [0,22]: [18,19] w 20 and 20..22 of [20,23] (3/4 of 20); bin 1 [23,59]: 23 (1/4 of
	 * 20), the weightless [30,30] dropped; bin 2 [60,100]: [60,63] w 8, [64,71] w 4 */
	static const double ipieces[] = {18, 19, 20, 20, 23, 20, 30, 30, 0, 60, 63, 8, 64, 71, 4};
	static const double per_value0[] = {10, 10, 5, 5, 5};	/* 18..22 */
	static const double redges[] = {0, 1, 2};
	/* bin 0 [0,1): [0.5,1) of [0.5,1.5) (w 1/2); bin 1 [1,2]: [1,1.5) w 1/2, [1.75,2) w 3 */
	static const double rpieces[] = {0.5, 1.5, 1, 1.75, 2.0, 3};
	dp_domain	di,
				dr;
	dp_shape	s;
	long		c0[5] = {0},
				c2[12] = {0},
				cr[8] = {0};
	double		w2[12],
				wr[8] = {0, 0, 1, 1, 1, 1, 0, 0};	/* bin 1 in eighths: [1,1.5) then [1.75,2) */
	bool		inside = true;

	unit_check(dp_domain_init_int_edges(&di, iedges, 3, false) == 0, "shape: integer domain");
	unit_check(dp_shape_init(&s, &di, ipieces, 5) == 0, "shape: integer pieces accepted");
	for (long i = 0; i < N; i++)
	{
		double		lo,
					hi;
		int64_t		v;

		if (!dp_shape_pick(&s, &rng, 0, &lo, &hi))
		{
			inside = false;
			break;
		}
		v = dp_decode_int(&rng, (int64_t) lo, (int64_t) hi);
		if (v < 18 || v > 22)
			inside = false;
		else
			c0[v - 18]++;
		if (!dp_shape_pick(&s, &rng, 1, &lo, &hi) || lo != 23 || hi != 23)
			inside = false;
		if (!dp_shape_pick(&s, &rng, 2, &lo, &hi))
		{
			inside = false;
			break;
		}
		v = dp_decode_int(&rng, (int64_t) lo, (int64_t) hi);
		if (v < 60 || v > 71)
			inside = false;
		else
			c2[v - 60]++;
	}
	unit_check(inside, "shape: integer values stay inside their bin's weighted pieces");
	check_counts(c0, per_value0, 5, N, "shape: bin [0,22] by the weights of 18..22 (10 10 5 5 5)");
	for (int i = 0; i < 12; i++)
		w2[i] = i < 4 ? 2 : 0.5;
	check_counts(c2, w2, 12, N, "shape: bin [60,100] by the weights of 60..71 (2 each, then 0.5 each)");
	dp_shape_free(&s);

	/*
	 * The picks of a bin are stratified: after every k picks in bin 0 its part [18,19] (weight 20
	 * of 35) holds k * 20 / 35 of them within 4 (the golden-ratio sequence's discrepancy), where
	 * independent picks stray by about sqrt(k * 0.245), 15 at k = 1000; picks in another bin in
	 * between do not disturb it
	 */
	unit_check(dp_shape_init(&s, &di, ipieces, 5) == 0, "shape: integer pieces accepted again");
	{
		long		in_first = 0;
		double		worst = 0;

		for (long k = 1; k <= 1000; k++)
		{
			double		lo,
						hi;

			if (!dp_shape_pick(&s, &rng, 0, &lo, &hi))
				break;
			in_first += hi <= 19;
			worst = fmax(worst, fabs(in_first - k * 20.0 / 35.0));
			if (k % 3 == 0)
				(void) dp_shape_pick(&s, &rng, 2, &lo, &hi);
		}
		unit_check(worst <= 4, "shape: a bin's picks follow its weights within %.2f picks at every count (<= 4)", worst);
	}
	dp_shape_free(&s);

	unit_check(dp_domain_init_real_edges(&dr, redges, 2, true) == 0, "shape: real domain");
	unit_check(dp_shape_init(&s, &dr, rpieces, 2) == 0, "shape: real pieces accepted");
	inside = true;
	for (long i = 0; i < N; i++)
	{
		double		lo,
					hi,
					v;

		if (!dp_shape_pick(&s, &rng, 0, &lo, &hi) || lo != 0.5 || hi != 1.0)
			inside = false;
		if (!dp_shape_pick(&s, &rng, 1, &lo, &hi))
		{
			inside = false;
			break;
		}
		v = dp_decode_real(&rng, lo, hi, hi == 2.0, -1, 0, 2);
		if (!((v >= 1 && v < 1.5) || (v >= 1.75 && v <= 2)))
			inside = false;
		else
			cr[(int) ((v - 1) * 8) < 8 ? (int) ((v - 1) * 8) : 7]++;
	}
	unit_check(inside, "shape: real values stay inside their bin's weighted pieces");
	/* eighths of [1,2]: [1,1.5) holds 1/2 of the weight, [1.75,2) 3 (so 1/7 and 6/7) */
	for (int i = 0; i < 8; i++)
		wr[i] = i < 4 ? 0.5 / 4 : i >= 6 ? 3.0 / 2 : 0;
	{
		long		nz[6];
		double		wz[6];
		int			k = 0;

		for (int i = 0; i < 8; i++)
			if (wr[i] > 0)
			{
				nz[k] = cr[i];
				wz[k++] = wr[i];
			}
		unit_check(cr[4] == 0 && cr[5] == 0, "shape: nothing drawn in [1.5,1.75), which no piece covers");
		check_counts(nz, wz, k, N, "shape: bin [1,2] by its parts' weights (1/2 over [1,1.5), 3 over [1.75,2))");
	}
	dp_shape_free(&s);

	/* a bin no weighted piece overlaps: no shape, no randomness used */
	{
		static const double only_top[] = {70, 80, 1};
		dp_prng		before = rng;
		double		lo = -1,
					hi = -1;

		unit_check(dp_shape_init(&s, &di, only_top, 1) == 0, "shape: one piece");
		unit_check(!dp_shape_pick(&s, &rng, 0, &lo, &hi) && !dp_shape_pick(&s, &rng, 1, &lo, &hi) &&
				   lo == -1 && dp_prng_next(&before) == dp_prng_next(&rng),
				   "shape: bins without a weighted piece have no shape and draw nothing");
		unit_check(dp_shape_pick(&s, &rng, 2, &lo, &hi) && lo == 70 && hi == 80, "shape: the one piece's bin");
		unit_check(!dp_shape_pick(&s, &rng, 3, &lo, &hi), "shape: no bin 3");
		dp_shape_free(&s);
		unit_check(dp_shape_init(&s, &di, NULL, 0) == 0 && !dp_shape_pick(&s, &rng, 0, &lo, &hi),
				   "shape: no pieces, no shape");
		dp_shape_free(&s);
	}
	/* dp_shape_tidy: pieces out of order, and integer ends that meet (doubles rounded beyond
	 * 2^53), come out sorted and merged, and valid */
	{
		double		messy[] = {30, 40, 2, 10, 19, 1, 19, 25, 3, 0.0, 5, 1,
							   9007199254740992.0, 9007199254740994.0, 1, 9007199254740994.0, 9007199254741000.0, 2};
		dp_domain	big;
		static const int64_t big_edges[] = {0, 50, INT64_C(9007199254741100)};

		unit_check(dp_shape_init(&s, &di, messy, 4) == -1, "shape: unsorted, meeting integer pieces refused as they are");
		unit_check(dp_shape_tidy(messy, 6, true) == 4 &&
				   messy[0] == 0 && messy[1] == 5 && messy[2] == 1 &&
				   messy[3] == 10 && messy[4] == 25 && messy[5] == 4 &&
				   messy[6] == 30 && messy[7] == 40 && messy[8] == 2 &&
				   messy[9] == 9007199254740992.0 && messy[10] == 9007199254741000.0 && messy[11] == 3,
				   "shape: dp_shape_tidy sorts, and merges pieces that meet, adding their weights");
		unit_check(dp_domain_init_int_edges(&big, big_edges, 2, false) == 0 &&
				   dp_shape_init(&s, &big, messy, 4) == 0, "shape: tidied pieces accepted");
		dp_shape_free(&s);
	}
	/* invalid pieces are refused */
	{
		static const double overlap[] = {1, 5, 1, 5, 9, 1};
		static const double decreasing[] = {10, 12, 1, 1, 5, 1};
		static const double negative[] = {1, 5, -1};
		static const double fraction[] = {1.5, 5, 1};
		static const double empty_real[] = {0.5, 0.5, 1};
		static const double overlap_real[] = {0.1, 0.6, 1, 0.5, 0.9, 1};
		double		nan_w[] = {1, 5, NAN};

		unit_check(dp_shape_init(&s, &di, overlap, 2) == -1, "shape: overlapping integer pieces refused");
		unit_check(dp_shape_init(&s, &di, decreasing, 2) == -1, "shape: decreasing pieces refused");
		unit_check(dp_shape_init(&s, &di, negative, 1) == -1, "shape: a negative weight refused");
		unit_check(dp_shape_init(&s, &di, nan_w, 1) == -1, "shape: a NaN weight refused");
		unit_check(dp_shape_init(&s, &di, fraction, 1) == -1, "shape: a fractional integer piece refused");
		unit_check(dp_shape_init(&s, &dr, empty_real, 1) == -1, "shape: an empty real piece refused");
		unit_check(dp_shape_init(&s, &dr, overlap_real, 2) == -1, "shape: overlapping real pieces refused");
		unit_check(s.start == NULL, "shape: nothing allocated on refusal");
	}
}

int
main(void)
{
	dp_prng_seed(&rng, 20240611);
	test_int();
	test_unconstrained();
	test_scaled();
	test_fallback();
	test_fuzz();
	test_shape();
	return unit_done();
}
