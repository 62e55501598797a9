/*
 * dpsynth.h - PostgreSQL glue shared by the SQL entry points.
 *
 * The algorithms live in src/core (pure C, no PostgreSQL headers); the files beside this one
 * decode arguments, check privileges, charge budgets, read tables and report errors.
 */
#ifndef DPSYNTH_H
#define DPSYNTH_H

#include "postgres.h"

#include "access/attnum.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/relcache.h"

#include "compat.h"
#include "dp_domain.h"
#include "dp_partial.h"
#include "dp_plan.h"
#include "dp_units.h"

/* SQLSTATEs of dpsynth's own, in class YD: the SQL standard reserves the classes that begin
 * with 0-4 or A-H, PostgreSQL uses 5x, F0, HV, P0 and XX.  The README lists them. */
#define ERRCODE_DPSYNTH_BUDGET_EXHAUSTED	MAKE_SQLSTATE('Y','D','0','0','1')
#define ERRCODE_DPSYNTH_ROLE_LIMIT			MAKE_SQLSTATE('Y','D','0','0','2')
#define ERRCODE_DPSYNTH_CHARGE_FAILED		MAKE_SQLSTATE('Y','D','0','0','3')

/* ---- dpsynth.c ---- */

extern int	dpsynth_charge_timeout_ms;
extern int	dpsynth_synthesis_threads;
extern int	dpsynth_max_sample_rows;
extern bool dpsynth_write_pages;
extern int	dpsynth_max_model_cells;

/* Switching to the extension owner to read and write the catalog. */
typedef struct DpOwnerSwitch
{
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} DpOwnerSwitch;

extern Oid	dpsynth_extension_owner(void);
extern void dpsynth_become_owner(DpOwnerSwitch *sw);
/* Pins the settings that change a value's text (DateStyle, TimeZone, ...) for a scan, so the
 * cell a value lands in never depends on the caller's session; undo with AtEOXact_GUC. */
extern int	dpsynth_pin_output_settings(void);
/* Pins search_path to pg_catalog, pg_temp (names resolve to built-in objects only); returns the
 * GUC nest level to undo it with AtEOXact_GUC. */
extern int	dpsynth_pin_search_path(void);
extern void dpsynth_restore_user(const DpOwnerSwitch *sw);

/* Raises unless the current user may call release functions on the table. */
extern void dpsynth_check_release_privilege(Oid relid, const char *function);

/* Validates an epsilon argument (not NULL, finite, positive). */
extern double dpsynth_check_epsilon(FunctionCallInfo fcinfo, int argno);
/* Raises (55000) if the table is not protected by dpsynth. */
extern void dpsynth_check_protected(Oid relid);

/* Validates a delta argument: in the open interval (0, 1) (dp_delta_valid). */
extern void dpsynth_check_delta(double delta);

/* rho(epsilon, delta) in whole units of 1e-12, rounded down; -1 if out of range
 * (dp_rho_units, src/core/dp_plan.c). */
extern int64 dpsynth_rho_units(double epsilon, double delta);
/* The rho a release charged this many units may use (never more than units * 1e-12). */
extern double dpsynth_units_rho(int64 units);

/* Converts a call's epsilon to rho units at the table's delta (returned in *delta); raises if
 * the table is not protected or the transaction is read-only. */
extern int64 dpsynth_rho_for_call(Oid relid, double epsilon, double *delta);

/* ---- charge.c ---- */

/*
 * Charges rho to the table's budget in a transaction of its own, committed by a background
 * worker before this returns.  Raises (and releases nothing) when the charge is refused or
 * cannot be committed.  Returns the ledger id.
 */
extern int64 dpsynth_charge(Oid relid, const char *function, const char *columns_literal,
							double epsilon, double delta, int64 rho_units, double delta_add,
							const char *details_json);

/* Marks the ledger row completed, in the caller's transaction. */
extern void dpsynth_complete(int64 ledger_id);

/* ---- domain.c (encode.c: values to codes; scan_parallel.c: the scan of codes) ---- */

