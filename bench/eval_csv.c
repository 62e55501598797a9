/*
 * eval_csv.c - the owner's quality report (src/core/dp_eval.c) on CSV files, without a server,
 * printed like ../shared/tools/evaluate.py so the two can be compared on any dataset:
 *   bench/bin/eval_csv REAL.csv SYNTH.csv [TEST.csv TARGET]
 * CSV: a header, commas, double quotes around fields that need them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_eval.h"

#define MAXCOLS 512

/* Splits one line in place into at most MAXCOLS fields; returns their number. */
static int
split_csv(char *line, char **f)
{
	int			n = 0;
	char	   *p = line,
			   *w;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < MAXCOLS)
	{
		f[n++] = w = p;
		if (*p == '"')
		{
			for (p++; *p; p++)
			{
				if (*p == '"' && p[1] == '"')
					*w++ = *p++;
				else if (*p == '"')
				{
					p++;
					break;
				}
				else
					*w++ = *p;
			}
		}
		else
			while (*p && *p != ',')
				*w++ = *p++;
		if (*p != ',')
		{
			*w = '\0';
			break;
		}
		*w = '\0';
		p++;
	}
	return n;
}

static char *hdr_buf;
static char *header[MAXCOLS];
static int	ncols;

/* Reads a CSV into table t, its columns matched to the first file's header by name. */
static void
load(dp_eval *e, const char *path, int t)
{
	FILE	   *fp = fopen(path, "r");
	char	   *line = NULL;
	size_t		cap = 0;
	char	   *f[MAXCOLS];
	int			map[MAXCOLS],
				n;

	if (fp == NULL || getline(&line, &cap, fp) < 0)
	{
		perror(path);
		exit(2);
	}
	n = split_csv(line, f);
	for (int c = 0; c < ncols; c++)
	{
		map[c] = -1;
		for (int j = 0; j < n; j++)
			if (strcmp(f[j], header[c]) == 0)
				map[c] = j;
	}
	while (getline(&line, &cap, fp) >= 0)
	{
		const char *cells[MAXCOLS];
		int			m = split_csv(line, f);

		for (int c = 0; c < ncols; c++)
			cells[c] = map[c] >= 0 && map[c] < m ? f[map[c]] : "";
		if (dp_eval_add_row(e, t, cells) != 0)
			exit(3);
	}
	free(line);
	fclose(fp);
}

int
main(int argc, char **argv)
{
	FILE	   *fp;
	size_t		cap = 0;
	dp_eval    *e;
	dp_eval_result r;
	int			target = -1,
				rc;

	if (argc != 3 && argc != 5)
	{
		fprintf(stderr, "usage: %s REAL.csv SYNTH.csv [TEST.csv TARGET]\n", argv[0]);
		return 2;
	}
	if ((fp = fopen(argv[1], "r")) == NULL || getline(&hdr_buf, &cap, fp) < 0)
		return 2;
	fclose(fp);
	ncols = split_csv(hdr_buf, header);
	e = dp_eval_create(ncols, (const char *const *) header, NULL);
	load(e, argv[1], DP_EVAL_REAL);
	load(e, argv[2], DP_EVAL_SYNTH);
	if (argc == 5)
	{
		load(e, argv[3], DP_EVAL_HOLDOUT);
		for (int c = 0; c < ncols; c++)
			if (strcmp(header[c], argv[4]) == 0)
				target = c;
	}
	if ((rc = dp_eval_run(e, target, &r)) != 0)
	{
		fprintf(stderr, "dp_eval_run: %d\n", rc);
		return 1;
	}
	printf("rows_real=%lld rows_synth=%lld tvd1=%.4f tvd2=%.4f tvd3=%.4f range=%.4f corr=%.4f",
		   (long long) r.rows[0], (long long) r.rows[1], r.tvd1, r.tvd2, r.tvd3, r.range_error, r.corr_diff);
	if (r.ml_ran)
		printf(" tstr_acc=%.4f tstr_auc=%.4f trtr_acc=%.4f trtr_auc=%.4f",
			   r.tstr_acc, r.tstr_auc, r.trtr_acc, r.trtr_auc);
	printf(" copy=%.4f copy_holdout=%.4f dcr_p5=%.4f dcr_p5_holdout=%.4f\n",
		   r.copy_rate, r.copy_rate_holdout, r.dcr_p5, r.dcr_p5_holdout);
	printf("tvd1_full=%.17g tvd2_full=%.17g tvd3_full=%.17g range_full=%.17g\n", r.tvd1, r.tvd2, r.tvd3, r.range_error);
	if (getenv("EVAL_COLUMNS"))
		for (int c = 0; c < r.ncols; c++)
			printf("%s %d %.17g %s\n", r.cols[c].name, r.cols[c].size, r.cols[c].tvd1,
				   r.cols[c].numeric ? "True" : "False");
	dp_eval_free(e);
	return 0;
}
