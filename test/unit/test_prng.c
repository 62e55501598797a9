/*
 * test_prng.c - unit and statistical tests of src/core/dp_prng.c (post-processing PRNG).
 *
 * Correctness of the generator is checked against the published output vectors of the reference
 * implementations (xoshiro256** from state {1, 2, 3, 4}; SplitMix64 from seeds 0 and 1234567),
 * and against an independent transcription in this file over long streams.
 *
 * Statistical checks (below, unit, shuffle) are Pearson chi-square tests against the exact uniform
 * distribution at false-alarm rate ALPHA = 1e-6 each, critical values from the regularized
 * incomplete gamma function.  They use fixed seeds, so the file's outcome is reproducible; with
 * fewer than 20 such checks a correct generator would fail one, over a random choice of seeds,
 * with probability below 2e-5.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp_prng.h"
#include "dp_random.h"
#include "unit.h"

#define ALPHA 1e-6

/* ---------- chi-square critical values ---------- */

#include "unit_stats.h"

/* Pearson statistic of k equiprobable cells; reports and checks it. */
static void
check_uniform_counts(const long *counts, long k, long n, const char *what)
{
	double		e = (double) n / k,
				stat = 0,
				crit = chisq_crit(k - 1, ALPHA);

	for (long i = 0; i < k; i++)
		stat += (counts[i] - e) * (counts[i] - e) / e;
	unit_check(stat <= crit, "%s: chi-square %.2f <= %.2f (df %ld, alpha %g, n %ld)",
			   what, stat, crit, k - 1, ALPHA, n);
}

/* ---------- independent reference transcriptions ---------- */

