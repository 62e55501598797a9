/*
 * synth_decode.c - codes to values: how a synthetic code becomes a value of its column's type
 * (categories through the type's input function, checked before the charge; bins by a uniform
 * draw inside the bin, or inside the part of it its released shape picks, src/core/dp_decode.c,
 * or, for a lone heap in a learned real bin, at the bin's roundest value, dp_binning.h; the
 * NULL/"other" cell), and fresh identifiers.
 * Post-processing of released data only: nothing here reads a private row, and nothing fails
 * on released values.
 */
#include "synthesize.h"

#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"

#include "dp_binning.h"
#include "dp_decode.h"

/* the scale of a numeric typmod (PostgreSQL 15: 11 bits, signed) */
static int
numeric_typmod_scale(int32 typmod)
{
	return (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
}

/*
 * numeric(p,s) columns, also under a domain, synthesized or identifiers: values rounded to s
 * digits and clamped to what p digits hold (fit_numeric); scale -1 and no bound otherwise.
 */
void
synth_prepare_numeric(OutColumn *oc)
{
	int			p;
	char	   *nines;

	oc->scale = -1;
	oc->numeric_max = oc->numeric_min = (Datum) 0;
	if (oc->basetype != NUMERICOID || oc->basetypmod < (int32) VARHDRSZ)
		return;
	/* a declaration or bins wider than the type are clamped */
	p = ((oc->basetypmod - VARHDRSZ) >> 16) & 0xffff;
	nines = palloc(p + 1);
	oc->scale = numeric_typmod_scale(oc->basetypmod);
	memset(nines, '9', p);
	nines[p] = '\0';
	/* (10^p - 1) * 10^-s */
	oc->numeric_max = DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf("%se%d", nines, -oc->scale)),
										  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	oc->numeric_min = DirectFunctionCall1(numeric_uminus, oc->numeric_max);
}

/*
 * The owner's placeholder for the NULL/"other" cell of a NOT NULL column with categories (declared
 * or still to be discovered), through the type's input function (with its typmod): run before
 * the charge for every such column, so that a placeholder that does not fit the type fails
 * before any work.
 */
void
synth_prepare_other(OutColumn *oc)
{
	Oid			infn,
				ioparam;

	oc->has_other_value = false;
	if (!oc->notnull || !oc->other)
		return;
	getTypeInputInfo(oc->typid, &infn, &ioparam);
	oc->other_value = OidInputFunctionCall(infn, pstrdup(oc->other), ioparam, oc->typmod);
	oc->has_other_value = true;
}

/*
 * Prepares decoding of a synthesized column (oc->domain set, prepare_other run): category values
 * through the type's input function (with its typmod), so that a declared label that does not
 * fit the type fails here, before the charge or any work (discovered labels are the column's own
 * values).  A NOT NULL column left with no category and no placeholder writes '' through its
 * base type (text-like: discovery releases categories of text columns only), so that nothing
 * here can fail on what discovery released; a domain's checks then drop such rows as any.
 */
void
synth_prepare_decoding(OutColumn *oc)
{
	Oid			infn;
	const dp_domain *d = oc->domain;

	getTypeInputInfo(oc->typid, &infn, &oc->ioparam);
	fmgr_info(infn, &oc->infunc);
	synth_prepare_numeric(oc);
	oc->category = NULL;
	if (d->kind == DP_DOMAIN_CATEGORIES)
	{
		uint32		n = d->nvalues;

		oc->category = palloc(sizeof(Datum) * Max(n, 1));
		for (uint32 c = 0; c < n; c++)
			oc->category[c] = InputFunctionCall(&oc->infunc, pnstrdup(d->map.labels[c], d->map.lens[c]),
												oc->ioparam, oc->typmod);
		if (oc->notnull && !oc->has_other_value && n == 0)
		{
			Oid			basein,
						baseioparam;

			getTypeInputInfo(oc->basetype, &basein, &baseioparam);
			oc->other_value = OidInputFunctionCall(basein, pstrdup(""), baseioparam, oc->basetypmod);
			oc->has_other_value = true;
		}
	}
	oc->decoding_ready = true;
}

/* numeric(p,s): a value rounded to s digits, clamped into [-max, max] */
static Datum
fit_numeric(const OutColumn *oc, Datum num)
{
	if (oc->scale < 0 && oc->numeric_max == (Datum) 0)
		return num;
	num = DirectFunctionCall2(numeric_round, num, Int32GetDatum(oc->scale));
	if (DatumGetBool(DirectFunctionCall2(numeric_gt, num, oc->numeric_max)))
		return oc->numeric_max;
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, num, oc->numeric_min)))
		return oc->numeric_min;
	return num;
}

