#!/bin/sh
#
# esxwatch-fleet.sh: install, configure and check esxwatch on many ESXi
# hosts over plain SSH (for shops without PowerCLI; Install-Esxwatch.ps1 is
# the PowerCLI twin).  POSIX sh, needs only ssh and scp on this side and
# the ESXi shell (busybox sh, esxcli) on the other.  See docs/fleet.md.
#
# Per host, in this order (each step only when asked for):
#   1. scp the VIB or offline bundle to the host (-b), then
#      esxcli software acceptance set --level=LEVEL      (-a LEVEL)
#      esxcli software vib install -v FILE.vib           (a .vib)
#      esxcli software vib install -d FILE.zip           (an offline bundle)
#      esxcli software component apply -d FILE.zip      (-C: as a component)
#   2. esxcli system settings advanced set -o /UserVars/NAME -s|-i VALUE
#      for each -s NAME=VALUE (NAME starts with Esxwatch; -i when the
#      setting's type is integer)
#   3. /etc/init.d/esxwatch restart                       (unless -n)
#   4. report: the init script's status, the installed VIB's version, and
#      the agent's own status: `esxwatch --status --json` when the agent
#      has it, else the status file the agent writes
#      (/scratch/esxwatch/status: "key: value" lines, a "dest: NAME" block
#      per destination with its state delivering|failing|idle).
#
# Collector mode (-L URI, for hosts that cannot run the agent: Secure Boot,
# execInstalledOnly, a STIG baseline): nothing is installed; per host
#      esxcli system syslog config set --loghost=URI
#      esxcli system syslog reload
#      esxcli network firewall ruleset set --ruleset-id=syslog --enabled=true
#      esxcli network firewall refresh
# and the host's own answer (esxcli system syslog config get: Remote Host)
# must read URI back.  docs/collector.md.
#
# Output: a per-host log (LOGDIR/HOST.log: every command and its output)
# and, at the end, one summary row per host.  Exit status 0 when every host
# installed, configured, runs and delivers; 1 otherwise; 2 on a usage error.
#
# Hosts run -j N at a time (N lanes, each working through its share of the
# list); a host that does not answer costs at most ConnectTimeout plus
# the status wait (-w).

usage() {
	cat >&2 <<'EOF'
Usage: esxwatch-fleet.sh [options] HOSTS_FILE
  -b FILE        VIB (.vib) or offline bundle (.zip) to install (none: configure/report only)
  -C             install the offline bundle as a component (esxcli software component apply)
  -a LEVEL       set the host's acceptance level first (e.g. CommunitySupported); never by default
  -s NAME=VALUE  set /UserVars/NAME (NAME begins with Esxwatch); repeat for more
  -n             do not restart the service
  -j N           hosts in parallel (default 10)
  -u USER        SSH user when a line has none (default root)
  -i KEYFILE     SSH identity file
  -o OPTION      extra ssh/scp option (-o OPTION), no spaces; repeat for more
  -r DIR         directory on the host for the package (default /tmp)
  -l DIR         per-host logs (default ./esxwatch-fleet-logs)
  -w SECONDS     wait up to this long for the agent to report delivering (default 30)
  -S PATH        the agent's status file on the host (default /scratch/esxwatch/status)
  -L URI         collector mode: point the hosts' syslog at esxwatch on a collector
                 (Syslog.global.logHost, e.g. tcp://collector:514); installs nothing
HOSTS_FILE: one host a line, "[user@]host [port]"; blank lines and # comments are skipped.
EOF
	exit 2
}

SSH=${ESXWATCH_FLEET_SSH:-ssh}
SCP=${ESXWATCH_FLEET_SCP:-scp}
PKG=""
COMPONENT=0
LEVEL=""
SETTINGS=""
RESTART=1
JOBS=10
USER_DEFAULT=root
IDENTITY=""
OPTS=""
REMOTE_DIR=/tmp
LOGDIR=./esxwatch-fleet-logs
WAIT=30
STATUS_FILE=/scratch/esxwatch/status
LOGHOST=""
NL='
'

# 'text' quoted for a POSIX shell on the other side.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

die() {
	echo "esxwatch-fleet: $*" >&2
	exit 2
}

is_uint() {
	case "$1" in
	""|*[!0-9]*) return 1 ;;
	esac
	return 0
}

