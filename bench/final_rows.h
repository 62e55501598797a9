/*
 * final_rows.h - what bench/final_draw.c, bench/final_warm.c and bench/final_1m.c measure of a
 * draw of Adult's tiled rows: the mean 2-way TVD over every pair and the mean 3-way TVD over 80
 * fixed triples against the real rows (over the codes); the CPU seconds are rows_hash.h's.  A
 * bench header, not part of the extension.
 */
#ifndef BENCH_FINAL_ROWS_H
#define BENCH_FINAL_ROWS_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dp_codes.h"
#include "../test/unit/adult_data.h"
#include "rows_hash.h"

static inline double
tvd_k(const dp_codes *a, const dp_codes *b, const uint32_t *sizes, const uint32_t *c, int k)
{
	uint64_t	cells = 1;
	double	   *pa,
			   *pb,
				s = 0;

	for (int i = 0; i < k; i++)
		cells *= sizes[c[i]];
	pa = calloc(cells, sizeof(double));
	pb = calloc(cells, sizeof(double));
	for (uint64_t i = 0; i < a->nrows; i++)
	{
		uint64_t	x = 0;

		for (int t = 0; t < k; t++)
			x = x * sizes[c[t]] + a->col[c[t]][i];
		pa[x] += 1.0 / a->nrows;
	}
	for (uint64_t i = 0; i < b->nrows; i++)
	{
		uint64_t	x = 0;

		for (int t = 0; t < k; t++)
			x = x * sizes[c[t]] + b->col[c[t]][i];
		pb[x] += 1.0 / b->nrows;
	}
	for (uint64_t x = 0; x < cells; x++)
		s += fabs(pa[x] - pb[x]);
	free(pa);
	free(pb);
	return s / 2;
}

/* The mean 2-way TVD over every pair of columns and the mean 3-way TVD over 80 fixed triples. */
static inline void
final_tvds(const dp_codes *real, const dp_codes *syn, const uint32_t *sizes, double *t2, double *t3)
{
	int			n2 = 0;
	uint64_t	s = 12345;

	*t2 = *t3 = 0;
	for (uint32_t a = 0; a < ADULT_COLS; a++)
		for (uint32_t b = a + 1; b < ADULT_COLS; b++)
		{
			uint32_t	c[2] = {a, b};

			*t2 += tvd_k(real, syn, sizes, c, 2);
			n2++;
		}
	for (int i = 0; i < 80; i++)
	{
		uint32_t	c[3];

		do
		{
			for (int t = 0; t < 3; t++)
			{
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				c[t] = (uint32_t) ((s >> 33) % ADULT_COLS);
			}
		} while (c[0] == c[1] || c[1] == c[2] || c[0] == c[2]);
		*t3 += tvd_k(real, syn, sizes, c, 3);
	}
	*t2 /= n2;
	*t3 /= 80;
}

static inline void
report(const char *what, const dp_codes *real, const dp_codes *syn, const uint32_t *sizes, double secs)
{
	double		t2,
				t3;

	final_tvds(real, syn, sizes, &t2, &t3);
	printf("  %-44s tvd2 %.4f  tvd3 %.4f  cpu %.2f s\n", what, t2, t3, secs);
	fflush(stdout);
}

/*
 * A draw's GUM iterations as its progress callback sees them: clock() and the mean L1 error at
 * each iteration's end (dp_gum_params.progress = iter_log_progress, progress_arg = the log; set
 * n to 0 before each draw).  gum_only: only the final GUM's iterations (DP_PHASE_GUM), not those of
 * other phases' progress.
 */
typedef struct iter_log
{
	double		(*clock) (void);
	bool		gum_only;
	uint32_t	n;
	double		cpu[64],
				err[64];
} iter_log;

static int __attribute__((unused))
iter_log_progress(void *arg, const dp_progress *p)
{
	iter_log   *l = arg;

	if ((!l->gum_only || p->phase == DP_PHASE_GUM) && p->err >= 0 && l->n < 64)
	{
		l->err[l->n] = p->err;
		l->cpu[l->n++] = l->clock();
	}
	return 0;
}

#endif
