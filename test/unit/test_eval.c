/*
 * test_eval.c - the owner's quality report's core (dp_eval.c, dp_eval_ml.c, dp_pcg64.c): numpy's
 * random stream bit for bit (numbers printed by numpy 1.24), Python's float repr, numpy's
 * quantile, the AUC, small tables with known answers, and the logistic regression against a dense
 * one written from its definition.  The agreement with evaluate.py on
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
	dp_handlers arena_handlers = {arena_alloc, arena_realloc, arena_free, NULL, NULL, NULL, NULL};
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

/*
 * The train-on-synthetic figures against a logistic regression written here from its definition
 * (docs/EVALUATION.md): dense one-hot features of every (column, label) and an intercept, the
 * penalty lambda 1 (1e-9 on the intercept), Newton's steps until the largest moves less than
 * 1e-7 (at most 30), one model per holdout label (one only for two labels), the probabilities
 * normalised, accuracy by the first largest, AUC per label averaged.  Categorical columns only,
 * so the discretization is the labels themselves.
 */
#define LR_COLS 3					/* features a, b, c; the target y is column 3 */
#define LR_MAXP 32

static const char *const lr_labels[LR_COLS + 1][6] = {
	{"a0", "a1", "a2"}, {"b0", "b1", "b2", "b3", "b4"}, {"c0", "c1", "c2", "c3"}, {"y0", "y1", "y2", "y3"}};
static const int lr_nlab[LR_COLS + 1] = {3, 5, 4, 4};

/* Row i of a table: y depends on a and b (and noise), c on nothing; ys labels of y in use. */
static void
lr_row(dp_pcg64 *g, int ys, int *v)
{
	for (int c = 0; c < LR_COLS; c++)
		v[c] = (int) dp_pcg64_integers(g, 0, lr_nlab[c]);
	v[LR_COLS] = dp_pcg64_integers(g, 0, 4) == 0 ? (int) dp_pcg64_integers(g, 0, ys)
		: (v[0] + (v[1] > 2)) % ys;
}

/* the reference fit of "y == positive" on rows[n][4]: beta[P] */
static void
lr_reference_fit(int (*rows)[LR_COLS + 1], int n, int positive, int P, const int *off, double *beta)
{
	memset(beta, 0, P * sizeof(double));
	for (int it = 0; it < 30; it++)
	{
		double		H[LR_MAXP][LR_MAXP] = {{0}},
					g[LR_MAXP] = {0},
					step = 0;

		for (int i = 0; i < n; i++)
		{
			double		x[LR_MAXP] = {0},
						eta = 0,
						mu;

			for (int c = 0; c < LR_COLS; c++)
				x[off[c] + rows[i][c]] = 1;
			x[P - 1] = 1;
			for (int j = 0; j < P; j++)
				eta += x[j] * beta[j];
			mu = 1 / (1 + exp(-eta));
			for (int j = 0; j < P; j++)
			{
				g[j] += x[j] * ((rows[i][LR_COLS] == positive) - mu);
				for (int l = 0; l < P; l++)
					H[j][l] += x[j] * x[l] * mu * (1 - mu);
			}
		}
		for (int j = 0; j < P; j++)
		{
			H[j][j] += j < P - 1 ? 1.0 : 1e-9;
			g[j] -= (j < P - 1 ? 1.0 : 1e-9) * beta[j];
		}
		/* Gaussian elimination on the positive definite H (no pivoting needed) */
		for (int j = 0; j < P; j++)
			for (int l = j + 1; l < P; l++)
			{
				double		f = H[l][j] / H[j][j];

				for (int q = j; q < P; q++)
					H[l][q] -= f * H[j][q];
				g[l] -= f * g[j];
			}
		for (int j = P - 1; j >= 0; j--)
		{
			for (int q = j + 1; q < P; q++)
				g[j] -= H[j][q] * g[q];
			g[j] /= H[j][j];
			beta[j] += g[j];
			step = fabs(g[j]) > step ? fabs(g[j]) : step;
		}
		if (step < 1e-7)
			break;
	}
}

