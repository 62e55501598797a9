/*
 * dp_eval.c - the owner's quality report: cells, the fixed discretization, TVDs, range queries,
 * correlation and exact copies (dp_eval.h has the definitions; dp_eval_ml.c the model and the
 * distances; dp_eval_num.c numbers as pandas and Python read and print them, which both use).
 * Not a DP computation: see dp_eval.h.
 */
#include "dp_eval_internal.h"
#include "dp_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_pcg64.h"

typedef unsigned __int128 u128;

static const char *const missing_tokens[] = {"", "?", "NA", "NaN", "nan", "None", "\\N"};

/* ---- memory (ev_alloc, ev_zalloc, ev_free: dp_eval_internal.h) ---- */

static char *
ev_strdup(const dp_eval *e, const char *s, size_t len)
{
	char	   *d = ev_alloc(e, len + 1);

	if (d)
	{
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

/* ---- cells ---- */

static uint64_t
hash_str(const char *s, size_t len)
{
	uint64_t	h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char) s[i]) * 1099511628211ULL;
	return h;
}

static int
dict_grow(const dp_eval *e, ev_dict *d)
{
	uint32_t	ns = d->nslots ? d->nslots * 2 : 64;
	int32_t    *slots = ev_alloc(e, ns * sizeof(int32_t));

	if (slots == NULL)
		return -1;
	memset(slots, 0xff, ns * sizeof(int32_t));
	for (int32_t i = 0; i < d->n; i++)
	{
		uint32_t	j = (uint32_t) d->e[i].hash & (ns - 1);

		while (slots[j] >= 0)
			j = (j + 1) & (ns - 1);
		slots[j] = i;
	}
	ev_free(e, d->slots);
	d->slots = slots;
	d->nslots = ns;
	return 0;
}

/* The entry of a stripped text, added if new; -1 when out of memory. */
static int32_t
dict_intern(const dp_eval *e, ev_dict *d, const char *s, size_t len)
{
	uint64_t	h = hash_str(s, len);
	uint32_t	j;
	ev_entry   *x;

	if ((uint32_t) (d->n + 1) * 2 > d->nslots && dict_grow(e, d) != 0)
		return -1;
	for (j = (uint32_t) h & (d->nslots - 1); d->slots[j] >= 0; j = (j + 1) & (d->nslots - 1))
	{
		x = &d->e[d->slots[j]];
		if (x->hash == h && strncmp(x->s, s, len) == 0 && x->s[len] == '\0')
			return d->slots[j];
	}
	if (d->n == d->cap)
	{
		int32_t		cap = d->cap ? d->cap * 2 : 64;
		ev_entry   *ne = dp_realloc(d->e, (size_t) cap * sizeof(ev_entry));

		if (ne == NULL)
			return -1;
		d->e = ne;
		d->cap = cap;
	}
	x = &d->e[d->n];
	memset(x, 0, sizeof(*x));
	x->s = ev_strdup(e, s, len);
	if (x->s == NULL)
		return -1;
	x->hash = h;
	d->slots[j] = d->n;
	return d->n++;
}

dp_eval *
dp_eval_create(int ncols, const char *const *names, const dp_eval_hooks *hooks)
{
	dp_eval_hooks h = {NULL, NULL};
	dp_eval    *e;

	if (hooks)
		h = *hooks;
	e = dp_alloc(sizeof(dp_eval));
	if (e == NULL)
		return NULL;
	memset(e, 0, sizeof(*e));
	e->h = h;
	e->ncols = ncols;
	e->target = -1;
	e->names = ev_zalloc(e, ncols * sizeof(char *));
	e->dicts = ev_zalloc(e, ncols * sizeof(ev_dict));
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		e->ids[t] = ev_zalloc(e, ncols * sizeof(uint32_t *));
	if (!e->names || !e->dicts || !e->ids[0] || !e->ids[1] || !e->ids[2])
		return NULL;
	for (int c = 0; c < ncols; c++)
		if ((e->names[c] = ev_strdup(e, names[c], strlen(names[c]))) == NULL)
			return NULL;
	return e;
}