while getopts "b:Ca:s:nj:u:i:o:r:l:w:S:L:h" opt; do
	case "${opt}" in
	b) PKG=${OPTARG} ;;
	C) COMPONENT=1 ;;
	a) LEVEL=${OPTARG} ;;
	s)
		name=${OPTARG%%=*}
		case "${OPTARG}" in
		*=*) ;;
		*) die "-s ${OPTARG}: want NAME=VALUE" ;;
		esac
		case "${name}" in
		Esxwatch*) ;;
		*) die "-s ${name}: only /UserVars/Esxwatch* settings" ;;
		esac
		case "${name}" in
		*[!A-Za-z0-9_]*) die "-s ${name}: not a setting name" ;;
		esac
		case "${OPTARG}" in
		*"${NL}"*) die "-s ${name}: a value is one line" ;;
		esac
		SETTINGS="${SETTINGS}${OPTARG}${NL}" ;;
	n) RESTART=0 ;;
	j) if ! is_uint "${OPTARG}" || [ "${OPTARG}" -lt 1 ]; then
			die "-j ${OPTARG}: not a number >= 1"
		fi
		JOBS=${OPTARG} ;;
	u) USER_DEFAULT=${OPTARG} ;;
	i) IDENTITY=${OPTARG} ;;
	o) case "${OPTARG}" in
		*" "*|"") die "-o '${OPTARG}': no spaces" ;;
		esac
		OPTS="${OPTS} -o ${OPTARG}" ;;
	r) REMOTE_DIR=${OPTARG} ;;
	l) LOGDIR=${OPTARG} ;;
	w) is_uint "${OPTARG}" || die "-w ${OPTARG}: not a number"
		WAIT=${OPTARG} ;;
	S) STATUS_FILE=${OPTARG} ;;
	L) LOGHOST=${OPTARG} ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
HOSTS_FILE=$1
[ -r "${HOSTS_FILE}" ] || die "cannot read ${HOSTS_FILE}"
case "${LEVEL}" in
""|VMwareCertified|VMwareAccepted|PartnerSupported|CommunitySupported) ;;
*) die "-a ${LEVEL}: VMwareCertified, VMwareAccepted, PartnerSupported or CommunitySupported" ;;
esac
if [ -n "${LOGHOST}" ]; then
	[ -z "${PKG}${SETTINGS}${LEVEL}" ] ||
		die "-L: collector mode installs and configures nothing on the host (no -b, -s, -a)"
	# udp:// tcp:// ssl:// (ESXi 8: ?formatter=RFC_5424&framing=octet_counting),
	# several comma-separated; what ESXi itself accepts is checked there
	case "${LOGHOST}" in
	*[!A-Za-z0-9.:/_,?=\&\[\]-]*) die "-L ${LOGHOST}: not a logHost value" ;;
	udp://?*|tcp://?*|ssl://?*) ;;
	*) die "-L ${LOGHOST}: want udp://HOST[:PORT], tcp://HOST[:PORT] or ssl://HOST[:PORT]" ;;
	esac
fi
KIND=""
if [ -n "${PKG}" ]; then
	[ -r "${PKG}" ] || die "cannot read ${PKG}"
	case "${PKG}" in
	*.vib) KIND=vib
		[ "${COMPONENT}" = 1 ] && die "-C needs an offline bundle (.zip), not a .vib" ;;
	*.zip) KIND=bundle
		[ "${COMPONENT}" = 1 ] && KIND=component ;;
	*) die "${PKG}: want a .vib or an offline bundle .zip" ;;
	esac
fi
mkdir -p "${LOGDIR}" || die "cannot create ${LOGDIR}"
RESULTS="${LOGDIR}/.results.$$"
: > "${RESULTS}" || die "cannot write in ${LOGDIR}"
trap 'rm -f "${RESULTS}" "${RESULTS}".*' EXIT
trap 'exit 130' INT TERM

