/*
 * bench_logwatch helper.
 *
 *   literals CATALOGUE      the prefilter literal of every rule, one a line
 *                           (what `grep -F -f` gets in the comparison)
 *   regexes CATALOGUE       every rule's regex (a `match:` rule's fixed
 *                           string escaped), one a line, as written (PCRE)
 *   gen N FILE [MIX]        an N-line vmkernel-style log (ESXi 8 line
 *                           shape: "TIME In(182) vmkernel: cpuC:W)...")
 *   check CATALOGUE FILE    per line: does it hold a rule literal, does a
 *                           rule match (the engine itself); prints counts
 *
 * MIX is `rare` (the default): 0.1% of the lines are known errors, the rest
 * ordinary vmkernel chatter without any rule literal; or `nearmiss`: in
 * addition a third of the lines are near-misses, lines that contain a
 * rule's literal (so the prefilter passes them on and the rule's regex
 * runs) but that no rule matches: `failed H:0x0 D:0x0 P:0x0` without the
 * `to dev "..."` the rule wants, `Link is Up` with no vmnic, `last error
 * status from device ... repeated` without a count, "current CPU " outside
 * a backtrace, ...  Every known error carries a distinct entity (device,
 * NIC), so storm suppression never folds two of them: the file sink gets
 * one alert per known error.  gen prints the number of known errors and of
 * near-misses on stderr ("gen: lines=N match=M nearmiss=K").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/config/config.h"
#include "../collectors/logwatch/rules.h"

static struct rules *
load(const char *path)
{
	struct rule_conf *v;
	struct rules *r;
	size_t n, i;
	char err[256];

	if (config_load_rules_file(path, &v, &n, NULL, NULL) != 0)
		return NULL;
	r = rules_new();
	for (i = 0; i < n; i++)
		if (rules_add(r, &v[i], err, sizeof(err)) != 0)
			fprintf(stderr, "%s\n", err);
	rule_conf_free_array(v, n);
	if (rules_compile(r, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		rules_free(r);
		return NULL;
	}
	return r;
}

/* A fixed string as a regex: every ERE/PCRE metacharacter escaped. */
static void
print_escaped(const char *s)
{
	for (; *s != '\0'; s++) {
		if (strchr("\\.^$|?*+()[]{}", *s) != NULL)
			putchar('\\');
		putchar(*s);
	}
	putchar('\n');
}

static int
list(const char *path, int regexes)
{
	struct rules *r = load(path);
	size_t i;

	if (r == NULL)
		return 1;
	for (i = 0; i < rules_total(r); i++) {
		const struct rule *ru = rules_at(r, i);

		if (!ru->enabled)
			continue;
		if (!regexes)
			printf("%s\n", ru->literal);
		else if (ru->regex != NULL)
			printf("%s\n", ru->regex);
		else
			print_escaped(ru->match);
	}
	rules_free(r);
	return 0;
}

/* Ordinary chatter: no rule literal in any of them. */
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

/*
 * Known errors (real fixture messages): each matches one rule, its entity
 * (%d, the error's number) distinct.  Arguments: cpu, world, number.
 */
static const char *const errors[] = {
	"cpu%d:%d)ScsiDeviceIO: 2309: Cmd(0x41244109c100) 0x28, CmdSN 0x8000006c from world 12535 to dev \"naa.600%05d\" failed H:0xb D:0x0 P:0x0 Possible sense data: 0x0 0x0 0x0.",
	"cpu%d:%d)WARNING: ScsiDevice: 1223: Device :naa.600%05d has been removed or is permanently inaccessible.",
	"cpu%d:%d)WARNING: LinNet: netdev_watchdog:3688: NETDEV WATCHDOG: vmnic%d: transmit timed out",
	"cpu%d:%d)WARNING: ScsiDeviceIO: 1513: Device naa.600%05d performance has deteriorated. I/O latency increased from average value of 1234 microseconds to 123456 microseconds.",
	"cpu%d:%d)NMP: nmp_ThrottleLogForDevice:3893: last error status from device naa.600%05d repeated 10 times",
	"cpu%d:%d)INFO (ne1000): vmnic%d: Link is Down",
};

/*
 * Near-misses: each holds a rule's literal but fails every regex whose
 * literal it holds (`check` verifies it against the engine).  Arguments:
 * cpu, world, a number.
 */
