/*
 * discover_bins.c - discovery's releases of a number, date or timestamp column, after discover.c's
 * scan has counted it: quantile bins inside declared bounds (the noisy histogram of the clamped
 * values on the public grid, a refined column's second stage), and the bounds of a column without
 * a declared domain (dp_discovery.h, section 3) with the bins inside them.  Each draws its noise
 * through dp_noise_counts and stores what it released; everything else is post-processing.
 */
#include "discover.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "dp_accounting.h"
#include "dp_binning.h"
#include "dp_counts.h"
#include "dp_decode.h"
#include "dp_discovery.h"
#include "dp_sampler.h"

#define DISCOVER_TAIL		0.001	/* noisy mass left outside each discovered bound */
#define DISCOVER_DENOISE_Z	3.0		/* quantile mass: dp_loggrid_denoise's z (3 sigma for one cell) */

/*
 * Binning 'auto': at most nbins bins over the (denoised, spikes removed) noisy mass, fewer where
 * each would hold less than min_bin_mass; at least 1.  Post-processing of the noisy histogram.
 */
static uint32
auto_bins(const Discovery *d, uint32 nbins, double min_bin_mass)
{
	double		mass = 0;
	uint32		ncells = dp_loggrid_ncells(&d->grid);

	if (!d->col->quantile_auto || !(min_bin_mass > 0) || nbins <= 1)
		return nbins;
	for (uint32 c = 0; c < ncells; c++)
		mass += Max(d->cells[c], 0);
	if (mass < min_bin_mass * nbins)
		nbins = (uint32) Max(1.0, floor(mass / min_bin_mass));
	return nbins;
}

/*
 * The shape of the values inside the learned bins, from the same noisy histogram that placed the
 * edges, as pieces (lo, hi, weight) clipped to the declared bounds and to each bin: integers
 * lo..hi, or reals [lo, hi) (dp_shape_init in dp_decode.h).  Synthetic values are then drawn
 * inside a bin where this histogram puts mass, not uniformly over it.
 *
 * Which cells: those between the first and the last cell that dp_loggrid_denoise kept (the span
 * of the significant mass), with their noisy counts; none outside it.  So an end bin [0, 22] of
 * ages that start at 18 no longer yields ages 0-17, while inside the span a cell keeps its mass
 * even where the denoising cleared it for being next to a heavier one (the edges' denoising
 * keeps only minimal significant blocks, and would otherwise drop well-populated values next to
 * a heavier one).
 *
 * Inside a bin the cells' counts are shrunk toward the bin's uniform spread by the James-Stein
 * factor s = max(0, 1 - V / Q): Q is the squared deviation of the cells' noisy counts from
 * uniform, V what the noise alone gives it in expectation (sigma^2 per cell, scaled by the part
 * of the cell in the bin); negative weights become 0.  Where the noise explains the deviation
 * (few rows per cell, a large sigma) the bin stays close to uniform; where the rows dominate it
 * follows them.  A refined column whose per-value estimates show heaping at multiples of ten
 * (dp_binning_heap_multiplier) spreads a cell kept whole over its values weighted toward those
 * multiples, except the span's end cells.  Post-processing of the edges' release; no extra budget.
 */
/*
 * A column whose cells release_refined split into per-value counts (dp_binning.h): which cells,
 * and the estimate of every value of the declared bounds (read in the refined cells only).
 */
typedef struct Refinement
{
	const bool *refined;		/* per cell of the grid */
	const double *value;		/* per value, quantile_lower .. quantile_upper */
	double		sigma;			/* the noise of a value's stage-2 count */
} Refinement;