# The script each host runs (sh -s on the host, fed on stdin).  It prints
# "@@KEY value" lines for this side to pick up; everything else goes to the
# host's log.
remote_script() {	# remote package path or ""
	rpkg=$1
	echo 'PATH=/bin:/sbin:/usr/bin:/usr/sbin:$PATH; export PATH'
	echo "rpkg=$(q "${rpkg}"); kind=$(q "${KIND}"); level=$(q "${LEVEL}")"
	echo "restart=${RESTART}; wait_s=${WAIT}; status_file=$(q "${STATUS_FILE}")"
	cat <<'EOF'
run() {		# a command, shown in the log with its output and exit status
	echo "+ $*"
	"$@" 2>&1
	rc=$?
	[ ${rc} -eq 0 ] || echo "(exit ${rc})"
	return ${rc}
}
if [ -n "${level}" ]; then
	if run esxcli software acceptance set --level="${level}"; then
		echo "@@ACCEPTANCE ok"
	else
		echo "@@ACCEPTANCE failed"
	fi
fi
if [ -n "${rpkg}" ]; then
	case "${kind}" in
	vib) run esxcli software vib install -v "${rpkg}" ;;
	bundle) run esxcli software vib install -d "${rpkg}" ;;
	component) run esxcli software component apply -d "${rpkg}" ;;
	esac
	if [ $? -eq 0 ]; then echo "@@INSTALL ok"; else echo "@@INSTALL failed"; fi
	rm -f "${rpkg}"
fi
EOF
	printf '%s' "${SETTINGS}" | while IFS= read -r kv; do
		[ -n "${kv}" ] || continue
		echo "setting $(q "${kv%%=*}") $(q "${kv#*=}")"
	done | {
		cat <<'EOF'
setfail=0
setting() {	# name value: -i for an integer setting, else -s
	t=$(esxcli system settings advanced list -o "/UserVars/$1" 2>/dev/null |
	    sed -n 's/^ *Type: *//p')
	case "${t}" in
	integer) run esxcli system settings advanced set -o "/UserVars/$1" -i "$2" ;;
	*) run esxcli system settings advanced set -o "/UserVars/$1" -s "$2" ;;
	esac || setfail=1
}
EOF
		n=0
		while IFS= read -r line; do
			echo "${line}"
			n=$((n + 1))
		done
		if [ ${n} -gt 0 ]; then
			echo 'if [ ${setfail} = 0 ]; then echo "@@SETTINGS ok"; else echo "@@SETTINGS failed"; fi'
		fi
	}
	cat <<'EOF'
started=$(date +%s)
if [ "${restart}" = 1 ]; then
	if run /etc/init.d/esxwatch restart; then echo "@@RESTART ok"; else echo "@@RESTART failed"; fi
fi
ver=$(esxcli software vib get -n esxwatch 2>/dev/null | sed -n 's/^ *Version: *//p' | head -n 1)
echo "@@VIB ${ver:--}"
# The agent's word: --status --json where the agent has it, else its file.
# Wait (up to wait_s) for it to be rewritten after the restart and to say
# delivering.
bin=/opt/esxwatch/bin/esxwatch
conf=/scratch/esxwatch/agent.yaml
[ -f "${conf}" ] || conf=/opt/esxwatch/etc/agent.yaml
i=0
while :; do
	src=none
	text=$("${bin}" --status --json -c "${conf}" 2>/dev/null)
	case "${text}" in
	*"{"*) src=json ;;
	*) text=$(cat "${status_file}" 2>/dev/null) && src=file ;;
	esac
	# a status from before the restart does not count
	upd=$(printf '%s\n' "${text}" | tr ',{}' '\n\n\n' |
	    sed -n 's/^[ "]*updated_ms"\{0,1\} *: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
	fresh=yes
	[ "${restart}" = 1 ] && [ -n "${upd}" ] && [ $((upd / 1000)) -lt "${started}" ] && fresh=no
	if [ "${fresh}" = yes ]; then
		case "${text}" in
		*delivering*) break ;;
		esac
	fi
	[ ${i} -ge "${wait_s}" ] && break
	sleep 2
	i=$((i + 2))
