/*
 * uncertainty.c - what a released model says about its own error, for the analyst who cannot see
 * the source table:
 *   dp_model_marginals(model)                         the measured marginals, their rho and noise
 *   dp_marginal_intervals(model, columns, confidence) a marginal of the model with error bars
 *
 * Privacy: post-processing of the stored model (dpsynth.models, loaded by dpsynth_model_load with
 * its access rule, dpsynth._model_access) and of public facts; nothing here opens the source table,
 * which may be gone.  No charge (docs/PRIVACY.md).  The statistics, their assumptions and what
 * they do not cover are in src/core/dp_uncertainty.h.
 */
#include "synthesize.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "dp_uncertainty.h"

/* An unmeasured column set is listed cell by cell (without intervals) up to this many cells. */
#define DPSYNTH_UNMEASURED_MAX_CELLS (1 << 20)

/* The synthesized columns of a loaded model by index, and how many original codes each merged code holds. */
typedef struct ModelView
{
	DpModel    *m;
	const char **names;			/* [ncols] */
	uint32	  **members;		/* [ncols][merged code] */
} ModelView;

static ModelView *
view_model(int64 model_id)
{
	ModelView  *v = palloc0(sizeof(ModelView));
	DpModelMeta meta;
	DpModel    *m = dpsynth_model_load(model_id, &meta);

	v->m = m;
	v->names = palloc0(sizeof(char *) * m->ncols);
	v->members = palloc0(sizeof(uint32 *) * m->ncols);
	for (int i = 0; i < m->nout; i++)
		if (m->out[i].kind == OUT_SYNTH)
			v->names[m->out[i].synth] = m->out[i].name;
	for (int j = 0; j < m->ncols; j++)
	{
		v->members[j] = palloc0(sizeof(uint32) * m->res.merged_sizes[j]);
		for (uint32 c = 0; c < m->sizes[j]; c++)
			v->members[j][m->res.code_map[j][c]]++;
	}
	return v;
}

static Datum
names_array(const ModelView *v, const dp_marg *mg)
{
	Datum	   *elems = palloc(sizeof(Datum) * mg->nattrs);

	for (uint32 a = 0; a < mg->nattrs; a++)
		elems[a] = CStringGetTextDatum(v->names[mg->attrs[a]]);
	return PointerGetDatum(construct_array(elems, mg->nattrs, TEXTOID, -1, false, TYPALIGN_INT));
}

static double
model_arg_confidence(FunctionCallInfo fcinfo, int argno)
{
	double		c;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("confidence must not be NULL")));
	c = PG_GETARG_FLOAT8(argno);
	if (!(c > 0 && c < 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("confidence must be between 0 and 1, exclusive"),
				 errdetail("The value given was %g.", c),
				 errhint("0.95 gives 95%% intervals.")));
	return c;
}

static int64
model_arg_id(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model must not be NULL")));
	return PG_GETARG_INT64(0);
}

/* ---------------------------------------------------------------------------------------
 * dp_model_marginals
 * --------------------------------------------------------------------------------------- */

PG_FUNCTION_INFO_V1(dpsynth_model_marginals);
Datum
dpsynth_model_marginals(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ModelView  *v = view_model(model_arg_id(fcinfo));
	const dp_privsyn_result *r = &v->m->res;

	InitMaterializedSRF(fcinfo, 0);
	for (uint32 k = 0; k < r->nmargs; k++)
	{
		const dp_marg *mg = &r->margs[k];
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};
		uint32		merged = 0;

		if (mg->nattrs == 1)
			for (uint32 c = 0; c < mg->ncells; c++)
				merged += v->members[mg->attrs[0]][c] > 1;
		values[0] = Int32GetDatum((int32) k + 1);
		values[1] = names_array(v, mg);
		values[2] = Int64GetDatum((int64) mg->ncells);
		values[3] = Float8GetDatum(mg->rho);
		nulls[3] = !(mg->rho > 0);
		values[4] = Float8GetDatum(sqrt(DP_UNC_SIGMA2_SLACK / (2 * mg->rho)));
		nulls[4] = nulls[3] || mg->spread;	/* no per-cell noise to state (dp_uncertainty.h) */
		values[5] = Int32GetDatum((int32) merged);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* ---------------------------------------------------------------------------------------
 * dp_marginal_intervals
 * --------------------------------------------------------------------------------------- */

/* The requested columns as indices of synthesized columns, in the caller's order. */
static int
resolve_columns(FunctionCallInfo fcinfo, const ModelView *v, int64 model_id, uint32 *attrs)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *enulls;
	int			n;

	arr = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("columns must be a one-dimensional array")));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &n);
	if (n < 1 || n > DP_MARG_MAX_ATTRS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("columns must name between 1 and %d columns", DP_MARG_MAX_ATTRS)));
	for (int i = 0; i < n; i++)
	{
		char	   *name;
		int			found = -1;

		if (enulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("columns must not contain NULL")));
		name = TextDatumGetCString(elems[i]);
		for (int j = 0; j < v->m->ncols; j++)
			if (strcmp(v->names[j], name) == 0)
				found = j;
		if (found < 0)
		{
			const char *treatment = NULL;

			for (int k = 0; k < v->m->nout; k++)
				if (strcmp(v->m->out[k].name, name) == 0)
					treatment = v->m->out[k].treatment;
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" is not synthesized by model " INT64_FORMAT, name, model_id),
					 treatment ? errdetail("The model treats it as \"%s\": it holds no count of it.", treatment)
					 : errdetail("The model has no column of that name."),
					 errhint("dp_model_marginals lists the columns the model measured.")));
		}
		for (int k = 0; k < i; k++)
			if (attrs[k] == (uint32) found)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" is named twice", name)));
		attrs[i] = (uint32) found;
	}
	return n;
}

