/*
 * sample.c - dp_sample(model, ...): another synthetic table drawn from a stored model, at no
 * privacy cost (the model is released data; src/model.c loads it), through the same decoding
 * and writing as dp_synthesize (synth_decode.c, synth_write.c).
 */
#include "synthesize.h"

#include "funcapi.h"
#include "tcop/tcopprot.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "dp_random.h"

/*
 * dp_sample(model, rows, seed, target, verbose): a new synthetic table drawn from a stored model.
 * The model is released data, so this is post-processing: nothing is charged, no private row is
 * read, and the randomness (GUM, splitting merged codes, values inside bins, uuids) comes from the
 * seedable generator; the same model, rows and seed give the same table.
 */
PG_FUNCTION_INFO_V1(dpsynth_sample);
Datum
dpsynth_sample(PG_FUNCTION_ARGS)
{
	int64		model_id;
	int64		rows = -1;
	uint64		seed;
	bool		verbose;
	DpModel    *m;
	DpModelMeta meta;
	char	   *label;
	char	   *target;
	char	   *comment;
	SynthStreamCopy sx;
	volatile int vrc = 0;
	Oid			nspid;
	Oid			target_relid;
	dp_prng		rng;
	dp_gum_params gum;
	dp_codes	synth;
	uint64		nrows;
	uint64		written;
	SynthProgress	pr;
	TupleDesc	tupdesc;
	Datum		result[5];
	bool		result_nulls[5] = {0};
	double		t_start = synth_now();
	double		t_load,
				t_gum,
				t_write;
	int			rc;

	/* ---- validate and load: nothing created yet ---- */
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("model must not be NULL"),
						errhint("dp_models lists the models you may sample from.")));
	model_id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
		rows = synth_check_rows(fcinfo, 1);
	if (!PG_ARGISNULL(2))
		seed = (uint64) PG_GETARG_INT64(2);
	else
		dp_random_bytes(&seed, sizeof(seed));	/* reported, so that the call can be repeated */
	verbose = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (XactReadOnly || RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("dp_sample cannot run in a read-only transaction"),
				 errdetail("It creates a table."),
				 errhint("Run it in a read-write transaction on the primary.")));

	m = dpsynth_model_load(model_id, &meta);
	label = psprintf("dp_sample(model " INT64_FORMAT ")", model_id);
	nrows = rows >= 0 ? (uint64) rows : dp_privsyn_default_rows(&m->res);
	if (nrows > (uint64) dpsynth_max_sample_rows)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model " INT64_FORMAT " would make " UINT64_FORMAT " rows by default, more than dpsynth.max_sample_rows (%d)",
						model_id, nrows, dpsynth_max_sample_rows),
				 errhint("Pass rows => at most %d.", dpsynth_max_sample_rows)));
	/* the types as they are now: a domain changed since may have to give way to its base type */
	for (int i = 0; i < m->nout; i++)
		synth_secure_column_type(&m->out[i], label);
	for (int i = 0; i < m->nout; i++)
		if (m->out[i].kind == OUT_SYNTH)
		{
			if (m->out[i].domain->kind == DP_DOMAIN_CATEGORIES)
				synth_prepare_other(&m->out[i]);
			synth_prepare_decoding(&m->out[i]);
		}
	synth_check_identifiers(m->out, m->nout, (int64) nrows, true, label);
	target = synth_resolve_target(fcinfo, 3, psprintf("%s_sample_" INT64_FORMAT, m->relname, model_id), "dp_sample",
							&nspid);
	t_load = synth_now();

	/* ---- GUM and the split of merged codes, the same function as dp_synthesize's ---- */
	synth_progress_init(&pr, label, verbose);
	dp_report(synth_pipeline_progress, &pr, DP_PHASE_GUM, 0, 1, -1);
	dp_gum_default_params(&gum);
	gum.progress = synth_pipeline_progress;
	gum.progress_arg = &pr;
	/* as dp_adaptive_run's own final synthesis when it starts cold (its warm start, the last
	 * round's estimate, is not stored) */
	if (m->method && strcmp(m->method, DPSYNTH_METHOD_ADAPTIVE_LABEL) == 0)
	{
		gum.iterations = dp_adaptive_final_iters(gum.iterations);
		gum.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;	/* a small joint domain: maximum entropy */
		gum.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;	/* ... or a small junction tree */
		gum.one_way_exact = true;	/* GUM's rows keep the one-way counts exactly */
	}
	comment = psprintf("dpsynth sample of model " INT64_FORMAT ", seed " INT64_FORMAT ": synthetic copy of %s: "
					   "%s, epsilon %s, delta %s, ledger row " INT64_FORMAT
					   ", dpsynth " DPSYNTH_VERSION ", %s",
					   model_id, (int64) seed, m->relname, m->method, float8out_internal(meta.epsilon),
					   float8out_internal(meta.delta), meta.ledger_id,
					   timestamptz_to_str(GetCurrentTimestamp()));
	/* a big draw's chunks written as they are drawn, as dp_synthesize does (synth_write_chunk) */
	memset(&sx, 0, sizeof(sx));
	if (m->unit_hist == NULL)
	{
		sx.m = m;
		sx.comment = comment;
		sx.rng = &rng;
		sx.pr = &pr;
		sx.nspid = nspid;
		sx.target = target;
		gum.chunk_sink = synth_write_chunk;
		gum.chunk_sink_arg = &sx;
	}
	dp_prng_seed(&rng, seed);
	PG_TRY();
	{
		if (m->method && strcmp(m->method, DPSYNTH_METHOD_ADAPTIVE_LABEL) == 0)
		{
			dp_adaptive_draw how;

			/* as dp_adaptive_run draws: on a big model, GUM from a sub-model's rows */
			vrc = dp_adaptive_sample(&m->res, (uint32) m->ncols, m->sizes, nrows, &gum, &rng, &synth, &how);
		}
		else
			vrc = dp_privsyn_sample(&m->res, (uint32) m->ncols, m->sizes, nrows, &gum, &rng, &synth);
	}
	PG_FINALLY();
	{
		/* a cancel let in after the helpers' join unwinds past the draw: its stream is gone */
		synth_write_chunk_forget();
	}
	PG_END_TRY();
	rc = vrc;
	if (rc != 0)
		ereport(ERROR,
				(errcode(dp_last_error_kind() == DP_ERR_INVALID ? ERRCODE_DATA_CORRUPTED : dpsynth_core_errcode()),
				 errmsg("model " INT64_FORMAT " cannot be sampled", model_id),
				 errdetail("Sampling failed: %s.", dp_last_error())));
	t_gum = synth_now();

	/* ---- write it, as dp_synthesize does (unless written while drawn) ---- */
	if (sx.done)
	{
		written = sx.written;
		target_relid = sx.relid;
	}
	else
		written = synth_write_table(m, &synth, &rng, nspid, target, comment, &pr, &target_relid);
	dp_codes_free(&synth);
	t_write = synth_now();
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	result[0] = ObjectIdGetDatum(target_relid);
	result[1] = Int64GetDatum((int64) written);
	result[2] = Int64GetDatum(model_id);
	result[3] = Int64GetDatum((int64) seed);
	result[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(psprintf(
																	   "{\"load\": %.3f, \"gum\": %.3f, \"write\": %.3f, \"total\": %.3f}",
																	   t_load - t_start, t_gum - t_load, t_write - t_gum,
																	   t_write - t_start)));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), result, result_nulls)));
}
