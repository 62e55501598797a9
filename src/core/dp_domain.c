/*
 * dp_domain.c - public domains and value encoding (see dp_domain.h).
 *
 * Privacy note: nothing here looks at more than one value at a time and nothing here can fail
 * on a value; the cell a value lands in is a deterministic function of the value and the
 * public domain, so a marginal over these codes has L1 sensitivity 1 under add/remove-one.
 */
#include "dp_domain.h"
#include "dp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64-bit: simple, good enough for a table of public labels. */
static uint64_t
hash_bytes(const char *s, size_t len)
{
	uint64_t	h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++)
	{
		h ^= (unsigned char) s[i];
		h *= UINT64_C(1099511628211);
	}
	return h;
}

uint32_t
dp_catmap_slots_needed(uint32_t nlabels)
{
	uint32_t	n = 8;

	while (n < 2 * nlabels)		/* load factor at most 1/2 */
		n <<= 1;
	return n;
}

int32_t
dp_catmap_lookup(const dp_catmap *m, const char *s, size_t len)
{
	uint32_t	mask = m->nslots - 1;
	uint32_t	i = (uint32_t) hash_bytes(s, len) & mask;

	for (;;)
	{
		int32_t		k = m->slots[i];

		if (k < 0)
			return -1;
		if (m->lens[k] == len && memcmp(m->labels[k], s, len) == 0)
			return k;
		i = (i + 1) & mask;
	}
}

