"""packaging/fleet/Install-Esxwatch.ps1, parsed and linted.

Debian's package archive has no PowerShell (apt-cache search powershell
finds only unrelated Perl and Rust libraries), and PowerCLI needs a vCenter
or host to talk to, so the script is not run here.  Instead this test
tokenizes it (strings, here-strings, comments, variables) and checks what
a parse would reject and what PSScriptAnalyzer's default rules would flag:
balanced and well-nested brackets, the comment-based help, the
[CmdletBinding(SupportsShouldProcess)] param block and its parameters,
function names Verb-Noun with an approved verb, no aliases, every
Verb-Noun command known (PowerShell core or PowerCLI, or defined in the
script), no Invoke-Expression / Write-Host, ShouldProcess around every
change; and it checks the script against the project: the esxcli V2
namespaces and argument names it invokes, the service key, and the status
file keys it parses, which must be the ones agent/status.c writes.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PS1 = os.path.join(harness.TOP, "packaging", "fleet", "Install-Esxwatch.ps1")
# collector mode's twin: points the hosts' syslog at a collector
LOGHOST_PS1 = os.path.join(harness.TOP, "packaging", "fleet", "Set-EsxwatchLogHost.ps1")
SCRIPTS = (PS1, LOGHOST_PS1)
STATUS_C = os.path.join(harness.TOP, "agent", "status.c")
SERVICE_XML = os.path.join(harness.TOP, "packaging", "esxi", "service.xml")
INIT = os.path.join(harness.TOP, "packaging", "esxi", "esxwatch.init")

# Get-Verb (PowerShell 7.4).
APPROVED = set("""Add Clear Close Copy Enter Exit Find Format Get Hide Join Lock Move New Open
Optimize Pop Push Redo Remove Rename Reset Resize Search Select Set Show Skip Split Step Switch
Undo Unlock Watch Connect Disconnect Read Receive Send Write Backup Checkpoint Compare Compress
Convert ConvertFrom ConvertTo Dismount Edit Expand Export Group Import Initialize Limit Merge
Mount Out Publish Restore Save Sync Unpublish Update Debug Measure Ping Repair Resolve Test
Trace Approve Assert Build Complete Confirm Deny Deploy Disable Enable Install Invoke Register
Request Restart Resume Start Stop Submit Suspend Uninstall Unregister Wait Block Grant Protect
Revoke Unblock Unprotect Use""".split())

KNOWN_CMDLETS = set("""Set-StrictMode Get-Cluster Get-VMHost Sort-Object Select-Object Where-Object
ForEach-Object Test-Path Get-Datastore Split-Path New-PSDrive Remove-PSDrive New-Item Copy-DatastoreItem
Get-AdvancedSetting Set-AdvancedSetting Join-Path Get-Content Remove-Item ConvertFrom-Json Get-EsxCli
Write-Verbose Write-Warning Out-Null Get-VMHostService Restart-VMHostService Get-Date Start-Sleep
Format-Table Export-Csv Connect-VIServer Get-VMHostFirewallException
Set-VMHostFirewallException""".split())

# Built-in aliases (Get-Alias) an admin script must not use.
ALIASES = set("""% ? ac cat cd chdir clc clear clhy cli clp cls clv cnsn compare copy cp cpi cpp
curl cvpa dbp del diff dir dnsn ebp echo epal epcsv epsn erase etsn exsn fc fhx fl foreach ft fw
gal gbp gc gcb gci gcm gcs gdr ghy gi gin gjb gl gm gmo gp gps gpv group gsn gsnp gsv gtz gu gv
gwmi h history icm iex ihy ii ipal ipcsv ipmo ipsn irm ise iwmi iwr kill lp ls man md measure
mi mount move mp mv nal ndr ni nmo npssc nsn nv ogv oh popd ps pushd pwd r rbp rcjb rcsn rd rdr
ren ri rjb rm rmdir rmo rni rnp rp rsn rsnp rujb rv rvpa rwmi sajb sal saps sasv sbp sc scb
select set shcm si sl sleep sls sort sp spjb spps spsv start stz sujb sv swmi tee trcm type wget
where wjb write""".split())

# esxcli namespaces used through Get-EsxCli -V2 and the argument names they
# take (the long option names of `esxcli <namespace>`).
ESXCLI_ARGS = {
    "software.acceptance.set": {"level"},
    "software.vib.install": {"viburl", "depot", "dryrun", "force", "maintenancemode",
                             "noliveinstall", "nosigcheck", "proxy", "vibname"},
    "software.component.apply": {"depot", "component", "dryrun", "force", "maintenancemode",
                                 "noliveinstall", "nosigcheck", "proxy"},
    "software.vib.get": {"vibname", "rebootingimage"},
}


def read(p):
    with open(p, encoding="utf-8") as f:
        return f.read()


def tokenize(text):
    """Code with strings and comments blanked (same length, newlines
    kept), plus the list of (kind, text) of the strings."""
    out = []
    strings = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "<#":
            j = text.find("#>", i + 2)
            if j < 0:
                harness.fail("unterminated <# block comment")
            out.append(re.sub(r"[^\n]", " ", text[i:j + 2]))
            i = j + 2
        elif c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif two in ("@'", '@"') and text[i + 2:i + 3] == "\n":
            end = "\n" + two[1] + "@"
            j = text.find(end, i + 3)
            if j < 0:
                harness.fail("unterminated here-string")
            strings.append(("here", text[i + 3:j]))
            out.append(re.sub(r"[^\n]", " ", text[i:j + 3]))
            i = j + 3
        elif c == "'":
            j = i + 1
            while True:
                if j >= n:
                    harness.fail("unterminated '...' string at %d" % i)
                if text[j] == "'" and text[j + 1:j + 2] == "'":
                    j += 2
                    continue
                if text[j] == "'":
                    break
                j += 1
            strings.append(("single", text[i + 1:j]))
            out.append("'" + re.sub(r"[^\n]", " ", text[i + 1:j]) + "'")
            i = j + 1
        elif c == '"':
            j = i + 1
            depth = 0
            while True:
                if j >= n:
                    harness.fail('unterminated "..." string at %d' % i)
                if text[j] == "`":
                    j += 2
                    continue
                if text[j:j + 2] == "$(":
                    depth += 1
                    j += 2
                    continue
                if depth and text[j] == ")":
                    depth -= 1
                elif text[j] == '"' and depth == 0:
                    break
                j += 1
            strings.append(("double", text[i + 1:j]))
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), strings


def test_parses_balanced(tmpdir):
    for path in SCRIPTS:
        parses_balanced(path)


def parses_balanced(path):
    code, _ = tokenize(read(path))
    pairs = {")": "(", "}": "{", "]": "["}
    stack = []
    for ln, line in enumerate(code.split("\n"), 1):
        for ch in line:
            if ch in "({[":
                stack.append((ch, ln))
            elif ch in ")}]":
                if not stack or stack[-1][0] != pairs[ch]:
                    harness.fail("line %d: %r closes %r" % (ln, ch, stack[-1] if stack else None))
                stack.pop()
    harness.eq(stack, [], "brackets left open")
    # A backtick continuation must be the last character on its line.
    for ln, line in enumerate(code.split("\n"), 1):
        if "`" in line and not line.rstrip().endswith("`"):
            harness.fail("line %d: a backtick that is not a line continuation" % ln)
        if line.rstrip().endswith("`") and line != line.rstrip():
            harness.fail("line %d: space after a line-continuation backtick" % ln)


def test_help_and_param_block(tmpdir):
    text = read(PS1)
    code, _ = tokenize(text)
    for want in ("#Requires -Modules VMware.VimAutomation.Core", ".SYNOPSIS", ".DESCRIPTION",
                 ".EXAMPLE"):
        if want not in text:
            harness.fail("missing %r" % want)
    m = re.search(r"^\[CmdletBinding\(([^)]*)\)\]\s*param\(", code, re.M)
    if not m or "SupportsShouldProcess = $true" not in m.group(1):
        harness.fail("no [CmdletBinding(SupportsShouldProcess = $true)] param( at the top level")
    # the param block: from "param(" to its closing parenthesis
    start = m.end()
    depth, j = 1, start
    while depth:
        depth += {"(": 1, ")": -1}.get(code[j], 0)
        j += 1
    params = re.findall(r"\]\s*\$([A-Za-z]+)", code[start:j])
    for p in ("Cluster", "VMHost", "Bundle", "Datastore", "Component", "AcceptanceLevel",
              "Setting", "NoRestart", "WaitSeconds"):
        if p not in params:
            harness.fail("parameter -%s missing (have %s)" % (p, params))
    # the acceptance level is only ever set when asked: no default value
    if re.search(r"\$AcceptanceLevel\s*=", code[start:j]):
        harness.fail("-AcceptanceLevel has a default")
    if "ParameterSetName = 'Cluster'" not in text or "ParameterSetName = 'VMHost'" not in text:
        harness.fail("-Cluster and -VMHost are not separate parameter sets")


def test_verbs_aliases_commands(tmpdir):
    for path in SCRIPTS:
        verbs_aliases_commands(path)


def verbs_aliases_commands(path):
    code, _ = tokenize(read(path))
    funcs = re.findall(r"^\s*function\s+([A-Za-z-]+)", code, re.M)
    if not funcs:
        harness.fail("no functions found")
    for f in funcs:
        verb, _, noun = f.partition("-")
        if verb not in APPROVED or not noun:
            harness.fail("function %s: not Verb-Noun with an approved verb" % f)
    known = KNOWN_CMDLETS | set(funcs)
    for cmd in set(re.findall(r"(?<![\w.$-])([A-Z][a-z]+-[A-Z][A-Za-z]+)\b", code)):
        if cmd not in known:
            harness.fail("unknown command %s (an alias or a typo?)" % cmd)
    # command position: line start, after | ; ( { or =
    for ln, line in enumerate(code.split("\n"), 1):
        for m in re.finditer(r"(?:^|[|;({=])\s*([%?]|[A-Za-z][\w-]*)(?=\s|$)", line):
            w = m.group(1)
            if w.lower() in ALIASES and not (w == "foreach" and re.match(r"\s*foreach\s*\(", line)):
                harness.fail("line %d: alias %r" % (ln, w))
    for bad in ("Invoke-Expression", "Write-Host", "iex "):
        if bad in code:
            harness.fail("uses %s" % bad)


def test_changes_under_shouldprocess(tmpdir):
    for path in SCRIPTS:
        code, _ = tokenize(read(path))
        lines = code.split("\n")
        change = re.compile(r"Set-AdvancedSetting|Restart-VMHostService|Copy-DatastoreItem -Item \$Path|"
                            r"Set-VMHostFirewallException|\.(install|apply|set|reload)\.Invoke\(")
        for ln, line in enumerate(lines, 1):
            if change.search(line):
                ctx = "\n".join(lines[max(0, ln - 12):ln])
                if "ShouldProcess(" not in ctx:
                    harness.fail("%s line %d: a change outside ShouldProcess: %s" %
                                 (os.path.basename(path), ln, line.strip()))
    text = read(PS1)
    m = re.search(r"\$(\w+) = Get-AdvancedSetting -Entity \$VMHostObject -Name \"UserVars\.\$name\"",
                  text)
    if not m or not re.search(r"\$%s \| Set-AdvancedSetting -Value \$Setting\[\$name\] "
                              r"-Confirm:\$false" % m.group(1), text):
        harness.fail("settings not set with Get-AdvancedSetting UserVars.NAME | Set-AdvancedSetting")
    if "Get-EsxCli -VMHost $VMHostObject -V2" not in code:
        harness.fail("Get-EsxCli without -V2")


def test_matches_the_project(tmpdir):
    text = read(PS1)
    code, strings = tokenize(text)
    # esxcli V2 calls: namespace and argument names
    calls = re.findall(r"\$esxcli\.([a-z.]+)\.Invoke\(@\{([^}]*)\}", text)
    seen = set()
    for ns, args in calls:
        if ns not in ESXCLI_ARGS:
            harness.fail("esxcli namespace %s not expected" % ns)
        seen.add(ns)
        for a in re.findall(r"(\w+)\s*=", args):
            if a not in ESXCLI_ARGS[ns]:
                harness.fail("esxcli %s has no argument %s" % (ns, a))
    harness.eq(seen, set(ESXCLI_ARGS), "esxcli namespaces used")
    # the service key hostd lists for the init script
    key = re.search(r"<id>([^<]+)</id>", read(SERVICE_XML)).group(1)
    if "$_.Key -eq '%s'" % key not in text:
        harness.fail("the service is not selected by its key %r" % key)
    # the status file keys parsed are the ones agent/status.c writes
    st = read(STATUS_C)
    # (status.c writes "version: " and " state: " itself and the counters
    # from its key tables: TOP(updated_ms)-style rows, DST(backlog_events, ..)
    # for a destination's, one space in)
    for pat, key, writes in ((r"'\^version: \*\(\.\*\)\$'", "version: ", r"\\nversion: %s"),
                             (r"'\^updated_ms: ", "updated_ms: ", r"updated_ms: %"),
                             (r"'\^ state: ", " state: ", r"\\n state: %s"),
                             (r"'\^ backlog_events: ", " backlog_events: ",
                              r"DST\(backlog_events,")):
        if not re.search(pat, text):
            harness.fail("the script does not parse %r" % key)
        if not re.search(writes, st):
            harness.fail("agent/status.c does not write %r" % key)
    for state in ("failing", "delivering"):
        if '"%s"' % state not in st or "'%s'" % state not in text:
            harness.fail("state %s not in both" % state)
    # the settings in the examples exist (the init script creates them)
    init = read(INIT)
    for name in set(re.findall(r"(Esxwatch[A-Za-z]+) =", text)):
        if "=%s\n" % name not in init:
            harness.fail("example setting %s is not one the init script creates" % name)
    # the status file lives in storage.directory, default /scratch/esxwatch
    if "'/scratch/esxwatch'" not in text or "'status'" not in text:
        harness.fail("status file path")


def test_loghost_script(tmpdir):
    """Set-EsxwatchLogHost.ps1: the setting, the reload, the read-back and
    the firewall rule, by their real names."""
    text = read(LOGHOST_PS1)
    code, _ = tokenize(text)
    m = re.search(r"^\[CmdletBinding\(([^)]*)\)\]\s*param\(", code, re.M)
    if not m or "SupportsShouldProcess = $true" not in m.group(1):
        harness.fail("no [CmdletBinding(SupportsShouldProcess = $true)] param(")
    for want in ("[string] $LogHost", "ParameterSetName = 'Cluster'", "ParameterSetName = 'VMHost'",
                 "-Name 'Syslog.global.logHost'", "$esxcli.system.syslog.reload.Invoke()",
                 "Get-VMHostFirewallException -VMHost $VMHostObject -Name 'syslog'",
                 "Set-VMHostFirewallException -Enabled $true", "$got -eq $LogHost",
                 "Get-EsxCli -VMHost $VMHostObject -V2"):
        if want not in text:
            harness.fail("Set-EsxwatchLogHost.ps1 lacks %r" % want)
    # the parameter's pattern takes what ESXi takes and refuses the rest
    pat = re.search(r"ValidatePattern\('([^']+)'\)", text).group(1)
    for v in ("tcp://c:514", "udp://10.0.0.5", "ssl://c1:1514,ssl://c2:1514",
              "tcp://c:1514?formatter=RFC_5424&framing=octet_counting", "tcp://[fe80::1]:514"):
        if not re.match(pat, v):
            harness.fail("-LogHost pattern refuses %r" % v)
    for v in ("c:514", "tcp://a b", "http://c:514", "tcp://c:514,"):
        if re.match(pat, v):
            harness.fail("-LogHost pattern takes %r" % v)


harness.main(globals())
