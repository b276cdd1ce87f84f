/*
 * gzip: round trips through zlib and through the gzip(1) format, reuse of
 * one stream for many buffers, and corrupt input refused.
 */
#include <zlib.h>

#include "t.h"

#include "../../agent/lib/buf.h"
#include "../../output/gzip.h"

TEST(round_trips_and_reuses_the_stream)
{
	struct gzip *g = gzip_new(GZIP_LEVEL_DEFAULT);
	struct buf in = BUF_INIT, z = BUF_INIT, out = BUF_INIT;
	int i, round;

	CHECK(g != NULL);
	for (round = 0; round < 3; round++) {
		buf_reset(&in);
		for (i = 0; i < 2000 * (round + 1); i++)
			buf_printf(&in, "{\"text\":\"event %d\",\"n\":%d}", i, i * round);
		CHECK_INT(gzip_compress(g, in.data, in.len, &z), 0);
		/* gzip magic, deflate, and a real size reduction on JSON */
		CHECK((unsigned char)z.data[0] == 0x1f && (unsigned char)z.data[1] == 0x8b);
		CHECK_INT(z.data[2], 8);
		CHECK(z.len * 4 < in.len);
		CHECK_INT(gzip_decompress(z.data, z.len, &out, 64u << 20), 0);
		CHECK_INT(out.len, in.len);
		CHECK(memcmp(out.data, in.data, in.len) == 0);
	}
	/* empty input is a valid (empty) member */
	CHECK_INT(gzip_compress(g, "", 0, &z), 0);
	CHECK_INT(gzip_decompress(z.data, z.len, &out, 10), 0);
	CHECK_INT(out.len, 0);
	gzip_free(g);
	buf_free(&in);
	buf_free(&z);
	buf_free(&out);
}

TEST(refuses_corrupt_and_oversized)
{
	struct gzip *g = gzip_new(6);
	struct buf z = BUF_INIT, out = BUF_INIT;
	const char *s = "hello hello hello hello";

	CHECK_INT(gzip_compress(g, s, strlen(s), &z), 0);
	CHECK_INT(gzip_decompress(z.data, z.len - 4, &out, 1024), -1);	/* truncated */
	z.data[z.len / 2] ^= 0x55;
	CHECK_INT(gzip_decompress(z.data, z.len, &out, 1024), -1);
	z.data[z.len / 2] ^= 0x55;
	CHECK_INT(gzip_decompress(z.data, z.len, &out, 5), -1);	/* over max */
	CHECK_INT(gzip_decompress("plain text", 10, &out, 1024), -1);
	gzip_free(g);
	buf_free(&z);
	buf_free(&out);
}

/* zlib's own gzip wrapper (windowBits 15 + 16) over in, at level */
static size_t
zlib_gzip(int level, const char *in, size_t len, unsigned char *out, size_t cap)
{
	z_stream zs;
	size_t n;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	n = deflate(&zs, Z_FINISH) == Z_STREAM_END ? cap - zs.avail_out : 0;
	deflateEnd(&zs);
	return n;
}

/* The member written here (raw deflate, header and trailer of its own,
 * the CRC folded) is byte for byte the one zlib's wrapper writes, at the
 * levels whose header differs (XFL) and for sizes on both sides of the
 * folding threshold. */
TEST(the_member_is_zlibs_byte_for_byte)
{
	static const int levels[] = { 1, 6, 9 };
	static const size_t sizes[] = { 0, 1, 15, 63, 64, 65, 1000, 70000 };
	static unsigned char want[80000];
	struct buf in = BUF_INIT, z = BUF_INIT;

	for (int i = 0; in.len < 70000; i++)
		buf_printf(&in, "{\"text\":\"line %d of vmkernel\",\"n\":%d}", i, i * 7 % 13);
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		struct gzip *g = gzip_new(levels[l]);

		CHECK(g != NULL);
		for (size_t k = 0; g != NULL && k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t n = zlib_gzip(levels[l], in.data, sizes[k], want, sizeof(want));

			CHECK(n > 0);
			CHECK_INT(gzip_compress(g, in.data, sizes[k], &z), 0);
			if (z.len != n || memcmp(z.data, want, n) != 0)
				T_FAILF("level %d, %zu bytes: %zu bytes, zlib %zu",
				    levels[l], sizes[k], z.len, n);
		}
		gzip_free(g);
	}
	buf_free(&in);
	buf_free(&z);
}

int
main(void)
{
	T_PROG("test_gzip");
	RUN(round_trips_and_reuses_the_stream);
	RUN(refuses_corrupt_and_oversized);
	RUN(the_member_is_zlibs_byte_for_byte);
	return t_done();
}
