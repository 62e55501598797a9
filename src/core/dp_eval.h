/*
 * dp_eval.h - the owner's quality report of a synthetic table (dp_evaluate, dp_report).
 *
 * NOT a differentially private computation: it reads the real table (and the holdout) and its
 * output is exact statistics of them, for whoever may read those tables anyway.  Nothing here
 * draws privacy noise or touches a budget.
 *
 * Definitions: those of the reference evaluator ../shared/tools/evaluate.py, mirrored exactly so
 * that the two agree on the same tables (test/script/11_evaluate_adult.sh):
 *
 *  Cells.  A cell is its text (NULL counts as the empty string, as in a CSV), stripped of
 *  surrounding white space; '', '?', 'NA', 'NaN', 'nan', 'None' and '\N' are missing.
 *
 *  Discretization, decided on the real table only.  A column is numeric when at least 80% of its
 *  non-missing real cells parse as numbers (pandas.to_numeric: decimal and exponent notation,
 *  inf, infinity; not NaN) and those take more than 20 distinct values.  A numeric column is cut
 *  at the real values' quantiles 0.05, 0.10, ..., 0.95 (numpy's default 'linear' interpolation,
 *  duplicates merged): a number lands in the bin of the edges <= it; its non-numeric cells are
 *  categories after the bins, one per distinct real spelling plus one for missing, which also
 *  takes synthetic spellings the real column never has.  Every other column is categorical: the
 *  real table's distinct labels (missing is one of them) in code-point order, number-like labels
 *  compared by value ("15400" equals "15400.0", as Python's repr(float(label))), plus one
 *  category "other" for synthetic labels the real table never has.
 *
 *  tvd1, tvd2, tvd3: mean total variation distance, 1/2 sum |p_real - p_synth|, over all 1-way and
 *  2-way marginals and over 3-way marginals (all triples, or 300 of them drawn as evaluate.py
 *  does: numpy's default_rng(12345), dp_pcg64.h).  range_error: mean |fraction real - fraction
 *  synthetic| over 1000 random queries on 3 columns, each a range lo..hi of codes (the same stream
 *  after the triples).  corr_diff (not in evaluate.py): mean over pairs of |V_real - V_synth|,
 *  Cramer's V of the pair's 2-way table on the same discretization, V = sqrt(chi2 / (n (min(r, c)
 *  - 1))) with r, c the categories present (0 when min(r, c) < 2).
 *
 *  Machine learning (train on synthetic, test on real): an L2-regularised logistic regression
 *  (lambda 1 on the sum of the log-losses, intercept free; Newton's method, X'WX by dsyrk and
 *  Cholesky by dposv), one against the rest when the target has more than two labels, on one-hot
 *  features of the discretization above (a column with more than 64 codes keeps its 63 most
 *  frequent in the real table, the rest share one feature), trained on the synthetic table and
 *  scored on the holdout; the same trained on the real table beside it.  Labels are evaluate.py's
 *  (trailing dots stripped, number-like labels by value, the holdout's labels; training rows with
 *  another label are dropped); accuracy of the most probable label and AUC (Mann-Whitney, ties
 *  halved; one-vs-rest macro average over the holdout's labels when there are more than two).
 *  evaluate.py uses gradient-boosted trees instead, so these two figures are not expected to match.
 *
 *  Privacy diagnostics: exact_copy_rate, the fraction of synthetic rows equal to some real row
 *  (every column, labels compared as above), and dcr_p5, the 5th percentile of the Euclidean
 *  distance from a synthetic row to its closest real row, each beside the same for the holdout
 *  (real rows that were not used).  Distances: numeric columns standardised by the real mean and
 *  standard deviation (clipped to +-10), their non-numeric cells and categorical columns one-hot
 *  with weight 1/sqrt(2), so a differing category adds 1 to the squared distance; computed as
 *  |x|^2 + |y|^2 - 2 x.y with dgemm in blocks, on fixed-seed samples of at most 1,000 query rows
 *  and 20,000 real rows (the report says when it sampled).
 */
#ifndef DP_EVAL_H
#define DP_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

typedef struct dp_eval_hooks
{
	void	   *(*alloc) (size_t);		/* NULL: malloc */
	void	   *(*realloc_fn) (void *, size_t);
	void		(*free_fn) (void *);
	/* called between blocks of work; nonzero cancels (inside PostgreSQL it may also longjmp) */
	int			(*progress) (void *arg);
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

/* Adds one row to a table (DP_EVAL_*); cells[c] NULL is SQL NULL.  -1 if out of memory. */
extern int	dp_eval_add_row(dp_eval *e, int table, const char *const *cells);

extern int64_t dp_eval_rows(const dp_eval *e, int table);

/*
 * Computes everything into *res (allocated with the hooks; freed with the evaluation).  target is
 * a column index or -1.  Returns 0, -1 when out of memory, -2 when cancelled, -3 when the real or
 * the synthetic table is empty.
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
extern double dp_eval_auc(const double *score, const uint8_t *positive, int64_t n,
						  void *(*alloc) (size_t), void (*free_fn) (void *));

#endif
