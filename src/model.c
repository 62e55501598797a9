/*
 * model.c - the released model of a dp_synthesize call: stored in dpsynth.models, loaded back by
 * dp_sample, exported as JSON by dp_model_json (README.md documents the format).
 *
 * What a model holds, and why each part may be stored and shown (PRIVACY.md):
 *   - the source's schema facts: column names, types, NOT NULL, CHECK constraints, and the
 *     owner's column policies (treatment, "other" value): public;
 *   - the public domain of every synthesized column (declared, from the type or the schema, or
 *     released by a charged DP discovery and already shown in dp_domains): public;
 *   - one_way_noisy: the noisy one-way counts PrivSyn released (discrete Gaussian, 0.1 rho),
 *     for a column whose bins this call's discovery learned each combined with that release's
 *     count of the bin (one_way_prior: how many were; post-processing of both releases);
 *   - merged_code: the rare-value merge, a function of those noisy counts only;
 *   - marginals: the consistent, non-negative marginals, post-processing of the noisy one-way
 *     and selected marginals (their attribute sets are chosen from noisy InDif scores; their rho
 *     is the public publication split);
 *   - noisy_total: their consistent total.
 * All of it is the output of the charged release or post-processing of it, so storing it and
 * sampling from it again cost nothing.  Nothing computed from the rows without noise is stored:
 * no exact count, no raw value, not the (noisy) InDif scores, not the timings.
 */
#include "synthesize.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/shortest_dec.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

#include "dp_adaptive.h"
#include "dp_marg.h"
#include "dp_units.h"

#define MODEL_FORMAT	"dpsynth-model"
#define MODEL_VERSION	1

/* ---------------------------------------------------------------------------------------
 * To JSON
 * --------------------------------------------------------------------------------------- */

static void
json_str(StringInfo b, const char *s)
{
	if (s)
		escape_json(b, s);
	else
		appendStringInfoString(b, "null");
}

/* A double exactly: the shortest decimal that reads back as the same double (whatever
 * extra_float_digits says); null if not finite (never the case for a released count). */
static void
json_num(StringInfo b, double x)
{
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];

	if (!isfinite(x))
	{
		appendStringInfoString(b, "null");
		return;
	}
	double_to_shortest_decimal_buf(x, buf);
	appendStringInfoString(b, buf);
}

/* A type's name as it is stored: schema-qualified, except for pg_catalog's types (the names are
 * read back with search_path pinned to pg_catalog). */
static const char *
qualified_type(Oid typid, int32 typmod)
{
	char	   *name = format_type_extended(typid, typmod, FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);

	if (strncmp(name, "pg_catalog.", 11) == 0)
		return name + 11;
	return name;
}

static void
json_domain(StringInfo b, const OutColumn *oc)
{
	const dp_domain *d = oc->domain;

	appendStringInfoString(b, "{\"kind\": ");
	if (d->kind == DP_DOMAIN_CATEGORIES)
	{
		appendStringInfoString(b, "\"categories\", \"values\": [");
		for (uint32 c = 0; c < d->nvalues; c++)
		{
			if (c)
				appendStringInfoString(b, ", ");
			json_str(b, pnstrdup(d->map.labels[c], d->map.lens[c]));
		}
		appendStringInfoChar(b, ']');
	}
	else if (d->kind == DP_DOMAIN_INT_BINS)
	{
		appendStringInfoString(b, "\"integer_bins\", \"edges\": [");
		for (uint32 c = 0; c <= d->nvalues; c++)
			appendStringInfo(b, "%s" INT64_FORMAT, c ? ", " : "", (int64) d->iedges[c]);
		appendStringInfoChar(b, ']');
		if (oc->basetype == DATEOID)
			appendStringInfoString(b, ", \"unit\": \"days since 2000-01-01\"");
		else if (oc->basetype == TIMESTAMPOID || oc->basetype == TIMESTAMPTZOID)
			appendStringInfoString(b, ", \"unit\": \"microseconds since 2000-01-01 00:00:00 (UTC for timestamptz)\"");
	}
	else
	{
		appendStringInfoString(b, "\"real_bins\", \"edges\": [");
		for (uint32 c = 0; c <= d->nvalues; c++)
		{
			if (c)
				appendStringInfoString(b, ", ");
			json_num(b, d->edges[c]);
		}
		appendStringInfoChar(b, ']');
	}
	if (d->kind != DP_DOMAIN_CATEGORIES && d->shape && d->nshape > 0)
	{
		/* the released shape inside the bins: (lo, hi, weight) per piece (dp_decode.h) */
		appendStringInfoString(b, ", \"shape\": [");
		for (uint32 i = 0; i < 3 * d->nshape; i++)
		{
			if (i)
				appendStringInfoString(b, ", ");
			json_num(b, d->shape[i]);
		}
		appendStringInfoChar(b, ']');
	}
	appendStringInfo(b, ", \"null_cell\": %s}", d->has_null_cell ? "true" : "false");
}