static int
shape_pieces(const Discovery *d, const int64 *raw, uint32 span_lo, uint32 span_hi,
			 const double *edges, uint32 nedges, double sigma, const Refinement *ref, double **out)
{
	uint32		ncells = dp_loggrid_ncells(&d->grid);
	uint32		nvalues = ref ? (uint32) (d->col->quantile_upper - d->col->quantile_lower + 1) : 0;
	const DpColumn *col = d->col;
	bool		integral = d->grid.integral;
	/* every range below is half-open [lo, hi): integers lo .. hi - 1 on integral grids */
	double		ql = integral ? ceil(col->quantile_lower) : col->quantile_lower,
				qu = integral ? floor(col->quantile_upper) + 1 : col->quantile_upper;
	double	   *p = palloc(sizeof(double) * 3 * (ncells + nedges + nvalues + 1));
	dp_shape_cell *bc = palloc(sizeof(dp_shape_cell) * Max(ncells + nvalues, 1));
	double	   *wt = palloc(sizeof(double) * Max(ncells + nvalues, 1));
	double		mult = 1;
	uint32	   *cellof = palloc(sizeof(uint32) * Max(ncells + nvalues, 1));
	int			n = 0;

	/* a refined column heaped at multiples of ten: its cells kept whole weigh those values more */
	if (ref && integral && nvalues > 2)
	{
		bool	   *known = palloc0(sizeof(bool) * nvalues);

		for (uint32 c = 0; c < ncells; c++)
		{
			int64		lo,
						hi;

			if (!ref->refined[c])
				continue;
			dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
			for (int64 x = Max(lo, (int64) ql); x <= hi && x < (int64) qu; x++)
				known[x - (int64) ql] = true;
		}
		mult = dp_binning_heap_multiplier(ref->value, known, nvalues, (int64) ql, ref->sigma);
		pfree(known);
	}

	for (uint32 b = 0; b + 1 < nedges; b++)
	{
		/* bin b: [edges[b], edges[b + 1]) (integer edges are each bin's first value) */
		double		blo = Max(edges[b], ql),
					bhi = Min(edges[b + 1], qu);
		int			k = 0;

		for (uint32 c = span_lo; c <= span_hi; c++)
		{
			double		lo,
						hi,
						clo,
						chi,
						part;

			dp_loggrid_cell_range(&d->grid, c, &lo, &hi);
			/* the cell as counted (values were clamped into the bounds), then its part in the bin */
			clo = Max(lo, ql);
			chi = Min(hi, qu);
			lo = Max(clo, blo);
			hi = Min(chi, bhi);
			if (!(clo < chi) || !(lo < hi) || !isfinite(chi - clo))
				continue;
			if (ref && ref->refined[c])
			{
				/* a refined cell: its values' estimates (one value is wholly in a bin or not) */
				for (double x = lo; x < hi; x++)
				{
					bc[k].lo = x;
					bc[k].hi = x + 1;
					bc[k].width = 1;
					bc[k].count = ref->value[(int64) (x - ql)];
					bc[k].var = ref->sigma * ref->sigma;
					cellof[k] = c;
					k++;
				}
				continue;
			}
			part = (hi - lo) / (chi - clo);	/* the share of the cell in the bin */
			bc[k].lo = lo;
			bc[k].hi = hi;
			bc[k].width = hi - lo;
			bc[k].count = (double) raw[c] * part;
			bc[k].var = sigma * sigma * part * part;
			cellof[k] = c;
			k++;
		}
		if (dp_binning_shape_weights(bc, (uint32) k, wt) != 0)
			continue;			/* nothing released here: uniform over the bin */
		for (int i = 0; i < k; i++)
		{
			if (!(wt[i] > 0) || !isfinite(wt[i]))
				continue;
			if (mult > 1 && bc[i].width > 1 && cellof[i] != span_lo && cellof[i] != span_hi)
			{
				/*
				 * a cell kept whole in a heaped column: by the values' multipliers; not the span's
				 * end cells, whose heaps are the rows' extremes (a top code at 99), not round values
				 */
				n += (int) dp_binning_heap_spread(bc[i].lo, bc[i].hi, wt[i], mult, p + 3 * n);
				continue;
			}
			p[3 * n] = bc[i].lo;
			p[3 * n + 1] = integral ? bc[i].hi - 1 : bc[i].hi;
			p[3 * n + 2] = wt[i];
			n++;
		}
	}
	*out = p;
	return (int) dp_shape_tidy(p, (uint32) n, integral);
}

/*
 * Each learned bin's count as this release gives it, for a synthesis to combine with its own
 * one-way marginal (dp_oneway_prior in src/core/dp_privsyn.h): the sum of the released counts of
 * the atoms in the bin (a refined value's estimate, variance sigma_fine^2; a cell kept whole, its
 * noisy count as released, before any denoising, variance sigma^2), where every atom that meets
 * the bin lies wholly inside it; a bin that cuts a cell (a quantile edge inside it) gets none
 * (variance 0), as its share of the cell would be a guess.  Post-processing of the release.
 */