int
dp_domain_init_categories(dp_domain *d, const char **labels, uint32_t *lens, uint32_t nlabels,
						  int32_t *slots, bool has_null_cell)
{
	dp_catmap  *m = &d->map;

	memset(d, 0, sizeof(*d));
	/* no categories at all is allowed when the NULL/other cell exists (a DP selection may release none) */
	if (nlabels + (has_null_cell ? 1 : 0) == 0 || nlabels + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
		return -1;
	d->kind = DP_DOMAIN_CATEGORIES;
	d->nvalues = nlabels;
	d->has_null_cell = has_null_cell;
	m->nslots = dp_catmap_slots_needed(nlabels);
	m->slots = slots;
	m->labels = labels;
	m->lens = lens;
	m->nlabels = nlabels;
	for (uint32_t i = 0; i < m->nslots; i++)
		slots[i] = -1;
	for (uint32_t k = 0; k < nlabels; k++)
	{
		uint32_t	mask = m->nslots - 1;
		uint32_t	i = (uint32_t) hash_bytes(labels[k], lens[k]) & mask;

		while (slots[i] >= 0)
		{
			int32_t		o = slots[i];

			if (lens[o] == lens[k] && memcmp(labels[o], labels[k], lens[k]) == 0)
				return -1;		/* duplicate label */
			i = (i + 1) & mask;
		}
		slots[i] = (int32_t) k;
	}
	return 0;
}

#define DP_INT_EDGE_LIMIT (INT64_C(1) << 62)

int
dp_domain_init_int_edges(dp_domain *d, const int64_t *edges, uint32_t nbins, bool has_null_cell)
{
	memset(d, 0, sizeof(*d));
	if (nbins == 0 || nbins + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
		return -1;
	for (uint32_t i = 0; i <= nbins; i++)
	{
		if (edges[i] < -DP_INT_EDGE_LIMIT || edges[i] > DP_INT_EDGE_LIMIT)
			return -1;
		if (i > 0 && edges[i] <= edges[i - 1])
			return -1;
	}
	d->kind = DP_DOMAIN_INT_BINS;
	d->nvalues = nbins;
	d->has_null_cell = has_null_cell;
	d->iedges = edges;
	return 0;
}

int
dp_domain_init_real_edges(dp_domain *d, const double *edges, uint32_t nbins, bool has_null_cell)
{
	memset(d, 0, sizeof(*d));
	if (nbins == 0 || nbins + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
		return -1;
	for (uint32_t i = 0; i <= nbins; i++)
	{
		if (!isfinite(edges[i]))
			return -1;
		if (i > 0 && !(edges[i] > edges[i - 1]))
			return -1;
	}
	d->kind = DP_DOMAIN_REAL_BINS;
	d->nvalues = nbins;
	d->has_null_cell = has_null_cell;
	d->edges = edges;
	return 0;
}

/*
 * K = upper - lower + 1 integers in nbins runs: value v goes to floor((v - lower) * nbins / K),
 * so run i starts at lower + ceil(i * K / nbins).
 */
int
dp_int_equal_edges(int64_t lower, int64_t upper, uint32_t nbins, int64_t *out)
{
	uint64_t	k;

	if (lower >= upper || nbins == 0 || lower < -DP_INT_EDGE_LIMIT || upper >= DP_INT_EDGE_LIMIT)
		return -1;
	k = (uint64_t) (upper - lower) + 1;
	if (k < nbins)
		return -1;
	/*
	 * k can be 2^63 (lower = -LIMIT, upper = LIMIT - 1), so the offset ceil(i * k / nbins) does
	 * not fit in int64 for i = nbins: add it in unsigned arithmetic; the sum is at most upper + 1.
	 */
	for (uint32_t i = 0; i <= nbins; i++)
		out[i] = (int64_t) ((uint64_t) lower +
							(uint64_t) (((unsigned __int128) i * k + nbins - 1) / nbins));
	return 0;
}

int
dp_real_equal_edges(double lower, double upper, uint32_t nbins, double *out)
{
	if (!isfinite(lower) || !isfinite(upper) || !(lower < upper) || !isfinite(upper - lower) || nbins == 0)
		return -1;
	for (uint32_t i = 0; i < nbins; i++)
		out[i] = lower + (upper - lower) * ((double) i / nbins);
	out[nbins] = upper;
	for (uint32_t i = 1; i <= nbins; i++)
		if (!(out[i] > out[i - 1]))
			return -1;			/* range too narrow for this many bins in double precision */
	return 0;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* Sorted union without duplicates, in place; returns the new length. */
static uint32_t
unique_int64(int64_t *a, uint32_t n)
{
	uint32_t	m = 0;

	qsort(a, n, sizeof(int64_t), cmp_int64);
	for (uint32_t i = 0; i < n; i++)
		if (m == 0 || a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}

static uint32_t
unique_double(double *a, uint32_t n)
{
	uint32_t	m = 0;

	qsort(a, n, sizeof(double), dp_cmp_double);
	for (uint32_t i = 0; i < n; i++)
		if (m == 0 || a[i] != a[m - 1])
			a[m++] = a[i];
	return m;
}

uint32_t
dp_int_edges_with_points(const int64_t *edges, uint32_t nedges, const int64_t *points, uint32_t npoints,
						 int64_t *out)
{
	uint32_t	n = 0;
	int64_t		first = edges[0],
				last = edges[nedges - 1];	/* one past the upper bound */

	for (uint32_t i = 0; i < nedges; i++)
		out[n++] = edges[i];
	for (uint32_t i = 0; i < npoints; i++)
		if (points[i] >= first && points[i] < last)
		{
			out[n++] = points[i];
			out[n++] = points[i] + 1;
		}
	return unique_int64(out, n);
}

uint32_t
dp_real_edges_with_points(const double *edges, uint32_t nedges, const double *points, uint32_t npoints,
						  double *out)
{
	uint32_t	n = 0;
	double		first = edges[0],
				last = edges[nedges - 1];
	bool		last_is_point = false;

	for (uint32_t i = 0; i < nedges; i++)
		out[n++] = edges[i];
	for (uint32_t i = 0; i < npoints; i++)
		if (points[i] >= first && points[i] <= last)
		{
			out[n++] = points[i];
			if (points[i] < last)
				out[n++] = nextafter(points[i], INFINITY);
			else
				last_is_point = true;
		}
	n = unique_double(out, n);
	/*
	 * A point mass at the (closed) upper bound: the last bin must be [last, last].  Move the
	 * previous edge just below it so the last bin holds that one value.
	 */
	if (last_is_point && n >= 2 && out[n - 2] < nextafter(last, -INFINITY))
	{
		out[n - 1] = nextafter(last, -INFINITY);
		out[n++] = last;
	}
	return n;
}

/* Unplaceable values of a domain without a NULL cell are clamped, so code 0 is a formal answer. */
dp_code
dp_encode_null(const dp_domain *d)
{
	return d->has_null_cell ? dp_domain_null_code(d) : 0;
}

dp_code
dp_encode_label(const dp_domain *d, const char *s, size_t len)
{
	int32_t		k = d->kind == DP_DOMAIN_CATEGORIES ? dp_catmap_lookup(&d->map, s, len) : -1;

	return k >= 0 ? (dp_code) k : dp_encode_null(d);
}

/* Largest i < n with e[i] <= v, for e[0] <= v. */
static uint32_t
find_int_bin(const int64_t *e, uint32_t n, int64_t v)
{
	uint32_t	lo = 0,
				hi = n;			/* answer in [lo, hi) */

	while (hi - lo > 1)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (e[mid] <= v)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t
find_real_bin(const double *e, uint32_t n, double x)
{
	uint32_t	lo = 0,
				hi = n;

	while (hi - lo > 1)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (e[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Integers: clamped into [first edge, last edge - 1], then the bin whose run holds them. */
dp_code
dp_encode_int(const dp_domain *d, int64_t v)
{
	if (d->kind == DP_DOMAIN_REAL_BINS)
		return dp_encode_real(d, (double) v);
	if (d->kind != DP_DOMAIN_INT_BINS)
		return dp_encode_null(d);
	if (v <= d->iedges[0])
		return 0;
	if (v >= d->iedges[d->nvalues] - 1)
		return (dp_code) (d->nvalues - 1);
	return (dp_code) find_int_bin(d->iedges, d->nvalues, v);
}

/* Reals: NaN goes to the NULL cell; +/-Infinity and outliers are clamped to the end bins. */
dp_code
dp_encode_real(const dp_domain *d, double x)
{
	if (isnan(x))
		return dp_encode_null(d);
	if (d->kind == DP_DOMAIN_INT_BINS)
	{
		if (x <= (double) d->iedges[0])
			return 0;
		if (x >= (double) (d->iedges[d->nvalues] - 1))
			return (dp_code) (d->nvalues - 1);
		return dp_encode_int(d, (int64_t) floor(x));
	}
	if (d->kind != DP_DOMAIN_REAL_BINS)
		return dp_encode_null(d);
	if (x <= d->edges[0])
		return 0;
	if (x >= d->edges[d->nvalues])
		return (dp_code) (d->nvalues - 1);
	return (dp_code) find_real_bin(d->edges, d->nvalues, x);
}

void
dp_int_bin_range(const dp_domain *d, uint32_t bin, int64_t *lo, int64_t *hi)
{
	*lo = d->iedges[bin];
	*hi = d->iedges[bin + 1] - 1;
}

void
dp_real_bin_range(const dp_domain *d, uint32_t bin, double *lo, double *hi)
{
	*lo = d->edges[bin];
	*hi = d->edges[bin + 1];
}

bool
dp_code_label(const dp_domain *d, dp_code code, char *buf, size_t size)
{
	if (size == 0)
		return code < d->nvalues;
	buf[0] = '\0';
	if (code >= d->nvalues)
		return false;
	switch (d->kind)
	{
		case DP_DOMAIN_CATEGORIES:
			{
				size_t		n = d->map.lens[code] < size - 1 ? d->map.lens[code] : size - 1;

				memcpy(buf, d->map.labels[code], n);
				buf[n] = '\0';
				break;
			}
		case DP_DOMAIN_INT_BINS:
			{
				int64_t		lo,
							hi;

				dp_int_bin_range(d, code, &lo, &hi);
				if (lo == hi)
					snprintf(buf, size, "%lld", (long long) lo);
				else
					snprintf(buf, size, "[%lld,%lld]", (long long) lo, (long long) hi);
				break;
			}
		case DP_DOMAIN_REAL_BINS:
			{
				double		lo,
							hi;

				dp_real_bin_range(d, code, &lo, &hi);
				if (hi == nextafter(lo, INFINITY))
					snprintf(buf, size, "%.17g", lo);	/* a point mass */
				else if (code > 0 && lo == nextafter(d->edges[code - 1], INFINITY))
					/* right after a point mass p: the bin is (p, hi) */
					snprintf(buf, size, "(%.15g,%.15g%c", d->edges[code - 1], hi,
							 (uint32_t) code + 1 == d->nvalues ? ']' : ')');
				else
					snprintf(buf, size, "[%.15g,%.15g%c", lo, hi, (uint32_t) code + 1 == d->nvalues ? ']' : ')');
				break;
			}
	}
	return true;
}