/* Labels of every merged code of column j: a code's own label, or its members' joined by " | ". */
static void
merged_labels(const ModelView *v, int j, Datum *labels, bool *isnull)
{
	const DpModel *m = v->m;
	DpColumn	labeller;
	StringInfoData *joined = palloc0(sizeof(StringInfoData) * m->res.merged_sizes[j]);

	memset(&labeller, 0, sizeof(labeller));
	for (int i = 0; i < m->nout; i++)
		if (m->out[i].kind == OUT_SYNTH && m->out[i].synth == j)
		{
			labeller.typid = m->out[i].basetype;
			labeller.domain = *m->out[i].domain;
		}
	for (uint32 c = 0; c < m->sizes[j]; c++)
	{
		uint32		g = m->res.code_map[j][c];
		bool		null;
		Datum		label = dpsynth_code_label(&labeller, (dp_code) c, &null);

		if (v->members[j][g] == 1)
		{
			labels[g] = label;
			isnull[g] = null;
			continue;
		}
		if (!joined[g].data)
			initStringInfo(&joined[g]);
		else
			appendStringInfoString(&joined[g], " | ");
		appendStringInfoString(&joined[g], null ? "NULL" : TextDatumGetCString(label));
		labels[g] = CStringGetTextDatum(joined[g].data);
		isnull[g] = false;
	}
}

typedef struct IntervalRows
{
	ReturnSetInfo *rsinfo;
	int			n;				/* requested columns */
	const uint32 *attrs;		/* in the caller's order */
	const uint32 *sizes;		/* merged codes of each requested column */
	uint32	  **members;		/* original codes behind each of them */
	Datum	  **labels;
	bool	  **label_nulls;
	const dp_marg *shape;		/* the projection (attributes sorted) */
	const dp_unc_cell *cells;	/* NULL: not measured */
	Datum		basis;
	Datum		measured_columns;
} IntervalRows;