int64_t
dp_eval_rows(const dp_eval *e, int table)
{
	return e->nrows[table];
}

static int
grow_rows(dp_eval *e, int t)
{
	int64_t		cap = e->cap[t] ? e->cap[t] * 2 : 1024;

	for (int c = 0; c < e->ncols; c++)
	{
		uint32_t   *ids = dp_realloc(e->ids[t][c], (size_t) cap * sizeof(uint32_t));

		if (ids == NULL)
			return -1;
		e->ids[t][c] = ids;
	}
	e->cap[t] = cap;
	return 0;
}

static int
dp_nomem_row(void)
{
	dp_fail(DP_ERR_NOMEM, "could not allocate the evaluation's rows");
	return DP_FAILED;
}

int
dp_eval_add_row(dp_eval *e, int t, const char *const *cells)
{
	if (e->nrows[t] == e->cap[t] && grow_rows(e, t) != 0)
		return dp_nomem_row();
	for (int c = 0; c < e->ncols; c++)
	{
		const char *s = cells[c] ? cells[c] : "";	/* NULL is an empty CSV cell */
		size_t		len;
		int32_t		id;

		while (isspace((unsigned char) *s))
			s++;
		len = strlen(s);
		while (len > 0 && isspace((unsigned char) s[len - 1]))
			len--;
		if ((id = dict_intern(e, &e->dicts[c], s, len)) < 0)
			return dp_nomem_row();
		e->dicts[c].e[id].count[t]++;
		e->ids[t][c][e->nrows[t]] = (uint32_t) id;
	}
	e->nrows[t]++;
	return 0;
}

/* ---- the discretization ---- */

static bool
is_missing(const char *s)
{
	for (size_t i = 0; i < sizeof(missing_tokens) / sizeof(missing_tokens[0]); i++)
		if (strcmp(s, missing_tokens[i]) == 0)
			return true;
	return false;
}

/* evaluate.py's canonical(): number-like labels by value (repr(float(v))), others as written */
static int
entry_canonical(const dp_eval *e, ev_entry *x)
{
	double		v;
	char		buf[40];

	x->missing = is_missing(x->s);
	x->num_ok = !x->missing && dp_eval_parse_number(x->s, false, &x->num) && !isnan(x->num);
	if (x->missing)
		x->canon = ev_strdup(e, "", 0);
	else if (dp_eval_parse_number(x->s, true, &v) && !isnan(v))
	{
		dp_eval_float_repr(v, buf);
		x->canon = ev_strdup(e, buf, strlen(buf));
	}
	else
		x->canon = x->s;
	return x->canon ? 0 : -1;
}

static const ev_entry *sort_entries;	/* qsort has no argument: set just before each sort */

static int
cmp_canon(const void *a, const void *b)
{
	return strcmp(sort_entries[*(const int32_t *) a].canon, sort_entries[*(const int32_t *) b].canon);
}

static int
cmp_raw(const void *a, const void *b)
{
	return strcmp(sort_entries[*(const int32_t *) a].s, sort_entries[*(const int32_t *) b].s);
}

/* evaluate.py's numeric(): >= 80% of the non-missing real cells parse, > 20 distinct values */
static bool
looks_numeric(const ev_dict *d, double *vals, int32_t *nvals)
{
	int64_t		nonmissing = 0,
				parsed = 0;
	int32_t		nv = 0,
				distinct = 0;

	for (int32_t i = 0; i < d->n; i++)
	{
		const ev_entry *x = &d->e[i];

		if (x->count[DP_EVAL_REAL] == 0 || x->missing)
			continue;
		nonmissing += x->count[DP_EVAL_REAL];
		if (x->num_ok)
		{
			parsed += x->count[DP_EVAL_REAL];
			vals[nv++] = x->num;
		}
	}
	qsort(vals, nv, sizeof(double), dp_cmp_double);
	for (int32_t i = 0; i < nv; i++)
		if (i == 0 || vals[i] != vals[i - 1])
			distinct++;
	*nvals = nv;
	return nonmissing > 0 && (double) parsed / (double) nonmissing >= 0.8 && distinct > 20;
}

