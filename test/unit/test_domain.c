/*
 * test_domain.c - unit tests of src/core/dp_domain.c: encoding is total (every value lands in
 * exactly one cell, nothing fails), bins partition their range, labels are right.
 * Build and run: make unit
 */
#include <math.h>
#include <string.h>

#include "dp_domain.h"
#include "unit.h"

static int64_t iedges[70000];
static double redges[70000];

/* Equal-width domains, as dp_declare(lower, upper, bins) makes them. */
static int
init_int_bins(dp_domain *d, int64_t lower, int64_t upper, uint32_t nbins, bool null_cell)
{
	if (dp_int_equal_edges(lower, upper, nbins, iedges) != 0)
		return -1;
	return dp_domain_init_int_edges(d, iedges, nbins, null_cell);
}

static int
init_real_bins(dp_domain *d, double lower, double upper, uint32_t nbins, bool null_cell)
{
	if (dp_real_equal_edges(lower, upper, nbins, redges) != 0)
		return -1;
	return dp_domain_init_real_edges(d, redges, nbins, null_cell);
}

static void
test_categories(void)
{
	const char *labels[] = {"F", "M", "", "żółw", "a much longer label than the others"};
	uint32_t	lens[5];
	int32_t		slots[64];
	dp_domain	d;
	char		buf[64];

	for (int i = 0; i < 5; i++)
		lens[i] = strlen(labels[i]);
	unit_check(dp_catmap_slots_needed(5) <= 64, "slot count for 5 labels fits the test buffer");
	unit_check(dp_domain_init_categories(&d, labels, lens, 5, slots, true) == 0, "categories init");
	unit_check(dp_domain_ncodes(&d) == 6, "5 categories + NULL cell = 6 codes");
	for (int i = 0; i < 5; i++)
		unit_check(dp_encode_label(&d, labels[i], lens[i]) == i, "label '%s' encodes to %d", labels[i], i);
	unit_check(dp_encode_label(&d, "X", 1) == 5, "undeclared value goes to the NULL cell");
	unit_check(dp_encode_label(&d, "F ", 2) == 5, "byte-exact: 'F ' is not 'F'");
	unit_check(dp_encode_null(&d) == 5, "NULL goes to the NULL cell");
	unit_check(dp_code_label(&d, 3, buf, sizeof(buf)) && strcmp(buf, "żółw") == 0, "non-ASCII label round-trips");
	unit_check(!dp_code_label(&d, 5, buf, sizeof(buf)), "the NULL cell has no label");

	{
		const char *dup[] = {"a", "b", "a"};
		uint32_t	dlens[] = {1, 1, 1};

		unit_check(dp_domain_init_categories(&d, dup, dlens, 3, slots, false) == -1, "duplicates are refused");
	}
	/* many labels: every one found, nothing else */
	{
		enum
		{
		N = 5000};
		static char store[N][16];
		static const char *many[N];
		static uint32_t mlens[N];
		static int32_t mslots[16384];
		int			bad = 0;

		for (int i = 0; i < N; i++)
		{
			snprintf(store[i], sizeof(store[i]), "v%d", i * 7919);
			many[i] = store[i];
			mlens[i] = strlen(store[i]);
		}
		unit_check(dp_catmap_slots_needed(N) <= 16384, "slot count for 5000 labels");
		unit_check(dp_domain_init_categories(&d, many, mlens, N, mslots, false) == 0, "5000 categories");
		for (int i = 0; i < N; i++)
			bad += dp_encode_label(&d, many[i], mlens[i]) != i;
		unit_check(bad == 0, "all 5000 labels encode to their index");
		unit_check(dp_catmap_lookup(&d.map, "v1", 2) == -1, "an absent label is not found");
	}
}

