/*
 * dp_units.c - contribution bounding per privacy unit, and the rows-per-unit shape of a
 * synthetic table (dp_units.h).
 *
 * The bounding (dp_unit_keep) reads the rows once: a table of units, open addressing on a seeded
 * hash of the unit's key bytes, gives each unit a list of its rows in a store of rows.  Until a
 * unit has held cap rows each row is stored; then a row is stored only if its random key is below
 * the largest of cap rows the unit holds (else it cannot be among the unit's cap smallest), and a
 * unit that reaches 2 cap rows is trimmed back to its cap of smallest key, the others' places
 * reused.  So every unit keeps the cap rows of smallest random key among all of its rows, a
 * uniformly random subset of size min(cap, rows) because the keys are independent and identically
 * distributed, and its first k rows in order of key are its k of smallest key (k <= cap: the
 * subset of a learned k).  Memory: a row stored is its key, a link and its codes (12 + 2 ncols
 * bytes), at most 2 cap of them a unit; a unit its entry (32 bytes) and key bytes; nothing grows
 * with the rows a unit drops.  Time: a row refused costs its look-up; a row stored, amortised,
 * O(log cap).
 */
#include "dp_units.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dp_env.h"
#include "dp_internal.h"
#include "dp_random.h"
#include "dp_sampler.h"

/*
 * A unit of the table: its key bytes and its rows, a list through the rows' store (each row a
 * random key, the next row of its unit, then ncols codes).  Once it has held cap rows, thr is the
 * largest key of cap rows it holds: a row of key thr or more cannot be among its cap smallest and
 * is not stored; the others are, until the unit holds 2 cap rows and is trimmed back to its cap of
 * smallest key (keep_trim: amortised O(log cap) a row stored, nothing a row refused).
 */
typedef struct unit_ent
{
	uint64_t	keyoff;			/* key bytes: keys[keyoff .. keyoff + keylen) */
	uint64_t	thr;			/* once n has reached cap: see above */
	uint32_t	head;			/* its last row added (rows are numbered from 1; 0: a free slot) */
	uint32_t	keylen;
	uint16_t	n;				/* rows held, below 2 cap */
	uint16_t	tag;			/* 16 bits of the hash: fewer byte comparisons */
} unit_ent;						/* 32 bytes */

#define KEEP_BLOCK_SHIFT 14		/* rows a block of the store: 16,384 */
#define KEEP_MAX_CAP 32767		/* n's type holds 2 cap */
#define KEEP_MAX_ROWS UINT32_MAX	/* rows kept in all: a row's number (at 12 bytes a row and more) */

/* a row of a unit, as keep_trim and dp_unit_keep_unit sort them */
typedef struct keep_row
{
	uint64_t	key;
	uint32_t	row;
} keep_row;

struct dp_unit_keep
{
	uint32_t	ncols,
				cap,
				rowsize;		/* bytes of a row: its key (8), its next (4), its codes (2 each) */
	uint64_t	seed;			/* the hash's, from the CSPRNG: chosen keys cannot collide on purpose */
	unit_ent   *tab;
	uint64_t	tabcap,			/* a power of 2 */
				units,
				seen;
	bool		finished;		/* tab then holds the units in tab[0 .. units) */
	uint8_t    *keys;
	uint64_t	keylen,
				keycap;
	uint8_t   **blocks;			/* the rows' store: row r (from 1) in blocks[(r - 1) >> shift] */
	uint32_t	nrows,
				free_rows;		/* rows trimmed away, linked through their next: reused first */
	uint64_t	nblocks,
				blockcap;
	keep_row   *sorted;			/* 2 cap rows of scratch for keep_trim and dp_unit_keep_unit */
};

static inline uint8_t *
row_at(const dp_unit_keep *b, uint32_t r)
{
	r--;
	return b->blocks[r >> KEEP_BLOCK_SHIFT] + (uint64_t) (r & ((1u << KEEP_BLOCK_SHIFT) - 1)) * b->rowsize;
}

static inline uint64_t
row_key(const uint8_t *row)
{
	uint64_t	k;

	memcpy(&k, row, 8);
	return k;
}

static inline uint32_t
row_next(const uint8_t *row)
{
	uint32_t	r;

	memcpy(&r, row + 8, 4);
	return r;
}

