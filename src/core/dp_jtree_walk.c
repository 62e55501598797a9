/*
 * dp_jtree_walk.c - the junction tree fit's passes over a big clique (a scaling, a projection, or
 * both fused) on the call's threads, giving the same bits as one thread (dp_jtree.h).
 */
#include "dp_jtree.h"

#include "dp_internal.h"

/*
 * The fit's passes over a big clique on the call's threads.  The clique's cells are cut by the
 * codes of one of the walk's outer blocks (dp_odo_runs), each thread walking the cells of its own
 * range of those codes in the order the whole walk takes them.  A scaling changes each cell
 * alone; a projection's cells of one sum all have the same code of every block that the table
 * projected onto holds, so where the cut block is one of those, every sum is the same additions
 * in the same order as in one walk: the same bits either way.  The cut block: the outermost one
 * the projection's table holds (any for a scaling) with at least as many codes as threads (the
 * innermost outer block, the walk's K loop, cut into a range of each of its runs); none, or
 * only the innermost block held: one thread.  Cliques below
 * JT_PAR_CELLS cells walk on one thread (a pass's threads cost more than their share there).
 */
#define JT_PAR_CELLS ((uint64_t) 1 << 16)

#ifdef DPSYNTH_TEST_RNG
static uint64_t jt_test_cuts[2];	/* dp_jtree.h's seam: threaded walks, K loop cut and outer cut */

void
dp_jtree_test_cuts(uint64_t *kloop, uint64_t *outer)
{
	*kloop = jt_test_cuts[0];
	*outer = jt_test_cuts[1];
	jt_test_cuts[0] = jt_test_cuts[1] = 0;
}
#define JT_COUNT_CUT(r, cut) (jt_test_cuts[(cut) + 1 == (r)->nouter ? 0 : 1]++)
#else
#define JT_COUNT_CUT(r, cut) ((void) 0)
#endif

typedef struct jt_walk_job
{
	const dp_odo_runs *r;
	dp_odo_op	op;
	double	   *P;
	const double *f;
	double	   *out;
	uint32_t	cut;			/* the outer block cut */
	uint64_t	c0,
				c1;				/* its codes [c0, c1) */
} jt_walk_job;

static void *
jt_walk_worker(void *arg)
{
	const jt_walk_job *j = arg;
	const dp_odo_runs *r = j->r;
	const dp_odo_k kall = dp_odo_k_of(r);
	const uint64_t L = r->inner;
	const bool kcut = j->cut == kall.nup;	/* the K loop's block cut: a range of each K */
	dp_odo_k	k = kall;
	uint64_t	pstep[DP_ODO_MAX_COLS],
				ip = 0,
				s = kall.K * L;
	dp_odo_outer o = {{0}, 0, 0};

	/* P's stride of each block the odometer turns */
	for (uint32_t q = k.nup; q-- > 0;)
	{
		pstep[q] = s;
		s *= r->sizes[q];
	}
	if (kcut)
	{
		/* every turn of the odometer, the K loop's codes [c0, c1) only */
		k.K = j->c1 - j->c0;
		o.ia = j->c0 * kall.ka;
		o.ib = j->c0 * kall.kb;
		ip = j->c0 * L;
	}
	else
	{
		o.code[j->cut] = j->c0;
		o.ia = j->c0 * r->step[0][j->cut];
		o.ib = j->c0 * r->step[1][j->cut];
		ip = j->c0 * pstep[j->cut];
	}
	for (;;)
	{
		uint32_t	q;

		if (L == 2)
			switch (j->op)
			{
				case DP_ODO_PROJECT:
					dp_odo_blocks(DP_ODO_PROJECT, r, &k, &o, j->P + ip, j->f, j->out, 2);
					break;
				case DP_ODO_SCALE:
					dp_odo_blocks(DP_ODO_SCALE, r, &k, &o, j->P + ip, j->f, j->out, 2);
					break;
				case DP_ODO_SCALE_PROJECT:
					dp_odo_blocks(DP_ODO_SCALE_PROJECT, r, &k, &o, j->P + ip, j->f, j->out, 2);
					break;
			}
		else
			switch (j->op)
			{
				case DP_ODO_PROJECT:
					dp_odo_blocks(DP_ODO_PROJECT, r, &k, &o, j->P + ip, j->f, j->out, L);
					break;
				case DP_ODO_SCALE:
					dp_odo_blocks(DP_ODO_SCALE, r, &k, &o, j->P + ip, j->f, j->out, L);
					break;
				case DP_ODO_SCALE_PROJECT:
					dp_odo_blocks(DP_ODO_SCALE_PROJECT, r, &k, &o, j->P + ip, j->f, j->out, L);
					break;
			}
		/* the odometer over the turned blocks, a cut one within [c0, c1) */
		for (q = k.nup; q-- > 0;)
		{
			uint64_t	lo = q == j->cut ? j->c0 : 0,
						hi = q == j->cut ? j->c1 : r->sizes[q];

			o.code[q]++;
			o.ia += r->step[0][q];
			o.ib += r->step[1][q];
			ip += pstep[q];
			if (o.code[q] < hi)
				break;
			o.ia -= r->step[0][q] * (hi - lo);
			o.ib -= r->step[1][q] * (hi - lo);
			ip -= pstep[q] * (hi - lo);
			o.code[q] = lo;
		}
		if (q == UINT32_MAX)
			break;				/* every turned block wrapped: the range is walked */
	}
	return NULL;
}

/* pass op over P (dp_odo_project, dp_odo_scale or dp_odo_scale_project), on the threads where
 * that gives the same bits (above) */
void
dp_jtree_walk(const dp_odo_runs *r, dp_odo_op op, double *P, const double *f, double *out)
{
	uint32_t	T = dp_threads(),
				cut = UINT32_MAX;

	if (T > DP_MAX_THREADS)
		T = DP_MAX_THREADS;
	if (T > 1 && r->ncells >= JT_PAR_CELLS)
		for (uint32_t q = 0; q < r->nouter && cut == UINT32_MAX; q++)
			if (r->sizes[q] >= T &&
				(op == DP_ODO_SCALE || r->step[op == DP_ODO_PROJECT ? 0 : 1][q] != 0))
				cut = q;
	if (cut == UINT32_MAX)
	{
		if (op == DP_ODO_PROJECT)
			dp_odo_project(r, P, out);
		else if (op == DP_ODO_SCALE)
			dp_odo_scale(r, P, f);
		else
			dp_odo_scale_project(r, P, f, out);
		return;
	}
	{
		jt_walk_job jobs[DP_MAX_THREADS];

		JT_COUNT_CUT(r, cut);
		for (uint32_t t = 0; t < T; t++)
		{
			jobs[t].r = r;
			jobs[t].op = op;
			jobs[t].P = P;
			jobs[t].f = f;
			jobs[t].out = out;
			jobs[t].cut = cut;
			jobs[t].c0 = r->sizes[cut] * t / T;
			jobs[t].c1 = r->sizes[cut] * (t + 1) / T;
		}
		dp_run_parallel(jt_walk_worker, jobs, sizeof(jt_walk_job), T);
	}
}
