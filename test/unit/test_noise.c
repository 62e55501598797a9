/*
 * test_noise.c - unit tests of dp_noise_counts and dp_noise_counts_f64 (src/core/dp_counts.c), the
 * one function where discrete Gaussian noise meets a count (dp_counts.h):
 *
 * - saturation: counts at and near INT64_MAX plus noise clamp at INT64_MAX instead of wrapping (a
 *   wrap is a negative result here, and a report under -fsanitize=undefined: `make unit-san`);
 *   doubles at or above 2^63 are read as INT64_MAX;
 * - refusals (-2, DP_ERR_INVALID, nothing drawn, out untouched): a negative count (INT64_MIN,
 *   INT64_MIN + 1, -1: what a hostile shard could send), NULL in or out, a NULL or corrupt sampler;
 *   in the f64 form also NaN, infinities and fractions; n = 0 with a valid sampler draws nothing
 *   and returns 0, NULL pointers included;
 * - the draws: with libsodium's randomness replaced by a seeded stream (randombytes_set_
 *   implementation, a test-only seam installed before sodium_init), each scenario runs in a forked
 *   child (dp_random's buffer is per process, so every child starts from the same stream).  Then
 *   dp_noise_counts gives exactly in[i] + dp_dgauss_sample(g) drawn in cell order, in place or
 *   not; the f64 form gives the same numbers across its internal chunks; and a refused call
 *   before a valid one leaves the valid one's output unchanged, i.e. it drew nothing.
 */
#include <math.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp_counts.h"
#include "dp_env.h"
#include "dp_sampler.h"
#define UNIT_OWN_NOISE_STREAM			/* its own seam below (unit.h) */
#include "unit.h"

#define N 600					/* more than dp_noise_counts_f64's chunk of 256 */
#define TWO63 9223372036854775808.0

/* ---- the seam: a SplitMix64 stream in place of the CSPRNG (this test binary only) ---- */
static uint64_t stream;

static uint64_t
splitmix(void)
{
	uint64_t	z = (stream += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static const char *
seam_name(void)
{
	return "test_noise seeded stream";
}

static uint32_t
seam_random(void)
{
	return (uint32_t) splitmix();
}

static void
seam_stir(void)
{
}

static uint32_t
seam_uniform(const uint32_t n)
{
	return n ? seam_random() % n : 0;
}

static void
seam_buf(void *const buf, const size_t n)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char) splitmix();
}

static int
seam_close(void)
{
	return 0;
}

static randombytes_implementation seam = {seam_name, seam_random, seam_stir, seam_uniform, seam_buf, seam_close};

/* ---- scenarios, each run in a child from the same stream; the child writes N int64 ---- */
static dp_dgauss g1;			/* sigma^2 = 1 */
static int64_t base[N];			/* counts >= 0, some large */

typedef void (*scenario) (int64_t *res);

/* the reference: the sampler called directly, in cell order */
static void
sc_reference(int64_t *res)
{
	for (int i = 0; i < N; i++)
		res[i] = base[i] + dp_dgauss_sample(&g1);
}

static void
sc_apart(int64_t *res)
{
	if (dp_noise_counts(&g1, base, res, N) != 0)
		res[0] = -1;
}

static void
sc_in_place(int64_t *res)
{
	memcpy(res, base, sizeof(base));
	if (dp_noise_counts(&g1, res, res, N) != 0)
		res[0] = -1;
}

static void
sc_f64(int64_t *res)
{
	static double d[N];

	for (int i = 0; i < N; i++)
		d[i] = (double) base[i];
	if (dp_noise_counts_f64(&g1, d, d, N) != 0)
		res[0] = -1;
	for (int i = 0; i < N; i++)
		res[i] = (int64_t) d[i];
}

/* refused calls first (a negative count late in the vector, a fraction): they must draw nothing */
static void
sc_refused_then_apart(int64_t *res)
{
	static int64_t bad[N];
	static double badf[N];

	memcpy(bad, base, sizeof(base));
	bad[N - 1] = -1;
	for (int i = 0; i < N; i++)
		badf[i] = (double) base[i];
	badf[N - 1] = 0.5;
	if (dp_noise_counts(&g1, bad, bad, N) != -2 || dp_noise_counts_f64(&g1, badf, badf, N) != -2 ||
		dp_noise_counts(&g1, base, res, 0) != 0)
	{
		res[0] = -1;
		return;
	}
	sc_apart(res);
}