/* The real values, sorted with their multiplicities, and the quantile edges; returns nedges. */
static int
quantile_edges(const dp_eval *e, const ev_dict *d, double *edges)
{
	int64_t		n = 0,
				k = 0;
	double	   *x;
	int			ne = 0;

	for (int32_t i = 0; i < d->n; i++)
		if (d->e[i].num_ok)
			n += d->e[i].count[DP_EVAL_REAL];
	x = ev_alloc(e, (size_t) n * sizeof(double));
	if (x == NULL)
		return -1;
	for (int32_t i = 0; i < d->n; i++)
		if (d->e[i].num_ok)
			for (int64_t j = 0; j < d->e[i].count[DP_EVAL_REAL]; j++)
				x[k++] = d->e[i].num;
	qsort(x, n, sizeof(double), dp_cmp_double);
	for (int i = 1; i <= 19; i++)
		edges[ne++] = dp_eval_quantile_sorted(x, n, i * 0.05);	/* np.linspace(0, 1, 21)[1:-1] */
	ev_free(e, x);
	qsort(edges, ne, sizeof(double), dp_cmp_double);
	k = 0;
	for (int i = 0; i < ne; i++)
		if (i == 0 || edges[i] != edges[k - 1])
			edges[k++] = edges[i];
	return (int) k;
}

/* "< a", "[a, b)", ">= b": bin b of the edges, numbers as Python prints them */
static char *
bin_label(const dp_eval *e, int b, const double *edges, int ne)
{
	char		buf[96],
				ra[40],
				rb[40];

	if (ne == 0)
		return ev_strdup(e, "(numbers)", 9);
	dp_eval_float_repr(edges[b == 0 ? 0 : b - 1], ra);
	dp_eval_float_repr(edges[b < ne ? b : ne - 1], rb);
	if (b == 0)
		snprintf(buf, sizeof(buf), "< %s", ra);
	else if (b == ne)
		snprintf(buf, sizeof(buf), ">= %s", ra);
	else
		snprintf(buf, sizeof(buf), "[%s, %s)", ra, rb);
	return ev_strdup(e, buf, strlen(buf));
}

static int
discretize_numeric(dp_eval *e, int c, dp_eval_column *col, int32_t *order)
{
	ev_dict    *d = &e->dicts[c];
	double		edges[19];
	int			ne = quantile_edges(e, d, edges),
				nb,
				miss;
	int32_t		ntok = 0;

	if (ne < 0)
		return -1;
	nb = ne + 1;
	/*
	 * categories after the bins: evaluate.py's sorted(set(real non-numbers) | {"\0"}), so the
	 * missing category comes first, after "" if the real column has empty cells (an empty string
	 * sorts before "\0"; its cells are missing, so its own category stays empty)
	 */
	for (int32_t i = 0; i < d->n; i++)
		if (d->e[i].count[DP_EVAL_REAL] > 0 && !d->e[i].num_ok)
			order[ntok++] = i;
	sort_entries = d->e;
	qsort(order, ntok, sizeof(int32_t), cmp_raw);
	miss = (ntok > 0 && d->e[order[0]].s[0] == '\0') ? nb + 1 : nb;
	col->bins = nb;
	col->size = nb + 1 + ntok;
	col->labels = ev_zalloc(e, col->size * sizeof(char *));
	if (col->labels == NULL)
		return -1;
	for (int32_t i = 0; i < d->n; i++)
	{
		ev_entry   *x = &d->e[i];
		int			b = 0;

		if (x->num_ok)
		{
			while (b < ne && edges[b] <= x->num)
				b++;
			x->code = b;
		}
		else
			x->code = miss;		/* missing, or a spelling the real column never has */
	}
	for (int32_t k = 0; k < ntok; k++)
	{
		int			code = nb + k + (nb + k >= miss);

		if (!d->e[order[k]].missing)
			d->e[order[k]].code = code;
		col->labels[code] = d->e[order[k]].s[0] ? d->e[order[k]].s : "(empty)";
	}
	col->labels[miss] = "(missing)";
	for (int b = 0; b < nb; b++)
		if ((col->labels[b] = bin_label(e, b, edges, ne)) == NULL)
			return -1;
	return 0;
}