/*
 * Bins: the released shape inside them that decoding draws from, if the domain has one
 * (dp_shape_init; pieces it refuses, or none, leave oc->shape empty: uniform inside each bin).
 * Post-processing of the model.
 */
void
synth_prepare_shape(OutColumn *oc)
{
	const dp_domain *d = oc->domain;

	memset(&oc->shape, 0, sizeof(oc->shape));
	if (d->kind != DP_DOMAIN_CATEGORIES && d->shape && d->nshape > 0)
		(void) dp_shape_init(&oc->shape, d, d->shape, d->nshape);
}

/*
 * Lone heaps in learned real bins (dp_binning.h): the value a bin's rows take where its released
 * one-way count stands out of both neighbours' (dp_binning_heap_points).  Bins learned from a
 * release only (the domain has a released shape): declared bins are drawn as declared.
 * Post-processing of the model's released one-way counts and edges.
 */
void
synth_prepare_heaps(OutColumn *oc, const double *oneway)
{
	const dp_domain *d = oc->domain;
	double	   *point;

	oc->heap_point = NULL;
	if (d->kind != DP_DOMAIN_REAL_BINS || !d->shape || d->nshape == 0 || d->nvalues < 1 || !oneway)
		return;
	point = palloc(sizeof(double) * d->nvalues);
	if (dp_binning_heap_points(d->edges, d->nvalues, oneway, point) > 0)
	{
		/* and the bins recorded at the lone heaps' step (dp_binning_heap_mates) */
		(void) dp_binning_heap_mates(d->edges, d->nvalues, oneway, point);
		oc->heap_point = point;
	}
	else
		pfree(point);
}

/*
 * A NOT NULL column's NULL/"other" cell: the owner's placeholder for categories, else the value
 * (or bin) with the largest released one-way count.  Post-processing of the model.
 */
void
synth_prepare_fallback(OutColumn *oc, const double *oneway)
{
	const dp_domain *d = oc->domain;

	oc->fallback_code = 0;
	for (uint32 c = 1; c < d->nvalues; c++)
		if (oneway[c] > oneway[oc->fallback_code])
			oc->fallback_code = (dp_code) c;
	if (d->kind != DP_DOMAIN_CATEGORIES)
		return;
	if (oc->has_other_value)
		oc->fallback = oc->other_value;
	else if (d->nvalues > 0)
		oc->fallback = oc->category[oc->fallback_code];
}

/* The value of a code, or NULL.  Never fails on released data: categories were converted
 * before any work, bins decode inside their range. */
Datum
synth_decode_value(OutColumn *oc, dp_code code, dp_prng *rng, bool *isnull)
{
	const dp_domain *d = oc->domain;

	*isnull = false;
	if (code >= d->nvalues)
	{
		/* the NULL/"other" cell: NULL where allowed, else the column's fallback */
		if (!oc->notnull)
		{
			*isnull = true;
			return (Datum) 0;
		}
		if (d->kind == DP_DOMAIN_CATEGORIES)
			return oc->fallback;
		code = oc->fallback_code;	/* bins: a value in the most populous bin */
	}
	if (d->kind == DP_DOMAIN_CATEGORIES)
		return oc->category[code];
	if (d->kind == DP_DOMAIN_INT_BINS)
	{
		int64		lo,
					hi,
					v;

		double		plo,
					phi;

		dp_int_bin_range(d, code, &lo, &hi);
		/* inside the bin, where its released shape has mass (dp_shape_pick: a part of the bin) */
		if (dp_shape_pick(&oc->shape, rng, code, &plo, &phi))
		{
			lo = (int64) plo;
			hi = (int64) phi;
		}
		v = dp_decode_int(rng, lo, hi);
		switch (oc->basetype)
		{
			case INT2OID:
				return Int16GetDatum((int16) Max(Min(v, PG_INT16_MAX), PG_INT16_MIN));
			case INT4OID:
				return Int32GetDatum((int32) Max(Min(v, PG_INT32_MAX), PG_INT32_MIN));
			case DATEOID:
				return DateADTGetDatum((DateADT) Max(Min(v, PG_INT32_MAX - 1), PG_INT32_MIN + 1));
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
			case INT8OID:
				return Int64GetDatum(v);
			case FLOAT4OID:
				return Float4GetDatum((float4) v);
			case FLOAT8OID:
				return Float8GetDatum((float8) v);
			default:
				/* numeric column declared with integral bins */
				return fit_numeric(oc, DirectFunctionCall1(int8_numeric, Int64GetDatum(v)));
		}
	}
	{
		double		lo,
					hi,
					v;

		double		plo,
					phi;
		bool		closed = (uint32) code + 1 == d->nvalues;

		if (oc->heap_point && isfinite(oc->heap_point[code]))
			v = oc->heap_point[code];	/* a lone heap: its round value (synth_prepare_heaps) */
		else
		{
			dp_real_bin_range(d, code, &lo, &hi);
			if (dp_shape_pick(&oc->shape, rng, code, &plo, &phi))
			{
				closed = closed && phi == hi;
				lo = plo;
				hi = phi;
			}
			v = dp_decode_real(rng, lo, hi, closed, oc->scale, d->edges[0], d->edges[d->nvalues]);
		}
		switch (oc->basetype)
		{
			case FLOAT4OID:
				return Float4GetDatum((float4) v);
			case FLOAT8OID:
				return Float8GetDatum(v);
			default:
				return fit_numeric(oc, DirectFunctionCall1(float8_numeric, Float8GetDatum(v)));
		}
	}
}