static const char *const nearmiss[] = {
	/* " failed H:0x" (scsi_cmd_failed wants `to dev "..."` before it) */
	"cpu%d:%d)NMP: nmp_ResvConflict:811: reservation of device \"naa.600%05d\" failed H:0x0 D:0x18 P:0x0",
	"cpu%d:%d)ScsiDeviceIO: 4176: Cmd(0x45b96d402508) 0x85, CmdSN 0x%x from world 2099 on path \"vmhba32:C0:T0:L0\" failed H:0x0 D:0x0 P:0x0",
	/* " sense data: 0x5 0x25 0x0" with Invalid (the PDL rule wants Valid|Possible) */
	"cpu%d:%d)VMW_SATP_ALUA: satp_alua_issueCommandOnPath:661: Path \"vmhba3:C0:T0:L%d\" (ACTIVE) command 0xa3 status H:0x0 D:0x0 P:0x0 Invalid sense data: 0x5 0x25 0x0.",
	/* "last error status from device" without "repeated N times" */
	"cpu%d:%d)NMP: nmp_ThrottleLogForDevice:3893: last error status from device naa.600%05d repeated",
	"cpu%d:%d)NMP: nmp_ThrottleLogForDevice:3893: last error status from device naa.600%05d cleared",
	/* "Link is Up" / "Link is Down" / "link state changed" without a vmnic */
	"cpu%d:%d)INFO (ne1000): vusb%d: Link is Up 1000 Mbps Full Duplex",
	"cpu%d:%d)igbn: igbn_CheckLink:1123: Link is Down for adapter at 0000:3b:00.%d",
	"cpu%d:%d)NetPort: 1580: port 0x200000%d link state changed",
	/* ": transmit timed out" of a queue, not NETDEV WATCHDOG's device */
	"cpu%d:%d)WARNING: LinNet: netdev_watchdog:3688: vmnic%d queue 3: transmit timed out",
	/* "urrent CPU " outside a backtrace */
	"cpu%d:%d)CpuSched: 1141: current CPU %d load above threshold",
	/* "Error stats for pnic: " of a USB NIC */
	"cpu%d:%d)Uplink: 2081: Error stats for pnic: vusb%d",
	/* "Lost access to volume " naming the datastore, not the UUID */
	"cpu%d:%d)HBX: 3041: Lost access to volume Datastore%d on host",
	/* ": No connection" from iscsid, not a failed command */
	"cpu%d:%d)iscsi_vmk: iscsivmk_StartConnection: Session %d: No connection",
	/* "backing the boot filesystem" restored, not lost */
	"cpu%d:%d)ScsiDevice: 4032: Restored connectivity to the device mpx.vmhba32:C0:T0:L%d backing the boot filesystem",
	/* "Checksum error on comp " outside the scrubber */
	"cpu%d:%d)DOM: DOMScrub: 212: Checksum error on comp 5a3c%04x fixed",
	/* " Memory Controller " corrected, no "Error on Channel N" */
	"cpu%d:%d)MCA: 207: CE Poll G0 Bk7 S8c000040000800c0 A%x Memory Controller Scrubbing",
};

#define NCHATTER	(sizeof(chatter) / sizeof(chatter[0]))
#define NERRORS		(sizeof(errors) / sizeof(errors[0]))
#define NNEARMISS	(sizeof(nearmiss) / sizeof(nearmiss[0]))

static int
gen(long n, const char *path, int mix)
{
	FILE *f = fopen(path, "w");
	long i, nmatch = 0, nnear = 0;
	unsigned seed = 1;

	if (f == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		int ms = (int)(i % 1000), s = (int)((i / 1000) % 60), m = (int)((i / 60000) % 60);
		int cpu, world = 2097000 + (int)(i % 997);

		seed = seed * 1103515245u + 12345u;
		cpu = (int)(seed >> 28);
		fprintf(f, "2025-12-11T16:%02d:%02d.%03dZ In(182) vmkernel: ", m, s, ms);
		if (i % 1000 == 500) {
			fprintf(f, errors[nmatch % NERRORS], cpu, world, (int)nmatch);
			nmatch++;
		} else if (mix && i % 3 == 1) {
			fprintf(f, nearmiss[(seed >> 16) % NNEARMISS], cpu, world,
			    (int)((seed >> 8) % 10));
			nnear++;
		} else
			fprintf(f, chatter[(seed >> 16) % NCHATTER], cpu, world);
		fputc('\n', f);
	}
	fprintf(stderr, "gen: lines=%ld match=%ld nearmiss=%ld\n", n, nmatch, nnear);
	return fclose(f) == 0 ? 0 : 1;
}

/* Lines holding a literal, lines a rule matches, and the near-misses. */
static int
check(const char *catalogue, const char *path)
{
	struct rules *r = load(catalogue);
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, i;
	ssize_t len;
	long lines = 0, lit = 0, match = 0;
	struct rules_match m;

	if (r == NULL || f == NULL) {
		if (f != NULL)
			fclose(f);
		rules_free(r);
		return 1;
	}
	for (;;) {
		int has = 0;

		len = getline(&line, &cap, f);
		if (len <= 0)
			break;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		lines++;
		for (i = 0; i < rules_total(r) && !has; i++)
			has = rules_at(r, i)->enabled && strstr(line, rules_at(r, i)->literal) != NULL;
		lit += has;
		match += rules_match(r, "vmkernel", line, (size_t)len, &m) == 1;
	}
	free(line);
	fclose(f);
	rules_free(r);
	printf("check: lines=%ld literal=%ld match=%ld nearmiss=%ld\n", lines, lit, match, lit - match);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "literals") == 0)
		return list(argv[2], 0);
	if (argc == 3 && strcmp(argv[1], "regexes") == 0)
		return list(argv[2], 1);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "gen") == 0) {
		int mix = argc == 5 && strcmp(argv[4], "nearmiss") == 0;

		if (argc == 5 && !mix && strcmp(argv[4], "rare") != 0)
			return 2;
		return gen(atol(argv[2]), argv[3], mix);
	}
	if (argc == 4 && strcmp(argv[1], "check") == 0)
		return check(argv[2], argv[3]);
	fprintf(stderr, "usage: bench_logwatch literals|regexes CATALOGUE | gen N FILE [rare|nearmiss] | check CATALOGUE FILE\n");
	return 2;
}