/* Codes of a categorical column, and for every column the classes of equal labels. */
static int
discretize_labels(dp_eval *e, int c, dp_eval_column *col, int32_t *order, bool codes)
{
	ev_dict    *d = &e->dicts[c];
	int32_t		ncat = 0,
				cls = -1;

	for (int32_t i = 0; i < d->n; i++)
		order[i] = i;
	sort_entries = d->e;
	qsort(order, d->n, sizeof(int32_t), cmp_canon);
	for (int32_t g = 0; g < d->n;)
	{
		int32_t		end = g;
		bool		in_real = false;

		while (end < d->n && strcmp(d->e[order[end]].canon, d->e[order[g]].canon) == 0)
			in_real |= d->e[order[end++]].count[DP_EVAL_REAL] > 0;
		cls++;
		for (int32_t k = g; k < end; k++)
		{
			d->e[order[k]].cid = cls;
			if (codes)
				d->e[order[k]].code = in_real ? ncat : -1;
		}
		if (in_real)
			ncat++;
		g = end;
	}
	if (!codes)
		return 0;
	col->size = ncat + 1;
	col->labels = ev_zalloc(e, col->size * sizeof(char *));
	if (col->labels == NULL)
		return -1;
	for (int32_t i = 0; i < d->n; i++)
	{
		ev_entry   *x = &d->e[i];

		if (x->code < 0)
			x->code = ncat;		/* "other": never in the real table */
		else
			col->labels[x->code] = x->missing ? "(missing)" : x->canon;
	}
	col->labels[ncat] = "(other)";
	return 0;
}

static int
discretize(dp_eval *e, int c, dp_eval_column *col)
{
	ev_dict    *d = &e->dicts[c];
	double	   *vals = ev_alloc(e, (size_t) d->n * sizeof(double));
	int32_t    *order = ev_alloc(e, (size_t) d->n * sizeof(int32_t));
	int32_t		nv;
	int			rc = -1;

	if (vals == NULL || order == NULL)
		return -1;
	for (int32_t i = 0; i < d->n; i++)
		if (entry_canonical(e, &d->e[i]) != 0)
			return -1;
	col->name = e->names[c];
	col->numeric = looks_numeric(d, vals, &nv);
	if (discretize_labels(e, c, col, order, !col->numeric) == 0)
		rc = col->numeric ? discretize_numeric(e, c, col, order) : 0;
	ev_free(e, vals);
	ev_free(e, order);
	return rc;
}

/* codes[t][c][row] and the 1-way counts */
static int
encode_tables(dp_eval *e, dp_eval_result *res)
{
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
	{
		e->codes[t] = ev_zalloc(e, e->ncols * sizeof(int32_t *));
		e->count1[t] = ev_zalloc(e, e->ncols * sizeof(int64_t *));
		if (!e->codes[t] || !e->count1[t])
			return -1;
		for (int c = 0; c < e->ncols; c++)
		{
			const ev_entry *x = e->dicts[c].e;

			e->codes[t][c] = ev_alloc(e, (size_t) (e->nrows[t] ? e->nrows[t] : 1) * sizeof(int32_t));
			e->count1[t][c] = ev_zalloc(e, res->cols[c].size * sizeof(int64_t));
			if (!e->codes[t][c] || !e->count1[t][c])
				return -1;
			for (int64_t r = 0; r < e->nrows[t]; r++)
			{
				int32_t		code = x[e->ids[t][c][r]].code;

				e->codes[t][c][r] = code;
				e->count1[t][c][code]++;
			}
		}
	}
	return 0;
}

/* ---- marginals ---- */

