/*
 * dp_eval_ml.c - the quality report's linear algebra: a logistic regression fitted by Newton's
 * method (X'WX summed over each row's one-hot slots, solved by LAPACK's dposv) for
 * train-on-synthetic / test-on-real, and distances to the closest real record as matrix products
 * (OpenBLAS's dgemm).  Definitions in dp_eval.h.
 *
 * OpenBLAS is kept to one thread: inside a PostgreSQL backend a thread pool per process is not
 * welcome, and the work between two progress checks stays short (a block of rows).
 *
 * OpenBLAS is opened at the first evaluation (dlopen), not linked: a library linked into
 * dpsynth.so is loaded, and its constructor run (OpenBLAS starts its threads and sizes its
 * buffers), by every backend and every charging worker that loads dpsynth, on the path of every
 * call, although only the quality report uses it.
 */
#include "dp_eval_internal.h"
#include "dp_internal.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp_pcg64.h"

/* OpenBLAS's sonames, the first that opens is used */
static const char *const blas_names[] = {"libopenblas.so.0", "libopenblas.so"};

/* The functions used, from OpenBLAS: openblas_set_num_threads (its cblas.h declares it, the
 * netlib one does not) and LAPACK's dposv (Fortran ABI: the trailing hidden length of the
 * character argument). */
static struct
{
	bool		loaded;
	__typeof__(cblas_ddot) *ddot;
	__typeof__(cblas_dgemm) *dgemm;
	void		(*set_num_threads) (int num_threads);
	void		(*dposv) (const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
						  double *b, const int *ldb, int *info, size_t uplo_len);
} blas;

/* Opens OpenBLAS once, and keeps it to one thread at each evaluation (another user of the same
 * library in the process may have raised it); 0, or -1 with dp_fail's message. */
static int
blas_load(void)
{
	void	   *h = NULL;

	if (!blas.loaded)
	{
		for (size_t i = 0; i < sizeof(blas_names) / sizeof(blas_names[0]) && !h; i++)
			h = dlopen(blas_names[i], RTLD_NOW | RTLD_LOCAL);
		if (!h)
		{
			dp_fail(DP_ERR_INVALID, "could not open OpenBLAS (%s), which the quality report needs: %s",
					blas_names[0], dlerror());
			return -1;
		}
		blas.ddot = (__typeof__(blas.ddot)) dlsym(h, "cblas_ddot");
		blas.dgemm = (__typeof__(blas.dgemm)) dlsym(h, "cblas_dgemm");
		blas.set_num_threads = (__typeof__(blas.set_num_threads)) dlsym(h, "openblas_set_num_threads");
		blas.dposv = (__typeof__(blas.dposv)) dlsym(h, "dposv_");
		if (!blas.ddot || !blas.dgemm || !blas.set_num_threads || !blas.dposv)
		{
			dlclose(h);
			dp_fail(DP_ERR_INVALID, "the OpenBLAS opened (%s) lacks a function the quality report needs",
					blas_names[0]);
			return -1;
		}
		blas.loaded = true;
	}
	blas.set_num_threads(1);
	return 0;
}

#define cblas_ddot (*blas.ddot)
#define cblas_dgemm (*blas.dgemm)
#define dposv_ (*blas.dposv)

#define ROW_BLOCK 1024
#define LR_LAMBDA 1.0
#define LR_MAX_ITER 30
#define LR_TOL 1e-7
#define STD_CLIP 10.0

/* Where a column's cells go in a feature row. */
typedef struct ev_layout
{
	int			p;				/* features, without the intercept */
	int		   *offset;			/* [col], -1: not a feature */
	int32_t   **slot;			/* [col][code]: feature after the offset */
	bool	   *standardize;	/* numeric value in the first slot (distances) */
	double	   *weight;			/* of a one-hot feature */
} ev_layout;

/* One-hot slots of a column's codes: all of them, or the 63 most frequent in the real table and
 * one shared by the rest. */