/* Train on train[ntr], score on hold[nh]: accuracy and AUC as dp_evaluate defines them. */
static void
lr_reference(int (*train)[LR_COLS + 1], int ntr, int (*hold)[LR_COLS + 1], int nh, int nl,
			 double *acc, double *auc)
{
	int			off[LR_COLS],
				P = 1,
				right = 0;
	double		beta[LR_MAXP],
			   *prob = calloc((size_t) nh * nl, sizeof(double)),
			   *s = malloc(nh * sizeof(double)),
				sum = 0;
	uint8_t    *pos = malloc(nh);

	for (int c = 0; c < LR_COLS; c++)
	{
		off[c] = P - 1;
		P += lr_nlab[c];
	}
	for (int k = (nl == 2 ? 1 : 0); k < nl; k++)
	{
		lr_reference_fit(train, ntr, k, P, off, beta);
		for (int i = 0; i < nh; i++)
		{
			double		eta = beta[P - 1];

			for (int c = 0; c < LR_COLS; c++)
				eta += beta[off[c] + hold[i][c]];
			prob[i * nl + k] = 1 / (1 + exp(-eta));
		}
	}
	for (int i = 0; i < nh; i++)
	{
		double		tot = 0;
		int			best = 0;

		if (nl == 2)
			prob[i * 2] = 1 - prob[i * 2 + 1];
		for (int k = 0; k < nl; k++)
			tot += prob[i * nl + k];
		for (int k = 0; k < nl; k++)
		{
			prob[i * nl + k] /= nl == 2 ? 1 : tot;
			best = prob[i * nl + k] > prob[i * nl + best] ? k : best;
		}
		right += best == hold[i][LR_COLS];
	}
	*acc = (double) right / nh;
	for (int k = (nl == 2 ? 1 : 0); k < nl; k++)
	{
		for (int i = 0; i < nh; i++)
		{
			s[i] = prob[i * nl + k];
			pos[i] = hold[i][LR_COLS] == k;
		}
		sum += dp_eval_auc(s, pos, nh);
	}
	*auc = nl == 2 ? sum : sum / nl;
	free(prob);
	free(s);
	free(pos);
}

static void
test_logistic(void)
{
	const char *names[LR_COLS + 1] = {"a", "b", "c", "y"};
	const int	n[DP_EVAL_NTABLES] = {900, 700, 500};
	dp_handlers arena_handlers = {arena_alloc, arena_realloc, arena_free, NULL, NULL, NULL, NULL};
	dp_eval_hooks plain = {NULL, NULL};

	dp_set_handlers(&arena_handlers);
	for (int ys = 2; ys <= 4; ys += 2)
	{
		int			(*rows[DP_EVAL_NTABLES])[LR_COLS + 1];
		dp_eval    *e = dp_eval_create(LR_COLS + 1, names, &plain);
		dp_eval_result r;
		dp_pcg64	g;
		double		acc[2],
					auc[2];

		dp_pcg64_seed(&g, 7 + ys);
		for (int t = 0; t < DP_EVAL_NTABLES; t++)
		{
			rows[t] = malloc(n[t] * sizeof(*rows[t]));
			for (int i = 0; i < n[t]; i++)
			{
				const char *cells[LR_COLS + 1];

				lr_row(&g, ys, rows[t][i]);
				for (int c = 0; c <= LR_COLS; c++)
					cells[c] = lr_labels[c][rows[t][i][c]];
				dp_eval_add_row(e, t, cells);
			}
		}
		lr_reference(rows[DP_EVAL_SYNTH], n[DP_EVAL_SYNTH], rows[DP_EVAL_HOLDOUT], n[DP_EVAL_HOLDOUT], ys,
					 &acc[0], &auc[0]);
		lr_reference(rows[DP_EVAL_REAL], n[DP_EVAL_REAL], rows[DP_EVAL_HOLDOUT], n[DP_EVAL_HOLDOUT], ys,
					 &acc[1], &auc[1]);
		unit_check(dp_eval_run(e, LR_COLS, &r) == 0 && r.ml_ran && r.nlabels == ys, "%d labels: the model ran", ys);
		unit_check(fabs(r.tstr_acc - acc[0]) < 1e-12 && fabs(r.tstr_auc - auc[0]) < 1e-9 &&
				   fabs(r.trtr_acc - acc[1]) < 1e-12 && fabs(r.trtr_auc - auc[1]) < 1e-9,
				   "%d labels: accuracy and AUC as the dense reference's (trained on synthetic %.15g %.15g against %.15g %.15g; on real %.15g %.15g against %.15g %.15g)",
				   ys, r.tstr_acc, r.tstr_auc, acc[0], auc[0], r.trtr_acc, r.trtr_auc, acc[1], auc[1]);
		unit_check(r.trtr_auc > 0.7, "%d labels: y is learnt from a and b (AUC %g on real)", ys, r.trtr_auc);
		eval_free_all(e);
		for (int t = 0; t < DP_EVAL_NTABLES; t++)
			free(rows[t]);
	}
	dp_set_handlers(NULL);
}

