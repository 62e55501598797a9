/*
 * dp_plan.h - the privacy plan of one call: how much it is charged, how its rho and its
 * selection delta are split between discovering domains and the release itself, how large its
 * result can grow, and whether it must be refused.  All of it before anything is charged or read.
 *
 * The plan is a pure function of public facts (PRIVACY.md, "Domains" and "Errors and side
 * channels"): the call's kind, its rho in units, the schema-and-declaration state of each column
 * (a known domain's size, or which kind of discovery it awaits) and the selection delta the
 * table's budget has left.  The glue (src/marginal.c, src/discover.c, src/synthesize.c) gathers
 * those facts, calls dp_plan_make, raises the refusal it returns (before the charge), charges
 * plan.units_charged and plan.delta_charged, and then executes the plan.
 *
 * Privacy arithmetic (one call; rho in units of 1e-12, see dp_rho_units):
 *   units        = dp_rho_units(epsilon, delta) <= rho(epsilon, delta) * 1e12
 *   units_each   = floor(units * share / ndiscover)     share: DP_PLAN_DISCOVERY_SHARE
 *                                                       (dp_schedule.h), or 1 for
 *                                                       dp_discover (a call of discovery only)
 *   units_release= units - ndiscover * units_each       (0 for dp_discover)
 *   units_charged= units_release + ndiscover * units_each  (<= units)
 *   delta_charged= ntext * delta_each,  delta_each = the table's per-selection share
 * Each discovered column uses dp_units_rho(units_each) < units_each * 1e-12 and the release uses
 * dp_units_rho(units_release): by sequential composition the call is rho-zCDP with rho below
 * units_charged * 1e-12, plus delta_each of additive delta per text column discovered (the
 * coupling argument of dp_discovery.h).  test/unit/test_plan.c checks these identities.
 *
 * Pure C (no PostgreSQL headers).
 */
#ifndef DP_PLAN_H
#define DP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

/* The most categories discovery keeps for a text column that dp_synthesize may pair with others. */
#define DP_PLAN_MAX_DISCOVERED_CATEGORIES 1000
/* Bins of a discovered numeric domain (plus a NULL cell). */
#define DP_PLAN_DISCOVERED_BINS 32
/* The largest marginal dp_marginal computes, in cells (8 bytes of counts per cell). */
#define DP_PLAN_MAX_MARGINAL_CELLS ((int64_t) 16 * 1024 * 1024)
/* The largest pair marginal a synthesis method may need (codes of one column times another's). */
#define DP_PLAN_MAX_PAIR_CELLS ((int64_t) 4 * 1024 * 1024)
/*
 * Binning 'auto' in dp_synthesize: a learned bin should hold at least this many times the
 * rare-value threshold (3 sigma of the one-way noise), so that it is not merged away with
 * unrelated bins (5/3: 5 sigma, merged with probability about 2% when the bin holds just that).
 * Once their noise is cleared the bins' number matters little; 5/3 keeps a skewed column's
 * bins from being merged across its range.
 */
#define DP_PLAN_AUTO_BIN_MARGIN (5.0 / 3.0)

/* ---- rho units and delta ---- */

/* rho(epsilon, delta) in whole units of 1e-12, rounded down; -1 if out of range. */
int64_t		dp_rho_units(double epsilon, double delta);
/* The rho a release charged this many units may use: a hair below units * 1e-12 (inline: the
 * schedule, which dp_plan.c's callers use, needs it without calling back into dp_plan.c). */
static inline double
dp_units_rho(int64_t units)
{
	return (double) units * 1e-12 * (1 - 1e-12);
}
/* Whether delta is a usable (eps, delta) delta: in the open interval (0, 1). */
bool		dp_delta_valid(double delta);

/* ---- the plan of a call ---- */

typedef enum dp_plan_call
{
	DP_CALL_MARGINAL,			/* dp_marginal: discovery share, then one marginal, cells capped */
	DP_CALL_DISCOVER,			/* dp_discover: all of the rho on discovery, nothing after it */
	DP_CALL_PRIVSYN,			/* dp_synthesize(method => 'privsyn') */
	DP_CALL_ADAPTIVE			/* dp_synthesize(method => 'adaptive') */
} dp_plan_call;

