/*
 * The footprint floor: a program that links the agent's libraries
 * (libcurl, libyaml, zlib, PCRE2) and initialises libcurl, then sleeps.
 * The agent's idle RSS is reported next to this one's: what is above it
 * is the agent's own cost.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <curl/curl.h>
#include <pcre2.h>
#include <unistd.h>
#include <yaml.h>
#include <zlib.h>

int
main(void)
{
	yaml_parser_t p;
	uint32_t jit = 0;
	CURL *h;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	yaml_parser_initialize(&p);
	(void)crc32(0L, Z_NULL, 0);
	(void)pcre2_config(PCRE2_CONFIG_JIT, &jit);	/* linked, nothing compiled */
	for (;;)
		pause();
	yaml_parser_delete(&p);
	curl_easy_cleanup(h);
	return 0;
}