static uint64_t
ref_splitmix(uint64_t *state)
{
	uint64_t	z;

	*state += 0x9E3779B97F4A7C15ULL;
	z = *state;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t
ref_xoshiro(uint64_t st[4])
{
	uint64_t	x = st[1] * 5;
	uint64_t	r = ((x << 7) | (x >> 57)) * 9;
	uint64_t	a = st[0],
				b = st[1],
				c = st[2],
				d = st[3];

	c ^= a;
	d ^= b;
	b ^= c;
	a ^= d;
	c ^= st[1] << 17;
	d = (d << 45) | (d >> 19);
	st[0] = a;
	st[1] = b;
	st[2] = c;
	st[3] = d;
	return r;
}

static void
test_reference_vectors(void)
{
	static const uint64_t xo[10] = {
		11520ULL, 0ULL, 1509978240ULL, 1215971899390074240ULL, 1216172134540287360ULL,
		607988272756665600ULL, 16172922978634559625ULL, 8476171486693032832ULL,
		10595114339597558777ULL, 2904607092377533576ULL
	};
	static const uint64_t sm[5] = {
		6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
		4593380528125082431ULL, 16408922859458223821ULL
	};
	dp_prng		p = {{1, 2, 3, 4}};
	uint64_t	rs[4] = {1, 2, 3, 4};
	uint64_t	x;
	int			bad = 0,
				badref = 0;

	for (int i = 0; i < 10; i++)
	{
		bad += dp_prng_next(&p) != xo[i];
		badref += ref_xoshiro(rs) != xo[i];
	}
	unit_check(badref == 0, "reference transcription reproduces the published xoshiro256** vector");
	unit_check(bad == 0, "dp_prng_next reproduces the published xoshiro256** vector from state {1,2,3,4}");

	x = 1234567;
	bad = 0;
	for (int i = 0; i < 5; i++)
		bad += ref_splitmix(&x) != sm[i];
	x = 0;
	unit_check(bad == 0 && ref_splitmix(&x) == 0xE220A8397B1DCDAFULL,
			   "reference SplitMix64 reproduces the published vectors (seeds 1234567 and 0)");

	dp_prng_seed(&p, 1234567);
	unit_check(p.s[0] == sm[0] && p.s[1] == sm[1] && p.s[2] == sm[2] && p.s[3] == sm[3],
			   "dp_prng_seed(1234567) sets the state to the first four SplitMix64 outputs");

	/* long streams against the transcription, several seeds */
	bad = 0;
	for (uint64_t seed = 0; seed < 5; seed++)
	{
		uint64_t	y = seed * 0x1234567890ABCDEFULL;

		dp_prng_seed(&p, y);
		for (int i = 0; i < 4; i++)
			rs[i] = ref_splitmix(&y);
		for (int i = 0; i < 100000; i++)
			bad += dp_prng_next(&p) != ref_xoshiro(rs);
	}
	unit_check(bad == 0, "5 seeds x 100000 outputs agree with the independent transcription");
}

static void
test_streams(void)
{
	dp_prng		a,
				b,
				c;
	int			same_ab = 1,
				same_ac = 1;

	dp_prng_seed(&a, 42);
	dp_prng_seed(&b, 42);
	dp_prng_seed(&c, 43);
	for (int i = 0; i < 10000; i++)
	{
		uint64_t	x = dp_prng_next(&a),
					y = dp_prng_next(&b),
					z = dp_prng_next(&c);

		same_ab &= x == y;
		same_ac &= x == z;
	}
	unit_check(same_ab, "same seed -> same stream (10000 outputs)");
	unit_check(!same_ac, "seeds 42 and 43 give different streams");

	/* below/unit/shuffle are deterministic functions of the stream too */
	dp_prng_seed(&a, 7);
	dp_prng_seed(&b, 7);
	same_ab = 1;
	for (int i = 0; i < 1000; i++)
	{
		same_ab &= dp_prng_below(&a, 1000 + i) == dp_prng_below(&b, 1000 + i);
		same_ab &= dp_prng_unit(&a) == dp_prng_unit(&b);
	}
	unit_check(same_ab, "same seed -> same below()/unit() draws");

	unit_check(dp_random_init() == 0, "libsodium available");
	dp_prng_seed_random(&a);
	dp_prng_seed_random(&b);
	unit_check((a.s[0] | a.s[1] | a.s[2] | a.s[3]) != 0, "random seeding gives a nonzero state");
	unit_check(memcmp(a.s, b.s, sizeof(a.s)) != 0 && dp_prng_next(&a) != dp_prng_next(&b),
			   "two random seedings differ");
}

static void
test_below(void)
{
	dp_prng		p;
	long		n = 2000000;
	long		counts[1000];
	int			bad;

	dp_prng_seed(&p, 2024);

	bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += dp_prng_below(&p, 1) != 0;
	unit_check(bad == 0, "below(1) is always 0");

	bad = 0;
	for (uint64_t m = 2; m < 300; m++)
		for (int i = 0; i < 100; i++)
			bad += dp_prng_below(&p, m) >= m;
	bad += dp_prng_below(&p, UINT64_MAX) == UINT64_MAX;
	unit_check(bad == 0, "below(n) < n for n = 2..299 and 2^64-1");

	/* small n, many cells */
	memset(counts, 0, sizeof(counts));
	for (long i = 0; i < n; i++)
		counts[dp_prng_below(&p, 1000)]++;
	check_uniform_counts(counts, 1000, n, "below(1000)");

	memset(counts, 0, sizeof(counts));
	for (long i = 0; i < n; i++)
		counts[dp_prng_below(&p, 7)]++;
	check_uniform_counts(counts, 7, n, "below(7)");

	/*
	 * n = 3 * 2^62: a "x % n" implementation would put probability 1/2 on [0, 2^62) instead of 1/3.
	 * n = 2^63 + 1: about half of the raw words are rejected; thirds of [0, n) must stay equal.
	 */
	{
		uint64_t	n3 = 3ULL << 62;

		memset(counts, 0, sizeof(counts));
		for (long i = 0; i < n; i++)
			counts[dp_prng_below(&p, n3) >> 62]++;
		check_uniform_counts(counts, 3, n, "below(3*2^62), by quarter-range of 2^64");
	}
	{
		uint64_t	nh = (1ULL << 63) + 1;
		uint64_t	third = nh / 3;		/* nh = 3 * third exactly */

		memset(counts, 0, sizeof(counts));
		for (long i = 0; i < n; i++)
			counts[dp_prng_below(&p, nh) / third]++;
		check_uniform_counts(counts, 3, n, "below(2^63+1), by thirds");
	}
	/* n = 0 means 2^64: top byte uniform */
	memset(counts, 0, sizeof(counts));
	for (long i = 0; i < n; i++)
		counts[dp_prng_below(&p, 0) >> 56]++;
	check_uniform_counts(counts, 256, n, "below(0) = 64-bit word, top byte");
}

static void
test_unit(void)
{
	dp_prng		p;
	long		n = 2000000;
	long		counts[1000];
	int			bad = 0;
	double		sum = 0;

	dp_prng_seed(&p, 99);
	memset(counts, 0, sizeof(counts));
	for (long i = 0; i < n; i++)
	{
		double		u = dp_prng_unit(&p);

		bad += !(u >= 0 && u < 1) || ldexp(u, 53) != floor(ldexp(u, 53));
		sum += u;
		counts[(int) (u * 1000)]++;
	}
	unit_check(bad == 0, "unit() in [0, 1), multiples of 2^-53");
	unit_check(fabs(sum / n - 0.5) < 6 * sqrt(1.0 / 12 / n), "unit() mean %.5f near 1/2", sum / n);
	check_uniform_counts(counts, 1000, n, "unit() in 1000 bins");

	/* the extremes: an all-zero word gives 0, an all-one word the largest double below 1 */
	{
		dp_prng		q = {{0, 0, 0, 0}};

		/* state with s[1] = 0 gives output 0 */
		q.s[0] = 1;
		unit_check(dp_prng_unit(&q) == 0.0, "unit() of a zero word is 0");
	}
}

static void
test_shuffle(void)
{
	dp_prng		p;
	uint32_t	a[1000];
	int			seen[1000];
	int			ok = 1;
	long		n = 480000;
	long		perm[24];

	dp_prng_seed(&p, 5);
	dp_prng_shuffle_u32(&p, a, 0);	/* must not touch anything */
	a[0] = 17;
	dp_prng_shuffle_u32(&p, a, 1);
	unit_check(a[0] == 17, "shuffle of 0 and 1 elements is the identity");

	for (int t = 0; t < 20; t++)
	{
		for (int i = 0; i < 1000; i++)
			a[i] = i;
		dp_prng_shuffle_u32(&p, a, 1000);
		memset(seen, 0, sizeof(seen));
		for (int i = 0; i < 1000; i++)
		{
			if (a[i] >= 1000 || seen[a[i]])
				ok = 0;
			else
				seen[a[i]] = 1;
		}
	}
	unit_check(ok, "shuffle of 1000 elements is a permutation (20 trials)");

	/* all 24 permutations of 4 elements equally likely; index by Lehmer code */
	memset(perm, 0, sizeof(perm));
	for (long t = 0; t < n; t++)
	{
		uint32_t	b[4] = {0, 1, 2, 3};
		int			code = 0;

		dp_prng_shuffle_u32(&p, b, 4);
		for (int i = 0; i < 4; i++)
		{
			int			smaller = 0;

			for (int j = i + 1; j < 4; j++)
				smaller += b[j] < b[i];
			code = code * (4 - i) + smaller;
		}
		perm[code]++;
	}
	check_uniform_counts(perm, 24, n, "shuffle of 4: the 24 permutations");

	/* for n = 10, where element 0 lands: uniform over 10 positions */
	{
		long		pos[10] = {0};

		for (long t = 0; t < n; t++)
		{
			uint32_t	b[10];

			for (int i = 0; i < 10; i++)
				b[i] = i;
			dp_prng_shuffle_u32(&p, b, 10);
			for (int i = 0; i < 10; i++)
				if (b[i] == 0)
					pos[i]++;
		}
		check_uniform_counts(pos, 10, n, "shuffle of 10: position of element 0");
	}
}

/*
 * dp_prng_below_fill_u32 draws what a loop of dp_prng_below would, in order, and leaves the
 * generator where that loop would (bounds with and without rejections: 3, 1000, 2^31 + 1).
 */
static void
test_below_fill(void)
{
	const uint32_t bounds[3] = {3, 1000, 2147483649u};
	bool		same = true;

	for (int b = 0; b < 3; b++)
	{
		dp_prng		p,
					q;
		uint32_t	got[5000],
					want[5000];

		dp_prng_seed(&p, 77 + b);
		dp_prng_seed(&q, 77 + b);
		dp_prng_below_fill_u32(&p, bounds[b], got, 5000);
		for (int i = 0; i < 5000; i++)
			want[i] = (uint32_t) dp_prng_below(&q, bounds[b]);
		same = same && memcmp(got, want, sizeof(got)) == 0 && dp_prng_next(&p) == dp_prng_next(&q);
	}
	unit_check(same, "below_fill_u32 gives a loop of below()'s draws and leaves the same state");
}

int
main(void)
{
	unit_check(fabs(chisq_crit(10, 0.001) - 29.588298) < 1e-4, "chi2 crit(10, 0.001) = 29.588298");
	test_reference_vectors();
	test_streams();
	test_below();
	test_unit();
	test_shuffle();
	test_below_fill();
	return unit_done();
}