/* What is public about a column when the call is planned. */
typedef enum dp_plan_state
{
	DP_PLAN_KNOWN,				/* a domain of ncodes codes (declared, released, schema, type) */
	DP_PLAN_CATEGORIES,			/* text: its values await DP partition selection */
	DP_PLAN_BOUNDS,				/* number, date, time: its bounds await a noisy histogram */
	DP_PLAN_EDGES				/* declared bounds: quantile edges await a noisy histogram */
} dp_plan_state;

typedef struct dp_plan_column
{
	dp_plan_state state;
	uint32_t	ncodes;			/* DP_PLAN_KNOWN */
	int			quantile_bins;	/* DP_PLAN_EDGES: the declaration's bins and point masses */
	int			quantile_points;
	bool		quantile_wide;	/* DP_PLAN_EDGES: bounds only over a wide range, so up to
								 * DP_BINNING_WIDE_MAX_BINS bins in a synthesis (dp_binning.h) */
} dp_plan_column;

typedef struct dp_plan_input
{
	dp_plan_call call;
	int64_t		units;			/* the call's rho, in units (dp_rho_units) */
	double		selection_delta;	/* the additive delta one partition selection may spend
									 * (read only when a column is DP_PLAN_CATEGORIES) */
	int			ncols;
	const dp_plan_column *cols;
} dp_plan_input;

/* Why a call is refused before its charge; the glue words each one (src/plan.c).  A refusal is
 * negative (dp_env.h's return codes: dp_plan_make's rc < 0 means it refused). */
typedef enum dp_plan_refusal
{
	DP_PLAN_OK = 0,
	DP_PLAN_BAD_INPUT = -1,		/* units < 1, no column, or a column state out of range */
	DP_PLAN_TOO_MANY_CELLS = -2,	/* DP_CALL_MARGINAL: over DP_PLAN_MAX_MARGINAL_CELLS whatever
									 * discovery finds, or no room left for one category */
	DP_PLAN_DISCOVERY_TOO_SMALL = -3,	/* a column's share is under one unit, its noise is out
										 * of the sampler's range, or no threshold meets
										 * delta_each */
	DP_PLAN_PAIR_TOO_LARGE = -4,	/* synthesis: two columns over DP_PLAN_MAX_PAIR_CELLS together
									 * (pair_first < pair_second name them) */
	DP_PLAN_RELEASE_TOO_SMALL = -5	/* DP_CALL_MARGINAL: the marginal's noise is out of range */
} dp_plan_refusal;

typedef struct dp_plan
{
	dp_plan_refusal refusal;
	int			ndiscover;		/* columns to discover */
	int			ntext;			/* of which text (partition selection) */
	int64_t		units_each;		/* rho units per discovered column */
	double		delta_each;		/* selection delta per text column (0 without one) */
	int			max_categories; /* cap on the categories discovery keeps per text column */
	int64_t		units_release;	/* rho units of the release after discovery */
	int64_t		units_charged;	/* what the ledger charges: units_release + ndiscover * units_each */
	double		delta_charged;	/* the selection delta charged: ntext * delta_each */
	/* DP_CALL_MARGINAL: the marginal's sigma^2 = 1 / (2 dp_units_rho(units_release)), as given
	 * to dp_dgauss_init (which rounds it up to a rational) */
	double		release_sigma2;
	/*
	 * Binning 'auto' (synthesis only, else 0): the least noisy mass a learned quantile bin should
	 * hold, DP_PLAN_AUTO_BIN_MARGIN times the method's rare-value threshold at units_release.
	 */
	double		min_bin_mass;
	int			pair_first;		/* DP_PLAN_PAIR_TOO_LARGE: the two columns, and their sizes */
	int			pair_second;
	uint32_t	pair_first_codes;
	uint32_t	pair_second_codes;
} dp_plan;

/*
 * Plans a call.  Checks, in this order (the first failure is the refusal): the marginal's size
 * whatever discovery releases (text columns capped so that it stays under the limit), the
 * discovery share, every pair's worst-case size, the marginal's own noise.  Fills *plan either
 * way; returns plan->refusal.
 */
dp_plan_refusal dp_plan_make(const dp_plan_input *in, dp_plan *plan);

/*
 * The most codes a column can have once discovery has run: its size if known, else the plan's
 * cap on categories plus one (NULL/other), DP_PLAN_DISCOVERED_BINS plus one, or a quantile
 * declaration's bins plus two cells per point mass plus one.
 */
uint32_t	dp_plan_worst_codes(const dp_plan_column *col, int max_categories);

#endif							/* DP_PLAN_H */
