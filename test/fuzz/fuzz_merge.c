/* The rare-value merge (dp_rare_merge in dp_privsyn.c) on arbitrary released counts, sizes,
 * ordered prefixes and thresholds: every code gets a merged code below the count returned, every
 * merged code has a member, a code above the threshold is merged only with rare codes, the ordered
 * codes' merged codes run 0, 1, 2, ... without going back (intervals), and *nmerged counts the
 * codes that share their merged code. */
#include <math.h>
#include "fuzz_input.h"
#include "dp_privsyn.h"

#define MAXC 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fin			f = {data, size};
	uint32_t	n = (uint32_t) fin_range(&f, 1, MAXC),
				ordered = (uint32_t) fin_range(&f, 0, MAXC + 2),
				members[MAXC] = {0},
				rare_in[MAXC] = {0},
				nm,
				nc,
				shared = 0;
	double		x[MAXC],
				thr = fin_range(&f, 0, 7) == 0 ? fin_double(&f) : (double) fin_range(&f, 0, 200);
	uint16_t	map[MAXC];

	for (uint32_t k = 0; k < n; k++)
		x[k] = fin_range(&f, 0, 15) == 0 ? fin_double(&f) : (double) fin_range(&f, 0, 400) - 100;
	nc = dp_rare_merge(x, n, ordered, thr, map, &nm);
	if (nc < 1 || nc > n)
		__builtin_trap();
	for (uint32_t k = 0; k < n; k++)
	{
		if (map[k] >= nc)
			__builtin_trap();
		members[map[k]]++;
		rare_in[map[k]] += x[k] < thr;
	}
	for (uint32_t c = 0; c < nc; c++)
	{
		if (members[c] == 0)
			__builtin_trap();
		shared += members[c] > 1 ? members[c] : 0;
	}
	if (shared != nm)
		__builtin_trap();
	/* a merged code of several members holds a rare code: no two codes above it are merged */
	for (uint32_t c = 0; c < nc; c++)
		if (members[c] > 1 && rare_in[c] == 0)
			__builtin_trap();
	/* the ordered codes: consecutive merged codes, first 0 */
	for (uint32_t k = 0; k < n && k < ordered; k++)
		if (k == 0 ? map[0] != 0 : !(map[k] == map[k - 1] || map[k] == map[k - 1] + 1))
			__builtin_trap();
	return 0;
}