static void
test_int_bins(void)
{
	dp_domain	d;
	int64_t		lo,
				hi;
	int			counts[24] = {0};
	char		buf[64];
	int			ok = 1;

	unit_check(init_int_bins(&d, 0, 119, 24, false) == 0, "int bins init");
	unit_check(dp_domain_ncodes(&d) == 24, "NOT NULL integer column: no NULL cell");
	for (int64_t v = 0; v <= 119; v++)
		counts[dp_encode_int(&d, v)]++;
	for (int b = 0; b < 24; b++)
		ok &= counts[b] == 5;
	unit_check(ok, "0..119 in 24 bins: 5 values each");
	dp_int_bin_range(&d, 3, &lo, &hi);
	unit_check(lo == 15 && hi == 19, "bin 3 is [15,19] (got [%lld,%lld])", (long long) lo, (long long) hi);
	unit_check(dp_encode_int(&d, -1000) == 0 && dp_encode_int(&d, INT64_MIN) == 0, "below range clamps to bin 0");
	unit_check(dp_encode_int(&d, 120) == 23 && dp_encode_int(&d, INT64_MAX) == 23, "above range clamps to the last bin");
	unit_check(dp_code_label(&d, 23, buf, sizeof(buf)) && strcmp(buf, "[115,119]") == 0, "label of the last bin");

	/* uneven: 10 values in 3 bins -> sizes 4,3,3 or similar, contiguous, covering */
	unit_check(init_int_bins(&d, 1, 10, 3, true) == 0, "uneven int bins");
	{
		int64_t		next = 1;
		int			contiguous = 1;

		for (uint32_t b = 0; b < 3; b++)
		{
			dp_int_bin_range(&d, b, &lo, &hi);
			contiguous &= lo == next && hi >= lo;
			for (int64_t v = lo; v <= hi; v++)
				contiguous &= dp_encode_int(&d, v) == b;
			next = hi + 1;
		}
		unit_check(contiguous && next == 11, "bins of 1..10 are contiguous, cover it, and agree with encoding");
	}
	unit_check(dp_domain_ncodes(&d) == 4 && dp_encode_null(&d) == 3, "nullable: NULL cell after the bins");
	unit_check(init_int_bins(&d, 16, 16 + 15, 16, false) == 0 &&
			   dp_code_label(&d, 4, buf, sizeof(buf)) && strcmp(buf, "20") == 0, "one value per bin labels as the value");
	unit_check(init_int_bins(&d, 5, 5, 1, false) == -1, "lower == upper refused");
	unit_check(init_int_bins(&d, 0, 5, 7, false) == -1, "more bins than values refused");
	unit_check(init_int_bins(&d, 0, 5, 0, false) == -1, "zero bins refused");
	unit_check(init_int_bins(&d, -(INT64_C(1) << 53), INT64_C(1) << 53, 65535, false) == 0 &&
			   dp_encode_int(&d, 0) == 32767, "huge range: middle value in the middle bin");
	/* the widest range accepted: 2^63 values, one more than int64 can count (the fuzzer's find) */
	unit_check(dp_int_equal_edges(-(INT64_C(1) << 62), (INT64_C(1) << 62) - 1, 3, iedges) == 0 &&
			   iedges[0] == -(INT64_C(1) << 62) && iedges[3] == (INT64_C(1) << 62) &&
			   iedges[1] < iedges[2] && iedges[2] < iedges[3], "2^63 values in 3 bins: edges increase, end at upper + 1");
	unit_check(dp_int_equal_edges(-(INT64_C(1) << 62) - 1, 0, 3, iedges) == -1 &&
			   dp_int_equal_edges(0, INT64_C(1) << 62, 3, iedges) == -1, "bounds beyond 2^62 refused");
}