/* Where a column's domain comes from, or what must happen before it has one. */
typedef enum DpColumnState
{
	DP_COLUMN_READY,				/* domain set up (declared, DP-released, schema, type) */
	DP_COLUMN_DISCOVER_CATEGORIES,	/* text: DP partition selection needed */
	DP_COLUMN_DISCOVER_BOUNDS,		/* number, date, time: DP bounds needed */
	DP_COLUMN_DISCOVER_EDGES		/* declared bounds, quantile bins: DP edges needed */
} DpColumnState;

/* How a Datum becomes a code (DpColumn.encoding; dpsynth_encode in encode.c, and its SQL form in
 * encoder.c). */
enum
{
	DP_ENC_TEXT,				/* text, varchar: bytes as stored */
	DP_ENC_BPCHAR,				/* char(n): bytes without the trailing pad */
	DP_ENC_OUTPUT,				/* other types with categories: the output function's text */
	DP_ENC_BOOL_LABEL,			/* boolean with declared categories 'false'/'true' */
	DP_ENC_BOOL,				/* boolean, intrinsic domain: false = 0, true = 1 */
	DP_ENC_ENUM,				/* enum, intrinsic domain: labels in sort order */
	DP_ENC_INT,					/* integers, dates (days), timestamps (microseconds) */
	DP_ENC_REAL,				/* real, double precision, numeric */
	/*
	 * Not a domain's: synth_onescan.c's scratch columns, an integer clamped into the domain's one
	 * bin [iedges[0], iedges[1] - 1] (a learned column's declared bounds), as its offset from
	 * iedges[0], low 16 bits or high 16 bits; NULL is the offset with every bit set
	 */
	DP_ENC_OFFSET_LO,
	DP_ENC_OFFSET_HI
};

/* A column of a protected table with its public domain, ready to encode values. */
typedef struct DpColumn
{
	char	   *name;
	AttrNumber	attnum;
	Oid			typid;			/* base type (domains unwrapped) */
	int32		typmod;
	bool		notnull;
	DpColumnState state;
	const char *source;			/* "declared", "dp", "schema" or "type" */
	char	   *other;			/* what a NOT NULL column's NULL/other cell decodes to, or NULL */
	/* DP_COLUMN_DISCOVER_EDGES: the declaration to learn quantile edges in */
	double		quantile_lower;
	double		quantile_upper;
	int			quantile_bins;
	int			quantile_points;
	bool		quantile_auto;	/* binning 'auto': fewer bins where they would be too thin */
	bool		quantile_fine;	/* 'auto' on a small integer range: refined where affordable
								 * (dp_binning.h); quantile_bins is then one per value */
	bool		quantile_wide;	/* 'auto', default bins, not refined: as many bins as the
								 * released mass affords (dp_binning_wide_bins) */
	dp_domain	domain;
	/*
	 * quantile bins learned by this call's discovery (dpsynth_discover): each bin's count as the
	 * discovery released it and its variance (variance 0: none), nprior bins; else NULL, 0
	 */
	double	   *prior_est;
	double	   *prior_var;
	int			nprior;
	int64	   *iedges;			/* storage of numeric domains */
	double	   *edges;
	/* enum columns: sorted label OIDs and their codes */
	Oid		   *enum_oids;
	dp_code    *enum_codes;
	int			nenum;
	/* how a Datum becomes a code (DP_ENC_*) */
	int			encoding;
	FmgrInfo	outfunc;		/* DP_ENC_OUTPUT: categories of other types, by their text */
} DpColumn;

/*
 * Resolves column names to their domains; raises before any row is read when a column does
 * not exist, is listed twice, is excluded or an identifier, or has no public domain and may not
 * be discovered.  Columns whose domain must first be discovered come back in a DISCOVER state.
 * The caller has brought the table's rows back to their names first (dpsynth_domains_by_name,
 * once per call, before its first read of domains or policies).
 */