/*
 * The call's privacy schedule and what it spent, release by release (src/core/dp_schedule.h):
 * the plan's releases in order, each with its rho (its bounds when it depends on released
 * values) and, beside it, what the call spent on it.  Public: the plan is a function of public
 * facts, and the spend of released values (how many selections and anneals the rounds made).
 */
static void
json_privacy(StringInfo b, const dp_schedule *s, const dp_spend *sp)
{
	double		unplanned = 0;

	/* a release the plan does not list (none, unless a method strays from its schedule) */
	for (int k = 0; k < DP_RELEASE_NKINDS; k++)
		if (dp_schedule_find(s, (dp_release_kind) k) == NULL)
			unplanned += sp->rho[k];
	appendStringInfo(b, ",\n \"privacy\": {\"rho_units_charged\": " INT64_FORMAT ", \"rho_units_method\": " INT64_FORMAT
					 ", \"unit_sensitivity2\": " INT64_FORMAT ", \"rho_method\": ",
					 (int64) s->units_charged, (int64) s->units_method, (int64) s->unit_sens2);
	json_num(b, s->rho_method);
	appendStringInfoString(b, ", \"rho_rounds\": ");
	json_num(b, s->rho_rounds);
	appendStringInfoString(b, ", \"rho_unspent\": ");
	json_num(b, s->rho_unspent);
	appendStringInfoString(b, ", \"spent_unplanned\": ");
	json_num(b, unplanned);
	appendStringInfoString(b, ", \"releases\": [");
	for (int k = 0; k < s->nrel; k++)
	{
		const dp_release *r = &s->rel[k];

		appendStringInfoString(b, k ? ",\n  {\"release\": " : "\n  {\"release\": ");
		json_str(b, dp_release_name(r->kind));
		appendStringInfoString(b, ", \"mechanism\": ");
		json_str(b, dp_mechanism_name(r->mech));
		appendStringInfo(b, ", \"rho_units\": " INT64_FORMAT ", \"count\": %u, \"rho\": ", (int64) r->units, r->count);
		json_num(b, r->rho);
		appendStringInfoString(b, ", \"rho_min\": ");
		json_num(b, r->rho_min);
		appendStringInfoString(b, ", \"rho_max\": ");
		json_num(b, r->rho_max);
		appendStringInfoString(b, ", \"spent\": ");
		json_num(b, sp->rho[r->kind]);
		appendStringInfo(b, ", \"draws\": %u}", sp->n[r->kind]);
	}
	appendStringInfoString(b, "]}");
}

