/*
 * report.c - dp_report(real, synthetic, holdout, target): dp_evaluate as one self-contained HTML
 * page (inline CSS and SVG, no script, nothing fetched), for a data owner to judge a synthetic
 * table at a glance.  Panels with stable ids: "headline" (the numbers, and the warning that the
 * page is computed from the real table, so it is NOT a DP release), "privacy" (the real table's
 * budget and the synthetic table's release, as the caller may read them in dp_budget and
 * dp_ledger), "heatmap" (2-way TVD of every pair) and "histograms" with one "hist-N" per column.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "evaluate.h"

#define REAL_COLOUR "#1f77b4"
#define SYNTH_COLOUR "#ff7f0e"
#define HIST_MAX_BARS 40
#define HEAT_CELL 26

/* Appends s with &, <, >, " and ' escaped. */
static void
append_html(StringInfo out, const char *s)
{
	for (; *s; s++)
		switch (*s)
		{
			case '&':
				appendStringInfoString(out, "&amp;");
				break;
			case '<':
				appendStringInfoString(out, "&lt;");
				break;
			case '>':
				appendStringInfoString(out, "&gt;");
				break;
			case '"':
				appendStringInfoString(out, "&quot;");
				break;
			case '\'':
				appendStringInfoString(out, "&#39;");
				break;
			default:
				appendStringInfoChar(out, *s);
		}
}

static char *
rel_text(Oid relid)
{
	return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

static char *
num(double v)
{
	return isnan(v) ? "&ndash;" : psprintf("%.4f", v);
}

/* ---- headline ---- */

static void
headline_row(StringInfo out, const char *metric, double value, double reference, const char *what)
{
	appendStringInfo(out, "<tr><th>%s</th><td>%s</td><td>%s</td><td>", metric, num(value), num(reference));
	append_html(out, what);
	appendStringInfoString(out, "</td></tr>\n");
}

static void
write_headline(StringInfo out, const dp_eval_result *r, const DpEvalTables *t)
{
	appendStringInfoString(out, "<header id=\"headline\"><h1>Synthetic table ");
	append_html(out, rel_text(t->relid[DP_EVAL_SYNTH]));
	appendStringInfoString(out, " against real table ");
	append_html(out, rel_text(t->relid[DP_EVAL_REAL]));
	appendStringInfoString(out, "</h1>\n<p class=\"warn\">This page is computed from the real table with the "
						   "privileges of the role that ran dp_report: it is <b>not</b> differentially private. "
						   "Share it only with roles that may read the real table.</p>\n");
	appendStringInfo(out, "<p>" INT64_FORMAT " real rows, " INT64_FORMAT " synthetic rows",
					 r->rows[DP_EVAL_REAL], r->rows[DP_EVAL_SYNTH]);
	if (OidIsValid(t->relid[DP_EVAL_HOLDOUT]))
	{
		appendStringInfo(out, ", " INT64_FORMAT " holdout rows (", r->rows[DP_EVAL_HOLDOUT]);
		append_html(out, rel_text(t->relid[DP_EVAL_HOLDOUT]));
		appendStringInfoChar(out, ')');
	}
	appendStringInfoString(out, ".</p>\n<table class=\"numbers\"><tr><th>metric</th><th>synthetic</th>"
						   "<th>reference</th><th>what</th></tr>\n");
	headline_row(out, "tvd1", r->tvd1, NAN, "mean total variation distance of the 1-way marginals (0 is perfect)");
	headline_row(out, "tvd2", r->tvd2, NAN, "the same over all 2-way marginals");
	headline_row(out, "tvd3", r->tvd3, NAN, psprintf("the same over " INT64_FORMAT " 3-way marginals", r->ntriples));
	headline_row(out, "range_error", r->range_error, NAN, "mean error of 1000 random range queries on 3 columns");
	headline_row(out, "corr_diff", r->corr_diff, NAN, "mean difference of Cramer's V over the pairs");
	if (r->ml_ran)
	{
		headline_row(out, "tstr_auc", r->tstr_auc, r->trtr_auc,
					 psprintf("AUC predicting %s, trained on synthetic (reference: on real), tested on the holdout", t->target));
		headline_row(out, "tstr_accuracy", r->tstr_acc, r->trtr_acc, "accuracy, likewise");
	}
	else
		headline_row(out, "tstr_auc", NAN, NAN, psprintf("skipped: %s", r->ml_skipped));
	headline_row(out, "exact_copy_rate", r->copy_rate, r->copy_rate_holdout,
				 "synthetic rows equal to a real row (reference: holdout rows)");
	headline_row(out, "dcr_p5", r->dcr_p5, r->dcr_p5_holdout,
				 "5th percentile of the distance to the closest real row (reference: holdout rows)");
	appendStringInfoString(out, "</table></header>\n");
}

/* ---- privacy parameters, as the caller may read them ---- */

/* schema: the extension's, where dp_report itself lives */
static void
write_privacy(StringInfo out, const DpEvalTables *t, Oid schema_oid)
{
	char	   *schema = get_namespace_name(schema_oid);
	Datum		args[2] = {ObjectIdGetDatum(t->relid[DP_EVAL_REAL]),
	CStringGetTextDatum(get_rel_name(t->relid[DP_EVAL_SYNTH]))};
	Oid			types[2] = {REGCLASSOID, TEXTOID};
	const char *qs = quote_identifier(schema);

	appendStringInfoString(out, "<section id=\"privacy\"><h2>Privacy parameters</h2>\n<ul>");
	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT epsilon, delta, round(epsilon_spent::numeric, 4), delta_total "
									   "FROM %s.dp_budget WHERE table_name = $1", qs),
							  1, types, args, NULL, true, 1) == SPI_OK_SELECT && SPI_processed == 1)
		appendStringInfo(out, "<li>Budget of the real table: epsilon %s, delta %s; spent so far: epsilon %s (delta %s).</li>",
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4));
	else
		appendStringInfoString(out, "<li>The real table has no dpsynth budget you may read.</li>");
	if (SPI_execute_with_args(psprintf("SELECT epsilon, delta, coalesce(details->>'method', 'privsyn'), "
									   "to_char(charged_at, 'YYYY-MM-DD HH24:MI') FROM %s.dp_ledger "
									   "WHERE table_name = $1 AND function = 'dp_synthesize' AND status = 'completed' "
									   "AND details->>'target' = $2 ORDER BY id DESC LIMIT 1", qs),
							  2, types, args, NULL, true, 1) == SPI_OK_SELECT && SPI_processed == 1)
		appendStringInfo(out, "<li>Release of the synthetic table: dp_synthesize at epsilon %s, delta %s, method %s, on %s.</li>",
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4));
	else
		appendStringInfoString(out, "<li>No completed dp_synthesize of the real table into a table of this name in the ledger you may read.</li>");
	SPI_finish();
	appendStringInfoString(out, "</ul></section>\n");
}

