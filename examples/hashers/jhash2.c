/*
 * The kernel's futex hash, pasted from the kernel (include/linux/jhash.h, jhash2() with
 * __jhash_mix/__jhash_final; kernel/futex/core.c, __futex_hash()), in the ABI futexhash
 * loads:
 *
 *     uint32_t futex_hash(const uint32_t *key, uint32_t offset);
 *
 * key = the four words [lo(w0), hi(w0), lo(w1), hi(w1)] of the futex key, offset = its
 * offset word (the jhash2 seed). Try it:
 *
 *     futexhash hash --algo c:examples/hashers/jhash2.c private:0xffff888012345600:0x7f0000001010
 *     futexhash check --algo c:examples/hashers/jhash2.c
 */
#include <stdint.h>

#define JHASH_INITVAL 0xdeadbeef

static inline uint32_t rol32(uint32_t word, unsigned int shift)
{
	return (word << (shift & 31)) | (word >> ((-shift) & 31));
}

#define __jhash_mix(a, b, c)			\
{						\
	a -= c;  a ^= rol32(c, 4);  c += b;	\
	b -= a;  b ^= rol32(a, 6);  a += c;	\
	c -= b;  c ^= rol32(b, 8);  b += a;	\
	a -= c;  a ^= rol32(c, 16); c += b;	\
	b -= a;  b ^= rol32(a, 19); a += c;	\
	c -= b;  c ^= rol32(b, 4);  b += a;	\
}

#define __jhash_final(a, b, c)			\
{						\
	c ^= b; c -= rol32(b, 14);		\
	a ^= c; a -= rol32(c, 11);		\
	b ^= a; b -= rol32(a, 25);		\
	c ^= b; c -= rol32(b, 16);		\
	a ^= c; a -= rol32(c, 4);		\
	b ^= a; b -= rol32(a, 14);		\
	c ^= b; c -= rol32(b, 24);		\
}

static inline uint32_t jhash2(const uint32_t *k, uint32_t length, uint32_t initval)
{
	uint32_t a, b, c;

	/* Set up the internal state */
	a = b = c = JHASH_INITVAL + (length<<2) + initval;

	/* Handle most of the key */
	while (length > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		__jhash_mix(a, b, c);
		length -= 3;
		k += 3;
	}

	/* Handle the last 3 u32's */
	switch (length) {
	case 3: c += k[2];	/* fall through */
	case 2: b += k[1];	/* fall through */
	case 1: a += k[0];
		__jhash_final(a, b, c);
		break;
	case 0:	/* Nothing left to add */
		break;
	}

	return c;
}

/* The global hash: the whole key, seeded with the offset word. */
uint32_t futex_hash(const uint32_t *key, uint32_t offset)
{
	return jhash2(key, 4, offset);
}

/* The v6.16 private hash: the address words only (key + 2), same seed. */
uint32_t futex_hash_private(const uint32_t *key, uint32_t offset)
{
	return jhash2(key + 2, 2, offset);
}