/* a seeded 64-bit hash of the key bytes (a multiply-xorshift per 8 bytes, then a final mix) */
static uint64_t
key_hash(uint64_t seed, const uint8_t *p, uint32_t len)
{
	uint64_t	h = seed ^ ((uint64_t) len * 0x9E3779B97F4A7C15ULL);

	while (len >= 8)
	{
		uint64_t	w;

		memcpy(&w, p, 8);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
		p += 8;
		len -= 8;
	}
	if (len > 0)
	{
		uint64_t	w = 0;

		memcpy(&w, p, len);
		h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
	}
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	h *= 0xC4CEB9FE1A85EC53ULL;
	return h ^ (h >> 33);
}

dp_unit_keep *
dp_unit_keep_new(uint32_t ncols, uint32_t cap)
{
	dp_unit_keep *b;

	if (cap == 0 || cap > KEEP_MAX_CAP)
	{
		dp_fail(DP_ERR_INVALID, "a bound of %u rows per unit is not in 1..%u", cap, KEEP_MAX_CAP);
		return NULL;
	}
	if ((b = dp_zalloc(sizeof(dp_unit_keep))) == NULL)
	{
		dp_nomem("out of memory bounding the rows per unit");
		return NULL;
	}
	b->ncols = ncols;
	b->cap = cap;
	b->rowsize = (uint32_t) (12 + 2 * (uint64_t) ncols);	/* read and written by memcpy: no alignment */
	b->tabcap = 1024;
	b->keycap = 8192;
	b->blockcap = 64;
	b->tab = dp_zalloc(sizeof(unit_ent) * b->tabcap);
	b->keys = dp_alloc(b->keycap);
	b->blocks = dp_alloc(sizeof(uint8_t *) * b->blockcap);
	b->sorted = dp_alloc(sizeof(keep_row) * 2 * b->cap);
	if (b->tab == NULL || b->keys == NULL || b->blocks == NULL || b->sorted == NULL)
	{
		dp_unit_keep_free(b);
		dp_nomem("out of memory bounding the rows per unit");
		return NULL;
	}
	dp_random_bytes(&b->seed, sizeof(b->seed));
	return b;
}

/* a new row: one trimmed away, else one at the end of the store (its number in *r); NULL on
 * allocation failure or past KEEP_MAX_ROWS rows in the store */
static uint8_t *
row_new(dp_unit_keep *b, uint32_t *r)
{
	if (b->free_rows != 0)
	{
		*r = b->free_rows;
		b->free_rows = row_next(row_at(b, *r));
		return row_at(b, *r);
	}
	if (b->nrows == KEEP_MAX_ROWS)
		return NULL;
	if ((b->nrows >> KEEP_BLOCK_SHIFT) == b->nblocks)
	{
		if (b->nblocks == b->blockcap)
		{
			uint8_t   **bl = dp_realloc(b->blocks, sizeof(uint8_t *) * b->blockcap * 2);

			if (bl == NULL)
				return NULL;
			b->blocks = bl;
			b->blockcap *= 2;
		}
		if ((b->blocks[b->nblocks] = dp_alloc((size_t) b->rowsize << KEEP_BLOCK_SHIFT)) == NULL)
			return NULL;
		b->nblocks++;
	}
	*r = ++b->nrows;
	return row_at(b, *r);
}

/* the table twice as large, every unit moved to its new slot */
static int
tab_grow(dp_unit_keep *b)
{
	uint64_t	cap = b->tabcap * 2,
				mask = cap - 1;
	unit_ent   *t = dp_zalloc(sizeof(unit_ent) * cap);

	if (t == NULL)
		return -1;
	for (uint64_t i = 0; i < b->tabcap; i++)
	{
		const unit_ent *e = &b->tab[i];
		uint64_t	j;

		if (e->head == 0)
			continue;
		j = key_hash(b->seed, b->keys + e->keyoff, e->keylen) & mask;
		while (t[j].head != 0)
			j = (j + 1) & mask;
		t[j] = *e;
	}
	dp_free(b->tab);
	b->tab = t;
	b->tabcap = cap;
	return 0;
}

/* the key bytes appended to the keys' store, at *off; -1 on allocation failure */
static int
key_new(dp_unit_keep *b, const uint8_t *key, uint32_t keylen, uint64_t *off)
{
	if (b->keylen + keylen > b->keycap)
	{
		uint64_t	cap = b->keycap * 2 > b->keylen + keylen ? b->keycap * 2 : b->keylen + keylen;
		uint8_t    *k = dp_realloc(b->keys, cap);

		if (k == NULL)
			return -1;
		b->keys = k;
		b->keycap = cap;
	}
	memcpy(b->keys + b->keylen, key, keylen);
	*off = b->keylen;
	b->keylen += keylen;
	return 0;
}