/* The nonzero cells of a marginal: key (row-major index), real and synthetic counts. */
typedef struct ev_cell
{
	u128		key;
	int64_t		n[2];
} ev_cell;

typedef struct ev_cells
{
	ev_cell    *cell;
	int64_t		ncells;
	u128		size;
} ev_cells;

static u128
cell_key(const dp_eval *e, const dp_eval_result *res, int t, const int *cols, int k, int64_t r)
{
	u128		key = 0;

	for (int j = 0; j < k; j++)
		key = key * (u128) res->cols[cols[j]].size + (u128) e->codes[t][cols[j]][r];
	return key;
}

static int
cmp_u128(const void *a, const void *b)
{
	u128		x = *(const u128 *) a,
				y = *(const u128 *) b;

	return (x > y) - (x < y);
}

static int
cells_dense(const dp_eval *e, const dp_eval_result *res, const int *cols, int k, ev_cells *out)
{
	int64_t		size = (int64_t) out->size;
	int64_t    *cnt = ev_zalloc(e, (size_t) size * 2 * sizeof(int64_t));

	if (cnt == NULL)
		return -1;
	for (int t = 0; t < 2; t++)
		for (int64_t r = 0; r < e->nrows[t]; r++)
			cnt[2 * (int64_t) cell_key(e, res, t, cols, k, r) + t]++;
	out->ncells = 0;
	for (int64_t i = 0; i < size; i++)
		if (cnt[2 * i] || cnt[2 * i + 1])
		{
			ev_cell    *c = &out->cell[out->ncells++];

			c->key = (u128) i;
			c->n[0] = cnt[2 * i];
			c->n[1] = cnt[2 * i + 1];
		}
	ev_free(e, cnt);
	return 0;
}

static int
cells_sparse(const dp_eval *e, const dp_eval_result *res, const int *cols, int k, ev_cells *out)
{
	u128	   *keys[2];
	int64_t		i[2] = {0, 0};

	for (int t = 0; t < 2; t++)
	{
		keys[t] = ev_alloc(e, (size_t) (e->nrows[t] + 1) * sizeof(u128));
		if (keys[t] == NULL)
			return -1;
		for (int64_t r = 0; r < e->nrows[t]; r++)
			keys[t][r] = cell_key(e, res, t, cols, k, r);
		qsort(keys[t], e->nrows[t], sizeof(u128), cmp_u128);
	}
	out->ncells = 0;
	while (i[0] < e->nrows[0] || i[1] < e->nrows[1])
	{
		u128		key;
		ev_cell    *c = &out->cell[out->ncells++];

		if (i[1] >= e->nrows[1] || (i[0] < e->nrows[0] && keys[0][i[0]] <= keys[1][i[1]]))
			key = keys[0][i[0]];
		else
			key = keys[1][i[1]];
		c->key = key;
		for (int t = 0; t < 2; t++)
			for (c->n[t] = 0; i[t] < e->nrows[t] && keys[t][i[t]] == key; i[t]++)
				c->n[t]++;
	}
	ev_free(e, keys[0]);
	ev_free(e, keys[1]);
	return 0;
}

/* The real-vs-synthetic cells of the marginal on cols (k <= 3); out->cell has room for them. */
static int
marginal_cells(const dp_eval *e, const dp_eval_result *res, const int *cols, int k, ev_cells *out)
{
	u128		dense_max = 2 * (u128) (e->nrows[0] + e->nrows[1]);

	out->size = 1;
	for (int j = 0; j < k; j++)
		out->size *= (u128) res->cols[cols[j]].size;
	if (dense_max < 65536)
		dense_max = 65536;
	if (out->size <= dense_max && out->size <= ((u128) 1 << 26))
		return cells_dense(e, res, cols, k, out);
	return cells_sparse(e, res, cols, k, out);
}

static double
cells_tvd(const dp_eval *e, const ev_cells *m)
{
	double		sum = 0;

	for (int64_t i = 0; i < m->ncells; i++)
		sum += fabs((double) m->cell[i].n[0] / (double) e->nrows[0] -
					(double) m->cell[i].n[1] / (double) e->nrows[1]);
	return 0.5 * sum;
}

