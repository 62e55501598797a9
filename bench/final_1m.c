/*
 * final_1m.c - the adaptive method's final draw on the server's shapes of adult_1m, without a
 * cluster: the bundled Adult rows encoded with the domains a server's model of adult_1m released
 * (bench/adult_1m_domains.txt, written from dp_model_json by bench/model_domains.py: 64-80 codes
 * for the integer columns, where bench/final_warm.c's encoding has at most 32, so that GUM's
 * marginals have the server's 25-38k cells rather than 14k), repeated to `rows` rows as
 * scripts/lib.sh's dp_make_adult_1m does (the whole table 30 times, then its first rows), one
 * dp_adaptive_run with the noise from a fixed stream (the unit tests' library), then `reps` draws
 * of its final rows by dp_adaptive_sample with the run's final parameters (dp_adaptive_run's
 * step 5: dp_adaptive_final_iters, maximum entropy and junction-tree bounds, one-way counts kept
 * exactly, no warm start) on `threads` threads, each from dp_prng_seed(1000 + draw).
 *
 * Prints the model (k-way marginals, their cells), the run's rows hash, CPU and gum seconds; per
 * draw: the CPU seconds of the calling thread (what a helper thread does not take off it: the
 * draw's length on an idle machine, when no helper makes it wait), of the process (helpers
 * included), the wall seconds, the calling thread's CPU seconds at each GUM iteration's end and
 * the mean L1 error there, the rows' FNV-1a hash (two builds draw the same rows exactly when the
 * hashes agree) and, with `tvd` 1, the mean 2-way TVD over every pair and the 3-way TVD over 80
 * fixed triples against the encoded real rows.  No assertion: a benchmark.
 *
 * With `chunks` > 0 the draws are the bench's own chunked draw instead (chunked_draw below: GUM
 * on each of `chunks` chunks on its own, on threads the bench starts), for comparing chunk counts
 * other than the core's (dp_adaptive_draw_chunk's: 2 at a million rows).
 *
 * Usage (from the checkout's top): make bench/bin/final_1m &&
 *        bench/bin/final_1m [rows] [noise seed] [reps] [threads] [tvd] [domains file] [chunks]
 *        (defaults: 1000000 1 3 2 1 bench/adult_1m_domains.txt 0; an empty domains file: the
 *        default)
 */
/* the benches link the unit tests' library, which has the seam (dp_random.h) */
#define DPSYNTH_TEST_RNG

#include <pthread.h>
#include <time.h>

#include "dp_accounting.h"
#include "dp_adaptive.h"
#include "dp_env.h"
#include "dp_gum.h"
#include "dp_jtree.h"
#include "dp_maxent.h"
#include "dp_privsyn.h"
#include "dp_random.h"
#include "../test/unit/adult_data.h"
#include "rows_hash.h"
#include "final_rows.h"

#define NC ADULT_COLS
#define MAXTOK 160

typedef struct dcol
{
	char		name[64];
	bool		categorical;
	bool		null_cell;
	uint32_t	codes;
	uint32_t	ntok;			/* values (categories) or edges (integer bins) */
	char		tok[MAXTOK][64];
	long		edge[MAXTOK];
} dcol;

static double
thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool
read_domains(const char *path, dcol *dc)
{
	FILE	   *f = fopen(path, "r");
	char		line[16384];
	uint32_t	n = 0;

	if (f == NULL)
	{
		fprintf(stderr, "%s: cannot open (run from the checkout's top)\n", path);
		return false;
	}
	while (n < NC && fgets(line, sizeof(line), f))
	{
		char	   *save = NULL,
				   *t = strtok_r(line, " \n", &save);
		dcol	   *c = &dc[n];

		if (t == NULL)
			continue;
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "%s", t);
		t = strtok_r(NULL, " \n", &save);
		c->categorical = t && strcmp(t, "cat") == 0;
		t = strtok_r(NULL, " \n", &save);
		c->codes = t ? (uint32_t) atoi(t) : 0;
		t = strtok_r(NULL, " \n", &save);
		c->null_cell = t && atoi(t) == 1;
		while ((t = strtok_r(NULL, " \n", &save)) != NULL && c->ntok < MAXTOK)
		{
			snprintf(c->tok[c->ntok], 64, "%s", t);
			c->edge[c->ntok++] = strtol(t, NULL, 10);
		}
		if (c->codes == 0 || c->codes > 65535 ||
			c->ntok != (c->categorical ? c->codes - c->null_cell : c->codes + 1))
		{
			fprintf(stderr, "%s: column %s does not match its code count\n", path, c->name);
			fclose(f);
			return false;
		}
		n++;
	}
	fclose(f);
	if (n != NC)
		fprintf(stderr, "%s: %u columns, not %d\n", path, n, NC);
	return n == NC;
}