extern DpColumn *dpsynth_load_columns(Oid relid, ArrayType *names, int *ncolumns);
/* The same, as the catalog has them now: no lock, no retry; a column whose domain is still to be
 * discovered comes back in its DISCOVER state (for functions that only read domains; it brings
 * the rows back to their names itself). */
extern DpColumn *dpsynth_peek_columns(Oid relid, ArrayType *names, int *ncolumns);

/* The additive delta one partition selection on the table may spend now. */
extern double dpsynth_selection_share(Oid relid);

/* Stores a DP-released domain of a column (source 'dp', paid by ledger row ledger_id). */
extern void dpsynth_store_discovered_categories(Oid relid, AttrNumber attnum, int64 ledger_id,
												char **labels, int nlabels);
extern void dpsynth_store_discovered_bins(Oid relid, AttrNumber attnum, int64 ledger_id,
										  double lower, double upper, int bins);
/* Learned quantile edges, and the released shape inside them: npieces pieces of 3 doubles
 * (lo, hi, weight; dp_shape_init in dp_decode.h), none if npieces is 0. */
extern void dpsynth_store_learned_edges(Oid relid, AttrNumber attnum, int64 ledger_id,
										const double *edges, int nedges,
										const double *shape, int npieces);

/* One scan of rel: each row's codes for the columns go to row_fn (scan_parallel.c: with parallel
 * workers when the table is big). */
extern void dpsynth_scan_codes(Relation rel, DpColumn *cols, int ncols,
							   void (*row_fn) (const dp_code *codes, void *arg), void *arg);

/* Encodes one value; never raises on a value. */
extern dp_code dpsynth_encode(DpColumn *col, Datum value, bool isnull);

/* The parallel workers a big table's scan may use besides the caller (scan_parallel.c). */
extern int	dpsynth_scan_workers;
/* dpsynth.discovery_scans: how dp_synthesize reads a table it learns quantile bins of
 * (synth_onescan.c) */
typedef enum
{
	DPSYNTH_DISCOVERY_SCANS_ONE,	/* one scan where it can (the default) */
	DPSYNTH_DISCOVERY_SCANS_TWO,	/* discovery's own scan, then the encoding scan */
	DPSYNTH_DISCOVERY_SCANS_CHECK	/* one scan, then both of the others, compared with it */
} DpsynthDiscoveryScans;
extern int	dpsynth_discovery_scans;