static void
bin_prior(Discovery *d, const int64 *raw, double sigma, const Refinement *ref, const double *edges,
		  uint32 nedges)
{
	uint32		ncells = dp_loggrid_ncells(&d->grid),
				nbins = nedges - 1;
	const DpColumn *col = d->col;
	double		ql = col->quantile_lower,
				qu = col->quantile_upper;
	bool	   *cut = palloc0(sizeof(bool) * Max(nbins, 1));

	if (!d->grid.integral || nedges < 2)
		return;
	d->prior_est = palloc0(sizeof(double) * nbins);
	d->prior_var = palloc0(sizeof(double) * nbins);
	d->nprior = (int) nbins;
	for (uint32 c = 0; c < ncells; c++)
	{
		int64		lo,
					hi;
		uint32		b = 0;

		dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
		/* the cell as counted: its values were clamped into the bounds */
		lo = Max(lo, (int64) ceil(ql));
		hi = Min(hi, (int64) floor(qu));
		if (lo > hi)
			continue;
		if (ref && ref->refined[c])
		{
			for (int64 v = lo; v <= hi; v++)
			{
				while (b + 1 < nbins && (double) v >= edges[b + 1])
					b++;
				d->prior_est[b] += ref->value[v - (int64) ceil(ql)];
				d->prior_var[b] += ref->sigma * ref->sigma;
			}
			continue;
		}
		while (b + 1 < nbins && (double) lo >= edges[b + 1])
			b++;
		if ((double) hi >= edges[b + 1])
		{
			/* a cut cell: every bin it meets gets no estimate */
			for (uint32 k = b; k < nbins && (double) lo < edges[k + 1] && (double) hi >= edges[k]; k++)
				cut[k] = true;
			continue;
		}
		d->prior_est[b] += (double) raw[c];
		d->prior_var[b] += sigma * sigma;
	}
	for (uint32 b = 0; b < nbins; b++)
		if (cut[b] || !(d->prior_var[b] > 0))
			d->prior_var[b] = 0;
}

/*
 * Quantile bins inside declared bounds: the noisy histogram of the clamped values on the public
 * grid, then edges at its noisy quantiles (post-processing).  Declared point masses are added
 * when the domain is loaded.
 */
static void edges_from_histogram(Oid relid, Discovery *d, double sigma, double min_bin_mass,
								 int64 ledger_id, const Refinement *ref);

void
dpsynth_discover_release_edges(Oid relid, Discovery *d, const dp_dgauss *noise, double min_bin_mass,
							   int64 ledger_id)
{
	if (dp_noise_counts(noise, d->cells, d->cells, dp_loggrid_ncells(&d->grid)) != 0)
		dpsynth_noise_refused();
	edges_from_histogram(relid, d, sqrt(dp_dgauss_sigma2(noise)), min_bin_mass, ledger_id, NULL);
}

/*
 * Binning 'auto' over a small integer range (dp_binning.h): stage 1 the noisy log-grid histogram
 * (rho_1), stage 2 a noisy histogram on the grid whose cells stage 1 showed heavy enough are split
 * into one cell per value (rho_2), each row in exactly one cell of each; then the estimate from
 * both, the quantile edges of the cells and the bins inside the refined cells (post-processing);
 * stored.
 */