static uint16_t
encode_value(const dcol *c, const char *v)
{
	if (c->categorical)
	{
		for (uint32_t i = 0; i < c->ntok; i++)
			if (strcmp(v, c->tok[i]) == 0)
				return (uint16_t) i;
		return (uint16_t) (c->codes - 1);	/* NULL ('?') or a value not listed */
	}
	else
	{
		long		x = strtol(v, NULL, 10);
		uint32_t	b = 0;

		while (b + 1 < c->codes && x >= c->edge[b + 1])
			b++;
		return (uint16_t) b;
	}
}

/* encode_value as csv_append_rows calls it: column j of the dcol array cols */
static uint16_t
encode_dcol(const void *cols, uint32_t j, const char *v)
{
	return encode_value(&((const dcol *) cols)[j], v);
}

/* Adult's rows encoded with dc into src, repeated to rows rows into big. */
static bool
load_encoded(const dcol *dc, uint64_t rows, dp_codes *src, dp_codes *big)
{
	char	   *csv = find_data("adult_train.csv"),
			   *save = NULL;

	if (csv == NULL)
	{
		fprintf(stderr, "run from the checkout's top: data/adult not found\n");
		return false;
	}
	(void) strtok_r(csv, "\n", &save);	/* header: the columns in domain.json's order */
	dp_codes_init(src, NC, 40000);
	csv_append_rows(src, &save, UINT64_MAX, encode_dcol, dc);
	free(csv);
	dp_codes_init(big, NC, rows);
	for (uint32_t j = 0; j < NC; j++)
		for (uint64_t i = 0; i < rows; i++)
			big->col[j][i] = src->col[j][i % src->nrows];
	big->nrows = rows;
	return true;
}

/*
 * The bench's own chunked draw (chunks > 0; how dp_gum_run_chunked was first measured): the
 * sub-model's rows drawn as dp_adaptive_sample's submodel_rows draws them, but in `chunks` chunks
 * of ceil(n / chunks) rows; then GUM warm from each chunk's rows on its own (one part, one
 * thread: dp_threads 1 while they run), the targets scaled to the chunk's rows, the iterations
 * those of the whole (dp_adaptive_submodel_iters of n), the one-way counts exact per chunk
 * (largest remainder of the chunk's rows); the chunks on `threads` threads (chunk k on thread
 * k % threads, in order); then the chunks' rows side by side and the merged codes split over the
 * whole as dp_privsyn_sample does.  Per chunk: its thread CPU and when it ended.
 */
typedef struct cjob
{
	const dp_privsyn_result *res;
	uint32_t	d;
	const dp_gum_params *prm;
	uint32_t	first,
				step,
				nchunks;
	dp_codes   *start;			/* views of the sub-model's rows, one a chunk */
	dp_codes   *out;			/* one a chunk */
	uint64_t   *seed;
	double	   *cpu,
			   *end,
				w0;
	int			rc;
} cjob;

static void *
cjob_run(void *arg)
{
	cjob	   *j = arg;

	for (uint32_t k = j->first; k < j->nchunks; k += j->step)
	{
		dp_gum_params g = *j->prm;
		dp_prng		r;
		double		c = thread_cpu();

		g.start = &j->start[k];
		dp_prng_seed(&r, j->seed[k]);
		if (dp_gum_run(j->res->margs, j->res->nmargs, j->d, j->res->merged_sizes,
					   j->start[k].nrows, &g, &r, &j->out[k]) != 0)
			j->rc = -1;
		j->cpu[k] = thread_cpu() - c;
		j->end[k] = wall() - j->w0;
	}
	return NULL;
}