/* the largest key of the unit's rows */
static uint64_t
unit_max(const dp_unit_keep *b, const unit_ent *e)
{
	uint64_t	m = 0;

	for (uint32_t r = e->head; r != 0; r = row_next(row_at(b, r)))
		if (row_key(row_at(b, r)) > m)
			m = row_key(row_at(b, r));
	return m;
}

static int
keep_row_cmp(const void *x, const void *y)
{
	uint64_t	a = ((const keep_row *) x)->key,
				c = ((const keep_row *) y)->key;

	return a < c ? -1 : a > c ? 1 : 0;
}

/*
 * The unit's rows into b->sorted in increasing key, their number returned.  Rows of one key (a tie,
 * of probability about rows^2 / 2^65) come in an order set by the unit's own rows and arrivals.
 */
static uint32_t
unit_sort(dp_unit_keep *b, const unit_ent *e)
{
	uint32_t	n = 0;

	for (uint32_t r = e->head; r != 0; r = row_next(row_at(b, r)))
	{
		b->sorted[n].key = row_key(row_at(b, r));
		b->sorted[n].row = r;
		n++;
	}
	qsort(b->sorted, n, sizeof(keep_row), keep_row_cmp);
	return n;
}

/* a unit of more than cap rows back to its cap rows of smallest key; thr their largest */
static void
keep_trim(dp_unit_keep *b, unit_ent *e)
{
	uint32_t	n = unit_sort(b, e);

	e->head = 0;
	for (uint32_t j = n; j-- > 0;)
	{
		uint8_t    *row = row_at(b, b->sorted[j].row);
		uint32_t   *list = j < b->cap ? &e->head : &b->free_rows;

		memcpy(row + 8, list, 4);
		*list = b->sorted[j].row;
	}
	e->n = (uint16_t) b->cap;
	e->thr = b->sorted[b->cap - 1].key;
}

int
dp_unit_keep_add(dp_unit_keep *b, const uint8_t *key, uint32_t keylen, const uint16_t *codes, uint64_t rkey)
{
	uint64_t	h = key_hash(b->seed, key, keylen),
				mask = b->tabcap - 1,
				i = h & mask;
	uint32_t	r;
	uint16_t	tag = (uint16_t) (h >> 48);
	unit_ent   *e;
	uint8_t    *row;

	if (b->finished)
	{
		dp_fail(DP_ERR_INVALID, "a row added to a bounding already finished");
		return -1;
	}
	if ((++b->seen & 0xFFFF) == 0)
		dp_check_interrupts();
	for (;; i = (i + 1) & mask)
	{
		e = &b->tab[i];
		if (e->head == 0)
		{
			if (key_new(b, key, keylen, &e->keyoff) != 0)
				goto nomem;
			e->keylen = keylen;
			e->tag = tag;
			e->n = 0;
			b->units++;
			break;
		}
		if (e->tag == tag && e->keylen == keylen && memcmp(b->keys + e->keyoff, key, keylen) == 0)
			break;
	}
	/* a row that cannot be among the unit's cap of smallest key (a tie included: the row held stays) */
	if (e->n >= b->cap && rkey >= e->thr)
		return 0;
	if ((row = row_new(b, &r)) == NULL)
	{
		if (e->n == 0)			/* the unit just entered holds no row: no unit */
		{
			e->head = 0;
			b->units--;
		}
		goto nomem;
	}
	memcpy(row, &rkey, 8);
	memcpy(row + 8, &e->head, 4);
	memcpy(row + 12, codes, sizeof(uint16_t) * b->ncols);
	e->head = r;
	if (++e->n == b->cap)
		e->thr = unit_max(b, e);
	else if (e->n == 2 * b->cap)
		keep_trim(b, e);
	/* a new unit may fill the table past 3/4 */
	if (b->units * 4 > b->tabcap * 3 && tab_grow(b) != 0)
		goto nomem;
	return 0;
nomem:
	dp_nomem("out of memory bounding the rows per unit");
	return -1;
}

