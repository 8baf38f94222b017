/*
 * Keyed hashing for tables whose keys an attacker chooses (DNS names,
 * record texts): SipHash-1-3 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012; one compression round per word, three
 * finalization rounds), keyed per table from the system's random source.
 * Without the key a sender cannot tell which names share a bucket, so
 * publishing records cannot fill one chain.
 *
 * SipHash spends some 18 instructions per 8 bytes, and record texts run
 * to hundreds of bytes: hashing them was 18% of an evaluation's
 * instructions. Keys longer than SPFKIT__HASH_SHORT bytes therefore take
 * a multiply-mix hash instead (after the style of wyhash): 16 bytes per
 * step, each step one 64x64->128-bit multiply of the two words, each
 * XORed with secret material, folded to 64 bits and chained. The key
 * enters the start value, every step and the end, so which texts collide
 * still depends on the table's random key. It has no proof as a PRF the
 * way SipHash has; what flooding needs is that a sender without the key
 * cannot predict buckets, and short keys (most names) keep SipHash.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "keyed_hash.h"

uint64_t spfkit__hash_keyed(const struct spfkit__hash_key *k, const void *p, size_t len)
{
	if (len <= SPFKIT__HASH_SHORT)
		return sip_bytes(k, p, len, 1, 3, 0);
	return mix_bytes(k, p, len, 0);
}

uint64_t spfkit__hash_siphash13(const struct spfkit__hash_key *k, const void *p, size_t len)
{
	return sip_bytes(k, p, len, 1, 3, 0);
}

/* /dev/urandom, for kernels without getrandom(2). 0 or -1. */
static int urandom(void *buf, size_t len)
{
	unsigned char *p = buf;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	while (len > 0) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		len -= (size_t)n;
	}
	close(fd);
	return len == 0 ? 0 : -1;
}

void spfkit__hash_key_random(struct spfkit__hash_key *k)
{
	unsigned char buf[16];
	struct timespec ts;
	ssize_t n;

	do
		n = getrandom(buf, sizeof(buf), GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(buf) || urandom(buf, sizeof(buf)) == 0) {
		memcpy(&k->k0, buf, 8);
		memcpy(&k->k1, buf + 8, 8);
		return;
	}
	/*
	 * No random source (early boot, a chroot without /dev): a key nobody
	 * outside can read back is still far better than none. Never fail:
	 * the tables work with any key.
	 */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	k->k0 = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)k;
	clock_gettime(CLOCK_REALTIME, &ts);
	k->k1 = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
}
