/*
 * gzip: round trips through zlib and through the gzip(1) format, reuse of
 * one stream for many buffers, and corrupt input refused.
 */
#include "t.h"

#include "../../agent/buf.h"
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

int
main(void)
{
	T_PROG("test_gzip");
	RUN(round_trips_and_reuses_the_stream);
	RUN(refuses_corrupt_and_oversized);
	return t_done();
}