char *
dpsynth_model_json(const DpModel *m)
{
	StringInfoData b;
	const dp_privsyn_result *r = &m->res;
	int			nestlevel = dpsynth_pin_output_settings();	/* labels of dates, times */
	ListCell   *lc;

	initStringInfo(&b);
	appendStringInfo(&b, "{\"format\": \"%s\", \"version\": %d, \"method\": ", MODEL_FORMAT, MODEL_VERSION);
	json_str(&b, m->method ? m->method : DPSYNTH_METHOD_PRIVSYN_LABEL);
	appendStringInfoString(&b, ", \"source\": ");
	json_str(&b, m->relname);
	appendStringInfoString(&b, ", \"noisy_total\": ");
	json_num(&b, r->total);
	appendStringInfo(&b, ", \"default_rows\": " UINT64_FORMAT ", \"one_way_marginals\": %u, \"k_way_marginals\": %u, "
					 "\"merged_codes\": %u",
					 dp_privsyn_default_rows(r), r->n_oneway, r->n_kway, r->merged_codes);

	appendStringInfoString(&b, ",\n \"columns\": [");
	for (int i = 0; i < m->nout; i++)
	{
		const OutColumn *oc = &m->out[i];

		appendStringInfoString(&b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		json_str(&b, oc->name);
		appendStringInfoString(&b, ", \"type\": ");
		json_str(&b, qualified_type(oc->typid, oc->typmod));
		appendStringInfoString(&b, ", \"base_type\": ");
		json_str(&b, qualified_type(oc->basetype, -1));
		if (OidIsValid(oc->source_typid))
		{
			/* a domain that is not built-in only: the synthetic column has its base type */
			appendStringInfoString(&b, ", \"source_type\": ");
			json_str(&b, qualified_type(oc->source_typid, -1));
		}
		appendStringInfo(&b, ", \"not_null\": %s, \"treatment\": \"%s\"", oc->notnull ? "true" : "false",
						 oc->treatment);
		if (oc->kind == OUT_SYNTH)
		{
			int			j = oc->synth;
			DpColumn	labeller;

			appendStringInfo(&b, ", \"index\": %d, \"codes\": %u, \"domain\": ", j, m->sizes[j]);
			json_domain(&b, oc);
			appendStringInfoString(&b, ", \"other\": ");
			json_str(&b, oc->other);
			/* every code's label, as dp_marginal shows it; the NULL cell's is null */
			memset(&labeller, 0, sizeof(labeller));
			labeller.typid = oc->basetype;
			labeller.domain = *oc->domain;
			appendStringInfoString(&b, ", \"labels\": [");
			for (uint32 c = 0; c < m->sizes[j]; c++)
			{
				bool		isnull;
				Datum		label = dpsynth_code_label(&labeller, (dp_code) c, &isnull);

				if (c)
					appendStringInfoString(&b, ", ");
				json_str(&b, isnull ? NULL : TextDatumGetCString(label));
			}
			appendStringInfoString(&b, "], \"one_way_noisy\": [");
			for (uint32 c = 0; c < m->sizes[j]; c++)
			{
				if (c)
					appendStringInfoString(&b, ", ");
				json_num(&b, r->oneway_noisy[j][c]);
			}
			appendStringInfoString(&b, "], \"merged_code\": [");
			for (uint32 c = 0; c < m->sizes[j]; c++)
				appendStringInfo(&b, "%s%u", c ? ", " : "", (unsigned) r->code_map[j][c]);
			appendStringInfo(&b, "], \"merged_codes\": %u", r->merged_sizes[j]);
			/* bins whose one-way count combined this call's discovery (dp_oneway_prior) */
			if (r->oneway_prior && (uint32) j < r->n_oneway && r->oneway_prior[j] > 0)
				appendStringInfo(&b, ", \"one_way_prior\": %u", r->oneway_prior[j]);
		}
		appendStringInfoChar(&b, '}');
	}

	appendStringInfoString(&b, "],\n \"marginals\": [");
	for (uint32 k = 0; k < r->nmargs; k++)
	{
		const dp_marg *mg = &r->margs[k];

		appendStringInfoString(&b, k ? ",\n  {\"columns\": [" : "\n  {\"columns\": [");
		for (uint32 a = 0; a < mg->nattrs; a++)
		{
			const char *name = NULL;

			for (int i = 0; i < m->nout; i++)
				if (m->out[i].kind == OUT_SYNTH && m->out[i].synth == (int) mg->attrs[a])
					name = m->out[i].name;
			if (a)
				appendStringInfoString(&b, ", ");
			json_str(&b, name);
		}
		appendStringInfoString(&b, "], \"attrs\": [");
		for (uint32 a = 0; a < mg->nattrs; a++)
			appendStringInfo(&b, "%s%u", a ? ", " : "", mg->attrs[a]);
		appendStringInfoString(&b, "], \"sizes\": [");
		for (uint32 a = 0; a < mg->nattrs; a++)
			appendStringInfo(&b, "%s%u", a ? ", " : "", mg->sizes[a]);
		appendStringInfoString(&b, "], \"rho\": ");
		json_num(&b, mg->rho);
		if (mg->spread)
			appendStringInfoString(&b, ", \"spread\": true");
		appendStringInfoString(&b, ", \"cells\": [");
		for (uint64 c = 0; c < mg->ncells; c++)
		{
			if (c)
				appendStringInfoString(&b, ", ");
			json_num(&b, mg->cells[c]);
		}
		appendStringInfoString(&b, "]}");
	}

	appendStringInfoString(&b, "],\n \"checks\": [");
	foreach(lc, m->checks)
	{
		const DpCheck *c = lfirst(lc);

		appendStringInfoString(&b, foreach_current_index(lc) ? ", {\"name\": " : "{\"name\": ");
		json_str(&b, c->name);
		appendStringInfoString(&b, ", \"expression\": ");
		json_str(&b, c->expr);
		appendStringInfoChar(&b, '}');
	}
	/* the source's CHECKs not copied: they use objects that are not built in */
	appendStringInfoString(&b, "],\n \"skipped_checks\": [");
	foreach(lc, m->skipped_checks)
	{
		if (foreach_current_index(lc))
			appendStringInfoString(&b, ", ");
		json_str(&b, lfirst(lc));
	}
	appendStringInfoChar(&b, ']');
	/* a source with a privacy unit: the released rows-per-unit histogram, units keeping 1..k rows */
	if (m->unit_hist != NULL)
	{
		appendStringInfoString(&b, ",\n \"rows_per_unit\": [");
		for (int j = 1; j <= m->unit_k; j++)
		{
			if (j > 1)
				appendStringInfoString(&b, ", ");
			json_num(&b, m->unit_hist[j]);
		}
		appendStringInfoChar(&b, ']');
	}
	/* ... and the columns its units hold constant (dp_unit_constant), as the sample draws them */
	if (m->unit_hist != NULL)
	{
		bool		any = false;

		for (int i = 0; i < m->nout; i++)
			if (m->out[i].unit_constant)
			{
				appendStringInfoString(&b, any ? ", " : ",\n \"constant_per_unit\": [");
				json_str(&b, m->out[i].name);
				any = true;
			}
		if (any)
			appendStringInfoChar(&b, ']');
	}
	if (m->unit_discovery_sigma2 > 0)
	{
		appendStringInfoString(&b, ",\n \"rows_per_unit_discovery_sigma2\": ");
		json_num(&b, m->unit_discovery_sigma2);
	}
	if (m->unit_selection_sigma2 > 0)
	{
		appendStringInfoString(&b, ",\n \"rows_per_unit_selection_sigma2\": ");
		json_num(&b, m->unit_selection_sigma2);
	}
	if (m->sched != NULL)
		json_privacy(&b, m->sched, m->spend);
	appendStringInfoChar(&b, '}');
	AtEOXact_GUC(false, nestlevel);
	return b.data;
}

/* ---------------------------------------------------------------------------------------
 * The catalog
 * --------------------------------------------------------------------------------------- */

int64
dpsynth_model_store(Oid relid, int64 ledger_id, double epsilon, double delta, int64 units,
					const DpModel *m, uint64 cells, const char *json)
{
	Oid			user = GetUserId();
	char	   *rolname = GetUserNameFromId(user, false);
	DpOwnerSwitch sw;
	Oid			argtypes[13] = {OIDOID, TEXTOID, INT8OID, OIDOID, TEXTOID, FLOAT8OID, FLOAT8OID, INT8OID,
	FLOAT8OID, INT4OID, INT4OID, INT8OID, TEXTOID};
	Datum		values[13];
	bool		isnull;
	int64		id;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(m->relname);
	values[2] = Int64GetDatum(ledger_id);
	values[3] = ObjectIdGetDatum(user);
	values[4] = CStringGetTextDatum(rolname);
	values[5] = Float8GetDatum(epsilon);
	values[6] = Float8GetDatum(delta);
	values[7] = Int64GetDatum(units);
	values[8] = Float8GetDatum(m->res.total);
	values[9] = Int32GetDatum(m->ncols);
	values[10] = Int32GetDatum((int32) m->res.n_kway);
	values[11] = Int64GetDatum((int64) cells);
	values[12] = CStringGetTextDatum(json);

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("INSERT INTO dpsynth.models (budget_id, relid, relname, ledger_id, created_by, "
							  "created_by_name, epsilon, delta, rho, noisy_total, columns, k_way_marginals, cells, model) "
							  "SELECT b.id, $1, $2, $3, $4, $5, $6, $7, dpsynth._units_rho($8), $9, $10, $11, $12, $13::jsonb "
							  "FROM dpsynth.budgets b WHERE b.relid = $1 RETURNING id",
							  13, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "could not store the model of table %u", relid);
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	dpsynth_restore_user(&sw);
	return id;
}

pg_noreturn static void corrupt(int64 model_id, const char *what);

static void
corrupt(int64 model_id, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("model " INT64_FORMAT " is invalid", model_id),
			 errdetail_internal("%s", what)));
}