/* A fresh identifier for row i (1-based); uuids are random (version 4) from the post-processing
 * generator, so that a seeded dp_sample is reproducible. */
Datum
synth_identifier_value(OutColumn *oc, int64 i, dp_prng *rng, bool *isnull)
{
	*isnull = false;
	if (i > oc->id_capacity)
	{
		/* beyond what the type holds (a nullable column; NOT NULL ones were refused) */
		*isnull = true;
		return (Datum) 0;
	}
	switch (oc->basetype)
	{
		case INT2OID:
			return Int16GetDatum((int16) i);
		case INT4OID:
			return Int32GetDatum((int32) i);
		case INT8OID:
			return Int64GetDatum(i);
		case NUMERICOID:
			return fit_numeric(oc, DirectFunctionCall1(int8_numeric, Int64GetDatum(i)));
		case UUIDOID:
			if (oc->unit)
			{
				/* a synthetic unit: the same id on every row of the unit, 00000000-0000-4000-8000-<i> */
				pg_uuid_t  *u = palloc0(sizeof(pg_uuid_t));

				u->data[6] = 0x40;
				u->data[8] = 0x80;
				for (int b = 0; b < 6; b++)
					u->data[UUID_LEN - 1 - b] = (unsigned char) (i >> (8 * b));
				return UUIDPGetDatum(u);
			}
			else
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				for (int k = 0; k < UUID_LEN; k += 8)
				{
					uint64		w = dp_prng_next(rng);

					for (int b = 0; b < 8; b++)
						u->data[k + b] = (unsigned char) (w >> (8 * b));
				}
				u->data[6] = (u->data[6] & 0x0f) | 0x40;	/* version 4 */
				u->data[8] = (u->data[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
				return UUIDPGetDatum(u);
			}
		case TEXTOID:
		case VARCHAROID:
			return CStringGetTextDatum(psprintf(oc->id_long_format ? "synthetic-" INT64_FORMAT : INT64_FORMAT, i));
		default:
			*isnull = true;
			return (Datum) 0;
	}
}

static int64
pow10_minus_1(int digits)
{
	int64		x = 1;

	if (digits <= 0)
		return 0;
	if (digits >= 18)
		return PG_INT64_MAX;
	while (digits-- > 0)
		x *= 10;
	return x - 1;
}

/*
 * How many fresh identifiers (1..capacity) a column's type holds, for nrows rows: smallint and
 * integer their range, numeric(p,s) 10^(p-s) - 1, varchar(n) "synthetic-N" when it fits nrows,
 * else a plain "N" (10^n - 1).  Sets oc->id_capacity and oc->id_long_format.
 */
void
synth_identifier_format(OutColumn *oc, int64 nrows)
{
	oc->id_long_format = true;
	oc->id_capacity = PG_INT64_MAX;
	if (oc->basetype == INT2OID)
		oc->id_capacity = PG_INT16_MAX;
	else if (oc->basetype == INT4OID)
		oc->id_capacity = PG_INT32_MAX;
	else if (oc->basetype == NUMERICOID && oc->basetypmod >= (int32) VARHDRSZ)
		oc->id_capacity = pow10_minus_1((((oc->basetypmod - VARHDRSZ) >> 16) & 0xffff) -
										numeric_typmod_scale(oc->basetypmod));
	else if (oc->basetype == VARCHAROID && oc->basetypmod >= (int32) VARHDRSZ)
	{
		int			n = oc->basetypmod - VARHDRSZ;

		if (nrows > pow10_minus_1(n - (int) strlen("synthetic-")))
		{
			oc->id_long_format = false;
			oc->id_capacity = pow10_minus_1(n);
		}
		else
			oc->id_capacity = pow10_minus_1(n - (int) strlen("synthetic-"));
	}
}
