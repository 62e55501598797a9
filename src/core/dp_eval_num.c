/*
 * dp_eval_num.c - numbers as pandas and Python read and print them, and numpy's quantile, for the
 * owner's quality report (dp_eval.c's discretization and dp_eval_ml.c's model both use them; this
 * file calls neither).  Definitions in dp_eval.h.
 */
#include "dp_eval.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
digits_run(const char **p, bool underscores)
{
	const char *s = *p;

	if (!isdigit((unsigned char) *s))
		return false;
	while (isdigit((unsigned char) *s) ||
		   (underscores && *s == '_' && isdigit((unsigned char) s[1]) && isdigit((unsigned char) s[-1])))
		s++;
	*p = s;
	return true;
}

static bool
word_is(const char *s, const char *word)
{
	return strcasecmp(s, word) == 0;
}

/* Decimal or exponent notation, inf, infinity, nan, with a sign; no hex, no spaces inside. */
bool
dp_eval_parse_number(const char *s, bool underscores, double *v)
{
	const char *p = s;
	const char *body;
	bool		mant = false;
	char		clean[512];
	size_t		n = 0;

	if (*p == '+' || *p == '-')
		p++;
	body = p;
	if (word_is(body, "inf") || word_is(body, "infinity") || word_is(body, "nan"))
	{
		double		x = (tolower((unsigned char) body[0]) == 'n') ? NAN : INFINITY;

		*v = (*s == '-') ? -x : x;
		return true;
	}
	mant = digits_run(&p, underscores);
	if (*p == '.')
	{
		p++;
		if (isdigit((unsigned char) *p))
			mant = digits_run(&p, underscores) || mant;
	}
	if (!mant)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!digits_run(&p, underscores))
			return false;
	}
	if (*p != '\0' || (size_t) (p - s) >= sizeof(clean))
		return false;
	for (p = s; *p; p++)
		if (*p != '_')
			clean[n++] = *p;
	clean[n] = '\0';
	*v = strtod(clean, NULL);
	return true;
}

void
dp_eval_float_repr(double v, char *buf)
{
	char		e[40],
				digits[24];
	int			nd = 0,
				exp10,
				decpt,
				prec;
	char	   *p = buf;

	if (isnan(v))
	{
		strcpy(buf, "nan");
		return;
	}
	if (isinf(v))
	{
		strcpy(buf, v < 0 ? "-inf" : "inf");
		return;
	}
	/* the fewest significant digits that read back as v (correctly rounded printf) */
	for (prec = 1; prec <= 17; prec++)
	{
		snprintf(e, sizeof(e), "%.*e", prec - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	for (const char *q = e; *q && *q != 'e'; q++)
		if (isdigit((unsigned char) *q))
			digits[nd++] = *q;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp10 = atoi(strchr(e, 'e') + 1);
	decpt = exp10 + 1;
	if (signbit(v))
		*p++ = '-';
	if (decpt <= -4 || decpt > 16)
	{
		*p++ = digits[0];
		if (nd > 1)
			p += sprintf(p, ".%s", digits + 1);
		sprintf(p, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
	else if (decpt <= 0)
		sprintf(p, "0.%.*s%s", -decpt, "0000", digits);
	else if (decpt >= nd)
		sprintf(p, "%s%.*s.0", digits, decpt - nd, "0000000000000000");
	else
		sprintf(p, "%.*s.%s", decpt, digits, digits + decpt);
}

double
dp_eval_quantile_sorted(const double *x, int64_t n, double q)
{
	/* numpy's 'linear' virtual index (n - 1) * q, _get_indexes and _lerp, in order */
	double		vi = (double) (n - 1) * q;
	double		prev = floor(vi),
				t,
				a,
				b,
				diff;

	if (vi >= (double) (n - 1))
		return x[n - 1];
	if (vi < 0)
		return x[0];
	t = vi - prev;
	a = x[(int64_t) prev];
	b = x[(int64_t) prev + 1];
	diff = b - a;
	return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}