static int
onehot_slots(const dp_eval *e, const dp_eval_result *res, int c, int first_code, int32_t *slot)
{
	int			size = res->cols[c].size,
				n = size - first_code;
	const int64_t *cnt = e->count1[DP_EVAL_REAL][c];

	if (n <= DP_EVAL_ONEHOT_MAX)
	{
		for (int k = first_code; k < size; k++)
			slot[k] = k - first_code;
		return n;
	}
	for (int k = first_code; k < size; k++)
	{
		int			rank = 0;

		for (int j = first_code; j < size; j++)
			rank += cnt[j] > cnt[k] || (cnt[j] == cnt[k] && j < k);
		slot[k] = rank < DP_EVAL_ONEHOT_MAX - 1 ? rank : DP_EVAL_ONEHOT_MAX - 1;
	}
	return DP_EVAL_ONEHOT_MAX;
}

/* distances: true for the standardised numbers and weighted one-hot; false for the model */
static int
make_layout(const dp_eval *e, const dp_eval_result *res, bool distances, ev_layout *L)
{
	int			d = e->ncols;

	L->offset = ev_alloc(e, d * sizeof(int));
	L->slot = ev_zalloc(e, d * sizeof(int32_t *));
	L->standardize = ev_zalloc(e, d * sizeof(bool));
	L->weight = ev_alloc(e, d * sizeof(double));
	if (!L->offset || !L->slot || !L->standardize || !L->weight)
		return -1;
	L->p = 0;
	for (int c = 0; c < d; c++)
	{
		int			first = 0;

		L->offset[c] = -1;
		if (!distances && c == e->target)
			continue;
		if ((L->slot[c] = ev_alloc(e, res->cols[c].size * sizeof(int32_t))) == NULL)
			return -1;
		L->standardize[c] = distances && res->cols[c].numeric;
		L->weight[c] = distances ? sqrt(0.5) : 1.0;
		if (L->standardize[c])
			first = res->cols[c].bins;	/* a number is its value, a non-number its category */
		L->offset[c] = L->p;
		L->p += (L->standardize[c] ? 1 : 0) +
			onehot_slots(e, res, c, first, L->slot[c]);
		if (L->standardize[c])
			for (int k = first; k < res->cols[c].size; k++)
				L->slot[c][k]++;
	}
	return 0;
}

/* Row r of table t as features into x[0..p-1], and 1 in x[p] when with_intercept. */
static void
encode_row(const dp_eval *e, const ev_layout *L, int t, int64_t r, double *x, bool with_intercept)
{
	memset(x, 0, (L->p + with_intercept) * sizeof(double));
	for (int c = 0; c < e->ncols; c++)
	{
		const ev_entry *v;

		if (L->offset[c] < 0)
			continue;
		v = &e->dicts[c].e[e->ids[t][c][r]];
		if (L->standardize[c] && v->num_ok)
		{
			double		z = (v->num - e->mean[c]) / e->sd[c];

			x[L->offset[c]] = z > STD_CLIP ? STD_CLIP : z < -STD_CLIP ? -STD_CLIP : z;
		}
		else
			x[L->offset[c] + L->slot[c][v->code]] = L->weight[c];
	}
	if (with_intercept)
		x[L->p] = 1.0;
}

/* ============================================================================================
 * Logistic regression
 * ============================================================================================ */