/* ---- 2-way TVD heat map ---- */

static void
write_heatmap(StringInfo out, const dp_eval_result *r)
{
	int			d = r->ncols,
				label = 150,
				side = label + d * HEAT_CELL;
	double		max = 1e-9;

	for (int i = 0; i < d * d; i++)
		max = r->tvd2_pair[i] > max ? r->tvd2_pair[i] : max;
	appendStringInfo(out, "<section id=\"heatmap\"><h2>2-way TVD of every pair (darker is worse; darkest %.3f)</h2>\n"
					 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n", max, side + 10, side + 10);
	for (int a = 0; a < d; a++)
	{
		appendStringInfo(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">", label - 4,
						 label + a * HEAT_CELL + HEAT_CELL - 9);
		append_html(out, r->cols[a].name);
		appendStringInfo(out, "</text><text transform=\"translate(%d,%d) rotate(-60)\" font-size=\"11\">",
						 label + a * HEAT_CELL + HEAT_CELL / 2, label - 4);
		append_html(out, r->cols[a].name);
		appendStringInfoString(out, "</text>\n");
		for (int b = 0; b < d; b++)
		{
			double		v = r->tvd2_pair[a * d + b] / max;
			int			shade = (int) (255 * (1 - v));

			appendStringInfo(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ccc\">"
							 "<title>%.4f</title></rect>\n",
							 label + b * HEAT_CELL, label + a * HEAT_CELL, HEAT_CELL, HEAT_CELL,
							 a == b ? "#eeeeee" : psprintf("rgb(255,%d,%d)", shade, shade),
							 r->tvd2_pair[a * d + b]);
		}
	}
	appendStringInfoString(out, "</svg></section>\n");
}

/* ---- one histogram per column ---- */

/* The codes to draw: all, or the HIST_MAX_BARS most frequent in real + synthetic, in order. */
static int
pick_bars(const dp_eval_column *col, int *bars)
{
	int			n = 0;

	for (int k = 0; k < col->size; k++)
	{
		int			rank = 0;
		double		mk = col->real_frac[k] + col->synth_frac[k];

		for (int j = 0; j < col->size; j++)
		{
			double		mj = col->real_frac[j] + col->synth_frac[j];

			rank += mj > mk || (mj == mk && j < k);
		}
		if (rank < HIST_MAX_BARS)
			bars[n++] = k;
	}
	return n;
}

static void
write_histogram(StringInfo out, const dp_eval_column *col, int index)
{
	int		   *bars = palloc(col->size * sizeof(int));
	int			n = pick_bars(col, bars),
				w = 320,
				h = 120;
	double		max = 1e-9,
				bw;

	for (int i = 0; i < n; i++)
	{
		max = col->real_frac[bars[i]] > max ? col->real_frac[bars[i]] : max;
		max = col->synth_frac[bars[i]] > max ? col->synth_frac[bars[i]] : max;
	}
	bw = (double) w / n;
	appendStringInfo(out, "<figure id=\"hist-%d\" class=\"hist\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
					 "width=\"%d\" height=\"%d\"><rect width=\"%d\" height=\"%d\" fill=\"#fafafa\"/>\n",
					 index, w, h, w, h);
	for (int i = 0; i < n; i++)
	{
		double		hr = (h - 4) * col->real_frac[bars[i]] / max,
					hs = (h - 4) * col->synth_frac[bars[i]] / max;

		appendStringInfo(out, "<g><title>");
		append_html(out, col->labels[bars[i]]);
		appendStringInfo(out, ": real %.4f, synthetic %.4f</title>"
						 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
						 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/></g>\n",
						 col->real_frac[bars[i]], col->synth_frac[bars[i]],
						 i * bw + bw * 0.1, h - hr, bw * 0.4, hr, REAL_COLOUR,
						 i * bw + bw * 0.5, h - hs, bw * 0.4, hs, SYNTH_COLOUR);
	}
	appendStringInfoString(out, "</svg><figcaption><b>");
	append_html(out, col->name);
	appendStringInfo(out, "</b> tvd1 %.4f%s</figcaption></figure>\n", col->tvd1,
					 n < col->size ? psprintf(" (%d of %d codes)", n, col->size) : "");
}

static void
write_histograms(StringInfo out, const dp_eval_result *r)
{
	appendStringInfo(out, "<section id=\"histograms\"><h2>Every column: <span style=\"color:%s\">real</span> "
					 "and <span style=\"color:%s\">synthetic</span> (fractions per code)</h2>\n<div class=\"grid\">\n",
					 REAL_COLOUR, SYNTH_COLOUR);
	for (int c = 0; c < r->ncols; c++)
		write_histogram(out, &r->cols[c], c);
	appendStringInfoString(out, "</div></section>\n");
}

static const char *const page_style =
"body{font-family:sans-serif;margin:16px;color:#222;background:#fff}"
"h1{font-size:20px}h2{font-size:16px;margin:18px 0 6px}"
".warn{background:#fff3cd;border:1px solid #e0c36b;padding:6px 10px}"
"table.numbers{border-collapse:collapse}table.numbers td,table.numbers th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}"
".grid{display:flex;flex-wrap:wrap;gap:10px}.hist{margin:0;border:1px solid #ddd;padding:4px}"
"figcaption{font-size:12px}";

PG_FUNCTION_INFO_V1(dpsynth_report);

Datum
dpsynth_report(PG_FUNCTION_ARGS)
{
	dp_eval_result res;
	DpEvalTables tables;
	StringInfoData out;

	dpsynth_evaluate_tables(fcinfo, &res, &tables);
	initStringInfo(&out);
	appendStringInfoString(&out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dpsynth report: ");
	append_html(&out, rel_text(tables.relid[DP_EVAL_SYNTH]));
	appendStringInfo(&out, "</title><style>%s</style></head><body>\n", page_style);
	write_headline(&out, &res, &tables);
	write_privacy(&out, &tables, get_func_namespace(fcinfo->flinfo->fn_oid));
	write_heatmap(&out, &res);
	write_histograms(&out, &res);
	appendStringInfoString(&out, "</body></html>\n");
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}