/* Cramer's V of a pair's 2-way table in table t (see dp_eval.h) */
static double
cramers_v(const dp_eval *e, const dp_eval_result *res, int a, int b, const ev_cells *m, int t)
{
	const int64_t *ra = e->count1[t][a],
			   *cb = e->count1[t][b];
	int			sb = res->cols[b].size,
				nr = 0,
				nc = 0;
	double		n = (double) e->nrows[t],
				s = 0,
				chi2;

	for (int i = 0; i < res->cols[a].size; i++)
		nr += ra[i] > 0;
	for (int j = 0; j < sb; j++)
		nc += cb[j] > 0;
	if ((nr < nc ? nr : nc) < 2)
		return 0;
	for (int64_t i = 0; i < m->ncells; i++)
	{
		double		nij = (double) m->cell[i].n[t];

		if (nij > 0)
			s += nij * nij / ((double) ra[(int) (m->cell[i].key / sb)] * (double) cb[(int) (m->cell[i].key % sb)]);
	}
	chi2 = n * (s - 1);
	return sqrt((chi2 > 0 ? chi2 : 0) / (n * ((nr < nc ? nr : nc) - 1)));
}

static int
run_one_way(dp_eval *e, dp_eval_result *res)
{
	double		sum = 0;

	for (int c = 0; c < e->ncols; c++)
	{
		dp_eval_column *col = &res->cols[c];
		double		tvd = 0;

		col->real_frac = ev_alloc(e, col->size * sizeof(double));
		col->synth_frac = ev_alloc(e, col->size * sizeof(double));
		if (!col->real_frac || !col->synth_frac)
			return DP_FAILED;
		for (int k = 0; k < col->size; k++)
		{
			col->real_frac[k] = (double) e->count1[0][c][k] / (double) e->nrows[0];
			col->synth_frac[k] = (double) e->count1[1][c][k] / (double) e->nrows[1];
			tvd += fabs(col->real_frac[k] - col->synth_frac[k]);
		}
		col->tvd1 = 0.5 * tvd;
		sum += col->tvd1;
	}
	res->tvd1 = sum / e->ncols;
	return 0;
}

