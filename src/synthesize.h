/*
 * synthesize.h - what dp_synthesize and dp_sample share (src/synthesize.c, src/model.c): the
 * columns of a synthetic table, how their codes decode to values, and the released model.
 *
 * A model (DpModel) holds only released or public things: the source's schema facts (column
 * names, types, NOT NULL, CHECK constraints, treatments), the public domains of the synthesized
 * columns, and PrivSyn's released output (noisy one-way counts, the rare-value merge computed
 * from them, the consistent marginals and the consistent noisy total).  Everything a synthetic
 * table is made of is drawn from it: dp_synthesize from the model it has just released,
 * dp_sample from a model stored in dpsynth.models, through the same functions.
 */
#ifndef DPSYNTH_SYNTHESIZE_H
#define DPSYNTH_SYNTHESIZE_H

#include "dpsynth.h"

#include "nodes/pg_list.h"

#include "dp_env.h"
#include "dp_codes.h"
#include "dp_decode.h"
#include "dp_adaptive.h"
#include "dp_privsyn.h"
#include "dp_prng.h"

typedef enum OutKind
{
	OUT_SYNTH,					/* synthesized from the model */
	OUT_NULL,					/* excluded, or not selected: NULL */
	OUT_IDENTIFIER				/* fresh values */
} OutKind;

/* A column of the synthetic table, in the source's column order. */
typedef struct OutColumn
{
	char	   *name;
	Oid			typid;			/* declared type (may be a domain) */
	Oid			basetype;
	int32		typmod;			/* the declared type's own typmod */
	int32		basetypmod;		/* the base type's typmod (a domain's, or typmod) */
	/* the source's type when it was a domain whose constraints or default reference objects
	 * that are not built in: the synthetic column has the base type instead (typid, typmod),
	 * so that no code of the domain's owner runs as the caller; else InvalidOid */
	Oid			source_typid;
	/* the synthetic table's column type (synth_own_column_types): the base type, or a type of
	 * the copy's own where the source's owner controls it (an enum, a composite, arrays) */
	Oid			copy_type;
	int32		copy_typmod;
	bool		notnull;
	OutKind		kind;
	/* why: "synthesized", "excluded" (the owner's policy), "not_selected" (columns => ...),
	 * "identifier" (serial, identity, uuid or marked) */
	const char *treatment;
	int			synth;			/* OUT_SYNTH: index into the synthesized columns */
	const dp_domain *domain;	/* OUT_SYNTH: the column's public domain */
	const char *other;			/* the owner's value for a NOT NULL column's "other" cell, or NULL */
	/* decoding (prepare_decoding) */
	bool		decoding_ready;	/* prepare_decoding has run */
	FmgrInfo	infunc;
	Oid			ioparam;
	Datum	   *category;		/* per code: the value, for category domains */
	bool		has_other_value;
	Datum		other_value;	/* `other` through the type's input function (prepare_other), or
								 * '' through the base type's if a column has no category */
	/* what a NOT NULL column's NULL/"other" cell becomes: other_value, a category's value
	 * (fallback), or for bins a value drawn in the bin with the largest released one-way count
	 * (fallback_code); computed from the model's released one-way counts */
	Datum		fallback;
	dp_code		fallback_code;
	/* bins with a released shape inside them (domain->shape): where values are drawn; empty
	 * (no shape: uniform inside each bin) otherwise (synth_prepare_shape) */
	dp_shape	shape;
	/* per bin of a real column with learned bins: the value its rows take where the released
	 * one-way counts show a lone heap in it (dp_binning_heap_points), NaN elsewhere; NULL when
	 * no bin has one (synth_prepare_heaps) */
	double	   *heap_point;
	int			scale;			/* numeric scale, -1 if none */
	Datum		numeric_max;	/* numeric(p,s): the largest value it holds (a numeric), else 0 */
	Datum		numeric_min;	/* and its negation */
	/* identifiers: the largest row number that gets a value (beyond: NULL), and for text ids
	 * whether they are "synthetic-N" (else "N", for a short varchar) */
	int64		id_capacity;
	bool		id_long_format;
	bool		unit;			/* OUT_IDENTIFIER: the source's privacy unit (synthetic unit ids) */
	/* OUT_SYNTH: declared constant within a unit (dp_unit_constant): one value per synthetic unit */
	bool		unit_constant;
} OutColumn;

/* A CHECK constraint of the source, copied to synthetic tables: its name (quoted with
 * quote_identifier wherever it is used) and its expression, deparsed with search_path pinned
 * to pg_catalog, pg_temp.  Kept apart everywhere (C, the model's JSON). */
typedef struct DpCheck
{
	char	   *name;
	char	   *expr;
} DpCheck;

