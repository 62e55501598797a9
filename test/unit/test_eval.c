/*
 * test_eval.c - the owner's quality report's core (dp_eval.c, dp_eval_ml.c, dp_pcg64.c): numpy's
 * random stream bit for bit (numbers printed by numpy 1.24), Python's float repr, numpy's
 * quantile, the AUC, and small tables with known answers.  The agreement with evaluate.py on
 * real data is test/script/11_evaluate_adult.sh (and bench/eval_csv on every dataset).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_eval.h"
#include "dp_pcg64.h"
#include "unit.h"

static void
test_pcg64(void)
{
	/* rng = np.random.default_rng(12345); [rng.integers(0, 10) for _ in range(5)];
	 * rng.choice(455, 300, replace=False)[:5]; rng.choice(15, size=3, replace=False);
	 * rng.integers(0, 20) */
	dp_pcg64	g;
	int64_t		want[5] = {6, 2, 7, 3, 2},
				want_choice[5] = {436, 65, 16, 437, 82},
				want3[3] = {10, 2, 14},
				got[300];
	int			bad = 0;

	dp_pcg64_seed(&g, 12345);
	for (int i = 0; i < 5; i++)
		bad += dp_pcg64_integers(&g, 0, 10) != want[i];
	unit_check(bad == 0, "default_rng(12345).integers(0, 10): numpy's first five");
	unit_check(dp_pcg64_choice(&g, 455, 300, got) && memcmp(got, want_choice, sizeof(want_choice)) == 0,
			   "choice(455, 300, replace=False): numpy's (Floyd's algorithm, then the shuffle)");
	unit_check(dp_pcg64_choice(&g, 15, 3, got) && memcmp(got, want3, sizeof(want3)) == 0 &&
			   dp_pcg64_integers(&g, 0, 20) == 1, "then choice(15, 3) and integers(0, 20): numpy's");
}

static void
test_repr(void)
{
	const double v[] = {15400, 0.1, 1e16, 1e15, 1e-5, 0.0001, 1.5e20, -0.0, 123456789012345680.0, 2.5, 1.0 / 3};
	const char *want[] = {"15400.0", "0.1", "1e+16", "1000000000000000.0", "1e-05", "0.0001", "1.5e+20",
	"-0.0", "1.2345678901234568e+17", "2.5", "0.3333333333333333"};
	char		buf[40];
	double		x;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
	{
		dp_eval_float_repr(v[i], buf);
		unit_check(strcmp(buf, want[i]) == 0, "repr(%.17g) is %s (got %s)", v[i], want[i], buf);
	}
	unit_check(dp_eval_parse_number("1_000", true, &x) && x == 1000 && !dp_eval_parse_number("1_000", false, &x),
			   "underscores: Python's float() reads 1_000, pandas does not");
	unit_check(!dp_eval_parse_number("0x10", true, &x) && !dp_eval_parse_number("1,5", true, &x) &&
			   !dp_eval_parse_number("-", true, &x) && !dp_eval_parse_number("", true, &x),
			   "no hex, commas, bare signs or empty strings");
	unit_check(dp_eval_parse_number("-Infinity", false, &x) && isinf(x) && x < 0 &&
			   dp_eval_parse_number("5.", false, &x) && x == 5 && dp_eval_parse_number(".5e1", false, &x) && x == 5,
			   "-Infinity, 5. and .5e1 parse");
}

static void
test_quantile_auc(void)
{
	const double x[] = {1, 2, 3, 4};
	const double s[] = {0.1, 0.4, 0.35, 0.8},
				tie[] = {0.5, 0.5};
	const uint8_t y[] = {0, 0, 1, 1},
				ty[] = {0, 1};

	/* np.quantile([1, 2, 3, 4], 0.3) == 1.9, 0.95 -> 3.8499999999999996 */
	unit_check(dp_eval_quantile_sorted(x, 4, 0.3) == 1.9, "quantile 0.3 of 1..4 is numpy's 1.9");
	unit_check(dp_eval_quantile_sorted(x, 4, 0.95) == 3.8499999999999996, "quantile 0.95 is numpy's 3.8499999999999996");
	unit_check(fabs(dp_eval_auc(s, y, 4) - 0.75) < 1e-15, "AUC of sklearn's example is 0.75");
	unit_check(dp_eval_auc(tie, ty, 2) == 0.5, "a tie counts one half");
	unit_check(isnan(dp_eval_auc(s, y, 2)), "one class only: undefined");
}

/*
 * The evaluator's memory belongs to its caller's memory context (PostgreSQL frees it as a whole;
 * dp_eval_free returns only the big arrays).  The tests give it the same: an arena of every block
 * it allocates, freed after each table (so LeakSanitizer, make unit-san, sees no leak).
 */
typedef union arena_hdr
{
	struct
	{
		union arena_hdr *prev,
				   *next;
	}			l;
	max_align_t align;
} arena_hdr;

static arena_hdr arena = {.l = {&arena, &arena}};

static void
arena_link(arena_hdr *b)
{
	b->l.prev = &arena;
	b->l.next = arena.l.next;
	arena.l.next->l.prev = b;
	arena.l.next = b;
}

