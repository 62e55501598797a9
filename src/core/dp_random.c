/*
 * dp_random.c - CSPRNG bytes and exactly uniform integers (see dp_random.h).
 */
#include "dp_random.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef unsigned __int128 u128;

/*
 * 4 KiB amortizes the cost of randombytes_buf (a getrandom() system call
 * with libsodium's default "sysrandom" implementation on Linux) over a few
 * thousand sampler draws.
 */
#define DP_RANDOM_BUFSIZE 4096

static unsigned char rb_buf[DP_RANDOM_BUFSIZE];
static size_t rb_pos = DP_RANDOM_BUFSIZE;	/* next unconsumed byte; all
											 * consumed when == size */
static pid_t rb_pid = -1;		/* process that filled rb_buf */
static int	rb_sodium_ready = 0;

int
dp_random_init(void)
{
	/* sodium_init() returns 1 when already initialized: also fine. */
	if (sodium_init() < 0)
		return -1;
	rb_sodium_ready = 1;
	return 0;
}

/*
 * Without a working CSPRNG we must not produce noise at all; abort() fails
 * closed where returning anything would be predictable.
 */
static void
rb_ensure_sodium(void)
{
	if (!rb_sodium_ready)
	{
		if (sodium_init() < 0)
			abort();
		rb_sodium_ready = 1;
	}
}

#ifdef DPSYNTH_TEST_RNG
#ifdef DPSYNTH_VERSION
#error "DPSYNTH_TEST_RNG is for the unit tests' library only (Makefile), never the extension"
#endif
/*
 * The unit tests' seam (dp_random.h): after dp_random_test_seed(seed) the bytes come from
 * ChaCha20 (libsodium's randombytes_buf_deterministic) under a key made of the seed, a block
 * counter and, in a fork()ed child, the child's pid, so that a child still draws bytes of its own.
 */
static int	rb_test_seeded = 0;
static uint64_t rb_test_seed;
static uint64_t rb_test_block;
static pid_t rb_test_pid;

void
dp_random_test_seed(uint64_t seed)
{
	rb_ensure_sodium();
	rb_test_seeded = 1;
	rb_test_seed = seed;
	rb_test_block = 0;
	rb_test_pid = getpid();
	sodium_memzero(rb_buf, sizeof(rb_buf));
	rb_pos = DP_RANDOM_BUFSIZE;
}

static void
rb_fill(void *buf, size_t n)
{
	unsigned char key[randombytes_SEEDBYTES] = {0};
	uint64_t	block;
	pid_t		pid;

	if (!rb_test_seeded)
	{
		randombytes_buf(buf, n);
		return;
	}
	block = rb_test_block++;
	pid = getpid();
	memcpy(key, &rb_test_seed, sizeof(rb_test_seed));
	memcpy(key + 8, &block, sizeof(block));
	if (pid != rb_test_pid)
		memcpy(key + 16, &pid, sizeof(pid));
	randombytes_buf_deterministic(buf, n, key);
}
#else
#define rb_fill randombytes_buf
#endif

static void
rb_discard(void)
{
	sodium_memzero(rb_buf, sizeof(rb_buf));
	rb_pos = DP_RANDOM_BUFSIZE;
}

static void
rb_refill(void)
{
	rb_ensure_sodium();
	rb_fill(rb_buf, sizeof(rb_buf));
	rb_pid = getpid();
	rb_pos = 0;
}

/*
 * A fork()ed child inherits a copy of the parent's buffer.  If both used it,
 * they would draw identical noise, and an observer seeing both releases
 * could cancel it.  So unconsumed bytes filled by another pid are wiped and
 * never handed out.  An empty buffer needs no check: the next refill records
 * the current pid.
 */
void
dp_random_fork_guard(void)
{
	if (rb_pos < DP_RANDOM_BUFSIZE && rb_pid != getpid())
		rb_discard();
}

/*
 * Returns the next nbytes (<= 16) buffered bytes as a little-endian integer.
 * Each byte is uniform and independent, is handed out once, and is zeroed in
 * the buffer as it is taken.
 */
static inline u128
rb_take(unsigned nbytes)
{
	u128		r = 0;
	unsigned	i;

	if (DP_RANDOM_BUFSIZE - rb_pos >= nbytes)
	{
		unsigned char *p = rb_buf + rb_pos;

		for (i = 0; i < nbytes; i++)
			r |= (u128) p[i] << (8 * i);
		memset(p, 0, nbytes);
		rb_pos += nbytes;
		return r;
	}
	for (i = 0; i < nbytes; i++)
	{
		if (rb_pos >= DP_RANDOM_BUFSIZE)
			rb_refill();
		r |= (u128) rb_buf[rb_pos] << (8 * i);
		rb_buf[rb_pos++] = 0;
	}
	return r;
}

/*
 * Exactly uniform on [0, m] (inclusive), m < 2^64: draw the fewest whole
 * bytes covering bit_length(m) bits, mask to that bit length (a uniform
 * value in [0, 2^bits)), and reject values above m.  Conditioning a uniform
 * variable on landing in [0, m] leaves it uniform there; acceptance
 * probability > 1/2 per attempt.
 */
static inline uint64_t
uniform_inclusive64(uint64_t m)
{
	unsigned	bits;
	uint64_t	mask;
	uint64_t	r;

	if (m == 0)
		return 0;
	bits = 64 - (unsigned) __builtin_clzll(m);
	mask = bits == 64 ? UINT64_MAX : (((uint64_t) 1 << bits) - 1);
	do
		r = (uint64_t) rb_take((bits + 7) / 8) & mask;
	while (r > m);
	return r;
}

/* Same as uniform_inclusive64 for 128-bit m. */
static inline u128
uniform_inclusive128(u128 m)
{
	uint64_t	hi = (uint64_t) (m >> 64);
	unsigned	bits;
	u128		mask;
	u128		r;

	if (hi == 0)
		return uniform_inclusive64((uint64_t) m);
	bits = 128 - (unsigned) __builtin_clzll(hi);
	mask = bits == 128 ? ~(u128) 0 : (((u128) 1 << bits) - 1);
	do
		r = rb_take((bits + 7) / 8) & mask;
	while (r > m);
	return r;
}

uint64_t
dp_random_uniform_unguarded(uint64_t n)
{
	/* n - 1 wraps 0 to 2^64 - 1: n == 0 means the full 64-bit range. */
	return uniform_inclusive64(n - 1);
}

u128
dp_random_uniform128_unguarded(u128 n)
{
	return uniform_inclusive128(n - 1);
}

uint64_t
dp_random_uniform(uint64_t n)
{
	dp_random_fork_guard();
	return dp_random_uniform_unguarded(n);
}

u128
dp_random_uniform128(u128 n)
{
	dp_random_fork_guard();
	return dp_random_uniform128_unguarded(n);
}

/*
 * Large requests go straight to libsodium: fresh bytes, never buffered, so
 * they cannot be shared with another process either.
 */
void
dp_random_bytes(void *buf, size_t n)
{
	unsigned char *out = buf;

	dp_random_fork_guard();
	if (n >= DP_RANDOM_BUFSIZE)
	{
		rb_ensure_sodium();
		rb_fill(buf, n);
		return;
	}
	while (n > 0)
	{
		size_t		k;

		if (rb_pos >= DP_RANDOM_BUFSIZE)
			rb_refill();
		k = DP_RANDOM_BUFSIZE - rb_pos;
		if (k > n)
			k = n;
		memcpy(out, rb_buf + rb_pos, k);
		memset(rb_buf + rb_pos, 0, k);
		rb_pos += k;
		out += k;
		n -= k;
	}
}