/* evaluate.py's label of a target cell: trailing dots stripped, then canonical() */
static char *
target_label(const dp_eval *e, const char *s)
{
	size_t		len = strlen(s);
	char	   *t = ev_alloc(e, len + 40);
	double		v;

	if (t == NULL)
		return NULL;
	memcpy(t, s, len + 1);
	while (len > 0 && t[len - 1] == '.')
		t[--len] = '\0';
	if (dp_eval_parse_number(t, true, &v) && !isnan(v))
		dp_eval_float_repr(v, t);
	return t;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Each target entry's label index among the holdout's sorted labels, -1 if not one of them. */
static int32_t *
label_index(const dp_eval *e, int *nlabels)
{
	const ev_dict *d = &e->dicts[e->target];
	char	  **lab = ev_alloc(e, (d->n + 1) * sizeof(char *));
	char	  **uniq = ev_alloc(e, (d->n + 1) * sizeof(char *));
	int32_t    *idx = ev_alloc(e, (d->n + 1) * sizeof(int32_t));
	int			n = 0;

	if (!lab || !uniq || !idx)
		return NULL;
	for (int32_t i = 0; i < d->n; i++)
	{
		if ((lab[i] = target_label(e, d->e[i].s)) == NULL)
			return NULL;
		if (d->e[i].count[DP_EVAL_HOLDOUT] > 0)
			uniq[n++] = lab[i];
	}
	qsort(uniq, n, sizeof(char *), cmp_str);
	*nlabels = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || strcmp(uniq[i], uniq[*nlabels - 1]) != 0)
			uniq[(*nlabels)++] = uniq[i];
	for (int32_t i = 0; i < d->n; i++)
	{
		char	  **hit = bsearch(&lab[i], uniq, *nlabels, sizeof(char *), cmp_str);

		idx[i] = hit ? (int32_t) (hit - uniq) : -1;
	}
	return idx;
}

/*
 * The model's features are one-hot: each feature column puts a single 1 in its own range of
 * slots (the layout without distances: no standardised number, weight 1), and the intercept is
 * the last slot.  A row is therefore the k slot numbers of its 1s, ascending, and the Newton
 * step's sums run over those: X'beta is k additions, X'(y - mu) k more, and X'WX adds w to the
 * k (k + 1) / 2 pairs of its slots, where a dense X'WX (dsyrk) would multiply P x P per row.
 */
typedef struct ev_lr
{
	const dp_eval *e;
	const int32_t *label;		/* per target entry */
	int			P;				/* features + intercept */
	int			k;				/* slots a row sets: the feature columns and the intercept */
	int32_t    *feat[DP_EVAL_NTABLES];	/* [row * k + j]: the slots of a row's 1s, ascending */
	double	   *H,
			   *g;
} ev_lr;

/* Every row of table t as the slots of its 1s (the intercept last); -1 out of memory. */
static int
lr_rows(ev_lr *m, const ev_layout *L, int t)
{
	const dp_eval *e = m->e;
	int32_t    *f = ev_alloc(e, ((size_t) e->nrows[t] * m->k + 1) * sizeof(int32_t));

	if (f == NULL)
		return -1;
	for (int64_t r = 0; r < e->nrows[t]; r++)
	{
		int32_t    *row = f + (size_t) r * m->k;
		int			j = 0;

		for (int c = 0; c < e->ncols; c++)
			if (L->offset[c] >= 0)
				row[j++] = L->offset[c] + L->slot[c][e->dicts[c].e[e->ids[t][c][r]].code];
		row[j] = L->p;
	}
	m->feat[t] = f;
	return 0;
}

static int32_t
row_label(const ev_lr *m, int t, int64_t r)
{
	return m->label[m->e->ids[t][m->e->target][r]];
}

static double
sigmoid(double z)
{
	return z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
}

/* beta'x of row r of table t */
static double
lr_eta(const ev_lr *m, int t, int64_t r, const double *beta)
{
	const int32_t *f = m->feat[t] + (size_t) r * m->k;
	double		eta = 0;

	for (int j = 0; j < m->k; j++)
		eta += beta[f[j]];
	return eta;
}

/* One Newton step over table t's rows for "label == positive"; returns the step's size, or
 * DP_CANCELLED when cancelled, DP_FAILED when singular. */
