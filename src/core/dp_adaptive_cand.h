/*
 * dp_adaptive_cand.h - private to the adaptive method (dp_adaptive.c, dp_adaptive_cand.c): its
 * candidate marginals, their exact counts (threaded, laned or from bit sets), the triple
 * candidates and the counts from elsewhere.  Not part of the core's interface.
 */
#ifndef DP_ADAPTIVE_CAND_H
#define DP_ADAPTIVE_CAND_H

#include <stdbool.h>
#include <stdint.h>

#include "dp_adaptive.h"

/* a round's scoring (candidates x estimate rows) is split over threads from this much work on */
#define SCORE_THREAD_WORK	((uint64_t) 1 << 21)

typedef struct Cand
{
	uint32_t	nattrs;
	uint32_t	attrs[3];
	uint64_t	cells;
	uint64_t	offset;			/* into the exact counts */
	int32_t		meas;			/* index of its measurement in margs, -1 if none */
	uint32_t	twin;			/* a coarse candidate's fine pair (its index in cand) */
	bool		coarse;			/* a pair at its ordered columns' runs (dpa_coarse_*) */
	uint32_t	sib;			/* a fine candidate's coarse twin (its index in cand), 0: none */
} Cand;

/*
 * The runs of the adaptive method's ordered columns (dp_adaptive.h, step 2): a column whose
 * merged ordered codes are more than its pair resolution is offered in pairs at both resolutions,
 * its merged codes and runs of consecutive ones of about equal released one-way mass.  The model
 * keeps the merged codes: a coarse pair's measurement is spread over its fine cells by the shares.
 * Post-processing of the released one-way counts, the rare-value threshold and public sizes.
 */
typedef struct Coarse
{
	uint32_t	d;
	uint16_t  **run;			/* per column: merged code -> its run; NULL: not coarsened */
	uint32_t   *size;			/* per column: its runs (its merged size where not coarsened) */
	double	  **share;			/* per column: a merged code's share of its run's released mass */
} Coarse;

/*
 * Candidates of at most LANE_CELLS cells are counted in LANES interleaved histograms: rows in a row
 * often fall in the same cell of a small marginal, and one histogram would chain every increment
 * on the previous store.  Same integer counts, several times faster on small marginals.
 */
#define LANES 4
#define LANE_CELLS 4096

/* The estimate's bit sets (dp_adaptive_cand.c says how they count). */
typedef struct Bits
{
	uint64_t	rows;			/* of the table they were allocated for */
	uint64_t	words;			/* per code: ceil(rows / 64) */
	uint64_t   *off;			/* per column: its code 0's first word, or UINT64_MAX (none) */
	uint64_t   *w;				/* the bits */
	uint64_t	nw;				/* words allocated */
	bool		vpopcnt;		/* counted eight words an instruction (decided once, at allocation) */
} Bits;

/* The triple candidates (dp_adaptive.h, step 2c; dpa_add_triples). */
typedef struct Triples
{
	uint8_t    *pair_measured;	/* d x d */
	uint32_t	n,				/* cand[ncand - n ..]: the triples */
				max;
	uint64_t	cap;			/* cells allocated in counts */
} Triples;

extern int	dpa_cmp_cells(const void *a, const void *b);
extern uint64_t dpa_median_pair_cells(const Cand *cand, uint32_t ncand);
extern bool dpa_have_popcnt(void);
extern void dpa_bits_fill(Bits *bits, const dp_codes *t, const uint32_t *sizes);
extern int	dpa_bits_alloc(Bits *bits, uint32_t d, const uint32_t *sizes, uint64_t m);
extern void dpa_count_cands(const Cand *cand, uint32_t r0, uint32_t r1, uint32_t *counts, const dp_codes *t,
							const uint32_t *sizes, uint32_t *const *lanes, uint32_t nthreads);
extern void dpa_est_counts(const Cand *cd, const dp_codes *synth, const Bits *bits, const uint32_t *sizes,
						   double total, double *y, uint32_t *cnt, uint32_t *lane);
extern int	dpa_add_triples(Triples *tr, uint32_t d, uint32_t a, uint32_t b, Cand *cand, uint32_t *ncand,
							uint32_t **counts, uint64_t *totcells, const uint32_t *sizes);
extern bool dpa_extra_consistent(const dp_extra_counts *ex, uint32_t d, const uint32_t *sizes);
extern void dpa_add_extra(const dp_extra_counts *ex, const Cand *cand, uint32_t ncand, uint32_t *counts,
						  uint32_t d, const uint32_t *sizes, const dp_privsyn_result *out);

extern uint32_t dpa_coarse_runs(const double *mass, uint32_t size, uint32_t m, uint32_t groups, uint16_t *run);
extern int	dpa_coarse_shares(const double *mass, uint32_t size, const uint16_t *run, uint32_t nruns, double *share);
extern void dpa_coarse_sum(const Coarse *co, const Cand *fine, const uint32_t *sizes, const double *x, double *y);
extern void dpa_coarse_sum_u32(const Coarse *co, const Cand *fine, const uint32_t *sizes, const uint32_t *x,
							   uint32_t *y);
extern void dpa_coarse_expand(const Coarse *co, const Cand *fine, const uint32_t *sizes, const double *y,
							  double *x);

/*
 * The estimate of a round (dp_adaptive_draw.c): margs[0..nmargs) made consistent and GUM's
 * dp_adaptive_est_rows(*total) rows drawn from them into synth (freed and made anew); and whether
 * an estimate of m rows is the final GUM's start for n rows.
 */
int			dpa_estimate(const dp_marg *margs, uint32_t nmargs, uint32_t d, const uint32_t *sizes,
						 const dp_gum_params *gum, dp_prng *rng, dp_codes *synth, double *total);
bool		dpa_final_from_estimate(uint64_t m, uint64_t n);

/*
 * Whether an estimate of m rows holds every row (not capped: a capped estimate, of either size,
 * has at least DP_ADAPTIVE_SYNTH_ROWS rows), the one condition on m under which the final GUM may
 * start from it (dpa_final_from_estimate) and so the last round's estimate is made at all.
 */
static inline bool
dpa_estimate_uncapped(uint64_t m)
{
	return m < DP_ADAPTIVE_SYNTH_ROWS;
}

#endif							/* DP_ADAPTIVE_CAND_H */
