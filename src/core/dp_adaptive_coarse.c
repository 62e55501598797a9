/*
 * dp_adaptive_coarse.c - the adaptive method's coarse candidates (dp_adaptive.h, step 2): the runs
 * of an ordered column's merged codes, a fine marginal summed over them, and a coarse one spread
 * back over the fine cells by the released one-way shares.  Post-processing only: the runs and the
 * shares are functions of the released one-way counts and public sizes.
 */
#include "dp_adaptive_cand.h"

#include <string.h>

#include "dp_internal.h"

uint32_t
dpa_coarse_runs(const double *mass, uint32_t size, uint32_t m, uint32_t groups, uint16_t *run)
{
	uint32_t	next = 0;
	double		total = 0,
				cum = 0;

	if (m > size)
		m = size;
	if (groups < 1 || m <= groups)
	{
		for (uint32_t c = 0; c < size; c++)
			run[c] = (uint16_t) c;
		return size;
	}
	for (uint32_t c = 0; c < m; c++)
		total += mass[c] > 0 ? mass[c] : 0;
	for (uint32_t c = 0, prev = UINT32_MAX; c < m; c++)
	{
		double		w = mass[c] > 0 ? mass[c] : 0;

		/* the run of the code's midpoint in cumulative mass: runs of total / groups each */
		uint32_t	q = total > 0 ? (uint32_t) ((cum + w / 2) / total * groups) : (uint32_t) ((uint64_t) c * groups / m);

		if (q >= groups)
			q = groups - 1;
		if (q != prev)
			next++;
		prev = q;
		run[c] = (uint16_t) (next - 1);
		cum += w;
	}
	/* the codes after the ordered ones (NULL, other) are runs of their own */
	for (uint32_t c = m; c < size; c++)
		run[c] = (uint16_t) next++;
	return next;
}

int
dpa_coarse_shares(const double *mass, uint32_t size, const uint16_t *run, uint32_t nruns, double *share)
{
	double	   *sum = dp_zalloc(sizeof(double) * nruns);
	uint32_t   *n = dp_zalloc(sizeof(uint32_t) * nruns);

	if (!sum || !n)
	{
		dp_free(sum);
		dp_free(n);
		return -1;
	}
	for (uint32_t c = 0; c < size; c++)
	{
		sum[run[c]] += mass[c] > 0 ? mass[c] : 0;
		n[run[c]]++;
	}
	/* a run without positive released mass: its codes evenly */
	for (uint32_t c = 0; c < size; c++)
		share[c] = sum[run[c]] > 0 ? (mass[c] > 0 ? mass[c] : 0) / sum[run[c]] : 1.0 / n[run[c]];
	dp_free(sum);
	dp_free(n);
	return 0;
}

/*
 * The fine cell q of candidate fine (merged codes) and the coarse cell it lies in, for q = 0, 1,
 * ... in order: an odometer over the fine codes.
 */
typedef struct Odo
{
	uint32_t	n,
				code[3],
				fs[3],			/* fine sizes */
				cs[3];			/* coarse sizes */
	const uint16_t *run[3];		/* NULL: not coarsened */
} Odo;

static void
odo_init(Odo *o, const Coarse *co, const Cand *fine, const uint32_t *sizes)
{
	o->n = fine->nattrs;
	for (uint32_t k = 0; k < o->n; k++)
	{
		uint32_t	a = fine->attrs[k];

		o->code[k] = 0;
		o->fs[k] = sizes[a];
		o->run[k] = co->run[a];
		o->cs[k] = co->run[a] ? co->size[a] : sizes[a];
	}
}

static inline uint64_t
odo_coarse(const Odo *o)
{
	uint64_t	i = 0;

	for (uint32_t k = 0; k < o->n; k++)
		i = i * o->cs[k] + (o->run[k] ? o->run[k][o->code[k]] : o->code[k]);
	return i;
}

static inline void
odo_next(Odo *o)
{
	for (uint32_t k = o->n; k-- > 0;)
	{
		if (++o->code[k] < o->fs[k])
			return;
		o->code[k] = 0;
	}
}

/* The coarse cells' product of shares for the fine cell the odometer is at. */
static inline double
odo_share(const Odo *o, const Coarse *co, const Cand *fine)
{
	double		s = 1;

	for (uint32_t k = 0; k < o->n; k++)
		if (o->run[k])
			s *= co->share[fine->attrs[k]][o->code[k]];
	return s;
}

static uint64_t
coarse_cells(const Odo *o)
{
	uint64_t	c = 1;

	for (uint32_t k = 0; k < o->n; k++)
		c *= o->cs[k];
	return c;
}

static uint64_t
fine_cells(const Odo *o)
{
	uint64_t	c = 1;

	for (uint32_t k = 0; k < o->n; k++)
		c *= o->fs[k];
	return c;
}

void
dpa_coarse_sum(const Coarse *co, const Cand *fine, const uint32_t *sizes, const double *x, double *y)
{
	Odo			o;
	uint64_t	nf;

	odo_init(&o, co, fine, sizes);
	nf = fine_cells(&o);
	memset(y, 0, sizeof(double) * coarse_cells(&o));
	for (uint64_t q = 0; q < nf; q++, odo_next(&o))
		y[odo_coarse(&o)] += x[q];
}

void
dpa_coarse_sum_u32(const Coarse *co, const Cand *fine, const uint32_t *sizes, const uint32_t *x, uint32_t *y)
{
	Odo			o;
	uint64_t	nf;

	odo_init(&o, co, fine, sizes);
	nf = fine_cells(&o);
	memset(y, 0, sizeof(uint32_t) * coarse_cells(&o));
	for (uint64_t q = 0; q < nf; q++, odo_next(&o))
		y[odo_coarse(&o)] += x[q];
}

void
dpa_coarse_expand(const Coarse *co, const Cand *fine, const uint32_t *sizes, const double *y, double *x)
{
	Odo			o;
	uint64_t	nf;

	odo_init(&o, co, fine, sizes);
	nf = fine_cells(&o);
	for (uint64_t q = 0; q < nf; q++, odo_next(&o))
		x[q] = y[odo_coarse(&o)] * odo_share(&o, co, fine);
}