/* One row per cell, in the caller's column order (the last column varying fastest). */
static void
emit_rows(const IntervalRows *ir)
{
	uint64		ncells = 1;
	uint64	   *stride = palloc(sizeof(uint64) * ir->n);
	Datum	   *elems = palloc(sizeof(Datum) * ir->n);
	bool	   *enulls = palloc(sizeof(bool) * ir->n);
	int			dims[1] = {ir->n};
	int			lbs[1] = {1};

	/* where each requested column sits in the projection's sorted attributes */
	for (int i = 0; i < ir->n; i++)
	{
		ncells *= ir->sizes[i];
		for (uint32 k = 0; k < ir->shape->nattrs; k++)
			if (ir->shape->attrs[k] == ir->attrs[i])
				stride[i] = ir->shape->strides[k];
	}
	for (uint64 row = 0; row < ncells; row++)
	{
		Datum		values[12];
		bool		nulls[12];
		uint64		rest = row,
					idx = 0;
		int64		members = 1;

		if ((row & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		for (int i = ir->n - 1; i >= 0; i--)
		{
			uint32		code = (uint32) (rest % ir->sizes[i]);

			rest /= ir->sizes[i];
			idx += stride[i] * code;
			members *= ir->members[i][code];
			elems[i] = ir->labels[i][code];
			enulls[i] = ir->label_nulls[i][code];
		}
		memset(nulls, 0, sizeof(nulls));
		values[0] = PointerGetDatum(construct_md_array(elems, enulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
		values[1] = Int64GetDatum(members);
		if (ir->cells)
		{
			const dp_unc_cell *u = &ir->cells[idx];

			values[2] = Float8GetDatum(u->estimate);
			values[3] = Float8GetDatum(u->lower);
			values[4] = Float8GetDatum(u->upper);
			values[5] = Float8GetDatum(u->share);
			nulls[5] = isnan(u->share);
			values[6] = Float8GetDatum(u->share_lower);
			values[7] = Float8GetDatum(u->share_upper);
			values[8] = Float8GetDatum(sqrt(u->variance));
		}
		else
			for (int k = 2; k <= 8; k++)
				nulls[k] = true;
		values[9] = ir->basis;
		values[10] = ir->measured_columns;
		nulls[10] = !ir->cells;
		tuplestore_putvalues(ir->rsinfo->setResult, ir->rsinfo->setDesc, values, nulls);
	}
}

PG_FUNCTION_INFO_V1(dpsynth_marginal_intervals);
Datum
dpsynth_marginal_intervals(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		model_id = model_arg_id(fcinfo);
	double		confidence = model_arg_confidence(fcinfo, 2);
	ModelView  *v;
	const dp_privsyn_result *r;
	uint32		attrs[DP_MARG_MAX_ATTRS];
	uint32		sizes[DP_MARG_MAX_ATTRS];
	int			n;
	int32		cover;
	dp_marg		shape;
	IntervalRows ir;
	int			nestlevel;

	if (PG_ARGISNULL(1))		/* before the model is read */
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("columns must not be NULL")));
	v = view_model(model_id);
	r = &v->m->res;
	n = resolve_columns(fcinfo, v, model_id, attrs);
	for (int i = 0; i < n; i++)
		sizes[i] = r->merged_sizes[attrs[i]];
	cover = dp_unc_cover(r->margs, r->nmargs, (uint32) n, attrs, (const uint32 *const *) v->members);

	memset(&ir, 0, sizeof(ir));
	ir.rsinfo = rsinfo;
	ir.n = n;
	ir.attrs = attrs;
	ir.sizes = sizes;
	ir.members = palloc(sizeof(uint32 *) * n);
	for (int i = 0; i < n; i++)
		ir.members[i] = v->members[attrs[i]];
	if (cover < 0)
	{
		uint64		cells = 1;

		for (int i = 0; i < n; i++)
			cells *= sizes[i];
		if (cells > DPSYNTH_UNMEASURED_MAX_CELLS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("model " INT64_FORMAT " did not measure these columns together", model_id),
					 errdetail("No marginal of the model holds them all, and their " UINT64_FORMAT " cells are too many to list without counts.", cells),
					 errhint("dp_model_marginals lists the column sets the model measured.")));
	}
	if (dp_marg_init(&shape, (uint32) n, attrs, r->merged_sizes) != 0)
		elog(ERROR, "could not set up the cells of %d columns", n);
	ir.shape = &shape;

	if (cover >= 0)
	{
		const dp_marg *src = &r->margs[cover];
		double	   *var = palloc(sizeof(double) * src->ncells);
		double	   *scratch = palloc(sizeof(double) * shape.ncells);
		dp_unc_cell *cells = palloc(sizeof(dp_unc_cell) * shape.ncells);

		if (dp_unc_cell_variance(src, src->nattrs == 1 ? v->members[src->attrs[0]] : NULL, var) != 0 ||
			dp_unc_intervals(src, var, &shape, confidence, scratch, cells) != 0)
			elog(ERROR, "could not compute the intervals of model " INT64_FORMAT, model_id);
		ir.cells = cells;
		ir.basis = CStringGetTextDatum(src->nattrs == (uint32) n ? "measured" : "projected");
		ir.measured_columns = names_array(v, src);
	}
	else
		ir.basis = CStringGetTextDatum("not measured");

	ir.labels = palloc(sizeof(Datum *) * n);
	ir.label_nulls = palloc(sizeof(bool *) * n);
	nestlevel = dpsynth_pin_output_settings();	/* labels of dates and times, as dp_model_json shows them */
	for (int i = 0; i < n; i++)
	{
		ir.labels[i] = palloc(sizeof(Datum) * sizes[i]);
		ir.label_nulls[i] = palloc(sizeof(bool) * sizes[i]);
		merged_labels(v, (int) attrs[i], ir.labels[i], ir.label_nulls[i]);
	}
	AtEOXact_GUC(false, nestlevel);

	InitMaterializedSRF(fcinfo, 0);
	emit_rows(&ir);
	return (Datum) 0;
}
