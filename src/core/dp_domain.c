/*
 * dp_domain.c - public domains and value encoding (see dp_domain.h).
 *
 * Privacy note: nothing here looks at more than one value at a time and nothing here can fail
 * on a value; the cell a value lands in is a deterministic function of the value and the
 * public domain, so a marginal over these codes has L1 sensitivity 1 under add/remove-one.
 */
#include "dp_domain.h"

#include <math.h>
#include <stdio.h>
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
	if (nlabels == 0 || nlabels + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
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

int
dp_domain_init_int_bins(dp_domain *d, int64_t lower, int64_t upper, uint32_t nbins, bool has_null_cell)
{
	memset(d, 0, sizeof(*d));
	if (lower >= upper || nbins == 0 || nbins + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
		return -1;
	/* the range must fit comfortably: bounds are declared within +/-2^53 */
	if (lower < -(INT64_C(1) << 53) || upper > (INT64_C(1) << 53))
		return -1;
	if ((uint64_t) (upper - lower) + 1 < nbins)
		return -1;
	d->kind = DP_DOMAIN_INT_BINS;
	d->nvalues = nbins;
	d->has_null_cell = has_null_cell;
	d->ilower = lower;
	d->iupper = upper;
	d->lower = (double) lower;
	d->upper = (double) upper;
	return 0;
}

int
dp_domain_init_real_bins(dp_domain *d, double lower, double upper, uint32_t nbins, bool has_null_cell)
{
	memset(d, 0, sizeof(*d));
	if (!isfinite(lower) || !isfinite(upper) || !(lower < upper) || !isfinite(upper - lower) ||
		nbins == 0 || nbins + (has_null_cell ? 1 : 0) > DP_MAX_CODES)
		return -1;
	d->kind = DP_DOMAIN_REAL_BINS;
	d->nvalues = nbins;
	d->has_null_cell = has_null_cell;
	d->lower = lower;
	d->upper = upper;
	return 0;
}

/*
 * Without a NULL cell, NULLs cannot occur (NOT NULL column); unplaceable values of such domains
 * are clamped instead, so code 0 is only a formal answer here.
 */
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

/*
 * Integer bins: the K = upper - lower + 1 integers are split into nbins runs whose lengths
 * differ by at most one: value v goes to floor((v - lower) * nbins / K).  Values outside
 * [lower, upper] are clamped to the first or last bin.
 */
dp_code
dp_encode_int(const dp_domain *d, int64_t v)
{
	if (d->kind == DP_DOMAIN_REAL_BINS)
		return dp_encode_real(d, (double) v);
	if (d->kind != DP_DOMAIN_INT_BINS)
		return dp_encode_null(d);
	if (v <= d->ilower)
		return 0;
	if (v >= d->iupper)
		return (dp_code) (d->nvalues - 1);
	{
		unsigned __int128 off = (unsigned __int128) (uint64_t) (v - d->ilower);
		uint64_t	k = (uint64_t) (d->iupper - d->ilower) + 1;

		return (dp_code) ((off * d->nvalues) / k);
	}
}

/* Real bins: equal width; NaN goes to the NULL cell, +/-Infinity and outliers are clamped. */
dp_code
dp_encode_real(const dp_domain *d, double x)
{
	double		pos;

	if (d->kind == DP_DOMAIN_INT_BINS)
	{
		if (isnan(x))
			return dp_encode_null(d);
		if (x <= d->lower)
			return 0;
		if (x >= d->upper)
			return (dp_code) (d->nvalues - 1);
		return dp_encode_int(d, (int64_t) floor(x));
	}
	if (d->kind != DP_DOMAIN_REAL_BINS || isnan(x))
		return dp_encode_null(d);
	if (x <= d->lower)
		return 0;
	if (x >= d->upper)
		return (dp_code) (d->nvalues - 1);
	pos = (x - d->lower) / (d->upper - d->lower) * d->nvalues;
	if (pos >= d->nvalues)
		return (dp_code) (d->nvalues - 1);
	return (dp_code) pos;
}

void
dp_int_bin_range(const dp_domain *d, uint32_t bin, int64_t *lo, int64_t *hi)
{
	uint64_t	k = (uint64_t) (d->iupper - d->ilower) + 1;

	/* smallest offset o with floor(o * nbins / K) == bin is ceil(bin * K / nbins) */
	*lo = d->ilower + (int64_t) (((unsigned __int128) bin * k + d->nvalues - 1) / d->nvalues);
	*hi = d->ilower + (int64_t) (((unsigned __int128) (bin + 1) * k + d->nvalues - 1) / d->nvalues) - 1;
}

void
dp_real_bin_range(const dp_domain *d, uint32_t bin, double *lo, double *hi)
{
	double		w = (d->upper - d->lower) / d->nvalues;

	*lo = d->lower + w * bin;
	*hi = bin + 1 == d->nvalues ? d->upper : d->lower + w * (bin + 1);
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
				snprintf(buf, size, "[%.15g,%.15g%c", lo, hi, (uint32_t) code + 1 == d->nvalues ? ']' : ')');
				break;
			}
	}
	return true;
}