static int
run_pairs(dp_eval *e, dp_eval_result *res, ev_cells *m)
{
	int			d = e->ncols;
	double		sum = 0,
				csum = 0;

	for (int a = 0; a < d; a++)
		for (int b = a + 1; b < d; b++)
		{
			int			cols[2] = {a, b};
			double		tvd,
						dv;

			if (ev_cancelled(e))
				return DP_CANCELLED;
			if (marginal_cells(e, res, cols, 2, m) != 0)
				return DP_FAILED;
			tvd = cells_tvd(e, m);
			dv = fabs(cramers_v(e, res, a, b, m, 0) - cramers_v(e, res, a, b, m, 1));
			res->tvd2_pair[a * d + b] = res->tvd2_pair[b * d + a] = tvd;
			res->cols[a].tvd2 += tvd / (d - 1);
			res->cols[b].tvd2 += tvd / (d - 1);
			res->cols[a].corr_diff += dv / (d - 1);
			res->cols[b].corr_diff += dv / (d - 1);
			sum += tvd;
			csum += dv;
			res->npairs++;
		}
	res->tvd2 = res->npairs ? sum / res->npairs : 0;
	res->corr_diff = res->npairs ? csum / res->npairs : 0;
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* evaluate.py: all triples in itertools.combinations order, or 300 of them by rng.choice */
static int
run_triples(dp_eval *e, dp_eval_result *res, ev_cells *m, dp_pcg64 *rng)
{
	int			d = e->ncols;
	int64_t		all = (int64_t) d * (d - 1) * (d - 2) / 6,
				want = all > DP_EVAL_MAX_TRIPLES ? DP_EVAL_MAX_TRIPLES : all,
				idx = 0,
				next = 0;
	int64_t    *pick = ev_alloc(e, (size_t) (want + 1) * sizeof(int64_t));
	double		sum = 0;

	if (pick == NULL)
		return DP_FAILED;
	if (all > want)
	{
		if (!dp_pcg64_choice(rng, all, want, pick))
			return DP_FAILED;
		qsort(pick, want, sizeof(int64_t), cmp_i64);
	}
	else
		for (int64_t i = 0; i < want; i++)
			pick[i] = i;
	for (int a = 0; a < d && next < want; a++)
		for (int b = a + 1; b < d && next < want; b++)
			for (int c = b + 1; c < d && next < want; c++, idx++)
			{
				int			cols[3] = {a, b, c};

				if (idx != pick[next])
					continue;
				next++;
				if (ev_cancelled(e))
					return DP_CANCELLED;
				if (marginal_cells(e, res, cols, 3, m) != 0)
					return DP_FAILED;
				sum += cells_tvd(e, m);
			}
	res->ntriples = want;
	res->tvd3 = want ? sum / want : 0;
	ev_free(e, pick);
	return 0;
}

/* The fraction of table t's rows inside a box of code ranges. */
static double
box_fraction(const dp_eval *e, int t, const int64_t *cols, const int64_t *lo, const int64_t *hi, int k)
{
	int64_t		in = 0;

	for (int64_t r = 0; r < e->nrows[t]; r++)
	{
		bool		ok = true;

		for (int j = 0; j < k && ok; j++)
		{
			int32_t		v = e->codes[t][cols[j]][r];

			ok = v >= lo[j] && v <= hi[j];
		}
		in += ok;
	}
	return (double) in / (double) e->nrows[t];
}

static int
run_ranges(dp_eval *e, dp_eval_result *res, dp_pcg64 *rng)
{
	int			k = e->ncols < 3 ? e->ncols : 3;
	double		sum = 0;

	for (int q = 0; q < DP_EVAL_RANGE_QUERIES; q++)
	{
		int64_t		cols[3],
					lo[3],
					hi[3];

		if (q % 50 == 0 && ev_cancelled(e))
			return DP_CANCELLED;
		if (!dp_pcg64_choice(rng, e->ncols, k, cols))
			return DP_FAILED;
		for (int j = 0; j < k; j++)
		{
			int64_t		size = res->cols[cols[j]].size;

			lo[j] = dp_pcg64_integers(rng, 0, size);
			hi[j] = dp_pcg64_integers(rng, lo[j], size);
		}
		sum += fabs(box_fraction(e, 0, cols, lo, hi, k) - box_fraction(e, 1, cols, lo, hi, k));
	}
	res->nqueries = DP_EVAL_RANGE_QUERIES;
	res->range_error = sum / DP_EVAL_RANGE_QUERIES;
	return 0;
}

/* ---- exact copies: rows of table t equal (label by label) to some real row ---- */

static uint64_t
row_hash(const dp_eval *e, int t, int64_t r)
{
	uint64_t	h = 1469598103934665603ULL;

	for (int c = 0; c < e->ncols; c++)
		h = (h ^ (uint64_t) e->dicts[c].e[e->ids[t][c][r]].cid) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static bool
rows_equal(const dp_eval *e, int t, int64_t r, int64_t real_row)
{
	for (int c = 0; c < e->ncols; c++)
		if (e->dicts[c].e[e->ids[t][c][r]].cid != e->dicts[c].e[e->ids[0][c][real_row]].cid)
			return false;
	return true;
}

static int
copy_rates(dp_eval *e, dp_eval_result *res)
{
	uint64_t	ns = 16;
	int64_t    *slot;

	while (ns < 2 * (uint64_t) e->nrows[0])
		ns *= 2;
	if ((slot = ev_alloc(e, ns * sizeof(int64_t))) == NULL)
		return -1;
	memset(slot, 0xff, ns * sizeof(int64_t));
	for (int64_t r = 0; r < e->nrows[0]; r++)
	{
		uint64_t	j = row_hash(e, 0, r) & (ns - 1);

		while (slot[j] >= 0)
			j = (j + 1) & (ns - 1);
		slot[j] = r;
	}
	for (int t = 1; t < DP_EVAL_NTABLES; t++)
	{
		int64_t		copies = 0;

		for (int64_t r = 0; r < e->nrows[t]; r++)
			for (uint64_t j = row_hash(e, t, r) & (ns - 1); slot[j] >= 0; j = (j + 1) & (ns - 1))
				if (rows_equal(e, t, r, slot[j]))
				{
					copies++;
					break;
				}
		*(t == 1 ? &res->copy_rate : &res->copy_rate_holdout) =
			e->nrows[t] ? (double) copies / (double) e->nrows[t] : NAN;
	}
	ev_free(e, slot);
	return 0;
}

/* ---- the whole report ---- */

static int
run_marginals(dp_eval *e, dp_eval_result *res)
{
	dp_pcg64	rng;
	ev_cells	m;
	int			rc;

	m.cell = ev_alloc(e, (size_t) (e->nrows[0] + e->nrows[1] + 1) * sizeof(ev_cell));
	if (m.cell == NULL)
		return DP_FAILED;
	dp_pcg64_seed(&rng, DP_EVAL_SEED);
	if ((rc = run_one_way(e, res)) == 0 && (rc = run_pairs(e, res, &m)) == 0 &&
		(rc = run_triples(e, res, &m, &rng)) == 0)
		rc = run_ranges(e, res, &rng);
	ev_free(e, m.cell);
	return rc;
}

/* dp_eval_run's work: 0, DP_CANCELLED, or DP_FAILED (an empty table recorded by dp_fail here; an
 * allocation that failed by dp_eval_run).  The steps return the same codes. */
static int
eval_run(dp_eval *e, int target, dp_eval_result *res)
{
	int			rc;

	memset(res, 0, sizeof(*res));
	if (e->nrows[DP_EVAL_REAL] == 0 || e->nrows[DP_EVAL_SYNTH] == 0)
	{
		dp_fail(DP_ERR_INVALID, "the real or the synthetic table is empty");
		return DP_FAILED;
	}
	e->target = target;
	res->ncols = e->ncols;
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		res->rows[t] = e->nrows[t];
	res->cols = ev_zalloc(e, e->ncols * sizeof(dp_eval_column));
	res->tvd2_pair = ev_zalloc(e, (size_t) e->ncols * e->ncols * sizeof(double));
	if (!res->cols || !res->tvd2_pair)
		return DP_FAILED;
	for (int c = 0; c < e->ncols; c++)
		if (discretize(e, c, &res->cols[c]) != 0)
			return DP_FAILED;
	if (encode_tables(e, res) != 0)
		return DP_FAILED;
	if ((rc = run_marginals(e, res)) != 0)
		return rc;
	if (copy_rates(e, res) != 0)
		return DP_FAILED;
	if ((rc = ev_run_dcr(e, res)) != 0)
		return rc;
	return ev_run_ml(e, res);
}

int
dp_eval_run(dp_eval *e, int target, dp_eval_result *res)
{
	dp_clear_error();
	switch (eval_run(e, target, res))
	{
		case 0:
			return 0;
		case DP_CANCELLED:
			dp_fail(DP_ERR_CANCELLED, "the evaluation was cancelled by its progress callback");
			return DP_CANCELLED;
		default:
			/* kept only when no failure was recorded (dp_fail keeps the first) */
			dp_fail(DP_ERR_NOMEM, "could not allocate the evaluation's memory");
			return DP_FAILED;
	}
}

void
dp_eval_free(dp_eval *e)
{
	/* Everything came from the hooks; inside PostgreSQL the memory context goes as a whole.
	 * Outside, the unit tests free the big arrays (the small ones are left to the process). */
	for (int t = 0; t < DP_EVAL_NTABLES; t++)
		for (int c = 0; c < e->ncols; c++)
		{
			ev_free(e, e->ids[t][c]);
			if (e->codes[t])
				ev_free(e, e->codes[t][c]);
		}
}
