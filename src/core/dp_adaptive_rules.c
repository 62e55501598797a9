/*
 * dp_adaptive_rules.c - the adaptive method's rules of public facts and released values
 * (dp_adaptive.h): how many selections, the rare-code threshold, the scores' floors and the anneal
 * bar, the caps on k-way marginals and the rounds' batch, the estimates' rows.  Each is a function
 * of released values and public sizes only (post-processing: no privacy cost); dp_adaptive.c
 * runs the method with them.
 */
#include "dp_adaptive.h"

#include <math.h>

#include "dp_schedule.h"

double
dp_adaptive_selections(double R, uint32_t d, double total, uint64_t cells)
{
	double		lo = (double) DP_ADAPTIVE_SELECTIONS_MIN * d,
				hi = (double) DP_ADAPTIVE_SELECTIONS_MAX * d,
				T;

	if (!(total > 0) || !isfinite(total) || cells == 0 || !(R > 0) || !isfinite(R))
		return lo;
	/*
	 * sigma = tau 2 total / (sqrt(2/pi) cells), rho_t = 1 / (2 sigma^2) = cells^2 / (4 pi tau^2
	 * total^2), T = DP_SCHEDULE_MEASURE_SHARE R / rho_t.
	 */
	T = DP_SCHEDULE_MEASURE_SHARE * R * 4 * M_PI * DP_ADAPTIVE_NOISE_TVD * DP_ADAPTIVE_NOISE_TVD * total * total /
		((double) cells * (double) cells);
	return T < lo ? lo : T > hi ? hi : T;
}

double
dp_adaptive_rare_threshold(double rho, uint32_t d)
{
	return dp_method_rare_threshold(DP_CALL_ADAPTIVE, rho, d);
}

/*
 * The estimate's resolution (dp_adaptive.h, steps b and d).  A round's estimate of m rows stands
 * for the total rows the measurements describe, each row for s = total / m of them: as if it were
 * m rows drawn without replacement from the ideal table of total rows that fits the measurements.
 * A cell's scaled count y then errs by that draw's sampling: for its c = y / s rows, variance
 * m p (1 - p) (total - m) / (total - 1) with p = y / total, i.e. about (s - 1) y (1 - y / total)
 * in scaled units (the finite-population correction makes it 0 when the estimate holds every
 * row, s <= 1).  Two draws, before and after a round that told the estimate nothing new, differ
 * by twice that variance.
 *
 * The correction matters: without it the estimate of a small table (s <= 1), which GUM makes
 * again exactly from unchanged measurements, would be charged a churn it does not have, and the
 * rounds would anneal too early.
 *
 * Both uses add this error to sigma's per cell, in quadrature (independent errors), and take
 * E|N(0, v)| = sqrt(2/pi) sqrt(v): with an exact estimate (m == 0) or one that holds every row
 * (s <= 1) both are AIM's sqrt(2/pi) sigma per cell.  y, total and m are the released estimate's
 * (post-processing): the exact counts are not read here, and the score's sensitivity is
 * unchanged.
 */
static double
resolution_l1(const double *y, uint64_t cells, double sigma, double total, uint64_t m, double draws)
{
	double		s = m > 0 && total > 0 ? total / (double) m : 0,
				l1 = 0;

	if (!(s > 1))
		return sqrt(2 / M_PI) * sigma * (double) cells;	/* AIM's, exactly; no per-cell work */
	for (uint64_t q = 0; q < cells; q++)
	{
		double		v = draws * (s - 1) * y[q] * (1 - y[q] / total);

		l1 += sqrt(2 / M_PI) * sqrt(sigma * sigma + fmax(v, 0));
	}
	return l1;
}

double
dp_adaptive_score_floor(const double *y, uint64_t cells, double sigma, double total, uint64_t m)
{
	return resolution_l1(y, cells, sigma, total, m, 1);
}

double
dp_adaptive_anneal_bar(const double *z, uint64_t cells, double sigma, double total, uint64_t m)
{
	return resolution_l1(z, cells, sigma, total, m, 2);
}

/*
 * The cap on distinct k-way marginals (dp_adaptive.h, step b): the final GUM's work bound over the
 * released total, at least DP_ADAPTIVE_MIN_KWAY_PER_COL d, or DP_ADAPTIVE_MIN_KWAY_MAX if fewer.
 * A total that is not a number of at least one row counts as one row (no cap beyond the work
 * bound itself).
 */
uint64_t
dp_adaptive_max_kway(uint32_t d, double total)
{
	double		k = (total >= DP_ADAPTIVE_HUGE_ROWS ? DP_ADAPTIVE_GUM_WORK_HUGE : DP_ADAPTIVE_GUM_WORK) /
		(total >= 1 ? total : 1);	/* at most 2^27 */
	uint64_t	least = (uint64_t) DP_ADAPTIVE_MIN_KWAY_PER_COL * d;

	if (least > DP_ADAPTIVE_MIN_KWAY_MAX)
		least = DP_ADAPTIVE_MIN_KWAY_MAX;

	return k > (double) least ? (uint64_t) k : least;
}

uint32_t
dp_adaptive_batch(uint32_t d, double total)
{
	uint32_t	cols = total >= DP_ADAPTIVE_HUGE_ROWS ? DP_ADAPTIVE_BATCH_COLS_HUGE : DP_ADAPTIVE_BATCH_COLS;

	return (d + cols - 1) / cols;
}

/*
 * What a candidate measured before subtracts from its score (dp_adaptive.h, step b): the
 * estimate's misfit to the measurement so far, z (rho_z), plus AIM's floor at the noise the
 * measurement would have once this round's (sigma) is averaged in.  Everything here is released
 * or public: the exact counts are not read, and the score's sensitivity is unchanged.  A one-way
 * marginal with merged codes carries its rho as a consistency weight, while a merged cell's noise
 * is larger (dp_privsyn.c): sigma' is then too small, and the column scores a little high.
 */
double
dp_adaptive_remeasure_floor(const double *z, double rho_z, const double *y, uint64_t cells, double sigma)
{
	double		misfit = 0,
				prec = 1 / (sigma * sigma) + (rho_z > 0 ? 2 * rho_z : 0);

	for (uint64_t q = 0; q < cells; q++)
		misfit += fabs(z[q] - y[q]);
	return misfit + sqrt(2 / M_PI) * sqrt(1 / prec) * (double) cells;
}

uint32_t
dp_adaptive_warm_iters(uint64_t m)
{
	return m < DP_ADAPTIVE_SYNTH_ROWS ? DP_ADAPTIVE_WARM_ITERS_FULL :
		m > DP_ADAPTIVE_SYNTH_ROWS ? DP_ADAPTIVE_WARM_ITERS_BIG : DP_ADAPTIVE_WARM_ITERS;
}

uint64_t
dp_adaptive_est_rows(double total)
{
	if (total >= 1 && dp_adaptive_tree_bound(total) == 0)
		return total >= DP_ADAPTIVE_SYNTH_ROWS_BIG ? DP_ADAPTIVE_SYNTH_ROWS_BIG : (uint64_t) llround(total);
	return total >= DP_ADAPTIVE_SYNTH_ROWS ? DP_ADAPTIVE_SYNTH_ROWS :
		total >= 1 ? (uint64_t) llround(total) : 1;
}