static double
newton_step(ev_lr *m, int t, int positive, double *beta)
{
	const dp_eval *e = m->e;
	int			P = m->P,
				k = m->k,
				one = 1,
				info = 0;
	double		step = 0;

	memset(m->H, 0, (size_t) P * P * sizeof(double));
	memset(m->g, 0, P * sizeof(double));
	for (int64_t r = 0; r < e->nrows[t]; r++)
	{
		const int32_t *f = m->feat[t] + (size_t) r * k;
		double		mu,
					w,
					resid;

		if (row_label(m, t, r) < 0)
			continue;
		mu = sigmoid(lr_eta(m, t, r, beta));
		resid = (row_label(m, t, r) == positive) - mu;
		w = mu * (1 - mu);
		/* the gradient X'(y - mu), and X'WX's upper triangle (row-major: slot a <= slot b) */
		for (int j = 0; j < k; j++)
		{
			double	   *h = m->H + (size_t) f[j] * P;

			m->g[f[j]] += resid;
			for (int j2 = j; j2 < k; j2++)
				h[f[j2]] += w;
		}
		if ((r + 1) % ROW_BLOCK == 0 && ev_cancelled(e))
			return DP_CANCELLED;
	}
	if (ev_cancelled(e))
		return DP_CANCELLED;
	/* the penalty lambda/2 |beta|^2 (not on the intercept, which gets a tiny ridge) */
	for (int j = 0; j < P; j++)
	{
		double		lambda = j < P - 1 ? LR_LAMBDA : 1e-9;

		m->H[(size_t) j * P + j] += lambda;
		m->g[j] -= lambda * beta[j];
	}
	/* row-major upper = column-major lower */
	dposv_("L", &P, &one, m->H, &P, m->g, &P, &info, 1);
	if (info != 0)
		return DP_FAILED;
	for (int j = 0; j < P; j++)
	{
		beta[j] += m->g[j];
		step = fabs(m->g[j]) > step ? fabs(m->g[j]) : step;
	}
	return step;
}

static int
lr_fit(ev_lr *m, int t, int positive, double *beta)
{
	memset(beta, 0, m->P * sizeof(double));
	for (int it = 0; it < LR_MAX_ITER; it++)
	{
		double		step = newton_step(m, t, positive, beta);

		if (step < 0)
			return (int) step;	/* (asking the callback again could get another answer) */
		if (step < LR_TOL)
			break;
	}
	return 0;
}

/* P(label == k) for every holdout row, into prob[row * nl + k] (before normalising). */
static void
lr_predict(ev_lr *m, const double *beta, int k, int nl, double *prob)
{
	int64_t		n = m->e->nrows[DP_EVAL_HOLDOUT];

	for (int64_t r = 0; r < n; r++)
		prob[r * nl + k] = sigmoid(lr_eta(m, DP_EVAL_HOLDOUT, r, beta));
}

typedef struct order_item
{
	double		score;
	int64_t		row;
} order_item;

static int
cmp_score(const void *a, const void *b)
{
	double		x = ((const order_item *) a)->score,
				y = ((const order_item *) b)->score;

	return (x > y) - (x < y);
}

double
dp_eval_auc(const double *score, const uint8_t *positive, int64_t n)
{
	order_item *o = dp_alloc((size_t) (n + 1) * sizeof(order_item));
	double		rank_sum = 0,
				npos = 0,
				nneg;

	if (o == NULL)
		return NAN;
	for (int64_t i = 0; i < n; i++)
	{
		o[i].score = score[i];
		o[i].row = i;
		npos += positive[i];
	}
	nneg = (double) n - npos;
	qsort(o, n, sizeof(order_item), cmp_score);
	for (int64_t i = 0; i < n;)
	{
		int64_t		j = i;
		double		avg;

		while (j < n && o[j].score == o[i].score)
			j++;
		avg = (i + 1 + j) / 2.0;	/* ranks i+1..j, averaged over the tie */
		for (int64_t k = i; k < j; k++)
			rank_sum += positive[o[k].row] ? avg : 0;
		i = j;
	}
	dp_free(o);
	if (npos == 0 || nneg == 0)
		return NAN;
	return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg);
}