int
dp_unit_keep_finish(dp_unit_keep *b, int64_t *hist)
{
	uint64_t	u = 0;

	if (hist)
		memset(hist, 0, sizeof(int64_t) * ((size_t) b->cap + 1));
	/* the units to the front of the table, in its order (the hash's: random, as the seed is) */
	for (uint64_t i = 0; i < b->tabcap; i++)
		if (b->tab[i].head != 0)
		{
			if ((i & 0xFFFF) == 0)
				dp_check_interrupts();
			if (b->tab[i].n > b->cap)
				keep_trim(b, &b->tab[i]);
			if (hist)
				hist[b->tab[i].n]++;
			b->tab[u++] = b->tab[i];
		}
	b->finished = true;
	return 0;
}

uint64_t
dp_unit_keep_units(const dp_unit_keep *b)
{
	return b->finished ? b->units : 0;
}

uint32_t
dp_unit_keep_unit(dp_unit_keep *b, uint64_t i, const uint16_t **rows)
{
	uint32_t	n = unit_sort(b, &b->tab[i]);

	for (uint32_t j = 0; j < n; j++)
		rows[j] = (const uint16_t *) (row_at(b, b->sorted[j].row) + 12);
	return n;
}

uint64_t
dp_unit_keep_bytes(const dp_unit_keep *b)
{
	return sizeof(*b) + sizeof(unit_ent) * b->tabcap + b->keycap +
		((uint64_t) b->rowsize << KEEP_BLOCK_SHIFT) * b->nblocks + sizeof(uint8_t *) * b->blockcap +
		sizeof(keep_row) * 2 * b->cap;
}

void
dp_unit_keep_free(dp_unit_keep *b)
{
	if (b == NULL)
		return;
	for (uint64_t i = 0; i < b->nblocks; i++)
		dp_free(b->blocks[i]);
	dp_free(b->blocks);
	dp_free(b->tab);
	dp_free(b->keys);
	dp_free(b->sorted);
	dp_free(b);
}

/* the positive part of hist[1..k], the total unit sizes are drawn against */
static double
hist_total(const double *hist, uint32_t k)
{
	double		total = 0;

	for (uint32_t j = 1; j <= k; j++)
		total += hist[j] > 0 ? hist[j] : 0;
	return total;
}

/* one unit size from the distribution proportional to max(hist[j], 0); 1 if total is 0 */
static uint32_t
draw_size(const double *hist, uint32_t k, double total, dp_prng *rng)
{
	uint32_t	size = 1;

	if (total > 0)
	{
		double		u = dp_prng_unit(rng) * total,
					acc = 0;

		for (size = 1; size < k; size++)
		{
			acc += hist[size] > 0 ? hist[size] : 0;
			if (u < acc)
				break;
		}
		/* size == k when u fell in the last cell (or past it by rounding) */
	}
	return size;
}

uint64_t
dp_unit_assign(const double *hist, uint32_t k, uint64_t nrows, dp_prng *rng, int64_t *unit_of_row)
{
	double		total = hist_total(hist, k);
	uint64_t	r = 0,
				units = 0;

	while (r < nrows)
	{
		uint32_t	size = draw_size(hist, k, total, rng);

		units++;
		for (uint32_t i = 0; i < size && r < nrows; i++)
			unit_of_row[r++] = (int64_t) units;
	}
	return units;
}

/* a cell's units where k is picked: less shrink, at least 0 (dp_unit_pick_k) */
static double
counted(int64_t cell, double shrink)
{
	return (double) cell > shrink ? (double) cell - shrink : 0;
}

uint32_t
dp_unit_pick_k(const int64_t *hist, uint32_t kmax, double q, double shrink)
{
	double		total = 0,
				acc = 0;

	for (uint32_t j = 1; j <= kmax; j++)
		total += counted(hist[j], shrink);
	if (!(total > 0))
		return 1;
	for (uint32_t k = 1; k < kmax; k++)
	{
		acc += counted(hist[k], shrink);
		if (acc >= q * total)
			return k;
	}
	return kmax;
}

bool
dp_unit_hist_any_above(const int64_t *hist, uint32_t kmax, double shrink)
{
	for (uint32_t j = 1; j <= kmax; j++)
		if (counted(hist[j], shrink) > 0)
			return true;
	return false;
}

