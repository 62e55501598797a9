/*
 * adult_data.h - the bundled UCI Adult table (data/adult) encoded with its public domain.json, for
 * unit tests and benchmarks: categorical columns get one code per documented value plus one for
 * NULL / unknown, integer columns one code per value up to 32 values, else 32 equal-width bins.
 * argv0 (the program's path) must be set before find_data is called.
 */
#ifndef ADULT_DATA_H
#define ADULT_DATA_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_codes.h"
#include "dp_marg.h"

static const char *argv0 = "";

#define ADULT_COLS 15
#define MAX_BINS 32

typedef struct acol
{
	char		name[64];
	bool		categorical;
	long		lower,
				upper;
	uint32_t	nbins;
	char		values[64][64];
	uint32_t	nvalues;
	uint32_t	size;
} acol;

static char *
slurp(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	long		len;
	char	   *buf;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t) len + 1);
	if (fread(buf, 1, (size_t) len, f) != (size_t) len)
	{
		free(buf);
		fclose(f);
		return NULL;
	}
	buf[len] = 0;
	fclose(f);
	return buf;
}

static char *
find_data(const char *file)
{
	char		path[4096];
	const char *slash = strrchr(argv0, '/');
	char	   *s;

	/* test/unit/bin/test_gum -> ../../../data/adult */
	if (slash)
	{
		snprintf(path, sizeof(path), "%.*s/../../../data/adult/%s", (int) (slash - argv0), argv0, file);
		if ((s = slurp(path)) != NULL)
			return s;
	}
	snprintf(path, sizeof(path), "data/adult/%s", file);
	return slurp(path);
}

/* the domain of one column from domain.json (one column per line, as bundled) */
static bool
parse_domain(const char *json, acol *c)
{
	char		key[80];
	const char *p,
			   *eol,
			   *q;

	snprintf(key, sizeof(key), "\"%s\":", c->name);
	p = strstr(json, key);
	if (p == NULL)
		return false;
	eol = strchr(p, '\n');
	if (eol == NULL)
		eol = p + strlen(p);
	c->categorical = (q = strstr(p, "\"categorical\"")) != NULL && q < eol;
	if (c->categorical)
	{
		q = strstr(p, "\"values\"");
		if (q == NULL || q > eol)
			return false;
		q = strchr(q, '[');
		c->nvalues = 0;
		while (q && q < eol && *q != ']')
		{
			const char *a = strchr(q, '"'),
					   *b;

			if (a == NULL || a > eol)
				break;
			b = strchr(a + 1, '"');
			snprintf(c->values[c->nvalues++], 64, "%.*s", (int) (b - a - 1), a + 1);
			q = b + 1;
			while (*q == ',' || *q == ' ')
				q++;
		}
		c->size = c->nvalues + 1;	/* + NULL / unknown */
	}
	else
	{
		q = strstr(p, "\"lower\":");
		if (q == NULL || q > eol)
			return false;
		c->lower = strtol(q + 8, NULL, 10);
		q = strstr(p, "\"upper\":");
		if (q == NULL || q > eol)
			return false;
		c->upper = strtol(q + 8, NULL, 10);
		c->nbins = (uint32_t) (c->upper - c->lower + 1 < MAX_BINS ? c->upper - c->lower + 1 : MAX_BINS);
		c->size = c->nbins;
	}
	return true;
}

static uint16_t
encode(const acol *c, const char *v)
{
	if (c->categorical)
	{
		for (uint32_t i = 0; i < c->nvalues; i++)
			if (strcmp(v, c->values[i]) == 0)
				return (uint16_t) i;
		return (uint16_t) c->nvalues;
	}
	else
	{
		long		x = strtol(v, NULL, 10);
		double		w = (double) (c->upper - c->lower + 1) / c->nbins;
		long		b;

		if (x < c->lower)
			x = c->lower;
		if (x > c->upper)
			x = c->upper;
		b = (long) floor((double) (x - c->lower) / w);
		if (b >= (long) c->nbins)
			b = c->nbins - 1;
		return (uint16_t) b;
	}
}

/* encode() as csv_append_rows calls it: column j of the acol array cols */
static uint16_t __attribute__((unused))
encode_acol(const void *cols, uint32_t j, const char *v)
{
	return encode(&((const acol *) cols)[j], v);
}

/*
 * The CSV lines left in strtok_r's state *save (the header read), each split at its commas into
 * t->ncols fields, encoded by enc(cols, j, field) and appended to t, until maxrows rows.
 */
static void __attribute__((unused))
csv_append_rows(dp_codes *t, char **save, uint64_t maxrows,
				uint16_t (*enc) (const void *cols, uint32_t j, const char *v), const void *cols)
{
	char	   *line;

	while (t->nrows < maxrows && (line = strtok_r(NULL, "\n", save)) != NULL)
	{
		uint16_t	row[64];	/* ncols <= 64 */
		char	   *p = line;

		for (uint32_t j = 0; j < t->ncols; j++)
		{
			char	   *comma = strchr(p, ',');

			if (comma)
				*comma = 0;
			row[j] = enc(cols, j, p);
			p = comma ? comma + 1 : p + strlen(p);
		}
		dp_codes_append(t, row);
	}
}

/* loads Adult into t (at most maxrows rows); returns false if the files are missing */
static bool
load_adult(dp_codes *t, acol *cols, uint32_t *sizes, uint64_t maxrows)
{
	char	   *csv = find_data("adult_train.csv"),
			   *json = find_data("domain.json"),
			   *line,
			   *save = NULL;
	uint32_t	nc = 0;
	bool		ok = true;

	if (csv == NULL || json == NULL)
	{
		free(csv);
		free(json);
		return false;
	}
	line = strtok_r(csv, "\n", &save);
	/* header */
	{
		char	   *f,
				   *s2 = NULL;

		for (f = strtok_r(line, ",", &s2); f && nc < ADULT_COLS; f = strtok_r(NULL, ",", &s2))
		{
			memset(&cols[nc], 0, sizeof(acol));
			snprintf(cols[nc].name, sizeof(cols[nc].name), "%s", f);
			ok &= parse_domain(json, &cols[nc]);
			sizes[nc] = cols[nc].size;
			nc++;
		}
	}
	ok &= nc == ADULT_COLS;
	dp_codes_init(t, ADULT_COLS, 40000);
	if (ok)
		csv_append_rows(t, &save, maxrows, encode_acol, cols);
	free(csv);
	free(json);
	return ok;
}

/* Mean over all pairs of columns of the TVD (half the normalised L1) between a's and b's pair
 * marginals (tables over the same columns and sizes). */
static double __attribute__((unused))
mean_tvd2(const dp_codes *a, const dp_codes *b, const uint32_t *sizes)
{
	double		sum = 0;
	uint32_t	npairs = 0;

	for (uint32_t i = 0; i < a->ncols; i++)
		for (uint32_t j = i + 1; j < a->ncols; j++)
		{
			uint32_t	attrs[2] = {i, j};
			dp_marg		ma,
						mb;

			dp_marg_init(&ma, 2, attrs, sizes);
			dp_marg_init(&mb, 2, attrs, sizes);
			dp_marg_count(&ma, a);
			dp_marg_count(&mb, b);
			sum += dp_marg_l1(&ma, &mb, true) / 2;
			npairs++;
			dp_marg_free(&ma);
			dp_marg_free(&mb);
		}
	return npairs ? sum / npairs : 0;
}

#endif							/* ADULT_DATA_H */