/* A progress callback that asks to stop at its n-th call (never when n is 0), counting calls. */
typedef struct
{
	long		n;
	long		calls;
} cancel_at;

static int
cancel_at_call(void *arg, const dp_progress *pr)
{
	cancel_at  *c = arg;

	(void) pr;
	return ++c->calls == c->n;
}

/* test_logistic's tables with 2 labels, read through hooks h. */
static dp_eval *
logistic_tables(const dp_eval_hooks *h)
{
	const char *names[LR_COLS + 1] = {"a", "b", "c", "y"};
	const int	n[DP_EVAL_NTABLES] = {900, 700, 500};
	dp_eval    *e = dp_eval_create(LR_COLS + 1, names, h);
	dp_pcg64	g;

	dp_pcg64_seed(&g, 9);
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		for (int i = 0; i < n[t]; i++)
		{
			int			row[LR_COLS + 1];
			const char *cells[LR_COLS + 1];

			lr_row(&g, 2, row);
			for (int c = 0; c <= LR_COLS; c++)
				cells[c] = lr_labels[c][row[c]];
			dp_eval_add_row(e, t, cells);
		}
	return e;
}

/*
 * dp_env.h's return codes through every stage: a cancel at any progress call (the marginals, the
 * ranges, the distances, the model's fits) is DP_CANCELLED with the cancel recorded, never
 * DP_FAILED or a success; a run that is not cancelled succeeds.
 */
static void
test_cancel_anywhere(void)
{
	dp_handlers arena_handlers = {arena_alloc, arena_realloc, arena_free, NULL, NULL, NULL, NULL};
	cancel_at	count = {0, 0};
	dp_eval_hooks counting = {cancel_at_call, &count};
	dp_eval_result r;
	dp_eval    *e;
	long		total,
				wrong = 0,
				tried = 0;

	dp_set_handlers(&arena_handlers);
	e = logistic_tables(&counting);
	unit_check(dp_eval_run(e, LR_COLS, &r) == 0 && r.ml_ran, "a run with a callback that never stops succeeds");
	total = count.calls;
	eval_free_all(e);
	for (long k = 1; k <= total; k += total > 300 ? total / 300 : 1)
	{
		cancel_at	c = {k, 0};
		dp_eval_hooks h = {cancel_at_call, &c};
		int			rc;

		e = logistic_tables(&h);
		rc = dp_eval_run(e, LR_COLS, &r);
		wrong += !(rc == DP_CANCELLED && dp_last_error_kind() == DP_ERR_CANCELLED);
		tried++;
		eval_free_all(e);
	}
	unit_check(total > 10 && wrong == 0,
			   "a cancel at any of %ld progress calls (%ld tried) returns DP_CANCELLED (%ld did not)",
			   total, tried, wrong);
	dp_set_handlers(NULL);
}

int
main(void)
{
	test_pcg64();
	test_repr();
	test_quantile_auc();
	test_small_tables();
	test_logistic();
	test_cancel_anywhere();
	return unit_done();
}