typedef struct DpModel
{
	char	   *relname;		/* the source's name when the model was made */
	const char *method;			/* how it was made, as the model's JSON and comments say it */
	int			nout;
	OutColumn  *out;			/* every column of the synthetic table */
	int			ncols;			/* synthesized columns */
	uint32	   *sizes;			/* their numbers of codes */
	dp_domain  *domains;		/* their domains, when loaded from the catalog (else borrowed) */
	dp_privsyn_result res;		/* margs, nmargs, n_oneway, n_kway, total, merged_*, code_map,
								 * oneway_noisy; res.synth is not part of the model */
	List	   *checks;			/* the source's CHECK constraints that are copied: DpCheck * */
	List	   *skipped_checks;	/* the names (char *) of those that are not (not built-in only) */
	/* a source with a privacy unit: the released rows-per-unit histogram (unit_hist[1..unit_k],
	 * noisy), from which the synthetic unit column's ids are drawn; NULL and 0 otherwise */
	const double *unit_hist;
	int			unit_k;
	/* ... and the noise variances of its discovery at that k (0: none): of the quantile bins'
	 * histograms of rows, and of the selections of values and bounds cells counting units */
	double		unit_discovery_sigma2;
	double		unit_selection_sigma2;
	/* dp_synthesize: the call's privacy schedule and what it spent, release by release (the
	 * model's "privacy" entry); NULL for a model read back from the catalog */
	const dp_schedule *sched;
	const dp_spend *spend;
} DpModel;

/* What the catalog says about a stored model besides the model itself. */
typedef struct DpModelMeta
{
	int64		ledger_id;
	double		epsilon;
	double		delta;
} DpModelMeta;

/* ---- synth_progress.c: the core's callbacks (progress, interrupts, allocation) ---- */

/* Allocation hooks for the core: palloc (huge) in the current memory context. */
extern void dpsynth_install_core_handlers(void);
extern int	dpsynth_core_errcode(void);

typedef struct SynthProgress
{
	const char *label;			/* "dp_synthesize(people)", "dp_sample(model 3)" */
	bool		verbose;
	int			last_percent;
	dp_phase	last_phase;
} SynthProgress;

extern void synth_progress_init(SynthProgress *pr, const char *label, bool verbose);
/* Reports a phase in pg_stat_activity (and as a NOTICE when verbose). */
extern void synth_report(SynthProgress *pr, const char *phase, int percent);
/* The core's progress callback (dp_env.h; arg a SynthProgress) for the pipeline and for GUM:
 * reports, and lets cancel and statement_timeout in. */
extern int	synth_pipeline_progress(void *arg, const dp_progress *p);
/* Seconds since the epoch, for the timings a call returns. */
extern double synth_now(void);

/* ---- synth_columns.c: the synthetic table's columns, planned before the charge ---- */

/* Plans every column of the source, in order; returns the synthesized ones' names. */
extern OutColumn *synth_plan_columns(Oid relid, ArrayType *only, const char *label, int *noutp,
									 ArrayType **synth_names, AttrNumber unit_attnum);
/* Points the synthesized columns at their domains; prepares what can be prepared so far. */
extern void synth_bind_columns(OutColumn *out, int nout, DpColumn *cols, bool discovered);
/* The copy's own types for columns whose types the source's owner controls (enums, composites). */
extern void synth_own_column_types(OutColumn *out, int nout, Oid nspid);
/* Marks the synthesized columns named in names[0..n) constant within a unit; returns how many. */
extern int	synth_mark_unit_constant(OutColumn *out, int nout, char *const *names, int n);
/* Refuses (22023) a NOT NULL identifier column that cannot hold maxrows fresh values. */
extern void synth_check_identifiers(OutColumn *out, int nout, int64 maxrows, bool rows_given,
									const char *label);

/* ---- synth_decode.c: codes to values (post-processing) ---- */

extern void synth_prepare_numeric(OutColumn *oc);
extern void synth_prepare_other(OutColumn *oc);
extern void synth_prepare_decoding(OutColumn *oc);
extern void synth_prepare_fallback(OutColumn *oc, const double *oneway);
extern void synth_prepare_shape(OutColumn *oc);
extern void synth_prepare_heaps(OutColumn *oc, const double *oneway);
extern Datum synth_decode_value(OutColumn *oc, dp_code code, dp_prng *rng, bool *isnull);
extern void synth_identifier_format(OutColumn *oc, int64 nrows);
extern Datum synth_identifier_value(OutColumn *oc, int64 i, dp_prng *rng, bool *isnull);

/* ---- synth_constraints.c: what a synthetic table may carry (schema facts, before the charge) ---- */

/* Replaces a domain that is not built-in-only by its base type (NOTICE), or refuses the column. */
extern void synth_secure_column_type(OutColumn *oc, const char *label);
/* The source's CHECK constraints made of built-in objects (DpCheck *); the others' names in *skipped. */
extern List *synth_read_checks(Oid relid, const char *label, List **skipped);
/* The checks validated again against the created target (a stored model's text is never trusted). */
extern List *synth_validated_checks(Oid target_relid, List *checks, const char *label);
/* The target columns' domains' CHECKs, as expressions over the columns. */
extern List *synth_domain_check_exprs(Oid target_relid, OutColumn *out, int nout);

/* ---- synth_write.c: the synthetic table, written as the caller ---- */

/* The target's name (in *nspid's schema): new, and creatable by the caller; raises otherwise. */
extern char *synth_resolve_target(FunctionCallInfo fcinfo, int argno, const char *default_name,
								  const char *function, Oid *nspid);