/* Accuracy and AUC of the probabilities prob[n * nl] against the holdout's labels. */
static void
score_holdout(ev_lr *m, double *prob, int nl, double *acc, double *auc)
{
	const dp_eval *e = m->e;
	int64_t		n = e->nrows[DP_EVAL_HOLDOUT],
				right = 0;
	double	   *s = ev_alloc(e, (size_t) (n + 1) * sizeof(double));
	uint8_t    *pos = ev_alloc(e, (size_t) n + 1);
	double		sum = 0;

	*auc = NAN;
	for (int64_t r = 0; r < n; r++)
	{
		int			best = 0;

		for (int k = 1; k < nl; k++)
			best = prob[r * nl + k] > prob[r * nl + best] ? k : best;
		right += best == row_label(m, DP_EVAL_HOLDOUT, r);
	}
	*acc = (double) right / (double) n;
	if (s == NULL || pos == NULL || nl < 2)
		return;
	for (int k = (nl == 2 ? 1 : 0); k < nl; k++)
	{
		for (int64_t r = 0; r < n; r++)
		{
			s[r] = prob[r * nl + k];
			pos[r] = row_label(m, DP_EVAL_HOLDOUT, r) == k;
		}
		sum += dp_eval_auc(s, pos, n);
	}
	*auc = nl == 2 ? sum : sum / nl;
	ev_free(e, s);
	ev_free(e, pos);
}

/* Trains on table t and scores on the holdout; evaluate.py's (0, 0.5) when t has < 2 labels. */
static int
train_and_score(ev_lr *m, int t, int nl, double *acc, double *auc)
{
	const dp_eval *e = m->e;
	int64_t		n = e->nrows[DP_EVAL_HOLDOUT],
				present = 0;
	int64_t    *seen = ev_zalloc(e, nl * sizeof(int64_t));
	double	   *prob = ev_zalloc(e, (size_t) n * nl * sizeof(double));
	double	   *beta = ev_alloc(e, m->P * sizeof(double));
	int			rc = 0;

	if (!seen || !prob || !beta)
		return DP_FAILED;
	for (int64_t r = 0; r < e->nrows[t]; r++)
		if (row_label(m, t, r) >= 0)
			seen[row_label(m, t, r)]++;
	for (int k = 0; k < nl; k++)
		present += seen[k] > 0;
	if (present < 2)
	{
		*acc = 0.0;
		*auc = 0.5;
		return 0;
	}
	for (int k = (nl == 2 ? 1 : 0); k < nl && rc == 0; k++)
		if (seen[k] > 0 && (rc = lr_fit(m, t, k, beta)) == 0)
			lr_predict(m, beta, k, nl, prob);
	if (rc != 0)
		return rc;
	if (nl == 2)
		for (int64_t r = 0; r < n; r++)
			prob[r * 2] = 1 - prob[r * 2 + 1];
	else
		for (int64_t r = 0; r < n; r++)
		{
			double		tot = 0;

			for (int k = 0; k < nl; k++)
				tot += prob[r * nl + k];
			for (int k = 0; k < nl && tot > 0; k++)
				prob[r * nl + k] /= tot;
		}
	score_holdout(m, prob, nl, acc, auc);
	ev_free(e, prob);
	ev_free(e, beta);
	ev_free(e, seen);
	return 0;
}

