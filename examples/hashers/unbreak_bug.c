/*
 * A deliberately flawed futex hash: the bug fixed in 2020 by "futex: Unbreak futex
 * hashing". After the key layout changed, the hash started at the wrong field and
 * skipped the key's leading 64 bits (w0: the mm pointer, or
 * the inode sequence number of a shared file mapping), so every file's futexes at the same
 * page offset land in the same bucket. futexhash shows both failures:
 *
 *     futexhash check --algo c:examples/hashers/unbreak_bug.c      # property:w0-bits and dist:inode fail
 *     futexhash dist --algo c:examples/hashers/unbreak_bug.c --workload inode
 */
#include <stdint.h>

static inline uint32_t rol32(uint32_t w, unsigned int s)
{
	return (w << (s & 31)) | (w >> ((-s) & 31));
}

uint32_t futex_hash(const uint32_t *key, uint32_t offset)
{
	/* jhash2(key + 2, 2, offset): w1 and the seed only; w0 is never read. */
	uint32_t a, b, c;

	a = b = c = 0xdeadbeef + (2 << 2) + offset;
	b += key[3];
	a += key[2];
	c ^= b; c -= rol32(b, 14);
	a ^= c; a -= rol32(c, 11);
	b ^= a; b -= rol32(a, 25);
	c ^= b; c -= rol32(b, 16);
	a ^= c; a -= rol32(c, 4);
	b ^= a; b -= rol32(a, 14);
	c ^= b; c -= rol32(b, 24);
	return c;
}
