/*
 * Fuzz the configuration loader: YAML (libyaml events into our tree, the
 * schema walk), liagent.ini (chosen by content) and rule catalogues.
 *
 * Beyond "never crash": whatever loads must print as YAML that loads again
 * and prints the same (config_print's promise), so a quoting bug is a
 * finding, not just a memory error.
 *
 *	make build/fuzz/fuzz_config
 *	build/fuzz/fuzz_config -max_len=8192 CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../agent/config/config.h"
#include "../../agent/config_plugins.h"
#include "../../collectors/logwatch/rules_conf.h"

static char in_path[64], out_path[64];

static void
quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	(void)is_error;
	(void)msg;
}

static void
cleanup(void)
{
	unlink(in_path);
	unlink(out_path);
}

static void
setup(void)
{
	int fd;

	if (in_path[0] != '\0')
		return;
	snprintf(in_path, sizeof(in_path), "/tmp/fuzz_config_in_XXXXXX");
	snprintf(out_path, sizeof(out_path), "/tmp/fuzz_config_out_XXXXXX");
	if ((fd = mkstemp(in_path)) < 0)
		abort();
	close(fd);
	if ((fd = mkstemp(out_path)) < 0)
		abort();
	close(fd);
	atexit(cleanup);
}

static char *
print_to(const struct config *c, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL || config_print(c, f) != 0)
		abort();
	fclose(f);
	f = fopen(path, "w");
	if (f == NULL)
		abort();
	fwrite(buf, 1, len, f);
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *c, *c2;
	struct rule_conf *rules;
	size_t n;
	FILE *f;

	setup();
	config_plugins_builtin();
	f = fopen(in_path, "w");
	if (f == NULL)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);

	c = config_load(in_path, quiet, NULL);
	if (c != NULL) {
		char *p1 = print_to(c, out_path), *p2;

		c2 = config_load(out_path, quiet, NULL);
		if (c2 == NULL) {
			fprintf(stderr, "printed config does not load:\n%s\n",
			    p1);
			config_load(out_path, NULL, NULL);
			abort();
		}
		p2 = print_to(c2, out_path);
		if (strcmp(p1, p2) != 0) {
			fprintf(stderr, "print/load/print differs:\n%s\n---\n"
			    "%s\n", p1, p2);
			abort();
		}
		free(p1);
		free(p2);
		config_free(c2);
		config_free(c);
	}
	if (config_load_rules_file(in_path, &rules, &n, quiet, NULL) == 0)
		rule_conf_free_array(rules, n);
	return 0;
}