double
dp_unit_hist_combine(const int64_t *a, double va, const int64_t *b, double vb, uint32_t kmax, int64_t *out)
{
	double		wa,
				wb;

	if (!(va > 0) || !(vb > 0) || !isfinite(va) || !isfinite(vb))
		return -1;
	wa = 1.0 / va;
	wb = 1.0 / vb;
	out[0] = 0;
	for (uint32_t j = 1; j <= kmax; j++)
		out[j] = (int64_t) llround(((double) a[j] * wa + (double) b[j] * wb) / (wa + wb));
	return 1.0 / (wa + wb);
}

/* the L2 sensitivity of a count vector under bounds (k, min(cell, k)); cell 0: none */
static double
bound_sensitivity(uint32_t k, uint32_t cell)
{
	uint32_t	c = cell > 0 && cell < k ? cell : k;

	return sqrt((double) (k / c) * c * c + (double) (k % c) * (k % c));
}

uint32_t
dp_unit_pick_k_weighed(const int64_t *hist, uint32_t kmax, double q, double shrink,
					   double noise_l1, uint32_t cell)
{
	uint32_t	kcap = dp_unit_pick_k(hist, kmax, q, shrink),
				best = kcap;
	double		rows = 0,
				best_err = INFINITY;

	if (!(noise_l1 > 0) || !isfinite(noise_l1))
		return kcap;
	for (uint32_t j = 1; j <= kmax; j++)
		rows += (double) j * counted(hist[j], shrink);
	if (!(rows > 0))
		return 1;
	for (uint32_t k = 1; k <= kcap; k++)
	{
		double		dropped = 0,
					err;

		for (uint32_t j = k + 1; j <= kmax; j++)
			dropped += (double) (j - k) * counted(hist[j], shrink);
		if (!(rows - dropped > 0))
			continue;
		/* both terms total variations (dp_units.h): the noise's is half its L1 norm over the rows */
		err = dropped / rows + 0.5 * noise_l1 * bound_sensitivity(k, cell) / (rows - dropped);
		if (err < best_err)
		{
			best = k;
			best_err = err;
		}
	}
	return best;
}

void
dp_unit_fold_hist(const int64_t *hist, uint32_t kmax, uint32_t k, double shrink, int64_t *out)
{
	uint32_t	last = k;
	int64_t		total = 0;

	/* the last cell above k released at shrink or more: the cells beyond it are noise alone
	 * (shrink 0: every cell, as released) */
	if (!(shrink > 0))
		last = kmax;
	else
		for (uint32_t j = kmax; j > k; j--)
			if ((double) hist[j] >= shrink)
			{
				last = j;
				break;
			}
	out[0] = 0;
	for (uint32_t j = 1; j <= k; j++)
		out[j] = 0;
	for (uint32_t j = 1; j <= last; j++)
		out[j < k ? j : k] += hist[j];
	/* the cells below k, and cell k where nothing above it passed, count as empty below shrink */
	for (uint32_t j = 1; j <= k; j++)
	{
		if (shrink > 0 && (double) out[j] < shrink && (j < k || last == k))
			out[j] = 0;
		total += out[j] > 0 ? out[j] : 0;
	}
	/* no cell passed (a table smaller than the noise): the fold of every cell, as released */
	if (total == 0 && shrink > 0)
		dp_unit_fold_hist(hist, kmax, k, 0, out);
}

int
dp_unit_noise_drawable(double sigma2, uint32_t kmax)
{
	dp_dgauss	g;

	if (kmax < 1 || dp_dgauss_init(&g, sigma2) != 0 ||
		dp_dgauss_init(&g, sigma2 * (double) kmax * (double) kmax) != 0)
		return -1;
	return 0;
}

/* the grouped assignment lets a cancel in at least once per this many rows of each of its loops */
#define DP_UNITS_CHECK_EVERY 65536

typedef struct group_ctx
{
	const uint16_t *const *gcols;
	uint32_t	ngcols;
} group_ctx;

/* row a before row b: by the group columns' codes in order, then by index */
static int
group_before(const group_ctx *g, uint64_t a, uint64_t b)
{
	for (uint32_t j = 0; j < g->ngcols; j++)
		if (g->gcols[j][a] != g->gcols[j][b])
			return g->gcols[j][a] < g->gcols[j][b];
	return a < b;
}

static int
same_group(const group_ctx *g, uint64_t a, uint64_t b)
{
	for (uint32_t j = 0; j < g->ngcols; j++)
		if (g->gcols[j][a] != g->gcols[j][b])
			return 0;
	return 1;
}