/* The integer types, and the temporal types that dpsynth counts as integers (days, microseconds). */
static inline bool
dpsynth_type_is_integer(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

static inline bool
dpsynth_type_is_time(Oid t)
{
	return t == DATEOID || t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

/* Integer and real views of a numeric value (dates as days, timestamps as microseconds),
 * for discovery; never raise. */
extern bool dpsynth_value_is_integral(Oid typid);
extern int64 dpsynth_value_int(Oid typid, Datum value);
extern double dpsynth_value_real(Oid typid, Datum value);
extern void dpsynth_value_range(Oid typid, double *lo, double *hi);

/* ---- plan.c: the privacy plan of a call (src/core/dp_plan.h), before its charge ---- */

/*
 * Plans a call over its loaded columns (units: the call's rho units; epsilon for messages) and
 * raises the plan's refusal, if any: 54000 for a marginal or a pair too large, 22023 for an
 * epsilon too small to discover or to release.  Reads the table's selection delta when a text
 * column awaits discovery.  Raises before any charge.
 */
extern void dpsynth_plan_call(Oid relid, dp_plan_call call, int64 units, double epsilon,
							  const DpColumn *cols, int ncols, dp_plan *plan);

/* Raises 54000: a marginal over DP_PLAN_MAX_MARGINAL_CELLS. */
pg_noreturn extern void dpsynth_too_many_cells(void);

/*
 * Raises XX001 after dp_noise_counts refused the counts to release (a negative count: a broken or
 * hostile shard); nothing is released (defined in marginal.c).
 */
pg_noreturn extern void dpsynth_noise_refused(void);

/* ---- discover.c ---- */

/*
 * Learns the domains of the columns in a DISCOVER state in one scan of rel, as the plan says
 * (units per column, selection delta per text column, cap on categories, 'auto' bins' least
 * mass), stores them (source 'dp', paid by ledger_id) and returns the columns (names) loaded
 * again, all ready.  standalone: dp_discover, a release of its own, whose numeric bounds on a
 * range wider than their bins also get quantile edges (and their shape) from the same noisy
 * histogram; inside a release they keep equal widths.
 */
struct DpUnit;
extern DpColumn *dpsynth_discover(Relation rel, ArrayType *names, DpColumn *cols, int ncols,
								  const dp_plan *plan, int64 ledger_id, bool standalone,
								  struct DpUnit *unit);

/*
 * The same discovery in three steps, for a caller whose own scan of rel counts the rows
 * (synthesize.c's one scan): begin (the counts empty, the noises set from the plan), one
 * dpsynth_discover_add_int per row and column (only columns learning quantile bins of an integer
 * type inside declared bounds, each k-th column discovered in the columns' order, NULLs not
 * added), then finish (the releases, as dpsynth_discover makes them from the same counts; with
 * check, discovery's own scan first, its counts compared with the caller's: an internal error if
 * they differ).  Never per unit.
 */
typedef struct DpDiscoverRun DpDiscoverRun;
extern DpDiscoverRun *dpsynth_discover_begin(Relation rel, DpColumn *cols, int ncols, const dp_plan *plan,
											 struct DpUnit *unit);
extern void dpsynth_discover_add_int(DpDiscoverRun *r, int k, int64 v);
extern DpColumn *dpsynth_discover_finish(DpDiscoverRun *r, ArrayType *names, int64 ledger_id, bool standalone,
										 bool check);

/* Opens a protected source table for reading (AccessShareLock, on its partitions and inheritance
 * children too); raises before anything is charged. */
extern Relation dpsynth_open_source(Oid relid, bool foreign_ok);

/* ---- units.c: privacy per unit (a table's privacy_unit, docs/PRIVACY.md) ---- */

/* A protected table's privacy unit: on false for a table protected per row. */
typedef struct DpUnit
{
	bool		on;
	AttrNumber	attnum;			/* the unit column */
	Oid			typid;			/* its base type */
	char	   *name;
	int32		max_rows;		/* k: rows a unit keeps in a release */
	int32		max_cell;		/* c <= k: rows a unit keeps in one cell of a dp_marginal */
	/* max_rows_per_unit NULL: k is learned by the release (units.c), max_rows DP_UNIT_LEARN_MAX
	 * until then; declared_cell the declared c (0: c = k) */
	bool		learn_k;
	int32		declared_cell;
	/* the noise of the released rows-per-unit histogram that learns k (set by the release before
	 * its first scan, discovery's where it discovers); NULL: nothing to learn */
	const struct dp_dgauss *learn_noise;
	/* ... and the noise of its second release, drawn where no cell of the first stands above
	 * DP_UNIT_LEARN_TOPUP_Z sd (learn_topped_up then; NULL: no second release, where the
	 * release could not spare the units) */
	const struct dp_dgauss *learn_topup_noise;
	bool		learn_topped_up;
	/* ... and the rho units each discovered column gives to it where it is drawn (dp_discover,
	 * whose units are all discovery's; 0: it comes from the method's or the marginal's) */
	int64		learn_topup_each;
	/* ... and the expected L1 norm of the release's noise at sensitivity 1, against which k
	 * weighs the rows it drops (dp_unit_pick_k_weighed; public; 0: the quantile alone) */
	double		learn_noise_l1;
	/* ... and the cell bound that release's noise is calibrated to, weighing each k at the
	 * sensitivity the release uses: declared_cell for dp_marginal, 0 (none: sensitivity k) for
	 * dp_synthesize, whose noise ignores the cell bound */
	int32		learn_cell;
	/* k learned (by the release's first scan): the released histogram of the units' rows bounded
	 * at k, released_hist[1..max_rows]; a later scan of the release bounds at k and reuses it */
	bool		learned;
	int64		released_hist[DP_UNIT_LEARN_MAX + 1];
	/* the release discovers per unit: histograms of rows (quantile bins), selections of values
	 * or cells counting units (categories, bounds); set by dpsynth_unit_discovery_sigma2 */
	bool		discover_rows;
	bool		discover_units;
	/* the columns the owner declared constant within a unit (dp_unit_constant; public, read by
	 * no release): their names, those not dropped, in column order */
	int			nconstant;
	char	  **constant;
} DpUnit;

/* A release that learns k gives 1 / this of its rho (after discovery) to the rows-per-unit histogram. */
#define DPSYNTH_UNIT_LEARN_PARTS 50

/* A kept row's codes; first: the row begins a unit (the rows of a unit come together). */
typedef void (*DpUnitRowFn) (const dp_code *codes, bool first, void *arg);

/* A column's cells where k is learned: its domain's codes, or its quantile bins or discovered bins
 * (and NULL) if still to learn, 1 for categories still to select. */
extern double dpsynth_unit_column_cells(const DpColumn *col);
/* Reads the table's privacy unit and checks its column (55000 if dropped or retyped). */
extern void dpsynth_unit_load(Oid relid, DpUnit *u);
/* Raises 0A000 (before the charge) if the table has a unit: what is not available, and why. */
extern void dpsynth_unit_refuse(const DpUnit *u, Oid relid, const char *what, const char *why);
/* The squared L2 sensitivity of a histogram under the unit's bounds (1 without a unit). */
extern int64 dpsynth_unit_sensitivity2(const DpUnit *u, bool per_cell);
/* The one place a release's noise variance is calibrated to the bounded unit. */
extern double dpsynth_unit_sigma2(const DpUnit *u, double sigma2, bool per_cell);
/* A release's discovery noise per unit for its histograms of rows (sensitivity k), with everything
 * discovery per unit needs checked before the charge (22023 where epsilon is too small). */
extern double dpsynth_unit_discovery_sigma2(DpUnit *u, Oid relid, const DpColumn *cols, int ncols,
											const dp_plan *plan, double epsilon);
/* ... that noise at the bound as it stands (k^2 / (2 rho_each)), drawn once k is known */
extern double dpsynth_unit_rows_sigma2(const DpUnit *u, const dp_plan *plan);
/* A release whose k is learned: its rho units for the rows-per-unit histogram, u->learn_noise set
 * (0 for a declared k); 22023 before the charge where they cannot buy a drawable noise. */
extern int64 dpsynth_unit_discover_topup(DpUnit *u, const dp_plan *plan, int64 units_learn,
										 struct dp_dgauss *noise);
extern int64 dpsynth_unit_learn_share(DpUnit *u, Oid relid, int64 units, double epsilon,
									  struct dp_dgauss *noise);
/* ... for its selections of values and cells, which count units (sensitivity sqrt(k)) */
extern double dpsynth_unit_selection_sigma2(const DpUnit *u, const dp_plan *plan);
/* ... and the additive delta of each value a selection per unit may release (delta_each / k) */
extern double dpsynth_unit_selection_delta(const DpUnit *u, const dp_plan *plan);
/* One scan, each unit's rows bounded to max_rows (uniformly at random), kept rows to row_fn; with
 * u->learn_noise and k not learned yet, k learned first (max_rows and max_cell set to it); where k
 * is learned, hist gets the released histogram (u->released_hist), never the scan's own counts. */
extern void dpsynth_scan_unit_codes(Relation rel, DpColumn *cols, int ncols, DpUnit *u,
									DpUnitRowFn row_fn, void *arg, int64 *hist);
/* A row's codes from its slot (attributes read), for dpsynth_scan_unit_rows; nothing may fail on a value. */
struct TupleTableSlot;
typedef void (*DpUnitEncodeFn) (struct TupleTableSlot *slot, dp_code *codes, void *arg);
/* dpsynth_scan_unit_codes with ncols codes per row made by encode_fn from attributes up to maxatt. */
extern void dpsynth_scan_unit_rows(Relation rel, int ncols, AttrNumber maxatt, DpUnit *u,
								   DpUnitEncodeFn encode_fn, void *encode_arg, DpUnitRowFn row_fn,
								   void *arg, int64 *hist);
/* The ledger's details for the unit (", \"privacy_unit\": {...}"), or "" without one. */
extern char *dpsynth_unit_json(const DpUnit *u, bool per_cell);
/* The ledger's details for a discovery per unit (", \"discovery_sigma2\": ..."), or "". */
extern char *dpsynth_unit_discovery_json(const DpUnit *u, double sigma2);

/* ---- scan.c: one pass over a table and its partitions or inheritance children ---- */
#include "access/tableam.h"
#include "executor/tuptable.h"

typedef struct DpSourceScan
{
	Relation	root;
	List	   *leaves;			/* OIDs of the relations of the tree that hold rows */
	ListCell   *next;
	Relation	leaf;			/* being read, or NULL */
	TableScanDesc scan;
	TupleTableSlot *leafslot;
	TupleTableSlot *rootslot;	/* a row converted to the root's layout */
	AttrMap    *map;			/* leaf -> root columns, NULL where they agree */
	struct ParallelTableScanDescData **pscans;	/* per leaf, in a parallel scan; else NULL */
	int			nopened;		/* leaves opened so far */
	LOCKMODE	leaflock;		/* taken on a leaf other than the root when opened */
} DpSourceScan;

/*
 * Raises (before the charge) if the table's tree holds a temporary table, or a foreign table
 * unless foreign_ok (dp_marginal: counted on its server, foreign.c).
 */
extern void dpsynth_check_tree(Relation root, bool foreign_ok);
/*
 * Raises (before the charge) if relid, of root's tree, holds rows the scan cannot see
 * (visibility.c); counted_ok: unless it is the root, a Citus table counted on its shards (citus.c).
 */
extern void dpsynth_check_visible(Relation root, Oid relid, bool counted_ok);
/* Citus's distribution method of relid and its replication model, '\0' if not a Citus table. */
extern char dpsynth_citus_method(Oid relid, char *repmodel);
/* A hash-distributed or reference table, not partitioned: counted on its shards (citus.c). */
extern bool dpsynth_citus_counted(Oid relid);

/* A column's encoder as SQL (encoder.c), and whether its text differs between servers. */
extern char *dpsynth_encoder_sql(Oid relid, DpColumn *col);
extern bool dpsynth_encoder_not_portable(const DpColumn *col);

/*
 * Foreign partitions counted on their servers (foreign.c): checks before the charge, then the
 * exact counts of the marginal of cols added to counts (first column slowest, the product of
 * the columns' sizes).  The _sets forms
 * count several marginals (each a set of columns of cols, by index) in one scan of each
 * partition per DP_FOREIGN_SETS_PER_SCAN sets: counts[k] for set k.
 */
typedef struct DpColumnSet
{
	int			n;
	const int  *idx;
} DpColumnSet;

#define DP_FOREIGN_SETS_PER_SCAN 256

extern void dpsynth_foreign_check(Relation root, List *foreign, DpColumn *cols, int ncols);
extern void dpsynth_foreign_count(Relation root, List *foreign, DpColumn *cols, int ncols, int64 *counts);
extern void dpsynth_foreign_check_sets(Relation root, List *foreign, DpColumn *cols, int ncols,
									   const DpColumnSet *sets, int nsets);
extern void dpsynth_foreign_count_sets(Relation root, List *foreign, DpColumn *cols, const DpColumnSet *sets,
									   int nsets, int64 **counts);
/*
 * The SQL text that foreign.c and citus.c send to other servers (remote_sql.c): a relation's
 * qualified name, a column set's sizes as an int4[] literal, and conditions that fail on a
 * server unless each column has its declared type.
 */
extern char *dpsynth_qualified_name(Oid relid);
extern char *dpsynth_sizes_literal(DpColumn *cols, const DpColumnSet *set);
extern char *dpsynth_types_quals(DpColumn *cols, const DpColumnSet *sets, int k0, int k1);
/*
 * A Citus table counted on its shards (citus.c), called by foreign.c for a relation of
 * dpsynth_foreign_leaves that dpsynth_citus_counted: the checks before the charge, and the count.
 */
extern void dpsynth_citus_check_sets(Relation root, Oid relid, DpColumn *cols, int ncols,
									 const DpColumnSet *sets, int nsets);
extern void dpsynth_citus_count_sets(Oid relid, DpColumn *cols, const DpColumnSet *sets, int nsets,
									 int64 **counts);
/*
 * dp_discover on a Citus table counted on its shards (citus.c): the checks before the charge of
 * the columns to discover among cols, and, after it, the values of one column present on the
 * shards, each given to add with its count.
 */
extern void dpsynth_citus_check_discovery(Relation root, Oid relid, DpColumn *cols, int ncols);
extern void dpsynth_citus_count_values(Oid relid, DpColumn *col, void (*add) (void *arg, Datum value, int64 n),
									   void *arg);
extern List *dpsynth_source_leaves(Relation root);
/* The foreign tables of the tree (partitions on other servers) and a Citus table counted on its shards, locked. */
extern List *dpsynth_foreign_leaves(Relation root);
/*
 * partial.c, shared by the int8[]-vector functions of partial.c and citus_state.c: an int8[] of n
 * counts; a partial-count status raised as an error; a one-dimensional int4 array's elements; the
 * sizes argument n (not NULL); and a state's counts checked against those sizes (NULL: zeros).
 */
extern ArrayType *dpsynth_int8_array(const int64 *counts, int64 n);
pg_noreturn extern void dpsynth_partial_raise(dp_partial_status st);
extern int32 *dpsynth_int4_elements(ArrayType *a, const char *what, int *n);
extern int32 *dpsynth_sizes_arg(FunctionCallInfo fcinfo, int n, int *ncols);
extern ArrayType *dpsynth_counts_vector(const dp_partial *p, const int32 *sizes, int ncols);
extern void dpsynth_source_begin(DpSourceScan *s, Relation root);
extern void dpsynth_source_begin_shared(DpSourceScan *s, Relation root, List *leaves,
										struct ParallelTableScanDescData **pscans, LOCKMODE leaflock);
/* The next row, in the root's layout (a slot owned by the scan), or NULL at the end. */
extern TupleTableSlot *dpsynth_source_next(DpSourceScan *s);
extern void dpsynth_source_end(DpSourceScan *s);

/* The codes of one row, a slot in the root's layout (see encode.c). */
extern void dpsynth_encode_slot(DpColumn *cols, int ncols, AttrNumber maxatt,
								TupleTableSlot *slot, MemoryContext rowcxt, dp_code *codes);

/* Serializes changes of a table's domains and policies with DP discovery (to the end of the
 * transaction). */
extern void dpsynth_lock_domains(Oid relid);
/* Brings the table's domains and policies back to their columns' names and refuses (55000) a
 * table where a row cannot be matched to its column; every release calls it once, before its
 * first read of them. */
extern void dpsynth_domains_by_name(Oid relid);
/* Refuses (55000) a column policy read at column colname's attnum that was set for set_for. */
extern void dpsynth_check_policy_column(Oid relid, const char *colname, const char *set_for);

/*
 * Quantile bins that binning 'auto' learns (at most the declaration's bins; spikes and point
 * masses get bins of their own on top).  Fewer, fuller bins keep the noise of each 2- and 3-way
 * cell small relative to its count, which matters most at small epsilon; 16 was chosen among 16,
 * 24 and 32 by measurement.
 */
#define DPSYNTH_AUTO_BINS 16

/* Label of a code (NULL for the NULL cell) as a text datum (encode.c). */
extern Datum dpsynth_code_label(DpColumn *col, dp_code code, bool *isnull);
/* Orders OIDs, for qsort and bsearch (encode.c). */
extern int	dpsynth_oid_cmp(const void *a, const void *b);

#endif