static bool
run_child(scenario fn, uint64_t seed, int64_t *res)
{
	int			fd[2],
				status;
	pid_t		pid;
	size_t		got = 0;

	if (pipe(fd) != 0)
		return false;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0)
	{
		size_t		put = 0;

		close(fd[0]);
		stream = seed;
		fn(res);
		while (put < sizeof(int64_t) * N)
		{
			ssize_t		w = write(fd[1], (char *) res + put, sizeof(int64_t) * N - put);

			if (w <= 0)
				_exit(1);
			put += (size_t) w;
		}
		_exit(0);
	}
	close(fd[1]);
	while (got < sizeof(int64_t) * N)
	{
		ssize_t		r = read(fd[0], (char *) res + got, sizeof(int64_t) * N - got);

		if (r <= 0)
			break;
		got += (size_t) r;
	}
	close(fd[0]);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		got == sizeof(int64_t) * N;
}

static void
test_draws(void)
{
	static int64_t ref[N],
				res[N];
	const struct
	{
		scenario	fn;
		const char *what;
	}			sc[] = {
		{sc_apart, "dp_noise_counts (in, out apart)"},
		{sc_in_place, "dp_noise_counts in place"},
		{sc_f64, "dp_noise_counts_f64 (three chunks)"},
		{sc_refused_then_apart, "dp_noise_counts after refused calls and n = 0 (they drew nothing)"},
	};

	for (int i = 0; i < N; i++)
		base[i] = i % 3 == 0 ? 0 : (int64_t) i * 1000003;
	for (uint64_t seed = 1; seed <= 3; seed++)
	{
		bool		ok = run_child(sc_reference, seed, ref);
		bool		zero = true;

		for (int i = 0; i < N; i++)
			zero = zero && ref[i] == base[i];
		unit_check(ok && !zero, "seed %llu: the reference draws ran and added noise", (unsigned long long) seed);
		for (size_t s = 0; s < sizeof(sc) / sizeof(sc[0]); s++)
			unit_check(run_child(sc[s].fn, seed, res) && memcmp(res, ref, sizeof(ref)) == 0,
					   "seed %llu: %s = count + dp_dgauss_sample in cell order", (unsigned long long) seed,
					   sc[s].what);
	}
}

/* ---- saturation ---- */
static void
test_saturation(void)
{
	static int64_t in[N],
				out[N];
	static double din[N],
				dout[N];
	dp_dgauss	big;
	bool		no_wrap = true,
				near = true;
	int			at_max = 0;

	/* INT64_MAX and the values just below it: X > 0 must clamp, X <= 0 must subtract exactly */
	for (int i = 0; i < N; i++)
		in[i] = INT64_MAX - (i % 4);
	unit_check(dp_noise_counts(&g1, in, out, N) == 0, "counts at INT64_MAX are accepted");
	for (int i = 0; i < N; i++)
	{
		no_wrap = no_wrap && out[i] > 0;
		/* |X| > 64 at sigma 1 has probability below 1e-800 */
		near = near && out[i] >= INT64_MAX - (i % 4) - 64;
		at_max += out[i] == INT64_MAX;
	}
	unit_check(no_wrap, "INT64_MAX - k + noise never wraps to a negative count");
	unit_check(near, "INT64_MAX - k + noise stays within the noise of INT64_MAX - k");
	/* each of the 150 cells at INT64_MAX has X > 0 with probability about 0.4: none is 1e-33 */
	unit_check(at_max > 0, "the sums above INT64_MAX are clamped to INT64_MAX (%d cells)", at_max);

	/* large noise on the largest count: sigma^2 = 2^60 */
	unit_check(dp_dgauss_init(&big, DP_DGAUSS_SIGMA2_MAX) == 0, "the largest sigma^2 initializes");
	for (int i = 0; i < N; i++)
		in[i] = INT64_MAX;
	no_wrap = dp_noise_counts(&big, in, out, N) == 0;
	at_max = 0;
	for (int i = 0; i < N; i++)
	{
		no_wrap = no_wrap && out[i] > INT64_MAX / 2;
		at_max += out[i] == INT64_MAX;
	}
	unit_check(no_wrap && at_max > 0, "INT64_MAX + noise of sigma 2^30 saturates (%d of %d cells)", at_max, N);

	/* the f64 form: doubles from 2^63 (not an int64) up to 1e300 are read as INT64_MAX */
	for (int i = 0; i < N; i++)
		din[i] = i % 3 == 0 ? TWO63 : i % 3 == 1 ? 1e300 : 9007199254740992.0;	/* 2^53 */
	no_wrap = dp_noise_counts_f64(&g1, din, dout, N) == 0;
	for (int i = 0; i < N; i++)
		no_wrap = no_wrap && (i % 3 == 2 ? fabs(dout[i] - din[i]) <= 64 : dout[i] >= TWO63 - 1e5 && dout[i] <= TWO63);
	unit_check(no_wrap, "f64 counts of 2^63 and 1e300 saturate at INT64_MAX, 2^53 gets its noise");
}

