/*
 * dp_eval_internal.h - what dp_eval.c (data, discretization, marginals) shares with dp_eval_ml.c
 * (logistic regression, distances); not part of the core's interface.
 */
#ifndef DP_EVAL_INTERNAL_H
#define DP_EVAL_INTERNAL_H

#include "dp_eval.h"

#include <string.h>

/* One distinct (stripped) text of a column, shared by the three tables. */
typedef struct ev_entry
{
	char	   *s;
	uint64_t	hash;
	int64_t		count[DP_EVAL_NTABLES];
	bool		missing;
	bool		num_ok;			/* pandas.to_numeric parses it (not NaN) */
	double		num;
	char	   *canon;			/* evaluate.py's canonical label; "" for missing */
	int32_t		code;			/* in the discretization */
	int32_t		cid;			/* class of equal canonical labels (exact copies) */
} ev_entry;

typedef struct ev_dict
{
	ev_entry   *e;
	int32_t		n,
				cap;
	int32_t    *slots;			/* open addressing, -1 empty */
	uint32_t	nslots;			/* a power of two */
} ev_dict;

struct dp_eval
{
	dp_eval_hooks h;
	int			ncols;
	char	  **names;
	ev_dict    *dicts;
	uint32_t  **ids[DP_EVAL_NTABLES];	/* [table][column][row] */
	int64_t		nrows[DP_EVAL_NTABLES],
				cap[DP_EVAL_NTABLES];
	int32_t   **codes[DP_EVAL_NTABLES]; /* after the discretization */
	int64_t   **count1[DP_EVAL_NTABLES];	/* [table][column][code] */
	double	   *mean,
			   *sd;				/* numeric columns: real mean and sd, for distances */
	int			target;
};

/*
 * Memory through dp_env.h's handlers and cancellation through the caller's hooks, shared by both
 * files (inline, so that
 * dp_eval_ml.c depends on this header only and the two files do not call each other).
 */
static inline void *
ev_alloc(const dp_eval *e, size_t n)
{
	(void) e;
	return dp_alloc(n ? n : 1);
}

static inline void *
ev_zalloc(const dp_eval *e, size_t n)
{
	void	   *p = ev_alloc(e, n);

	if (p)
		memset(p, 0, n ? n : 1);
	return p;
}

static inline void
ev_free(const dp_eval *e, void *p)
{
	(void) e;
	dp_free(p);
}

static inline bool
ev_cancelled(const dp_eval *e)
{
	return dp_report(e->h.progress, e->h.progress_arg, DP_PHASE_NONE, 0, 0, -1) != 0;
}

/* dp_eval_ml.c: returns 0, DP_FAILED (out of memory) or DP_CANCELLED (dp_env.h) */
extern int	ev_run_ml(dp_eval *e, dp_eval_result *res);
extern int	ev_run_dcr(dp_eval *e, dp_eval_result *res);

#endif