static int
chunked_draw(const dp_privsyn_result *res, uint32_t d, const uint32_t *sizes, uint64_t n,
			 const dp_gum_params *gum, dp_prng *rng, uint32_t nchunks, uint32_t threads,
			 dp_codes *out, double *phase)
{
	dp_marg    *kept = calloc(res->nmargs, sizeof(dp_marg));
	uint32_t	nkept = 0,
				kway = 0,
				w;
	uint64_t	csize = (n + nchunks - 1) / nchunks;
	dp_jtree	t;
	dp_codes	start,
				views[64],
				outs[64];
	uint64_t	seeds[64];
	double		cpu[64],
				end[64],
				w0 = wall();
	dp_gum_params prm = *gum;
	cjob		jobs[DP_MAX_THREADS];
	pthread_t	th[DP_MAX_THREADS];

	if (nchunks > 64 || threads > DP_MAX_THREADS || threads == 0)
		return -2;
	dp_set_threads(threads);
	if (dp_jtree_build_greedy(&t, res->margs, res->nmargs, d, d, res->merged_sizes,
							  DP_ADAPTIVE_JTREE_CELLS, kept, &nkept) != 0 ||
		dp_jtree_fit(&t, kept, nkept, dp_adaptive_submodel_sweeps(dp_jtree_sweeps(&t, kept, nkept), n),
					 DP_MAXENT_TOL, NULL, NULL) <= 0 ||
		dp_codes_init(&start, d, n) != 0 ||
		dp_jtree_draw_chunked(&t, n, nchunks > 1 ? csize : 0, rng, &start, NULL, NULL) != 0)
		return -2;
	dp_jtree_free(&t);
	free(kept);
	phase[0] = wall() - w0;
	for (uint32_t k = 0; k < res->nmargs; k++)
		kway += res->margs[k].nattrs >= 2;
	w = dp_adaptive_submodel_iters(kway, n);
	if (prm.iterations > w)
		prm.iterations = w;
	prm.counting = dp_adaptive_huge_counting(prm.counting, (double) n);
	prm.maxent_cells = 0;
	prm.jtree_cells = 0;
	prm.progress = NULL;
	for (uint32_t k = 0; k < nchunks; k++)
	{
		uint64_t	b = k * csize,
					e = b + csize < n ? b + csize : n;

		views[k] = start;
		views[k].nrows = views[k].cap = e - b;
		views[k].col = calloc(d, sizeof(uint16_t *));
		for (uint32_t j = 0; j < d; j++)
			views[k].col[j] = start.col[j] + b;
		dp_codes_init(&outs[k], d, e - b);
		seeds[k] = dp_prng_next(rng);
	}
	dp_set_threads(1);
	for (uint32_t q = 0; q < threads; q++)
	{
		jobs[q] = (cjob) {.res = res, .d = d, .prm = &prm, .first = q, .step = threads,
			.nchunks = nchunks, .start = views, .out = outs, .seed = seeds, .cpu = cpu, .end = end,
		.w0 = wall(), .rc = 0};
		if (q > 0)
			pthread_create(&th[q], NULL, cjob_run, &jobs[q]);
	}
	cjob_run(&jobs[0]);
	for (uint32_t q = 1; q < threads; q++)
		pthread_join(th[q], NULL);
	dp_set_threads(threads);
	phase[1] = wall() - w0 - phase[0];
	printf("    chunks (thread cpu s / ended at s):");
	for (uint32_t k = 0; k < nchunks; k++)
		printf(" %.3f/%.3f", cpu[k], end[k]);
	printf("\n");
	for (uint32_t q = 0; q < threads; q++)
		if (jobs[q].rc != 0)
			return -2;
	dp_codes_init(out, d, n);
	for (uint32_t k = 0; k < nchunks; k++)
	{
		for (uint32_t j = 0; j < d; j++)
			memcpy(out->col[j] + k * csize, outs[k].col[j], sizeof(uint16_t) * outs[k].nrows);
		dp_codes_free(&outs[k]);
		free(views[k].col);
	}
	out->nrows = n;
	dp_codes_free(&start);
	if (dp_privsyn_split(res, d, sizes, n, &prm, rng, out) != 0)
		return -2;
	phase[2] = wall() - w0 - phase[0] - phase[1];
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t	rows = argc > 1 ? (uint64_t) atoll(argv[1]) : 1000000;
	uint64_t	seed = argc > 2 ? (uint64_t) atoll(argv[2]) : 1;
	int			reps = argc > 3 ? atoi(argv[3]) : 3;
	uint32_t	threads = argc > 4 ? (uint32_t) atoi(argv[4]) : 2;
	int			with_tvd = argc > 5 ? atoi(argv[5]) : 1;
	const char *dpath = argc > 6 && argv[6][0] ? argv[6] : "bench/adult_1m_domains.txt";
	uint32_t	nchunks = argc > 7 ? (uint32_t) atoi(argv[7]) : 0;
	dcol	   *dc = calloc(NC, sizeof(dcol));
	uint32_t	sizes[NC];
	uint64_t	kcells = 0;
	dp_codes	src,
				big,
				syn;
	dp_privsyn_params p;
	dp_adaptive_stats st;
	dp_privsyn_result res;
	dp_prng		rng;
	iter_log	iters = {.clock = thread_cpu, .gum_only = true};
	double		c0,
				t2,
				t3;

	argv0 = argv[0];
	if (!read_domains(dpath, dc) || !load_encoded(dc, rows, &src, &big))
		return 2;
	for (uint32_t j = 0; j < NC; j++)
		sizes[j] = dc[j].codes;
	if (bench_model(&big, sizes, 1, threads, seed, &p, &rng, &res, &st, &c0) != 0)
		return 1;
	for (uint32_t k = res.n_oneway; k < res.nmargs; k++)
		kcells += res.margs[k].ncells;
	printf("adult_1m's domains, %llu rows, %u threads, epsilon 1, noise seed %llu: %u k-way marginals of %llu cells (merged codes), run: rows %016llx, cpu %.2f s, gum %.3f s (sub-model %u marginals)\n",
		   (unsigned long long) rows, threads, (unsigned long long) seed, res.n_kway,
		   (unsigned long long) kcells, (unsigned long long) fnv_rows(&res.synth),
		   cpu_seconds() - c0, res.seconds[DP_PHASE_GUM], st.final_sub_margs);
	fflush(stdout);
	for (int rep = 0; rep < reps; rep++)
	{
		dp_gum_params g = p.gum;
		dp_adaptive_draw how;
		double		m0,
					w0;

		/* dp_adaptive_run's final parameters (step 5) */
		g.iterations = dp_adaptive_final_iters(g.iterations);
		g.start = NULL;
		g.maxent_cells = DP_ADAPTIVE_MAXENT_CELLS;
		g.jtree_cells = DP_ADAPTIVE_JTREE_CELLS;
		g.one_way_exact = true;
		g.progress = iter_log_progress;
		g.progress_arg = &iters;
		iters.n = 0;
		dp_prng_seed(&rng, 1000 + (uint64_t) rep);
		c0 = cpu_seconds();
		m0 = thread_cpu();
		w0 = wall();
		if (nchunks > 0)
		{
			double		ph[3];

			memset(&how, 0, sizeof(how));
			if (chunked_draw(&res, NC, sizes, rows, &g, &rng, nchunks, threads, &syn, ph) != 0)
			{
				fprintf(stderr, "chunked_draw failed\n");
				return 1;
			}
			printf("    phases: sub-model %.3f  chunk GUMs %.3f  split %.3f s\n", ph[0], ph[1], ph[2]);
		}
		else if (dp_adaptive_sample(&res, NC, sizes, rows, &g, &rng, &syn, &how) != 0)
		{
			fprintf(stderr, "dp_adaptive_sample: %s\n", dp_last_error());
			return 1;
		}
		printf("  draw %d: main %.3f s  cpu %.3f s  wall %.3f s  rows %016llx  sub-model %u",
			   rep + 1, thread_cpu() - m0, cpu_seconds() - c0, wall() - w0,
			   (unsigned long long) fnv_rows(&syn), how.sub_margs);
		if (with_tvd)
		{
			final_tvds(&big, &syn, sizes, &t2, &t3);
			printf("  tvd2 %.4f  tvd3 %.4f", t2, t3);
		}
		printf("\n    main cpu at each iteration's end:");
		for (uint32_t i = 0; i < iters.n; i++)
			printf(" %.3f", iters.cpu[i] - m0);
		printf("  (mean L1 error:");
		for (uint32_t i = 0; i < iters.n; i++)
			printf(" %.4f", iters.err[i]);
		printf(")\n");
		fflush(stdout);
		dp_codes_free(&syn);
	}
	dp_privsyn_result_free(&res);
	dp_codes_free(&big);
	dp_codes_free(&src);
	free(dc);
	return 0;
}