/* An array column of an SPI row; NULL if the array or an element is NULL. */
static Datum *
row_array(HeapTuple tup, TupleDesc desc, int col, Oid elemtype, int *n)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);
	Datum	   *elems;
	bool	   *nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	*n = 0;
	if (isnull)
		return NULL;
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(DatumGetArrayTypeP(d), elemtype, typlen, typbyval, typalign, &elems, &nulls, n);
	for (int i = 0; i < *n; i++)
		if (nulls[i])
			return NULL;
	return elems;
}

static char *
row_text(HeapTuple tup, TupleDesc desc, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, desc, col, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* Resolves a stored type name; raises if the type is gone. */
static void
resolve_type(OutColumn *oc, const char *type, const char *base_type, int64 model_id)
{
	Oid			typid;
	int32		typmod;
	int32		basetypmod;

	dpsynth_parse_type(type, &typid, &typmod);
	if (!OidIsValid(typid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("type %s of column \"%s\" of model " INT64_FORMAT " does not exist any more", type, oc->name,
						model_id),
				 errhint("A sample is made with the column types the model was made with; create the type again, or synthesize anew.")));
	oc->typid = typid;
	oc->typmod = typmod;
	basetypmod = typmod;
	oc->basetype = getBaseTypeAndTypmod(typid, &basetypmod);
	oc->basetypmod = basetypmod;
	if (strcmp(qualified_type(oc->basetype, -1), base_type) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("type %s of column \"%s\" of model " INT64_FORMAT " is now based on %s, not %s", type,
						oc->name, model_id, format_type_be(oc->basetype), base_type),
				 errhint("The type changed since the model was made; synthesize anew.")));
}

