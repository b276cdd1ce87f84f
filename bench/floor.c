/*
 * The footprint floor: a program that links the agent's libraries and
 * initialises libcurl, then sleeps.  The agent's idle RSS is reported next
 * to this one's: what is above it is the agent's own cost.
 */
#include <curl/curl.h>
#include <unistd.h>
#include <yaml.h>
#include <zlib.h>

int
main(void)
{
	yaml_parser_t p;
	CURL *h;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	yaml_parser_initialize(&p);
	(void)crc32(0L, Z_NULL, 0);
	for (;;)
		pause();
	yaml_parser_delete(&p);
	curl_easy_cleanup(h);
	return 0;
}
