/*
 * dp_gum_mem.c - GUM's work memory: every block a run allocates is recorded in the run's gum
 * (allocs) and freed at its end, so an early return (out of memory, cancelled) leaks nothing.
 * The blocks come from dp_alloc: the installed handlers (dp_env.h), or, for a chunk's run on a
 * helper thread or on the calling thread while helpers run (dp_gum_run_chunked), the run's arena;
 * a run's blocks are used on the thread that runs it only.
 * The lowest of GUM's files: it calls none of the others (dp_gum_internal.h names them).
 */
#include "dp_gum_internal.h"

void *
gum_nomem(size_t size)
{
	dp_fail(DP_ERR_NOMEM, "could not allocate %zu bytes of GUM's work memory", size);
	return NULL;
}

void *
gum_alloc(gum *g, size_t size)
{
	void	   *p;

	if (size == 0)
		size = 1;
	if (g->nallocs == g->capallocs)
	{
		size_t		cap = g->capallocs ? 2 * g->capallocs : 64;
		void	  **a = dp_alloc(cap * sizeof(void *));

		if (a == NULL)
			return gum_nomem(size);
		if (g->allocs)
		{
			memcpy(a, g->allocs, g->nallocs * sizeof(void *));
			dp_free(g->allocs);
		}
		g->allocs = a;
		g->capallocs = cap;
	}
	p = dp_alloc(size);
	if (p == NULL)
		return gum_nomem(size);
	g->allocs[g->nallocs++] = p;
	return p;
}

void *
gum_calloc(gum *g, size_t count, size_t size)
{
	void	   *p;

	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	p = gum_alloc(g, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

/* Frees every block of the run's (at its end, whatever the outcome). */
void
gum_free_all(gum *g)
{
	for (size_t i = 0; i < g->nallocs; i++)
		dp_free(g->allocs[i]);
	if (g->allocs)
		dp_free(g->allocs);
	g->allocs = NULL;
	g->nallocs = g->capallocs = 0;
}

/* Frees one block of gum_alloc's before the run ends (the last one allocated is found first). */
void
gum_free(gum *g, void *p)
{
	for (size_t i = g->nallocs; p != NULL && i-- > 0;)
		if (g->allocs[i] == p)
		{
			dp_free(p);
			g->allocs[i] = g->allocs[--g->nallocs];
			return;
		}
}