/* bottom-up merge sort of idx[0..n) by group_before, tmp[0..n) as scratch */
static void
group_sort(const group_ctx *g, uint64_t *idx, uint64_t *tmp, uint64_t n)
{
	uint64_t   *src = idx,
			   *dst = tmp,
				work = 0;

	for (uint64_t width = 1; width < n; width *= 2)
	{
		for (uint64_t lo = 0; lo < n; lo += 2 * width)
		{
			uint64_t	mid = lo + width < n ? lo + width : n,
						hi = lo + 2 * width < n ? lo + 2 * width : n,
						i = lo,
						j = mid,
						o = lo;

			while (i < mid && j < hi)
				dst[o++] = group_before(g, src[j], src[i]) ? src[j++] : src[i++];
			while (i < mid)
				dst[o++] = src[i++];
			while (j < hi)
				dst[o++] = src[j++];
			/* a cancel gets in every DP_UNITS_CHECK_EVERY rows merged, in every pass */
			work += hi - lo;
			if (work >= DP_UNITS_CHECK_EVERY)
			{
				work = 0;
				dp_check_interrupts();
			}
		}
		{
			uint64_t   *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != idx)
		memcpy(idx, src, sizeof(uint64_t) * n);
}

/* Room for need positions in *order and *unit_of_pos (*cap of them now): 0, or -1 on allocation
 * failure (what was allocated stays valid, for the caller to free). */
static int
grow_positions(uint64_t **order, int64_t **unit_of_pos, uint64_t *cap, uint64_t need)
{
	uint64_t	c = *cap + *cap / 2;
	uint64_t   *o;
	int64_t    *u;

	if (need <= *cap)
		return 0;
	if (c < need)
		c = need;
	o = dp_realloc(*order, sizeof(uint64_t) * c);
	if (o == NULL)
		return -1;
	*order = o;
	u = dp_realloc(*unit_of_pos, sizeof(int64_t) * c);
	if (u == NULL)
		return -1;
	*unit_of_pos = u;
	*cap = c;
	return 0;
}

/*
 * Cuts one group's rows rows[0..n) (shuffled) into units, appending to order and unit_of_pos at
 * *npos (grown past *cap as needed: a group's last unit may add up to k - 1 positions); the last
 * unit as dp_unit_assign_grouped says.  0, or -1 on allocation failure.
 */
static int
assign_group(const double *hist, uint32_t k, double total, const uint64_t *rows, uint64_t n,
			 dp_prng *rng, uint64_t **orderp, int64_t **unitp, uint64_t *cap, uint64_t *npos, int64_t *units)
{
	uint64_t	pos = 0;

	while (pos < n)
	{
		uint32_t	size = draw_size(hist, k, total, rng);
		uint64_t	left = n - pos;
		uint64_t   *order;
		int64_t    *unit_of_pos;

		if (size > left && dp_prng_below(rng, size) >= left)
			break;				/* dropped, with probability 1 - left / size */
		if (grow_positions(orderp, unitp, cap, *npos + size) != 0)
			return -1;
		order = *orderp;
		unit_of_pos = *unitp;
		(*units)++;
		for (uint32_t i = 0; i < size; i++)
		{
			uint64_t	row;

			if (i < left)
				row = rows[pos + i];
			else if (pos > 0)
				row = rows[dp_prng_below(rng, pos)];	/* the group's other rows */
			else
				row = rows[dp_prng_below(rng, n)];
			order[*npos] = row;
			unit_of_pos[*npos] = *units;
			if (++(*npos) % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
		pos += size < left ? size : left;
	}
	return 0;
}

/*
 * Puts the units of order/unit_of_pos[0..npos) (units 1..units, each over consecutive positions)
 * in a uniformly random order, numbered 1..units again in that order, so that the table is not
 * sorted by the grouping columns.  0, or -1 on allocation failure (nothing changed).
 */
static int
shuffle_units(uint64_t *order, int64_t *unit_of_pos, uint64_t npos, int64_t units, dp_prng *rng)
{
	uint64_t   *start = dp_alloc(sizeof(uint64_t) * ((size_t) units + 1)),
			   *perm = dp_alloc(sizeof(uint64_t) * ((size_t) units + 1)),
			   *copy = dp_alloc(sizeof(uint64_t) * (npos + 1)),
				p = 0;

	if (start == NULL || perm == NULL || copy == NULL)
	{
		dp_free(start);
		dp_free(perm);
		dp_free(copy);
		return -1;
	}
	for (uint64_t i = 0; i < npos; i++)
	{
		if (i == 0 || unit_of_pos[i] != unit_of_pos[i - 1])
			start[p++] = i;
		if ((i + 1) % DP_UNITS_CHECK_EVERY == 0)
			dp_check_interrupts();
	}
	start[p] = npos;
	for (uint64_t u = 0; u < (uint64_t) units; u++)
		perm[u] = u;
	for (uint64_t u = (uint64_t) units; u > 1; u--)
	{
		uint64_t	j = dp_prng_below(rng, u),
					t = perm[u - 1];

		perm[u - 1] = perm[j];
		perm[j] = t;
		if (u % DP_UNITS_CHECK_EVERY == 0)
			dp_check_interrupts();
	}
	memcpy(copy, order, sizeof(uint64_t) * npos);
	p = 0;
	for (uint64_t u = 0; u < (uint64_t) units; u++)
		for (uint64_t i = start[perm[u]]; i < start[perm[u] + 1]; i++)
		{
			order[p] = copy[i];
			unit_of_pos[p++] = (int64_t) u + 1;
			if (p % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
	dp_free(start);
	dp_free(perm);
	dp_free(copy);
	return 0;
}

int64_t
dp_unit_assign_grouped(const double *hist, uint32_t k, uint64_t nrows,
					   const uint16_t *const *gcols, uint32_t ngcols, dp_prng *rng,
					   uint64_t **order, int64_t **unit_of_pos, uint64_t *npos)
{
	group_ctx	g = {gcols, ngcols};
	double		total = hist_total(hist, k);
	uint64_t   *idx,
			   *tmp,
				done = 0,
				cap;
	int64_t		units = 0;

	*order = NULL;
	*unit_of_pos = NULL;
	*npos = 0;
	if (nrows == 0)
		return 0;
	idx = dp_alloc(sizeof(uint64_t) * nrows);
	tmp = dp_alloc(sizeof(uint64_t) * nrows);
	if (idx == NULL || tmp == NULL)
		goto nomem;
	for (uint64_t i = 0; i < nrows; i++)
		idx[i] = i;
	group_sort(&g, idx, tmp, nrows);
	dp_free(tmp);
	tmp = NULL;
	/* each group adds at most k - 1 rows to fill its last unit, and drops as many in expectation:
	 * room for a few more than the rows, grown by assign_group when a draw needs more (many small
	 * groups would otherwise reserve k times the rows) */
	cap = nrows + nrows / 16 + (k > 0 ? k : 1);
	*order = dp_alloc(sizeof(uint64_t) * cap);
	*unit_of_pos = dp_alloc(sizeof(int64_t) * cap);
	if (*order == NULL || *unit_of_pos == NULL)
		goto nomem;
	for (uint64_t lo = 0; lo < nrows;)
	{
		uint64_t	hi = lo + 1;

		while (hi < nrows && same_group(&g, idx[lo], idx[hi]))
			hi++;
		/* Fisher-Yates: which of the group's rows share a unit is random */
		for (uint64_t i = hi - lo - 1; i > 0; i--)
		{
			uint64_t	j = dp_prng_below(rng, i + 1),
						t = idx[lo + i];

			idx[lo + i] = idx[lo + j];
			idx[lo + j] = t;
			if (i % DP_UNITS_CHECK_EVERY == 0)
				dp_check_interrupts();
		}
		if (assign_group(hist, k, total, idx + lo, hi - lo, rng, order, unit_of_pos, &cap, npos, &units) != 0)
			goto nomem;
		lo = hi;
		if ((++done & 0xFFF) == 0)
			dp_check_interrupts();
	}
	dp_free(idx);
	idx = NULL;
	if (shuffle_units(*order, *unit_of_pos, *npos, units, rng) != 0)
		goto nomem;
	return units;

nomem:
	dp_free(idx);
	dp_free(tmp);
	dp_free(*order);
	dp_free(*unit_of_pos);
	*order = NULL;
	*unit_of_pos = NULL;
	*npos = 0;
	dp_fail(DP_ERR_NOMEM, "out of memory forming %llu synthetic rows into units", (unsigned long long) nrows);
	return -1;
}
