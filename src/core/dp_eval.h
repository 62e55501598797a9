/*
 * dp_eval.h - the owner's quality report of a synthetic table (dp_evaluate, dp_report).
 *
 * NOT a differentially private computation: it reads the real table (and the holdout) and its
 * output is exact statistics of them, for whoever may read those tables anyway.  Nothing here
 * draws privacy noise or touches a budget.
 *
 * What it computes (cells, the discretization, tvd1 / tvd2 / tvd3, range_error, corr_diff, the
 * train-on-synthetic accuracy and AUC, exact_copy_rate, dcr_p5) is defined in docs/EVALUATION.md,
 * and nowhere else.  The distances and range queries mirror the reference evaluator of the
 * development datasets exactly, its random triples and queries drawn from the same stream
 * (dp_pcg64.h), so that the two agree on the same tables (test/script/11_evaluate_adult.sh).  The
 * train-on-synthetic figures come from an L2-regularised logistic regression here (Newton's
 * steps summed over each row's one-hot slots, solved by LAPACK's dposv; OpenBLAS's dgemm for the
 * distances), where the evaluator uses gradient-boosted trees: those two figures are not
 * expected to match.
 */
#ifndef DP_EVAL_H
#define DP_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp_env.h"

enum
{
	DP_EVAL_REAL = 0,
	DP_EVAL_SYNTH = 1,
	DP_EVAL_HOLDOUT = 2,
	DP_EVAL_NTABLES = 3
};

#define DP_EVAL_MAX_TRIPLES 300
#define DP_EVAL_RANGE_QUERIES 1000
#define DP_EVAL_SEED 12345			/* evaluate.py's default_rng seed */
#define DP_EVAL_ONEHOT_MAX 64
#define DP_EVAL_DCR_QUERIES 1000
#define DP_EVAL_DCR_REFERENCE 20000
#define DP_EVAL_SAMPLE_SEED 1		/* the DCR samples' */

/* Memory comes from dp_env.h's handlers (dp_alloc: inside PostgreSQL, the current memory context
 * of each call); the hooks carry the progress callback only. */
typedef struct dp_eval_hooks
{
	/* called between blocks of work (dp_env.h: phase DP_PHASE_NONE, a heartbeat); nonzero
	 * cancels (inside PostgreSQL it may also longjmp) */
	dp_progress_fn progress;
	void	   *progress_arg;
} dp_eval_hooks;

typedef struct dp_eval_column
{
	const char *name;
	bool		numeric;
	int			size;			/* codes of the discretization */
	int			bins;			/* numeric: codes below this are the bins, the rest non-numbers */
	double		tvd1;
	double		tvd2;			/* mean over the pairs with this column (0 alone) */
	double		corr_diff;		/* likewise */
	double	   *real_frac;		/* [size]: the 1-way marginals, for the report */
	double	   *synth_frac;
	char	  **labels;			/* [size]: "(missing)", "(other)", "[a, b)", labels */
} dp_eval_column;

typedef struct dp_eval_result
{
	int			ncols;
	dp_eval_column *cols;
	double	   *tvd2_pair;		/* ncols * ncols, symmetric, 0 on the diagonal */
	int64_t		rows[DP_EVAL_NTABLES];
	double		tvd1,
				tvd2,
				tvd3,
				range_error,
				corr_diff;
	int64_t		npairs,
				ntriples,
				nqueries;
	/* machine learning: ml_ran false with ml_skipped saying why */
	bool		ml_ran;
	const char *ml_skipped;
	int			nlabels;
	double		tstr_acc,
				tstr_auc,
				trtr_acc,
				trtr_auc;		/* AUC NaN when the holdout has one label only */
	/* privacy diagnostics: the holdout's figures NaN without a holdout */
	double		copy_rate,
				copy_rate_holdout;
	double		dcr_p5,
				dcr_p5_holdout;
	int64_t		dcr_queries,
				dcr_queries_holdout,
				dcr_reference;
	int			dcr_features;
} dp_eval_result;

typedef struct dp_eval dp_eval;

/* An empty evaluation of ncols columns (names copied); NULL if out of memory. */
extern dp_eval *dp_eval_create(int ncols, const char *const *names, const dp_eval_hooks *hooks);

/* Adds one row to a table (DP_EVAL_*); cells[c] NULL is SQL NULL.  0, or DP_FAILED if out of
 * memory. */
extern int	dp_eval_add_row(dp_eval *e, int table, const char *const *cells);

extern int64_t dp_eval_rows(const dp_eval *e, int table);

/*
 * Computes everything into *res (allocated with dp_alloc; freed with the evaluation).  target is
 * a column index or -1.  Returns 0; DP_CANCELLED when cancelled; DP_FAILED when out of memory
 * (DP_ERR_NOMEM) or when the real or the synthetic table is empty (DP_ERR_INVALID), dp_fail
 * having said which.
 */
extern int	dp_eval_run(dp_eval *e, int target, dp_eval_result *res);

extern void dp_eval_free(dp_eval *e);

/* ---- helpers, exposed for the unit tests ---- */

/* pandas.to_numeric (underscores false) or Python's float() (true) of a stripped string. */
extern bool dp_eval_parse_number(const char *s, bool underscores, double *v);
/* Python's repr(float): shortest round trip, '1e+16', '0.0001', '15400.0'; buf >= 32 bytes */
extern void dp_eval_float_repr(double v, char *buf);
/* numpy.quantile(x, q) of n sorted values, 'linear' */
extern double dp_eval_quantile_sorted(const double *x, int64_t n, double q);
/* AUC of scores against 0/1 labels (Mann-Whitney, ties halved); NaN if one class is absent */
extern double dp_eval_auc(const double *score, const uint8_t *positive, int64_t n);

#endif