/* ---- refusals ---- */
static bool
refused(int rc)
{
	bool		ok = rc == -2 && dp_last_error_kind() == DP_ERR_INVALID && dp_last_error()[0] != '\0';

	dp_clear_error();
	return ok;
}

static void
test_refusals(void)
{
	int64_t		in[4] = {5, 0, 7, 9},
				out[4] = {11, 11, 11, 11};
	double		din[4] = {5, 0, 7, 9},
				dout[4] = {11, 11, 11, 11};
	const int64_t hostile[] = {INT64_MIN, INT64_MIN + 1, -1};
	dp_dgauss	corrupt = g1;
	bool		untouched = true;

	dp_clear_error();
	for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++)
	{
		in[2] = hostile[h];
		unit_check(refused(dp_noise_counts(&g1, in, out, 4)) && out[0] == 11 && out[3] == 11,
				   "a count of %lld is refused, out untouched", (long long) hostile[h]);
		in[2] = hostile[h];
		unit_check(refused(dp_noise_counts(&g1, in, in, 4)) && in[0] == 5 && in[2] == hostile[h],
				   "in place: a count of %lld is refused, the counts untouched", (long long) hostile[h]);
	}
	in[2] = 7;
	unit_check(refused(dp_noise_counts(NULL, in, out, 4)), "a NULL sampler is refused");
	corrupt.t = 0;
	unit_check(refused(dp_noise_counts(&corrupt, in, out, 4)), "a sampler with t = 0 is refused (no abort)");
	corrupt = g1;
	corrupt.den = 0;
	unit_check(refused(dp_noise_counts(&corrupt, in, out, 4)), "a sampler with den = 0 is refused (no abort)");
	corrupt = g1;
	corrupt.num = UINT64_MAX;
	corrupt.t = UINT64_MAX;
	unit_check(refused(dp_noise_counts(&corrupt, in, out, 4)), "a sampler whose exponent overflows is refused");
	unit_check(refused(dp_noise_counts(&g1, NULL, out, 4)) && refused(dp_noise_counts(&g1, in, NULL, 4)),
			   "NULL in or out with n > 0 is refused");
	unit_check(dp_noise_counts(&g1, NULL, NULL, 0) == 0 && dp_noise_counts(&g1, in, out, 0) == 0 &&
			   out[0] == 11 && dp_last_error_kind() == DP_ERR_NONE,
			   "n = 0 draws nothing and returns 0, NULL pointers included");
	unit_check(refused(dp_noise_counts(NULL, NULL, NULL, 0)), "a NULL sampler is refused even with n = 0");
	for (int i = 0; i < 4; i++)
		untouched = untouched && out[i] == 11;
	unit_check(untouched, "no refused call wrote out");

	{
		const double bad[] = {-1.0, NAN, INFINITY, -INFINITY, 2.5, -0.0 - 1e-300};

		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++)
		{
			din[1] = bad[b];
			unit_check(refused(dp_noise_counts_f64(&g1, din, dout, 4)) && dout[0] == 11 && dout[3] == 11,
					   "f64: a count of %g is refused, out untouched", bad[b]);
		}
		din[1] = -0.0;
		unit_check(dp_noise_counts_f64(&g1, din, dout, 4) == 0, "f64: -0.0 is a count of 0");
		unit_check(refused(dp_noise_counts_f64(NULL, din, dout, 4)) &&
				   refused(dp_noise_counts_f64(&g1, NULL, dout, 4)) && dp_noise_counts_f64(&g1, NULL, NULL, 0) == 0,
				   "f64: NULL sampler or pointer refused, n = 0 returns 0");
	}
}

int
main(void)
{
	/* before sodium_init (dp_random initializes libsodium at the first draw) */
	if (randombytes_set_implementation(&seam) != 0 || sodium_init() < 0)
		return 2;
	if (dp_dgauss_init(&g1, 1.0) != 0)
		return 2;
	test_refusals();
	test_saturation();
	test_draws();
	return unit_done();
}