void
dpsynth_discover_release_refined(Oid relid, Discovery *d, const dp_dgauss *stage1, const dp_dgauss *stage2,
								 double min_bin_mass, int64 ledger_id)
{
	int64		lower = (int64) d->col->quantile_lower,
				upper = (int64) d->col->quantile_upper;
	uint32		nvalues = (uint32) (upper - lower + 1),
				ncells = dp_loggrid_ncells(&d->grid),
				n2 = 0;
	double		var1 = dp_dgauss_sigma2(stage1),
				var2 = dp_dgauss_sigma2(stage2);
	int64	   *noisy1 = palloc(sizeof(int64) * ncells),
			   *counts2 = palloc(sizeof(int64) * (ncells + nvalues)),
			   *noisy2 = palloc(sizeof(int64) * (ncells + nvalues));
	double	   *c2 = palloc(sizeof(double) * nvalues),
			   *value = palloc0(sizeof(double) * nvalues);
	bool	   *refined = palloc0(sizeof(bool) * ncells);
	Refinement	ref;

	if (dp_noise_counts(stage1, d->cells, noisy1, ncells) != 0)
		dpsynth_noise_refused();
	/* stage 2's partition: a function of stage 1's release and public facts only */
	for (uint32 c = 0; c < ncells; c++)
	{
		int64		lo,
					hi;

		dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
		lo = Max(lo, lower);
		hi = Min(hi, upper);
		refined[c] = lo <= hi && dp_binning_refine(noisy1[c], (uint32) (hi - lo + 1), sqrt(var2));
		if (refined[c])
			for (int64 v = lo; v <= hi; v++)
				counts2[n2++] = d->fine[v - lower];
		else
			counts2[n2++] = d->cells[c];
	}
	if (dp_noise_counts(stage2, counts2, noisy2, n2) != 0)
		dpsynth_noise_refused();
	/* the estimate of each cell (and of each value of a refined cell) from both releases */
	n2 = 0;
	for (uint32 c = 0; c < ncells; c++)
	{
		int64		lo,
					hi;
		uint32		w = 1;
		double		total;

		dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
		if (refined[c])
			w = (uint32) (Min(hi, upper) - Max(lo, lower) + 1);
		for (uint32 i = 0; i < w; i++)
			c2[i] = (double) noisy2[n2 + i];
		if (dp_binning_combine((double) noisy1[c], var1, c2, w, var2, &total,
							   refined[c] ? value + (Max(lo, lower) - lower) : NULL) != 0)
			elog(ERROR, "dpsynth: invalid estimate of column \"%s\"", d->col->name);
		d->cells[c] = (int64) llround(total);
		n2 += w;
	}
	ref.refined = refined;
	ref.value = value;
	ref.sigma = sqrt(var2);
	/* the noise of a cell kept whole: one count with rho_1 + rho_2 */
	edges_from_histogram(relid, d, sqrt(1.0 / (1.0 / var1 + 1.0 / var2)), min_bin_mass, ledger_id, &ref);
}

/*
 * The quantile edges coarse[] (integers, each bin's first value, the last past upper) of a
 * refined column with the bins of its refined cells put in: each run of adjacent refined cells
 * is binned as one (dp_binning_int) and merged in (dp_binning_merge); post-processing of both
 * stages' estimates.  Returns the number of edges written to *out.
 */
static uint32
refined_edges(const Discovery *d, const Refinement *ref, double min_bin_mass, const int64 *coarse,
			  uint32 ncoarse, double **out)
{
	int64		lower = (int64) d->col->quantile_lower,
				upper = (int64) d->col->quantile_upper,
				run_lo = 0,
				run_hi = -1;	/* the current run of refined cells' values; empty */
	uint32		nvalues = (uint32) (upper - lower + 1),
				ncells = dp_loggrid_ncells(&d->grid),
				nblocks = 0,
				off = 0,
				nedges = 0;
	double	   *mass = palloc(sizeof(double) * nvalues);
	int64	   *vals = palloc(sizeof(int64) * nvalues),
			   *block_lo = palloc(sizeof(int64) * nvalues),
			   *block_hi = palloc(sizeof(int64) * nvalues),
			   *block_edges = palloc(sizeof(int64) * 2 * (nvalues + 1)),
			   *iedges = palloc(sizeof(int64) * (nvalues + 1));
	uint32	   *block_nedges = palloc(sizeof(uint32) * nvalues);

	for (uint32 c = 0; c <= ncells; c++)
	{
		int64		lo = 0,
					hi = -1;
		uint32		ne = 0;

		if (c < ncells)
		{
			dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
			lo = Max(lo, lower);
			hi = Min(hi, upper);
			if (lo > hi)
				continue;
			if (ref->refined[c])
			{
				/* the run goes on: its values' estimates */
				if (run_lo > run_hi)
					run_lo = lo;
				run_hi = hi;
				for (int64 v = lo; v <= hi; v++)
					mass[v - lower] = ref->value[v - lower];
				continue;
			}
			/* a cell kept whole: its (denoised) mass spread over its values, as the quantiles read it */
			for (int64 v = lo; v <= hi; v++)
				mass[v - lower] = Max(d->cells[c], 0) / (double) (hi - lo + 1);
		}
		if (run_lo > run_hi)
			continue;
		/* the run ends here: its bins */
		for (int64 v = run_lo; v <= run_hi; v++)
			vals[v - run_lo] = (int64) llround(ref->value[v - lower]);
		if (dp_binning_int(vals, (uint32) (run_hi - run_lo + 1), run_lo, ref->sigma, min_bin_mass,
						   block_edges + off, &ne) != 0)
			elog(ERROR, "dpsynth: invalid binning of column \"%s\"", d->col->name);
		if (ne >= 3)
		{
			block_lo[nblocks] = run_lo;
			block_hi[nblocks] = run_hi;
			block_nedges[nblocks++] = ne;
			off += ne;
		}
		run_lo = 0;
		run_hi = -1;
	}
	if (dp_binning_merge(coarse, ncoarse, lower, nvalues, nblocks, block_lo, block_hi, block_edges,
						 block_nedges, mass, min_bin_mass, iedges, &nedges) != 0)
		elog(ERROR, "dpsynth: invalid binning of column \"%s\"", d->col->name);
	*out = repalloc(*out, sizeof(double) * nedges);
	for (uint32 i = 0; i < nedges; i++)
		(*out)[i] = (double) iedges[i];
	return nedges;
}