done
[ "${src}" = none ] && fresh=no
echo "@@SOURCE ${src}"
echo "@@FRESH ${fresh}"
printf '%s\n' "${text}" | sed 's/^/@@S /'
if run /etc/init.d/esxwatch status; then echo "@@RUNNING yes"; else echo "@@RUNNING no"; fi
echo "@@DONE yes"
EOF
}

# Collector mode's script: point the host's syslog at LOGHOST and read it back.
loghost_script() {
	echo 'PATH=/bin:/sbin:/usr/bin:/usr/sbin:$PATH; export PATH'
	echo "loghost=$(q "${LOGHOST}")"
	cat <<'EOF'
run() {		# a command, shown in the log with its output and exit status
	echo "+ $*"
	"$@" 2>&1
	rc=$?
	[ ${rc} -eq 0 ] || echo "(exit ${rc})"
	return ${rc}
}
if run esxcli system syslog config set --loghost="${loghost}" &&
    run esxcli system syslog reload; then
	got=$(esxcli system syslog config get 2>/dev/null | sed -n 's/^ *Remote Host: *//p' | head -n 1)
	echo "Remote Host: ${got}"
	if [ "${got}" = "${loghost}" ]; then echo "@@LOGHOST ok"; else echo "@@LOGHOST mismatch"; fi
else
	echo "@@LOGHOST failed"
fi
if run esxcli network firewall ruleset set --ruleset-id=syslog --enabled=true &&
    run esxcli network firewall refresh; then
	echo "@@FIREWALL ok"
else
	echo "@@FIREWALL failed"
fi
echo "@@DONE yes"
EOF
}

loghost_host() {	# "[user@]host" port
	target=$1
	port=$2
	case "${target}" in
	*@*) ;;
	*) target="${USER_DEFAULT}@${target}" ;;
	esac
	host=${target#*@}
	log="${LOGDIR}/${host}.log"
	out="${RESULTS}.${host}"
	common="${OPTS# } -o BatchMode=yes -o ConnectTimeout=10"
	[ -n "${IDENTITY}" ] && common="${common} -i ${IDENTITY}"
	sshp=""
	[ -n "${port}" ] && sshp="-p ${port}"
	: > "${log}"
	echo "# esxwatch-fleet $(date -u '+%Y-%m-%dT%H:%M:%SZ') ${target}${port:+ port ${port}} -L ${LOGHOST}" >> "${log}"
	# shellcheck disable=SC2086
	loghost_script | ${SSH} ${common} ${sshp} "${target}" sh -s > "${out}.raw" 2>&1
	grep -v '^@@' "${out}.raw" >> "${log}"
	sed -n 's/^@@/# result: /p' "${out}.raw" >> "${log}"
	lh=$(sed -n 's/^@@LOGHOST //p' "${out}.raw" | head -n 1)
	fw=$(sed -n 's/^@@FIREWALL //p' "${out}.raw" | head -n 1)
	if [ -z "$(sed -n 's/^@@DONE //p' "${out}.raw")" ]; then
		lh=${lh:-unreachable}
		fw=${fw:-unreachable}
	fi
	ok=ok
	[ "${lh}" = ok ] && [ "${fw}" = ok ] || ok=FAILED
	printf '%s %s %s %s\n' "${host}" "${lh:-failed}" "${fw:-failed}" "${ok}" > "${out}.row"
	echo "# summary: $(cat "${out}.row")" >> "${log}"
	rm -f "${out}.raw"
}

