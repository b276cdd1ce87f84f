/*
 * crc: crc_update() gives zlib's crc32() for every length and alignment,
 * chained or in one call, on the folding path and zlib's alike; the known
 * check value of CRC-32.
 */
#include <stdbool.h>
#include <zlib.h>

#include "t.h"

#include "../../agent/lib/crc.h"

static unsigned char data[4096 + 64];

static void
fill(unsigned seed)
{
	for (size_t i = 0; i < sizeof(data); i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (unsigned char)(seed >> 16);
	}
}

TEST(check_value)
{
	/* CRC-32/ISO-HDLC of "123456789" */
	CHECK_INT(crc_update(0, "123456789", 9), 0xcbf43926u);
	CHECK_INT(crc_update(0, "", 0), 0);
	CHECK_INT(crc_update(0x12345678u, NULL, 0), 0x12345678u);
}

TEST(every_length_and_alignment_matches_zlib)
{
	int bad = 0;

	fill(1);
	for (size_t off = 0; off < 16; off++)
		for (size_t n = 0; n <= 1100 && off + n <= sizeof(data); n++) {
			uint32_t want = (uint32_t)crc32(0L, data + off, (uInt)n);

			if (crc_update(0, data + off, n) != want ||
			    crc_update_zlib(0, data + off, n) != want) {
				if (bad++ < 5)
					T_FAILF("offset %zu length %zu: %08x, zlib %08x",
					    off, n, (unsigned)crc_update(0, data + off, n),
					    (unsigned)want);
			}
		}
	CHECK_INT(bad, 0);
}

TEST(large_buffers_and_many_patterns_match_zlib)
{
	static const unsigned char fixed[] = { 0x00, 0xff, 0x80, 0x01 };

	for (unsigned seed = 0; seed < 200; seed++) {
		size_t n = 64 + (seed * 37u) % (sizeof(data) - 64);

		fill(seed);
		if (seed < sizeof(fixed))
			memset(data, fixed[seed], sizeof(data));
		CHECK_INT(crc_update(seed, data, n), (uint32_t)crc32(seed, data, (uInt)n));
	}
}

TEST(chained_calls_equal_one_call)
{
	uint32_t one, c = 0;

	fill(7);
	one = crc_update(0, data, sizeof(data));
	/* split at a prime stride: every cut lands on a different alignment */
	for (size_t off = 0; off < sizeof(data); off += 97) {
		size_t n = sizeof(data) - off < 97 ? sizeof(data) - off : 97;

		c = crc_update(c, data + off, n);
	}
	CHECK_INT(c, one);
	c = crc_update(crc_update(0, data, 12), data + 12, sizeof(data) - 12);
	CHECK_INT(c, one);
	CHECK_INT(one, (uint32_t)crc32(0L, data, sizeof(data)));
}

/* A CPU that has the instruction (the kernel says so) takes the folding
 * path: otherwise every test above checked zlib against itself. */
TEST(folds_where_the_cpu_can)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool has = false;

	if (f == NULL)
		return;
	while (!has && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "flags", 5) == 0)
			has = strstr(line, " pclmulqdq") != NULL && strstr(line, " sse4_1") != NULL;
	fclose(f);
#if defined(__x86_64__)
	CHECK(crc_folds() == has);
#else
	CHECK(!crc_folds());
#endif
	printf("  crc: %s\n", crc_folds() ? "carry-less multiplication" : "zlib");
}

int
main(void)
{
	T_PROG("test_crc");
	RUN(check_value);
	RUN(every_length_and_alignment_matches_zlib);
	RUN(large_buffers_and_many_patterns_match_zlib);
	RUN(chained_calls_equal_one_call);
	RUN(folds_where_the_cpu_can);
	return t_done();
}
