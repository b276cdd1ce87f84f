/*
 * bench_logwatch helper: `literals CATALOGUE` prints the prefilter literal
 * of every rule (what `grep -F -f` gets in the comparison), `gen N FILE`
 * writes an N-line vmkernel-style log in which about 0.1% of the lines
 * are known errors (real fixture messages with varying devices), the rest
 * ordinary vmkernel chatter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/config.h"
#include "../collectors/rules.h"

static int
literals(const char *path)
{
	struct rule_conf *v;
	struct rules *r;
	size_t n, i;
	char err[256];

	if (config_load_rules_file(path, &v, &n, NULL, NULL) != 0)
		return 1;
	r = rules_new();
	for (i = 0; i < n; i++)
		if (rules_add(r, &v[i], err, sizeof(err)) != 0)
			fprintf(stderr, "%s\n", err);
	for (i = 0; i < rules_total(r); i++)
		printf("%s\n", rules_at(r, i)->literal);
	rules_free(r);
	rule_conf_free_array(v, n);
	return 0;
}

static const char *const chatter[] = {
	"cpu%d:%d)NRandomHwrng: 500: Out of entropy, refreshing.",
	"cpu%d:%d)Config: 727: \"TrackMigrations\" = 1, Old Value: 0, (Status: 0x0)",
	"cpu%d:%d)Uplink: 537: vmnic0: Driver claims supporting 0 RX queues, and 0 queues are accepted.",
	"cpu%d:%d)NetPort: 1879: disabled port 0x2000002",
	"cpu%d:%d)CpuSched: 692: user latency of 817875 vmnic0-0-tx 0 changed by 65579 HELPER_MISC_QUEUE-1-2 -6",
	"cpu%d:%d)VSCSI: 6602: handle 8193(vscsi0:0):Destroying Device for world 2098770 (pendCom 0)",
	"cpu%d:%d)FSS: 7448: Opened the file system from the device .vmx.lck",
	"cpu%d:%d)World: 12077: VC opID lro-1234-56ab maps to vmkernel opID 7a8b9c0d",
};

static const char *const errors[] = {
	"cpu%d:%d)ScsiDeviceIO: 2309: Cmd(0x41244109c100) 0x28, CmdSN 0x8000006c from world 12535 to dev \"naa.600%05d\" failed H:0xb D:0x0 P:0x0 Possible sense data: 0x0 0x0 0x0.",
	"cpu%d:%d)WARNING: ScsiDevice: 1223: Device :naa.600%05d has been removed or is permanently inaccessible.",
	"cpu%d:%d)WARNING: LinNet: netdev_watchdog:3688: NETDEV WATCHDOG: vmnic%d: transmit timed out",
	"cpu%d:%d)WARNING: ScsiDeviceIO: 1513: Device naa.600%05d performance has deteriorated. I/O latency increased from average value of 1234 microseconds to 123456 microseconds.",
};

static int
gen(long n, const char *path)
{
	FILE *f = fopen(path, "w");
	long i;
	unsigned seed = 1;

	if (f == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		int ms = (int)(i % 1000), s = (int)((i / 1000) % 60), m = (int)((i / 60000) % 60);
		const char *fmt;

		seed = seed * 1103515245u + 12345u;
		fprintf(f, "2025-12-11T16:%02d:%02d.%03dZ In(182) vmkernel: ", m, s, ms);
		if (i % 1000 == 500) {
			fmt = errors[(i / 1000) % 4];
			fprintf(f, fmt, (int)(seed >> 28), 2097000 + (int)(i % 997), (int)(i / 1000));
		} else {
			fmt = chatter[(seed >> 16) % 8];
			fprintf(f, fmt, (int)(seed >> 28), 2097000 + (int)(i % 997));
		}
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "literals") == 0)
		return literals(argv[2]);
	if (argc == 4 && strcmp(argv[1], "gen") == 0)
		return gen(atol(argv[2]), argv[3]);
	fprintf(stderr, "usage: bench_logwatch literals FILE | gen N FILE\n");
	return 2;
}