static void
test_real_bins(void)
{
	dp_domain	d;
	char		buf[64];
	double		lo,
				hi;

	unit_check(init_real_bins(&d, 0, 1, 4, true) == 0, "real bins init");
	unit_check(dp_encode_real(&d, 0.0) == 0 && dp_encode_real(&d, 0.2499) == 0 && dp_encode_real(&d, 0.25) == 1,
			   "edges: [0,0.25) then [0.25,0.5)");
	unit_check(dp_encode_real(&d, 1.0) == 3, "upper bound is in the last bin");
	unit_check(dp_encode_real(&d, NAN) == 4, "NaN goes to the NULL cell");
	unit_check(dp_encode_real(&d, INFINITY) == 3 && dp_encode_real(&d, -INFINITY) == 0, "infinities clamp");
	unit_check(dp_encode_real(&d, 1e308) == 3 && dp_encode_real(&d, -1e308) == 0, "huge values clamp");
	unit_check(dp_encode_real(&d, nextafter(1.0, 0)) == 3, "just below the upper bound is the last bin");
	dp_real_bin_range(&d, 1, &lo, &hi);
	unit_check(lo == 0.25 && hi == 0.5, "bin 1 range");
	unit_check(dp_code_label(&d, 3, buf, sizeof(buf)) && strcmp(buf, "[0.75,1]") == 0, "last bin is closed");
	unit_check(dp_code_label(&d, 0, buf, sizeof(buf)) && strcmp(buf, "[0,0.25)") == 0, "other bins are half-open");
	unit_check(init_real_bins(&d, 0, NAN, 4, true) == -1, "NaN bound refused");
	unit_check(init_real_bins(&d, -INFINITY, 0, 4, true) == -1, "infinite bound refused");
	unit_check(init_real_bins(&d, -1e308, 1e308, 4, true) == -1, "range overflowing double refused");
	unit_check(init_real_bins(&d, 0, 1, 65536, true) == -1, "more than 65536 codes refused");
	/* integers into a real domain, and reals into an integer domain */
	unit_check(init_real_bins(&d, 0, 100, 10, true) == 0 && dp_encode_int(&d, 55) == 5, "integer into real bins");
	unit_check(init_int_bins(&d, 0, 99, 10, true) == 0 && dp_encode_real(&d, 55.7) == 5 &&
			   dp_encode_real(&d, NAN) == 10, "real into integer bins (floor), NaN to NULL cell");
}

static void
test_points(void)
{
	dp_domain	d;
	int64_t		base[3],
				with[16],
				pts[] = {99, 0, 0, 500};
	double		rbase[3],
				rwith[16],
				rpts[] = {0.0, 1.0};
	uint32_t	n;
	char		buf[64];

	/* capital_gain-like: [0, 99999] in 2 bins, spikes at 0 and 99, 500 out of range is kept too */
	unit_check(dp_int_equal_edges(0, 99999, 2, base) == 0, "base edges");
	n = dp_int_edges_with_points(base, 3, pts, 4, with);
	unit_check(n == 8, "2 bins + points 0, 99, 500 -> 8 edges, 7 bins (got %u)", n);
	unit_check(dp_domain_init_int_edges(&d, with, n - 1, false) == 0, "init with points");
	unit_check(dp_encode_int(&d, 0) == 0 && dp_code_label(&d, 0, buf, sizeof(buf)) && strcmp(buf, "0") == 0,
			   "0 is a bin of its own labelled 0");
	unit_check(dp_encode_int(&d, 1) == 1 && dp_encode_int(&d, 98) == 1, "1..98 share a bin");
	unit_check(dp_encode_int(&d, 99) == 2 && dp_encode_int(&d, 100) == 3, "99 is a bin of its own");
	unit_check(dp_encode_int(&d, 500) == 4 && dp_encode_int(&d, 501) == 5, "500 too");
	unit_check(dp_encode_int(&d, 99999) == 6 && dp_encode_int(&d, 1 << 30) == 6, "upper part clamps to the last bin");

	unit_check(dp_real_equal_edges(0, 1, 2, rbase) == 0, "real base edges");
	n = dp_real_edges_with_points(rbase, 3, rpts, 2, rwith);
	unit_check(dp_domain_init_real_edges(&d, rwith, n - 1, true) == 0, "real init with points at both ends (%u edges)", n);
	unit_check(dp_encode_real(&d, 0.0) == 0 && dp_code_label(&d, 0, buf, sizeof(buf)) && strcmp(buf, "0") == 0,
			   "real point mass at 0 labelled 0");
	unit_check(dp_encode_real(&d, 1e-300) == 1, "the smallest positive values are not in the point bin");
	unit_check(dp_encode_real(&d, 1.0) == d.nvalues - 1, "1.0 (upper, a point) is the last bin");
	unit_check(dp_encode_real(&d, 0.9) != d.nvalues - 1, "0.9 is not in the point bin at 1.0");
	unit_check(dp_encode_real(&d, NAN) == d.nvalues, "NaN to the NULL cell");

	{
		int64_t		bad[] = {0, 5, 5};
		double		rbad[] = {0, NAN};

		unit_check(dp_domain_init_int_edges(&d, bad, 2, false) == -1, "non-increasing edges refused");
		unit_check(dp_domain_init_real_edges(&d, rbad, 1, false) == -1, "NaN edge refused");
	}
}

int
main(void)
{
	test_categories();
	test_int_bins();
	test_real_bins();
	test_points();
	return unit_done();
}