# The agent's status text (JSON or the status file) -> "version state backlog".
# state: delivering when every destination delivers, failing when one
# fails, idle when none has delivered yet, - when there is no status.
summarize_status() {	# source file
	case "$1" in
	json)
		tr -d '\n' < "$2" | tr ',{}' '\n\n\n' | sed -n '
			s/^ *"version" *: *"\([^"]*\)".*/version \1/p
			s/^ *"state" *: *"\([a-z]*\)".*/state \1/p
			s/^ *"backlog_events" *: *\([0-9]*\).*/backlog \1/p' ;;
	file)
		sed -n '
			s/^version: *\(.*\)/version \1/p
			s/^ state: *\([a-z]*\).*/state \1/p
			s/^ backlog_events: *\([0-9]*\).*/backlog \1/p' "$2" ;;
	esac | awk '
		$1 == "version" && v == "" { v = $2 }
		$1 == "state" { n++; if ($2 == "failing") f++; else if ($2 == "delivering") d++ }
		$1 == "backlog" { b += $2; hb = 1 }
		END {
			s = n == 0 ? "-" : f > 0 ? "failing" : d == n ? "delivering" : "idle"
			printf "%s %s %s\n", v == "" ? "-" : v, s, hb ? b : "-"
		}'
}

do_host() {	# "[user@]host" port
	target=$1
	port=$2
	case "${target}" in
	*@*) ;;
	*) target="${USER_DEFAULT}@${target}" ;;
	esac
	host=${target#*@}
	log="${LOGDIR}/${host}.log"
	out="${RESULTS}.${host}"
	# the first value of an ssh option wins: the caller's -o before ours
	common="${OPTS# } -o BatchMode=yes -o ConnectTimeout=10"
	[ -n "${IDENTITY}" ] && common="${common} -i ${IDENTITY}"
	sshp=""
	scpp=""
	[ -n "${port}" ] && sshp="-p ${port}" && scpp="-P ${port}"
	: > "${log}"
	echo "# esxwatch-fleet $(date -u '+%Y-%m-%dT%H:%M:%SZ') ${target}${port:+ port ${port}}" >> "${log}"
	rpkg=""
	copy=ok
	if [ -n "${PKG}" ]; then
		rpkg="${REMOTE_DIR}/$(basename "${PKG}")"
		echo "+ ${SCP} ${PKG} ${target}:${rpkg}" >> "${log}"
		# shellcheck disable=SC2086 # word splitting of the option lists is wanted
		${SCP} -q ${common} ${scpp} "${PKG}" "${target}:${rpkg}" >> "${log}" 2>&1 || copy=failed
	fi
	if [ "${copy}" = ok ]; then
		[ -n "${PKG}" ] || rpkg=""
		# shellcheck disable=SC2086
		remote_script "${rpkg}" | ${SSH} ${common} ${sshp} "${target}" sh -s > "${out}.raw" 2>&1
		grep -v '^@@S ' "${out}.raw" | grep -v '^@@' >> "${log}"
		grep '^@@' "${out}.raw" | grep -v '^@@S ' | sed 's/^@@/# result: /' >> "${log}"
		sed -n 's/^@@S //p' "${out}.raw" > "${out}.status"
		printf '# agent status:\n' >> "${log}"
		sed 's/^/#   /' "${out}.status" >> "${log}"
	else
		: > "${out}.raw"
		: > "${out}.status"
	fi
	field() { sed -n "s/^@@$1 //p" "${out}.raw" | head -n 1; }
	inst=-
	if [ -n "${PKG}" ]; then
		inst=$(field INSTALL)
		[ "${copy}" = failed ] && inst="copy-failed"
	fi
	sets=-; [ -n "${SETTINGS}" ] && sets=$(field SETTINGS)
	rest=-; [ "${RESTART}" = 1 ] && rest=$(field RESTART)
	[ "$(field ACCEPTANCE)" = failed ] && inst="acceptance-failed"
	vib=$(field VIB)
	src=$(field SOURCE)
	run=$(field RUNNING)
	if [ -z "$(field DONE)" ]; then
		# no answer (or cut short): say so where the step was asked for
		[ "${copy}" = ok ] && [ -z "$(field INSTALL)" ] && [ -n "${PKG}" ] && inst=unreachable
		[ -z "${sets}" ] && sets=unreachable
		[ -z "${rest}" ] && rest=unreachable
		run=no
	fi
	src=${src:-none}
	[ "${src}" != none ] && [ "$(field FRESH)" != yes ] && src="${src}-stale"
	# shellcheck disable=SC2046 # three words
	set -- $(summarize_status "${src%-stale}" "${out}.status")
	ver=${1:--}
	[ "${ver}" = - ] && [ -n "${vib}" ] && ver=${vib}
	state=${2:--}
	backlog=${3:--}
	ok=ok
	for v in "${inst:-failed}" "${sets:-failed}" "${rest:-failed}"; do
		case "${v}" in
		ok|-) ;;
		*) ok=FAILED ;;
		esac
	done
	[ "${run}" = yes ] || ok=FAILED
	[ "${state}" = delivering ] || ok=FAILED
	printf '%s %s %s %s %s %s %s %s %s %s\n' "${host}" "${inst:-failed}" "${sets:-failed}" \
	    "${rest:-failed}" "${ver}" "${run:-no}" "${state}" "${backlog}" "${src:-none}" "${ok}" \
	    > "${out}.row"
	echo "# summary: $(cat "${out}.row")" >> "${log}"
	rm -f "${out}.raw" "${out}.status"
}