int
ev_run_ml(dp_eval *e, dp_eval_result *res)
{
	ev_layout	L;
	ev_lr		m;
	int			rc;

	if (e->target < 0)
		res->ml_skipped = "no target column given";
	else if (e->nrows[DP_EVAL_HOLDOUT] == 0)
		res->ml_skipped = "no holdout table given";
	if (res->ml_skipped)
		return 0;
	if (blas_load() != 0)
		return DP_FAILED;
	memset(&m, 0, sizeof(m));
	if (make_layout(e, res, false, &L) != 0 || (m.label = label_index(e, &res->nlabels)) == NULL)
		return DP_FAILED;
	m.e = e;
	m.P = L.p + 1;
	m.k = 1;
	for (int c = 0; c < e->ncols; c++)
		m.k += L.offset[c] >= 0;
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		if (lr_rows(&m, &L, t) != 0)
			return DP_FAILED;
	m.H = ev_alloc(e, (size_t) m.P * m.P * sizeof(double));
	m.g = ev_alloc(e, m.P * sizeof(double));
	if (!m.H || !m.g)
		return DP_FAILED;
	if ((rc = train_and_score(&m, DP_EVAL_SYNTH, res->nlabels, &res->tstr_acc, &res->tstr_auc)) != 0 ||
		(rc = train_and_score(&m, DP_EVAL_REAL, res->nlabels, &res->trtr_acc, &res->trtr_auc)) != 0)
		return rc;
	res->ml_ran = true;
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		ev_free(e, m.feat[t]);
	ev_free(e, m.H);
	return 0;
}

/* ============================================================================================
 * Distance to the closest real record
 * ============================================================================================ */

/* The real mean and standard deviation of every numeric column (finite numbers). */
static int
numeric_moments(dp_eval *e, const dp_eval_result *res)
{
	e->mean = ev_zalloc(e, e->ncols * sizeof(double));
	e->sd = ev_zalloc(e, e->ncols * sizeof(double));
	if (!e->mean || !e->sd)
		return -1;
	for (int c = 0; c < e->ncols; c++)
	{
		const ev_dict *d = &e->dicts[c];
		double		n = 0,
					s = 0,
					ss = 0;

		if (!res->cols[c].numeric)
			continue;
		for (int32_t i = 0; i < d->n; i++)
			if (d->e[i].num_ok && isfinite(d->e[i].num) && d->e[i].count[DP_EVAL_REAL] > 0)
			{
				n += d->e[i].count[DP_EVAL_REAL];
				s += d->e[i].count[DP_EVAL_REAL] * d->e[i].num;
			}
		e->mean[c] = n > 0 ? s / n : 0;
		for (int32_t i = 0; i < d->n; i++)
			if (d->e[i].num_ok && isfinite(d->e[i].num) && d->e[i].count[DP_EVAL_REAL] > 0)
				ss += d->e[i].count[DP_EVAL_REAL] * (d->e[i].num - e->mean[c]) * (d->e[i].num - e->mean[c]);
		e->sd[c] = n > 1 && ss > 0 ? sqrt(ss / n) : 1.0;
	}
	return 0;
}

/* A fixed-seed sample of k of table t's n rows (all of them, in order, when n <= k), encoded. */
static double *
sample_rows(dp_eval *e, const ev_layout *L, int t, int64_t k, dp_pcg64 *rng, int64_t *got)
{
	int64_t		n = e->nrows[t],
				m = n < k ? n : k;
	int64_t    *idx = ev_alloc(e, (size_t) (n + 1) * sizeof(int64_t));
	double	   *X = ev_alloc(e, (size_t) (m + 1) * L->p * sizeof(double));

	if (!idx || !X)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		idx[i] = i;
	for (int64_t i = 0; i < m && m < n; i++)	/* partial Fisher-Yates */
	{
		int64_t		j = i + (int64_t) (dp_pcg64_next64(rng) % (uint64_t) (n - i));
		int64_t		tmp = idx[i];

		idx[i] = idx[j];
		idx[j] = tmp;
	}
	for (int64_t i = 0; i < m; i++)
		encode_row(e, L, t, idx[i], X + (size_t) i * L->p, false);
	ev_free(e, idx);
	*got = m;
	return X;
}

