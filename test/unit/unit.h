/*
 * unit.h - a minimal TAP producer for dpsynth's pure C unit tests.
 *
 * Each test binary prints "ok N - description" or "not ok N - description" per check and a
 * plan line "1..N" at the end ("ok N - description # skip reason" for a check not made:
 * unit_skip); it exits 1 if any check failed.  scripts/test counts these lines.
 */
#ifndef DPSYNTH_UNIT_H
#define DPSYNTH_UNIT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int unit_count = 0;
static int unit_failed = 0;

static void unit_check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
unit_check(int cond, const char *fmt, ...)
{
	va_list ap;

	unit_count++;
	if (!cond)
		unit_failed++;
	printf("%sok %d - ", cond ? "" : "not ", unit_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/*
 * A check that was not made, said so: "ok N - description # skip reason", which scripts/test
 * counts and lists as a skip, never as a pass.
 */
static void unit_skip(const char *what, const char *why) __attribute__((unused));
static void
unit_skip(const char *what, const char *why)
{
	unit_count++;
	printf("ok %d - %s # skip %s\n", unit_count, what, why);
	fflush(stdout);
}

/* Prints a diagnostic line (ignored by TAP consumers). */
static void unit_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void
unit_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * Every unit test draws its privacy noise (dp_random: the discrete Gaussian and Laplace samplers)
 * from a fixed stream, through the test library's seam (dp_random_test_seed, compiled only with
 * -DDPSYNTH_TEST_RNG), so that a statistical bar gives the same verdict on every run instead of
 * failing now and then.  The seed is set before main.  A test with a seam of its own (test_noise:
 * libsodium's randombytes_set_implementation) defines UNIT_OWN_NOISE_STREAM before including this.
 */
#define UNIT_TEST_SEED 20261129
#if defined(DPSYNTH_TEST_RNG) && !defined(UNIT_OWN_NOISE_STREAM)
#include "dp_random.h"

static void unit_seed_noise(void) __attribute__((constructor));
static void
unit_seed_noise(void)
{
	dp_random_test_seed(UNIT_TEST_SEED);
}
#endif

static int
unit_done(void)
{
	printf("1..%d\n", unit_count);
	return unit_failed ? 1 : 0;
}

#endif