# Lane L of JOBS: hosts L, L+JOBS, L+2*JOBS... of the list.
lane() {
	n=0
	grep -v '^[[:space:]]*#' "${HOSTS_FILE}" | while read -r h p rest; do
		[ -n "${h}" ] || continue
		if [ $((n % JOBS)) -eq "$1" ] && [ -n "${LOGHOST}" ]; then
			loghost_host "${h}" "${p}" < /dev/null
		elif [ $((n % JOBS)) -eq "$1" ]; then
			do_host "${h}" "${p}" < /dev/null
		fi
		n=$((n + 1))
	done
}

total=$(grep -v '^[[:space:]]*#' "${HOSTS_FILE}" | grep -c '[^[:space:]]')
[ "${total}" -gt 0 ] || die "no hosts in ${HOSTS_FILE}"
[ "${JOBS}" -gt "${total}" ] && JOBS=${total}
l=0
while [ ${l} -lt "${JOBS}" ]; do
	lane ${l} &
	l=$((l + 1))
done
wait

if [ -n "${LOGHOST}" ]; then
	printf '%-24s %-10s %-10s %s\n' HOST LOGHOST FIREWALL RESULT
	grep -v '^[[:space:]]*#' "${HOSTS_FILE}" | while read -r h p rest; do
		[ -n "${h}" ] || continue
		host=${h#*@}
		if [ -f "${RESULTS}.${host}.row" ]; then
			# shellcheck disable=SC2046,SC2183 # the row's four words
			printf '%-24s %-10s %-10s %s\n' $(cat "${RESULTS}.${host}.row")
		else
			printf '%-24s %s\n' "${host}" "no result"
		fi
	done
	ok=$(cat "${RESULTS}".*.row 2>/dev/null | awk '$4 == "ok"' | wc -l | tr -d ' ')
	echo "esxwatch-fleet: ${ok} of ${total} hosts send their syslog to ${LOGHOST}; logs in ${LOGDIR}/"
	[ "${ok}" -eq "${total}" ]
	exit $?
fi
printf '%-24s %-11s %-11s %-11s %-10s %-7s %-10s %-7s %-6s %s\n' HOST INSTALL SETTINGS RESTART \
    VERSION RUNNING STATE BACKLOG SOURCE RESULT
bad=0
grep -v '^[[:space:]]*#' "${HOSTS_FILE}" | while read -r h p rest; do
	[ -n "${h}" ] || continue
	host=${h#*@}
	if [ -f "${RESULTS}.${host}.row" ]; then
		# shellcheck disable=SC2046,SC2183 # the row's ten words
		printf '%-24s %-11s %-11s %-11s %-10s %-7s %-10s %-7s %-6s %s\n' $(cat "${RESULTS}.${host}.row")
	else
		printf '%-24s %s\n' "${host}" "no result"
	fi
done
ok=$(cat "${RESULTS}".*.row 2>/dev/null | awk '$10 == "ok"' | wc -l | tr -d ' ')
echo "esxwatch-fleet: ${ok} of ${total} hosts ok; logs in ${LOGDIR}/"
[ "${ok}" -eq "${total}" ] || bad=1
exit ${bad}