static void
row_norms(const double *X, int64_t n, int p, double *out)
{
	for (int64_t i = 0; i < n; i++)
		out[i] = cblas_ddot(p, X + (size_t) i * p, 1, X + (size_t) i * p, 1);
}

/* The 5th percentile of the queries' distances to their closest reference row, or DP_FAILED (out
 * of memory) or DP_CANCELLED. */
static double
dcr_p5(dp_eval *e, const double *Q, int64_t nq, const double *R, int64_t nr, int p)
{
	double	   *qn = ev_alloc(e, (nq + 1) * sizeof(double));
	double	   *rn = ev_alloc(e, (nr + 1) * sizeof(double));
	double	   *best = ev_alloc(e, (nq + 1) * sizeof(double));
	double	   *G = ev_alloc(e, (size_t) (nq + 1) * ROW_BLOCK * sizeof(double));
	double		p5;

	if (!qn || !rn || !best || !G)
		return DP_FAILED;
	row_norms(Q, nq, p, qn);
	row_norms(R, nr, p, rn);
	for (int64_t i = 0; i < nq; i++)
		best[i] = INFINITY;
	for (int64_t r0 = 0; r0 < nr; r0 += ROW_BLOCK)
	{
		int			nb = (int) (nr - r0 < ROW_BLOCK ? nr - r0 : ROW_BLOCK);

		if (ev_cancelled(e))
			return DP_CANCELLED;
		/* G = Q R_b', then |q|^2 + |r|^2 - 2 q.r */
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) nq, nb, p, 1.0, Q, p,
					R + (size_t) r0 * p, p, 0.0, G, nb);
		for (int64_t i = 0; i < nq; i++)
			for (int j = 0; j < nb; j++)
			{
				double		d2 = qn[i] + rn[r0 + j] - 2 * G[(size_t) i * nb + j];

				best[i] = d2 < best[i] ? d2 : best[i];
			}
	}
	for (int64_t i = 0; i < nq; i++)
		best[i] = best[i] > 1e-12 ? sqrt(best[i]) : 0;	/* rounding of an exact copy */
	qsort(best, nq, sizeof(double), dp_cmp_double);
	p5 = dp_eval_quantile_sorted(best, nq, 0.05);
	ev_free(e, G);
	ev_free(e, qn);
	ev_free(e, rn);
	ev_free(e, best);
	return p5;
}

int
ev_run_dcr(dp_eval *e, dp_eval_result *res)
{
	ev_layout	L;
	dp_pcg64	rng;
	double	   *R,
			   *Q;

	if (blas_load() != 0)
		return DP_FAILED;
	if (numeric_moments(e, res) != 0 || make_layout(e, res, true, &L) != 0)
		return DP_FAILED;
	res->dcr_features = L.p;
	res->dcr_p5_holdout = NAN;
	dp_pcg64_seed(&rng, DP_EVAL_SAMPLE_SEED);
	if ((R = sample_rows(e, &L, DP_EVAL_REAL, DP_EVAL_DCR_REFERENCE, &rng, &res->dcr_reference)) == NULL)
		return DP_FAILED;
	for (int t = DP_EVAL_SYNTH; t < DP_EVAL_NTABLES; t++)
	{
		int64_t		nq;
		double		p5;

		if (e->nrows[t] == 0)
			continue;
		if ((Q = sample_rows(e, &L, t, DP_EVAL_DCR_QUERIES, &rng, &nq)) == NULL)
			return DP_FAILED;
		p5 = dcr_p5(e, Q, nq, R, res->dcr_reference, L.p);
		if (p5 < 0)
			return (int) p5;
		*(t == DP_EVAL_SYNTH ? &res->dcr_p5 : &res->dcr_p5_holdout) = p5;
		*(t == DP_EVAL_SYNTH ? &res->dcr_queries : &res->dcr_queries_holdout) = nq;
		ev_free(e, Q);
	}
	ev_free(e, R);
	return 0;
}