static void
arena_unlink(arena_hdr *b)
{
	b->l.prev->l.next = b->l.next;
	b->l.next->l.prev = b->l.prev;
}

static void *
arena_alloc(size_t n)
{
	arena_hdr  *b = malloc(sizeof(arena_hdr) + n);

	if (!b)
		return NULL;
	arena_link(b);
	return b + 1;
}

static void *
arena_realloc(void *p, size_t n)
{
	arena_hdr  *b,
			   *nb;

	if (!p)
		return arena_alloc(n);
	b = (arena_hdr *) p - 1;
	arena_unlink(b);
	nb = realloc(b, sizeof(arena_hdr) + n);
	arena_link(nb ? nb : b);	/* on failure the old block stays, as realloc leaves it */
	return nb ? nb + 1 : NULL;
}

static void
arena_free(void *p)
{
	if (p)
	{
		arena_unlink((arena_hdr *) p - 1);
		free((arena_hdr *) p - 1);
	}
}

/* dp_eval_free, then the rest of the arena, as a memory context's reset */
static void
eval_free_all(dp_eval *e)
{
	if (e)
		dp_eval_free(e);
	while (arena.l.next != &arena)
		arena_free(arena.l.next + 1);
}

static int
cancel_now(void *arg, const dp_progress *pr)
{
	(void) arg;
	(void) pr;
	return 1;
}

/* Columns g (the labels given, cycled) and n = (row + shift) % 30; real rows first, then
 * synthetic. */
static dp_eval *
two_columns(const char *const *g_real, int nr, const char *const *g_synth, int ns, int shift,
			const dp_eval_hooks *h)
{
	const char *names[2] = {"g", "n"};
	dp_eval    *e = dp_eval_create(2, names, h);
	char		num[16];

	for (int i = 0; i < nr + ns; i++)
	{
		const char *row[2];

		snprintf(num, sizeof(num), "%d", (i < nr ? i : i - nr + shift) % 30);
		row[0] = i < nr ? g_real[i % 4] : g_synth[(i - nr) % 4];
		row[1] = num;
		dp_eval_add_row(e, i < nr ? DP_EVAL_REAL : DP_EVAL_SYNTH, row);
	}
	return e;
}

static void
test_small_tables(void)
{
	const char *real[4] = {"a", "a", "b", "b"},
			   *synth[4] = {"a", " b ", "b.0", NULL},
			   *alternating[4] = {"a", "b", "a", "b"};
	dp_eval_result r;
	dp_eval    *e;
	dp_eval_hooks plain = {NULL, NULL},
				cancel = {cancel_now, NULL};
	/* the evaluation's memory from the arena, through dp_env's handlers, as inside PostgreSQL */
	dp_handlers arena_handlers = {arena_alloc, arena_realloc, arena_free, NULL, NULL};
	int			rc;

	dp_set_handlers(&arena_handlers);

	e = two_columns(real, 60, real, 60, 0, &plain);
	rc = dp_eval_run(e, -1, &r);
	unit_check(rc == 0 && r.tvd1 == 0 && r.tvd2 == 0 && r.range_error == 0 && r.copy_rate == 1 && r.dcr_p5 == 0,
			   "a copy: every TVD and the range error 0, every row a copy at distance 0");
	unit_check(rc == 0 && r.cols[1].numeric && r.cols[1].bins == 20 && !r.cols[0].numeric,
			   "n (30 distinct integers) is numeric with 20 bins, g categorical");
	eval_free_all(e);
	e = two_columns(real, 60, alternating, 60, 0, &plain);
	rc = dp_eval_run(e, -1, &r);
	unit_check(rc == 0 && r.tvd1 == 0 && r.tvd2 > 0.1 && r.copy_rate == 1 && r.dcr_p5 == 0,
			   "g a a b b against a b a b: the same 1-way marginals, other 2-way ones (tvd2 %g); yet every row is one of the real rows (copies %g)",
			   r.tvd2, r.copy_rate);
	eval_free_all(e);
	e = two_columns(real, 4, synth, 4, 0, &plain);
	/* synthetic g: a, b (stripped), 'b.0' (a new label: other), NULL (missing: a new label) */
	rc = dp_eval_run(e, -1, &r);
	unit_check(rc == 0 && fabs(r.cols[0].tvd1 - 0.5) < 1e-15 && r.cols[0].size == 3,
			   "g: real a a b b, synthetic a b other other: tvd1 1/2 over codes a, b, other (got %g)", r.cols[0].tvd1);
	eval_free_all(e);
	e = two_columns(real, 4, synth, 4, 0, &cancel);
	unit_check(dp_eval_run(e, -1, &r) == DP_CANCELLED && dp_last_error_kind() == DP_ERR_CANCELLED,
			   "a progress callback that cancels stops the run");
	eval_free_all(e);
	e = two_columns(real, 4, real, 0, 0, &plain);
	unit_check(dp_eval_run(e, -1, &r) == DP_FAILED && dp_last_error_kind() == DP_ERR_INVALID,
			   "an empty synthetic table is refused");
	eval_free_all(e);
	dp_set_handlers(NULL);
}

int
main(void)
{
	test_pcg64();
	test_repr();
	test_quantile_auc();
	test_small_tables();
	return unit_done();
}
