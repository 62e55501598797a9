/*
 * dp_domain.h - public column domains and the encoding of values into cell codes.
 *
 * A domain is public knowledge (declared by the owner or implied by the schema): every code it
 * defines is a cell of every marginal that uses the column, whether or not any row falls there.
 * Encoding never fails and never reports a value: a value outside the domain is clamped to the
 * nearest bin (numbers) or sent to the column's NULL cell (unknown categories, NaN).
 *
 * Pure C: no PostgreSQL headers.
 */
#ifndef DP_DOMAIN_H
#define DP_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A code is at most 65535 (domains of up to 65,536 codes fit in two bytes). */
typedef uint16_t dp_code;
#define DP_MAX_CODES 65536

typedef enum dp_domain_kind
{
	DP_DOMAIN_CATEGORIES,		/* labels, looked up by their text */
	DP_DOMAIN_INT_BINS,			/* integers: bin i = [iedges[i], iedges[i+1] - 1] */
	DP_DOMAIN_REAL_BINS			/* reals: bin i = [edges[i], edges[i+1]) (last bin closed) */
} dp_domain_kind;

/* Open-addressing hash from label bytes to category index. */
typedef struct dp_catmap
{
	uint32_t	nslots;			/* power of two */
	int32_t    *slots;			/* category index or -1 */
	const char **labels;		/* borrowed: the caller keeps them alive */
	uint32_t   *lens;
	uint32_t	nlabels;
} dp_catmap;

/*
 * Numeric domains are a list of increasing edges (borrowed from the caller), whatever made
 * them: equal width, log scale, DP quantiles.  A point mass p (a spike at 0, a sentinel 99) is
 * a bin of one value: edges p, p + 1 for integers and p, nextafter(p, +inf) for reals.
 * Values below the first edge go to bin 0 and values above the last to the last bin.
 */
typedef struct dp_domain
{
	dp_domain_kind kind;
	uint32_t	nvalues;		/* cells for values: categories or bins */
	bool		has_null_cell;	/* code nvalues is NULL / unplaceable */
	/* DP_DOMAIN_CATEGORIES */
	dp_catmap	map;
	/* DP_DOMAIN_INT_BINS: nvalues + 1 edges; iedges[nvalues] is one past the upper bound */
	const int64_t *iedges;
	/* DP_DOMAIN_REAL_BINS: nvalues + 1 edges; edges[nvalues] is the (included) upper bound */
	const double *edges;
	/*
	 * Numeric bins, optional (borrowed; NULL: values uniform inside each bin): the released shape
	 * of the values inside the bins, nshape pieces of 3 doubles (lo, hi, weight), see
	 * dp_shape_init in dp_decode.h.  Set after dp_domain_init_*_edges, which clear it.
	 */
	const double *shape;
	uint32_t	nshape;
} dp_domain;

/* Number of codes of the domain (values plus the NULL cell if any). */
static inline uint32_t
dp_domain_ncodes(const dp_domain *d)
{
	return d->nvalues + (d->has_null_cell ? 1 : 0);
}

/* Code of the NULL cell; only meaningful when has_null_cell. */
static inline dp_code
dp_domain_null_code(const dp_domain *d)
{
	return (dp_code) d->nvalues;
}

/*
 * Categories.  labels[i]/lens[i] are borrowed and must outlive the domain; slots must have room
 * for dp_catmap_slots_needed(n) entries.  Returns 0, or -1 when there are duplicates or too many.
 */
uint32_t	dp_catmap_slots_needed(uint32_t nlabels);
int			dp_domain_init_categories(dp_domain *d, const char **labels, uint32_t *lens,
									  uint32_t nlabels, int32_t *slots, bool has_null_cell);
/* Index of a label, or -1 if it is not a category. */
int32_t		dp_catmap_lookup(const dp_catmap *m, const char *s, size_t len);

/*
 * Numeric domains from edges (borrowed; must outlive the domain).  Integer edges must be
 * strictly increasing within +/-2^62; real edges finite and strictly increasing.  Return 0, or
 * -1 when the edges are invalid or there are more than DP_MAX_CODES codes.
 */
int			dp_domain_init_int_edges(dp_domain *d, const int64_t *edges, uint32_t nbins,
									 bool has_null_cell);
int			dp_domain_init_real_edges(dp_domain *d, const double *edges, uint32_t nbins,
									  bool has_null_cell);

/*
 * Equal-width edges.  Integers [lower, upper]: nbins near-equal runs (lengths differ by at most
 * one), nbins + 1 edges into out.  Reals [lower, upper]: nbins equal widths.  Return 0 or -1.
 */
int			dp_int_equal_edges(int64_t lower, int64_t upper, uint32_t nbins, int64_t *out);
int			dp_real_equal_edges(double lower, double upper, uint32_t nbins, double *out);

/*
 * Inserts point masses (sorted or not) into a sorted edge list as bins of their own.  out
 * must have room for nedges + 2 * npoints edges; points outside [edges[0], last edge] are
 * ignored.  Returns the number of edges written.
 */
uint32_t	dp_int_edges_with_points(const int64_t *edges, uint32_t nedges, const int64_t *points,
									 uint32_t npoints, int64_t *out);
uint32_t	dp_real_edges_with_points(const double *edges, uint32_t nedges, const double *points,
									  uint32_t npoints, double *out);

/*
 * Encoding.  The NULL cell is returned for NULL and for values with no place in the domain; a
 * domain without a NULL cell (NOT NULL integer column, say) never receives those.
 */
dp_code		dp_encode_null(const dp_domain *d);
dp_code		dp_encode_label(const dp_domain *d, const char *s, size_t len);
dp_code		dp_encode_int(const dp_domain *d, int64_t v);
dp_code		dp_encode_real(const dp_domain *d, double x);

/* Bin i of an integer domain covers [*lo, *hi]; of a real domain [*lo, *hi) (last bin closed).
 * A real point-mass bin has *hi == nextafter(*lo, +inf). */
void		dp_int_bin_range(const dp_domain *d, uint32_t bin, int64_t *lo, int64_t *hi);
void		dp_real_bin_range(const dp_domain *d, uint32_t bin, double *lo, double *hi);

/*
 * Human-readable label of a code into buf (NUL-terminated, truncated to size); returns false for
 * the NULL cell, whose label is SQL NULL.
 */
bool		dp_code_label(const dp_domain *d, dp_code code, char *buf, size_t size);

#endif