/*
 * The finest decimal exponent of a real column's values: -s for numeric(p, s) (typmod given),
 * none otherwise.  Public: the column's declared type.
 */
static int
column_min_exp(const DpColumn *col)
{
	if (col->typid == NUMERICOID && col->typmod >= (int32) VARHDRSZ)
		return -((((col->typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024);
	return DP_BINNING_ANY_EXP;
}

static void
edges_from_histogram(Oid relid, Discovery *d, double sigma, double min_bin_mass, int64 ledger_id,
					 const Refinement *ref)
{
	DpColumn   *col = d->col;
	uint32		ncells = dp_loggrid_ncells(&d->grid);
	/* a refined column's quantile bins are an 'auto' column's; its cells add their own */
	uint32		nbins = (uint32) (col->quantile_fine ? Min(col->quantile_bins, DPSYNTH_AUTO_BINS) :
								  col->quantile_bins);
	double	   *edges;
	uint32		nedges = 0;
	bool		ok;
	double	   *shape = NULL;
	int			npieces;
	int64	   *raw = palloc(sizeof(int64) * Max(ncells, 1));
	uint32		span_lo = 1,
				span_hi = 0;	/* empty */

	/*
	 * Post-processing of the noisy histogram: the positive noise of the many empty cells of a
	 * sparse column would add up to phantom mass that the quantiles spread bins over; only the
	 * cells of significant blocks keep their mass.
	 */
	memcpy(raw, d->cells, sizeof(int64) * ncells);
	if (dp_loggrid_denoise(&d->grid, d->cells, sigma, DISCOVER_DENOISE_Z,
						   palloc(ncells)) < 0)
		elog(ERROR, "dpsynth: invalid discovery grid");
	/* the span of the significant mass, for the shape inside the bins (shape_pieces) */
	for (uint32 c = 0; c < ncells; c++)
		if (d->cells[c] != 0)
		{
			if (span_lo > span_hi)
				span_lo = c;
			span_hi = c;
		}
	if (col->quantile_wide)
	{
		/*
		 * A wide range: bins past the declared ones only where the row count affords them,
		 * bounded below from the noisy cells that meet the declared bounds (the grid's cells are
		 * in the values' order), at most the denoised mass (dp_binning.h); up to the declared
		 * ones, as many as the denoised mass affords, as for any learned quantile bins
		 */
		uint32		lo_cell = d->grid.integral ?
			dp_loggrid_cell_int(&d->grid, (int64) col->quantile_lower) :
			dp_loggrid_cell_real(&d->grid, col->quantile_lower);
		uint32		hi_cell = d->grid.integral ?
			dp_loggrid_cell_int(&d->grid, (int64) col->quantile_upper) :
			dp_loggrid_cell_real(&d->grid, col->quantile_upper);
		double		mass = 0,
					bound;
		uint32		declared = nbins;

		for (uint32 c = 0; c < ncells; c++)
			mass += Max(d->cells[c], 0);
		bound = mass;
		if (lo_cell <= hi_cell && hi_cell < ncells)
			bound = dp_binning_wide_mass(raw + lo_cell, hi_cell - lo_cell + 1, sigma, mass);
		nbins = Max(Min(dp_binning_wide_bins(mass, min_bin_mass, declared), declared),
					dp_binning_wide_bins(bound, min_bin_mass, declared));
	}
	edges = palloc(sizeof(double) * (nbins + 1));
	if (d->grid.integral)
	{
		int64	   *iedges = palloc(sizeof(int64) * (nbins + 1));
		int64	   *spikes = palloc(sizeof(int64) * (nbins + 1));
		int64	   *merged;
		uint32		nspikes = 0;
		double		total = 0;

		/*
		 * Spikes (a 0 like capital_gain's, a sentinel): a one-value grid cell holding at least
		 * 1/nbins of the noisy mass gets a bin of its own, and the quantiles are taken over the
		 * rest of the mass.  Post-processing of the same noisy histogram.
		 */
		for (uint32 c = 0; c < ncells; c++)
			total += Max(d->cells[c], 0);
		for (uint32 c = 0; c < ncells && nspikes + 1 < nbins; c++)
		{
			int64		lo,
						hi;

			dp_loggrid_cell_range_int(&d->grid, c, &lo, &hi);
			if (lo == hi && total > 0 && d->cells[c] >= total / nbins &&
				lo >= (int64) col->quantile_lower && lo <= (int64) col->quantile_upper)
			{
				spikes[nspikes++] = lo;
				d->cells[c] = 0;
			}
		}
		ok = dp_loggrid_quantile_edges_int(&d->grid, d->cells, (int64) col->quantile_lower,
										   (int64) col->quantile_upper,
										   auto_bins(d, nbins - nspikes, min_bin_mass), iedges, &nedges) == 0;
		if (ok && nedges >= 2)
		{
			/* integer domains take edges as "first value of each bin", the last one past upper */
			iedges[nedges - 1] = (int64) col->quantile_upper + 1;
			merged = palloc(sizeof(int64) * (nedges + 2 * nspikes));
			nedges = dp_int_edges_with_points(iedges, nedges, spikes, nspikes, merged);
			edges = repalloc(edges, sizeof(double) * nedges);
			for (uint32 i = 0; i < nedges; i++)
				edges[i] = (double) merged[i];
			/*
			 * heaps at round values start bins in a synthesis (dp_binning.h; a marginal keeps
			 * its quantiles); a spike's bin has no room to move
			 */
			if (col->quantile_wide && min_bin_mass > 0)
				(void) dp_binning_round_edges(edges, nedges, true, 0);	/* unchanged if not increasing */
			if (ref)
				nedges = refined_edges(d, ref, min_bin_mass, merged, nedges, &edges);
		}
	}
	else
	{
		ok = dp_loggrid_quantile_edges(&d->grid, d->cells, col->quantile_lower, col->quantile_upper,
									   auto_bins(d, nbins, min_bin_mass), edges, &nedges) == 0;
		/*
		 * heaps at round values start bins in a synthesis, at no finer a decimal than the bins
		 * need or a numeric column's scale (dp_binning.h); unchanged if not increasing
		 */
		if (ok && col->quantile_wide && min_bin_mass > 0)
		{
			int			n = dp_binning_round_edges(edges, nedges, false, column_min_exp(col));

			if (n >= 2)
				nedges = (uint32) n;
		}
	}
	if (!ok || nedges < 2)
	{
		/* public fallback: equal widths over the declared bounds, in the bins chosen above */
		nedges = 0;
		if (d->grid.integral)
		{
			int64	   *iedges = palloc(sizeof(int64) * (nbins + 1));

			if (dp_int_equal_edges((int64) col->quantile_lower, (int64) col->quantile_upper, nbins, iedges) == 0)
				for (nedges = 0; nedges <= nbins; nedges++)
					edges[nedges] = (double) iedges[nedges];
		}
		else if (dp_real_equal_edges(col->quantile_lower, col->quantile_upper, nbins, edges) == 0)
			nedges = nbins + 1;
		if (nedges < 2)
		{
			edges[0] = col->quantile_lower;
			edges[1] = d->grid.integral ? col->quantile_upper + 1 : col->quantile_upper;
			nedges = 2;
		}
	}
	/* edges the catalog stores and loads whatever the noise gave (else one public bin) */
	nedges = dp_discovered_edges(d->grid.integral, edges, nedges, col->quantile_lower, col->quantile_upper);
	npieces = span_lo <= span_hi ?
		shape_pieces(d, raw, span_lo, span_hi, edges, nedges, sigma, ref, &shape) : 0;
	bin_prior(d, raw, sigma, ref, edges, nedges);
	dpsynth_store_learned_edges(relid, col->attnum, ledger_id, edges, (int) nedges, shape, npieces);
}

/*
 * Stage 2 of the bounds (dp_discovery.h, section 3): the exact counts on a linear grid over the
 * widened span that stage 1 released, the noise, and the bounds read from them.  The grid is a
 * function of stage 1's output; the values come from the exact counts of the same scan.
 * Returns dp_lingrid_bounds_*'s result (0: *lower and *upper set).
 */
static int
fine_bounds(Discovery *d, double span_lo, double span_hi, const dp_dgauss *fine,
			double *lower, double *upper)
{
	dp_lingrid	lg;
	int64	   *cells;
	HASH_SEQ_STATUS seq;
	NumberEntry *e;
	double		sigma = sqrt(dp_dgauss_sigma2(fine));
	int			rc;

	if (d->grid.integral ? dp_lingrid_init_int(&lg, dp_double_to_int64_sat(span_lo),
											   dp_double_to_int64_sat(span_hi)) != 0
		: dp_lingrid_init_real(&lg, span_lo, span_hi) != 0)
		return -1;
	cells = palloc0(sizeof(int64) * lg.ncells);
	hash_seq_init(&seq, d->exact);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		double		x;

		CHECK_FOR_INTERRUPTS();
		if (d->grid.integral)
		{
			cells[dp_lingrid_cell_int(&lg, e->key)] += e->count;
			continue;
		}
		memcpy(&x, &e->key, sizeof(x));
		cells[dp_lingrid_cell_real(&lg, x)] += e->count;
	}
	if (dp_noise_counts(fine, cells, cells, lg.ncells) != 0)
		dpsynth_noise_refused();
	if (d->grid.integral)
	{
		int64		lo,
					hi;

		rc = dp_lingrid_bounds_int(&lg, cells, sigma, DISCOVER_TAIL, &lo, &hi);
		if (rc == 0)
		{
			*lower = (double) lo;
			*upper = (double) hi;
		}
		return rc;
	}
	return dp_lingrid_bounds_real(&lg, cells, sigma, DISCOVER_TAIL, lower, upper);
}

/*
 * Stage 1 read as a span (its noisy 0.5% and 99.5% points), widened by half its width on
 * each side, kept within the limits of discovered bounds (dp_discovered_bounds: integers where
 * the catalog's float8 is exact, reals where the span's width is finite).  False: nothing showed.
 */
static bool
coarse_span(Discovery *d, double sigma, double *lo, double *hi)
{
	if (d->grid.integral)
	{
		int64		l,
					h;

		if (dp_loggrid_bounds_int(&d->grid, d->cells, sigma, DP_BOUNDS_SPAN_TAIL, &l, &h) != 0 ||
			dp_span_widen_int(&l, &h) != 0)
			return false;
		*lo = Min(Max((double) l, -DP_DISCOVERED_INT_LIMIT), DP_DISCOVERED_INT_LIMIT - 1);
		*hi = Max(Min((double) h, DP_DISCOVERED_INT_LIMIT), *lo + 1);
		return true;
	}
	if (dp_loggrid_bounds(&d->grid, d->cells, sigma, DP_BOUNDS_SPAN_TAIL, lo, hi) != 0 ||
		dp_span_widen_real(lo, hi) != 0)
		return false;
	*lo = Min(Max(*lo, -DP_DISCOVERED_REAL_LIMIT), DP_DISCOVERED_REAL_LIMIT);
	*hi = Min(Max(*hi, -DP_DISCOVERED_REAL_LIMIT), DP_DISCOVERED_REAL_LIMIT);
	return *lo < *hi;
}

/*
 * Stage 1's own bounds (its noisy DISCOVER_TAIL points): the fallback, and what stage 2 may
 * refine but not cut into (dp_bounds_reconcile).  False: nothing showed.
 */
static bool
coarse_bounds(Discovery *d, double sigma, double *lo, double *hi)
{
	int64		l,
				h;

	if (!d->grid.integral)
		return dp_loggrid_bounds(&d->grid, d->cells, sigma, DISCOVER_TAIL, lo, hi) == 0;
	if (dp_loggrid_bounds_int(&d->grid, d->cells, sigma, DISCOVER_TAIL, &l, &h) != 0)
		return false;
	*lo = (double) l;
	*hi = (double) h;
	return true;
}

/*
 * Stage 2's bounds kept where they refine stage 1's inside its coarse cells, stage 1's where
 * stage 2's noise hid a tail that stage 1 saw (dp_bounds_reconcile; post-processing).
 */
static void
reconcile_bounds(Discovery *d, double clo, double chi, double *lo, double *hi)
{
	if (d->grid.integral)
	{
		int64		l = dp_double_to_int64_sat(*lo),
					h = dp_double_to_int64_sat(*hi);

		if (dp_bounds_reconcile_int(&d->grid, dp_double_to_int64_sat(clo), dp_double_to_int64_sat(chi),
									&l, &h) >= 0)
		{
			*lo = (double) l;
			*hi = (double) h;
		}
		return;
	}
	(void) dp_bounds_reconcile(&d->grid, clo, chi, lo, hi);
}

/*
 * Bounds of a column without a domain.  With fine set: stage 1 (the log grid, noise coarse)
 * gives the span, stage 2 (noise fine) refines stage 1's bounds inside their coarse cells;
 * if stage 2 shows nothing, stage 1's own bounds are used (post-processing of its release).
 * Without fine (noise too small to split, a public fact): stage 1 alone, as before.
 * Equal-width bins, one per value for small integer ranges.  With learn_bins (dp_discover, a
 * release of its own), a range wider than its bins gets quantile bins instead (at most
 * DPSYNTH_AUTO_BINS, spikes apart, and the shape inside them) from stage 1's noisy histogram, as
 * the same bounds declared with the default binning 'auto' get them in a release:
 * post-processing, no extra budget.  A discovery inside a release keeps the equal widths.
 */
void
dpsynth_discover_release_bounds(Oid relid, Discovery *d, const dp_dgauss *coarse, const dp_dgauss *fine,
			   int64 ledger_id, bool learn_bins, double min_bin_mass)
{
	uint32		ncells = dp_loggrid_ncells(&d->grid);
	double		sigma = sqrt(dp_dgauss_sigma2(coarse));
	double		lower,
				upper,
				type_lo,
				type_hi;
	double		span_lo,
				span_hi,
				clo = 0,
				chi = 0,
				lo = 0,
				hi = 0;
	uint32		bins;
	bool		found,
				coarse_found;

	if (dp_noise_counts(coarse, d->cells, d->cells, ncells) != 0)
		dpsynth_noise_refused();
	coarse_found = coarse_bounds(d, sigma, &clo, &chi);
	found = fine != NULL && coarse_span(d, sigma, &span_lo, &span_hi) &&
		fine_bounds(d, span_lo, span_hi, fine, &lo, &hi) == 0;
	if (found && coarse_found)
		reconcile_bounds(d, clo, chi, &lo, &hi);
	else if (coarse_found)
	{
		lo = clo;
		hi = chi;
		found = true;
	}
	/*
	 * Post-processing that cannot fail on any released value: the bounds clamped into the
	 * type's values and the catalog's exact range, never collapsed, with bins that load.
	 */
	dpsynth_value_range(d->col->typid, &type_lo, &type_hi);
	if (dp_discovered_bounds(d->grid.integral, found, lo, hi, type_lo, type_hi, DP_PLAN_DISCOVERED_BINS,
							 &lower, &upper, &bins) != 0)
		elog(ERROR, "dpsynth: invalid range of type %u", d->col->typid);	/* public: never */
	dpsynth_store_discovered_bins(relid, d->col->attnum, ledger_id, lower, upper, (int) bins);
	if (learn_bins && bins == DP_PLAN_DISCOVERED_BINS && found)
	{
		/*
		 * dp_discover: quantile edges inside the bounds, with their spikes and shape, from stage
		 * 1's noisy histogram (post-processing), as release_edges makes them for declared
		 * bounds; the cells wholly outside the bounds are left out.
		 */
		for (uint32 c = 0; c < ncells; c++)
		{
			double		cell_lo,
						cell_hi;

			dp_loggrid_cell_range(&d->grid, c, &cell_lo, &cell_hi);
			if (d->grid.integral ? (cell_hi - 1 < lower || cell_lo > upper) : (cell_hi <= lower || cell_lo > upper))
				d->cells[c] = 0;
		}
		d->col->quantile_lower = lower;
		d->col->quantile_upper = upper;
		d->col->quantile_bins = DPSYNTH_AUTO_BINS;
		d->col->quantile_points = 0;
		d->col->quantile_auto = true;
		d->col->quantile_wide = false;
		edges_from_histogram(relid, d, sigma, min_bin_mass, ledger_id, NULL);
	}
}

/* A hash table in cxt keyed by the first keysize bytes of its entries. */