/* Runs a SELECT over the stored model ($1, jsonb) through SPI; its rows are in SPI_tuptable. */
static void
model_select(const char *sql, Datum model, int64 model_id, const char *what)
{
	Oid			argtype = JSONBOID;

	if (SPI_execute_with_args(sql, 1, &argtype, &model, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the %s of model " INT64_FORMAT, what, model_id);
}

/* The model's row, if it exists and the invoker (the calling user, captured before the switch
 * to the extension owner) may use it (dpsynth._model_access raises otherwise): the catalog's
 * facts in *meta, the stored jsonb returned (in the caller's context). */
static Datum
load_row(Oid invoker, int64 model_id, DpModel *m, DpModelMeta *meta, MemoryContext caller_cxt)
{
	Oid			argtypes[2] = {OIDOID, INT8OID};
	Datum		values[2] = {ObjectIdGetDatum(invoker), Int64GetDatum(model_id)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		model;
	char	   *format;
	int			version;
	MemoryContext old;

	if (SPI_execute_with_args("SELECT m.ledger_id, m.epsilon, m.delta, m.relname, m.model, "
							  "(m.model->>'noisy_total')::float8, m.model->>'format', (m.model->>'version')::int4, "
							  "m.model->>'method' "
							  "FROM dpsynth._model_access($1, $2) m",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read model " INT64_FORMAT, model_id);
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	old = MemoryContextSwitchTo(caller_cxt);
	meta->ledger_id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	meta->epsilon = DatumGetFloat8(SPI_getbinval(tup, desc, 2, &isnull));
	meta->delta = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
	m->relname = row_text(tup, desc, 4);
	model = SPI_datumTransfer(SPI_getbinval(tup, desc, 5, &isnull), false, -1);
	m->res.total = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
	if (isnull)
		corrupt(model_id, "The stored model has no noisy_total.");
	format = row_text(tup, desc, 7);
	version = DatumGetInt32(SPI_getbinval(tup, desc, 8, &isnull));
	if (!format || strcmp(format, MODEL_FORMAT) != 0 || isnull || version != MODEL_VERSION)
		corrupt(model_id, "The stored model has unknown format or version.");
	m->method = row_text(tup, desc, 9);
	if (!m->method)
		m->method = DPSYNTH_METHOD_PRIVSYN_LABEL;
	MemoryContextSwitchTo(old);
	return model;
}

/* A column's treatment, as stored; raises on an unknown one. */
static OutKind
out_kind(const char *treatment, int64 model_id)
{
	if (strcmp(treatment, "identifier") == 0 || strcmp(treatment, "privacy_unit") == 0)
		return OUT_IDENTIFIER;
	if (strcmp(treatment, "excluded") == 0 || strcmp(treatment, "not_selected") == 0)
		return OUT_NULL;
	if (strcmp(treatment, "synthesized") == 0)
		return OUT_SYNTH;
	corrupt(model_id, "The stored model has unknown treatment.");
}

/* A synthesized column's stored domain (columns 7-11 of the columns' query) into *d. */
static void
load_domain(HeapTuple tup, TupleDesc desc, dp_domain *d, int64 model_id)
{
	bool		isnull;
	char	   *kind = row_text(tup, desc, 7);
	bool		null_cell = DatumGetBool(SPI_getbinval(tup, desc, 8, &isnull));
	int			n;

	if (!kind || isnull)
		corrupt(model_id, "The stored model has a domain without kind.");
	if (strcmp(kind, "categories") == 0)
	{
		Datum	   *vals = row_array(tup, desc, 9, TEXTOID, &n);
		const char **labels = palloc(sizeof(char *) * Max(n, 1));
		uint32	   *lens = palloc(sizeof(uint32) * Max(n, 1));
		int32	   *slots = palloc(sizeof(int32) * dp_catmap_slots_needed(n));

		if (!vals && n > 0)
			corrupt(model_id, "The stored model has a NULL category.");
		for (int c = 0; c < n; c++)
		{
			labels[c] = TextDatumGetCString(vals[c]);
			lens[c] = strlen(labels[c]);
		}
		if (n >= DP_MAX_CODES || dp_domain_init_categories(d, labels, lens, n, slots, null_cell) != 0)
			corrupt(model_id, "The stored model has invalid categories.");
	}
	else if (strcmp(kind, "integer_bins") == 0)
	{
		Datum	   *e = row_array(tup, desc, 10, INT8OID, &n);
		int64_t    *edges = palloc(sizeof(int64_t) * Max(n, 1));

		for (int c = 0; c < n; c++)
			edges[c] = DatumGetInt64(e[c]);
		if (!e || n < 2 || dp_domain_init_int_edges(d, edges, n - 1, null_cell) != 0)
			corrupt(model_id, "The stored model has invalid integer bins.");
	}
	else if (strcmp(kind, "real_bins") == 0)
	{
		Datum	   *e = row_array(tup, desc, 11, FLOAT8OID, &n);
		double	   *edges = palloc(sizeof(double) * Max(n, 1));

		for (int c = 0; c < n; c++)
			edges[c] = DatumGetFloat8(e[c]);
		if (!e || n < 2 || dp_domain_init_real_edges(d, edges, n - 1, null_cell) != 0)
			corrupt(model_id, "The stored model has invalid real bins.");
	}
	else
		corrupt(model_id, "The stored model has unknown domain kind.");
	if (d->kind != DP_DOMAIN_CATEGORIES)
	{
		/* the released shape inside the bins, if the model has one (dp_decode.h) */
		Datum	   *sh = row_array(tup, desc, 15, FLOAT8OID, &n);

		if (sh && n > 0)
		{
			double	   *shape = palloc(sizeof(double) * n);
			dp_shape	check;

			for (int i = 0; i < n; i++)
				shape[i] = DatumGetFloat8(sh[i]);
			if (n % 3 != 0 || dp_shape_init(&check, d, shape, (uint32) (n / 3)) != 0)
				corrupt(model_id, "The stored model has an invalid shape inside its bins.");
			dp_shape_free(&check);
			d->shape = shape;
			d->nshape = (uint32) (n / 3);
		}
	}
}

/* Synthesized column j's released one-way counts and rare-value merge (columns 13-14). */
static void
load_oneway(HeapTuple tup, TupleDesc desc, DpModel *m, int j, int64 model_id)
{
	dp_privsyn_result *r = &m->res;
	int			n1,
				n2;
	Datum	   *oneway = row_array(tup, desc, 13, FLOAT8OID, &n1);
	Datum	   *map = row_array(tup, desc, 14, INT8OID, &n2);
	bool	   *used;

	if (!oneway || !map || n1 != (int) m->sizes[j] || n2 != (int) m->sizes[j])
		corrupt(model_id, "The stored model has one-way counts or merge do not match the domain.");
	r->oneway_noisy[j] = palloc(sizeof(double) * n1);
	r->code_map[j] = palloc(sizeof(uint16) * n1);
	for (int c = 0; c < n1; c++)
	{
		int64		g = DatumGetInt64(map[c]);

		if (g < 0 || g >= n1)
			corrupt(model_id, "The stored model has a merged code out of range.");
		r->oneway_noisy[j][c] = DatumGetFloat8(oneway[c]);
		r->code_map[j][c] = (uint16) g;
		r->merged_sizes[j] = Max(r->merged_sizes[j], (uint32) g + 1);
	}
	/* every merged code has a member */
	used = palloc0(sizeof(bool) * r->merged_sizes[j]);
	for (int c = 0; c < n1; c++)
		used[r->code_map[j][c]] = true;
	for (uint32 g = 0; g < r->merged_sizes[j]; g++)
		if (!used[g])
			corrupt(model_id, "The stored model has a merged code without members.");
}

/* Row i of the columns' query: one output column, and if synthesized its domain and counts. */
static void
load_column(HeapTuple tup, TupleDesc desc, DpModel *m, int i, char **type, char **base_type,
			int64 model_id)
{
	OutColumn  *oc = &m->out[i];
	bool		isnull;
	int			j;

	oc->name = row_text(tup, desc, 1);
	*type = row_text(tup, desc, 2);
	*base_type = row_text(tup, desc, 3);
	oc->notnull = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	oc->treatment = row_text(tup, desc, 5);
	oc->scale = -1;
	if (!oc->name || !*type || !*base_type || isnull || !oc->treatment)
		corrupt(model_id, "The stored model has a column without name, type or treatment.");
	oc->kind = out_kind(oc->treatment, model_id);
	oc->unit = strcmp(oc->treatment, "privacy_unit") == 0;
	if (oc->kind != OUT_SYNTH)
		return;

	j = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
	if (isnull || j < 0 || j >= m->ncols || m->sizes[j] != 0)
		corrupt(model_id, "The stored model has synthesized columns are not numbered 0..n-1.");
	oc->synth = j;
	oc->domain = &m->domains[j];
	oc->other = row_text(tup, desc, 12);
	load_domain(tup, desc, &m->domains[j], model_id);
	m->sizes[j] = dp_domain_ncodes(&m->domains[j]);
	load_oneway(tup, desc, m, j, model_id);
}

/* The columns, in the synthetic table's order; their stored type names in *types, *base_types. */
static void
load_columns(Datum model, DpModel *m, char ***types, char ***base_types, int64 model_id,
			 MemoryContext caller_cxt)
{
	dp_privsyn_result *r = &m->res;
	int			nsynth = 0;
	MemoryContext old;

	model_select("SELECT c->>'name', c->>'type', c->>'base_type', (c->>'not_null')::boolean, "
				 "c->>'treatment', (c->>'index')::int4, c->'domain'->>'kind', "
				 "(c->'domain'->>'null_cell')::boolean, dpsynth._jtexts(c->'domain'->'values'), "
				 "CASE WHEN c->'domain'->>'kind' = 'integer_bins' THEN dpsynth._jints(c->'domain'->'edges') END, "
				 "CASE WHEN c->'domain'->>'kind' = 'real_bins' THEN dpsynth._jnums(c->'domain'->'edges') END, "
				 "c->>'other', dpsynth._jnums(c->'one_way_noisy'), dpsynth._jints(c->'merged_code'), "
				 "dpsynth._jnums(c->'domain'->'shape') "
				 "FROM jsonb_array_elements($1->'columns') WITH ORDINALITY x(c, i) ORDER BY i",
				 model, model_id, "columns");
	old = MemoryContextSwitchTo(caller_cxt);
	m->nout = (int) SPI_processed;
	if (m->nout < 1 || m->nout > MaxHeapAttributeNumber)
		corrupt(model_id, "The stored model has no columns.");
	m->out = palloc0(sizeof(OutColumn) * m->nout);
	*types = palloc0(sizeof(char *) * m->nout);
	*base_types = palloc0(sizeof(char *) * m->nout);
	for (int i = 0; i < m->nout; i++)
	{
		char	   *t = row_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 5);

		if (t && strcmp(t, "synthesized") == 0)
			nsynth++;
	}
	if (nsynth < 1)
		corrupt(model_id, "The stored model has no synthesized column.");
	m->ncols = nsynth;
	m->sizes = palloc0(sizeof(uint32) * nsynth);
	m->domains = palloc0(sizeof(dp_domain) * nsynth);
	r->merged_sizes = palloc0(sizeof(uint32) * nsynth);
	r->code_map = palloc0(sizeof(uint16 *) * nsynth);
	r->oneway_noisy = palloc0(sizeof(double *) * nsynth);
	for (int i = 0; i < m->nout; i++)
		load_column(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, m, i, &(*types)[i], &(*base_types)[i],
					model_id);
	for (int j = 0; j < nsynth; j++)
		if (m->sizes[j] == 0)
			corrupt(model_id, "The stored model has synthesized columns are not numbered 0..n-1.");
	MemoryContextSwitchTo(old);
}

/* Row k of the marginals' query: one released marginal over merged codes. */
static void
load_marginal(HeapTuple tup, TupleDesc desc, DpModel *m, uint32 k, int64 model_id)
{
	dp_privsyn_result *r = &m->res;
	bool		isnull;
	int			na,
				nc;
	Datum	   *attrs = row_array(tup, desc, 1, INT8OID, &na);
	Datum	   *cells;
	uint32		a[DP_MARG_MAX_ATTRS];
	double		rho = DatumGetFloat8(SPI_getbinval(tup, desc, 2, &isnull));

	if (!attrs || na < 1 || na > DP_MARG_MAX_ATTRS)
		corrupt(model_id, "The stored model has a marginal without attributes.");
	for (int i = 0; i < na; i++)
	{
		int64		x = DatumGetInt64(attrs[i]);

		if (x < 0 || x >= m->ncols)
			corrupt(model_id, "The stored model has a marginal over an unknown column.");
		a[i] = (uint32) x;
	}
	if (dp_marg_init(&r->margs[k], (uint32) na, a, r->merged_sizes) != 0)
		corrupt(model_id, "The stored model has an invalid marginal.");
	cells = row_array(tup, desc, 3, FLOAT8OID, &nc);
	if (!cells || (uint64) nc != r->margs[k].ncells)
		corrupt(model_id, "The stored model has a marginal's cells do not match its columns.");
	for (int c = 0; c < nc; c++)
		r->margs[k].cells[c] = DatumGetFloat8(cells[c]);
	r->margs[k].rho = isnull ? 0 : rho;
	r->margs[k].spread = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull)) && !isnull;
}

/* The released marginals; at most one per column, one per pair, and the adaptive method's triples
 * (at most DP_ADAPTIVE_TRIPLES_PER_COL per column). */
static void
load_marginals(Datum model, DpModel *m, int64 model_id, MemoryContext caller_cxt)
{
	dp_privsyn_result *r = &m->res;
	uint64		nsynth = (uint64) m->ncols;
	MemoryContext old;

	model_select("SELECT dpsynth._jints(g->'attrs'), (g->>'rho')::float8, dpsynth._jnums(g->'cells'), "
				 "coalesce((g->>'spread')::boolean, false) "
				 "FROM jsonb_array_elements($1->'marginals') WITH ORDINALITY x(g, i) ORDER BY i",
				 model, model_id, "marginals");
	old = MemoryContextSwitchTo(caller_cxt);
	if (SPI_processed < 1 || SPI_processed > nsynth + nsynth * (nsynth - 1) / 2 + DP_ADAPTIVE_TRIPLES_PER_COL * nsynth)
		corrupt(model_id, "The stored model has no marginals, or too many.");
	r->nmargs = (uint32) SPI_processed;
	r->margs = palloc0(sizeof(dp_marg) * r->nmargs);
	for (uint32 k = 0; k < r->nmargs; k++)
		load_marginal(SPI_tuptable->vals[k], SPI_tuptable->tupdesc, m, k, model_id);
	MemoryContextSwitchTo(old);
}

/* The source's CHECK constraints, and the names of those not copied. */
static void
load_checks(Datum model, DpModel *m, int64 model_id, MemoryContext caller_cxt)
{
	MemoryContext old;

	model_select("SELECT c->>'name', c->>'expression' "
				 "FROM jsonb_array_elements($1->'checks') WITH ORDINALITY x(c, i) ORDER BY i",
				 model, model_id, "constraints");
	old = MemoryContextSwitchTo(caller_cxt);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = row_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *expr = row_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		DpCheck    *c = palloc(sizeof(DpCheck));

		if (!name || !expr)
			corrupt(model_id, "The stored model has a CHECK constraint without name or expression.");
		/* validated again against the sample's table before it is added (synth_constraints.c) */
		c->name = name;
		c->expr = expr;
		m->checks = lappend(m->checks, c);
	}
	MemoryContextSwitchTo(old);
	model_select("SELECT x FROM jsonb_array_elements_text(coalesce($1->'skipped_checks', '[]')) "
				 "WITH ORDINALITY s(x, i) ORDER BY i",
				 model, model_id, "constraints");
	old = MemoryContextSwitchTo(caller_cxt);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = row_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		if (name)
			m->skipped_checks = lappend(m->skipped_checks, name);
	}
	MemoryContextSwitchTo(old);
	/* the rows-per-unit histogram of a source with a privacy unit (dpsynth_model_json) */
	model_select("SELECT CASE WHEN $1 ? 'rows_per_unit' THEN dpsynth._jnums($1->'rows_per_unit') END", model,
				 model_id, "rows per unit");
	old = MemoryContextSwitchTo(caller_cxt);
	if (SPI_processed == 1)
	{
		int			n;
		Datum	   *h = row_array(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, FLOAT8OID, &n);

		if (h != NULL)
		{
			double	   *hist;

			if (n < 1 || n > DP_UNIT_MAX_ROWS)
				corrupt(model_id, "The stored model has a rows-per-unit histogram of the wrong size.");
			hist = palloc0(sizeof(double) * (n + 1));
			for (int j = 1; j <= n; j++)
			{
				hist[j] = DatumGetFloat8(h[j - 1]);
				if (!isfinite(hist[j]))
					corrupt(model_id, "The stored model has a rows-per-unit count that is not finite.");
			}
			m->unit_hist = hist;
			m->unit_k = n;
		}
	}
	MemoryContextSwitchTo(old);
	/* the synthesized columns its units hold constant (a model without a unit holds none) */
	model_select("SELECT x FROM jsonb_array_elements_text(coalesce($1->'constant_per_unit', '[]')) x", model,
				 model_id, "columns constant within a unit");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = row_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		bool		found = false;

		for (int c = 0; c < m->nout && name; c++)
			if (m->out[c].kind == OUT_SYNTH && strcmp(m->out[c].name, name) == 0)
				found = m->out[c].unit_constant = true;
		if (!found || m->unit_hist == NULL)
			corrupt(model_id, "The stored model holds constant within a unit a column it does not synthesize.");
	}
}

DpModel *
dpsynth_model_load(int64 model_id, DpModelMeta *meta)
{
	Oid			invoker = GetUserId();
	MemoryContext caller_cxt = CurrentMemoryContext;
	MemoryContext old;
	DpOwnerSwitch sw;
	DpModel    *m = palloc0(sizeof(DpModel));
	Datum		model;
	char	  **types;
	char	  **base_types;

	dpsynth_become_owner(&sw);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	model = load_row(invoker, model_id, m, meta, caller_cxt);
	load_columns(model, m, &types, &base_types, model_id, caller_cxt);
	load_marginals(model, m, model_id, caller_cxt);
	load_checks(model, m, model_id, caller_cxt);

	/*
	 * The column types, by the names the model recorded (the source may be gone or altered),
	 * resolved with search_path pinned to pg_catalog as the names were written.
	 */
	old = MemoryContextSwitchTo(caller_cxt);
	for (int i = 0; i < m->nout; i++)
		resolve_type(&m->out[i], types[i], base_types[i], model_id);
	MemoryContextSwitchTo(old);
	SPI_finish();
	dpsynth_restore_user(&sw);
	return m;
}