/*
 * A synthetic table written chunk by chunk while its rows are still drawn (the core's
 * dp_gum_params.chunk_sink: synth_write_chunk, with this as its argument): the same steps, draws
 * and rows as synth_write_table, for a model with no privacy unit.  m and comment are set before
 * the first chunk, or by ready(arg) at it (dp_synthesize's model is complete only then); done,
 * written and relid once the last chunk is in.
 */
typedef struct SynthStreamWriter SynthStreamWriter;
typedef struct SynthStreamCopy
{
	DpModel    *m;
	char	   *comment;
	void		(*ready) (struct SynthStreamCopy *x);
	dp_prng    *rng;
	SynthProgress *pr;
	Oid			nspid;
	const char *target;
	SynthStreamWriter *w;
	bool		done;
	uint64		written;
	Oid			relid;
} SynthStreamCopy;
extern int	synth_write_chunk(void *arg, const dp_codes *rows, uint64_t first, uint64_t total,
							  dp_gum_stream *stream);
extern void synth_write_chunk_forget(void);
/* Creates the target, writes the decoded rows, adds the constraints; returns the rows kept. */
extern uint64 synth_write_table(DpModel *m, const dp_codes *synth, dp_prng *rng, Oid nspid,
								const char *target, const char *comment, SynthProgress *pr,
								Oid *target_relid);

/* ---- synth_pagewrite.c: the rows as heap pages, written a megabyte at a time (15 only) ---- */

typedef struct SynthPageWriter SynthPageWriter;

/* NULL where table_multi_insert must be used: not a new, permanent, empty heap, or 16+. */
extern SynthPageWriter *synth_pagewrite_begin(Relation rel, CommandId cid);
extern void synth_pagewrite_row(SynthPageWriter *w, Datum *values, bool *isnull);
extern void synth_pagewrite_end(SynthPageWriter *w);

/* ---- synthesize.c ---- */

/* The rows argument of dp_synthesize and dp_sample: 0 <= rows <= dpsynth.max_sample_rows. */
extern int64 synth_check_rows(FunctionCallInfo fcinfo, int argno);

/*
 * synth_onescan.c: the first read of a table whose quantile bins the call learns, in one scan
 * where it can (see there).  SYNTH_READ_TWICE: nothing was read, nothing learned (discovery and
 * the encoding scan as usual); SYNTH_READ_DISCOVERED: the domains learned (*colsp loaded again),
 * the rows still to encode with a scan (codes empty); SYNTH_READ_ONCE: both, the encoded table
 * in codes.
 */
typedef enum
{
	SYNTH_READ_TWICE,
	SYNTH_READ_DISCOVERED,
	SYNTH_READ_ONCE
} SynthReadOnce;
extern SynthReadOnce synth_read_once(Relation rel, ArrayType *names, DpColumn **colsp, int ncols,
									 const dp_plan *plan, int64 ledger_id, const DpUnit *unit, dp_codes *codes,
									 SynthProgress *pr);
/* ... dp_marginal's (no progress; the rows of its columns kept must fit as well as the offsets) */
extern SynthReadOnce marginal_read_once(Relation rel, ArrayType *names, DpColumn **colsp, int ncols,
										const dp_plan *plan, int64 ledger_id, const DpUnit *unit,
										dp_codes *codes);


/* ---- model.c ---- */

/* The model as JSON text (the format README.md documents). */
extern char *dpsynth_model_json(const DpModel *m);

/*
 * Stores a model in dpsynth.models, in the caller's transaction, for the charge ledger_id on
 * table relid; returns its id.
 */
/*
 * The largest model stored (cells over all its marginals): a jsonb value holds at most 256 MB,
 * and a model takes a few tens of bytes per cell uncompressed, so 8M cells stay below that with
 * room for the columns' part.  A larger release still writes its table, with a WARNING (dpsynth.max_model_cells).
 */
#define DPSYNTH_MODEL_MAX_CELLS 8000000

/* The synthesis methods dp_synthesize offers (its method argument) and how models name them. */
#define DPSYNTH_DEFAULT_METHOD			"adaptive"
#define DPSYNTH_METHOD_PRIVSYN_LABEL	"PrivSyn (DenseMarg + GUM)"
#define DPSYNTH_METHOD_ADAPTIVE_LABEL	"adaptive (AIM-style rounds + GUM)"

extern int64 dpsynth_model_store(Oid relid, int64 ledger_id, double epsilon, double delta, int64 units,
								 const DpModel *m, uint64 cells, const char *json);

/*
 * Loads model_id for the current user: raises 42501 "does not exist or you may not use it" alike
 * for a model that does not exist and one the user may not use (only its creator, its table's
 * owner and admins may), so that ids are not revealed; 42704 or 42804 if a
 * column's type no longer exists or changed.  The returned model is ready to decode once
 * prepare_decoding ran on its synthesized columns.
 */
extern DpModel *dpsynth_model_load(int64 model_id, DpModelMeta *meta);

#endif							/* DPSYNTH_SYNTHESIZE_H */
