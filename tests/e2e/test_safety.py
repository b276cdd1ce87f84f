"""The agent as root next to other users: a storage directory others could
write to is refused before anything is written in it, a symlink planted
there is never followed, and secrets never reach the log or
--print-config."""
import os
import socket
import stat
import subprocess

import harness

# No collector, no log: a --once that only opens the storage directory.
COLLECTORS = ("nic", "datastore", "vsan", "smart", "agent")
CONF = ("host: {platform: linux, hostname: esx01}\n"
        "storage: {directory: \"@STORAGE@\"}\n"
        "collectors: {%s}\nfilelog: {}\n" % ", ".join("%s: {enabled: no}" % c for c in COLLECTORS))


def test_fresh_storage_dir_is_private(d):
    a = harness.Agent(d, CONF)
    rc, _, err = a.once(timeout=60)
    harness.eq(rc, 0, "--once exit status (%s)" % err[-500:])
    harness.eq(stat.S_IMODE(os.stat(a.storage).st_mode), 0o700, "storage directory mode")


def test_world_writable_storage_dir_refused(d):
    a = harness.Agent(d, CONF)
    os.makedirs(os.path.join(a.storage, "spool"))
    os.chmod(a.storage, 0o777)
    rc, _, err = a.once(timeout=60)
    harness.eq(rc, 2, "--once exit status")
    want = "storage.directory %s is not safe: %s is writable by every user" % (a.storage, a.storage)
    if want not in err:
        harness.fail("no clear error, want %r in:\n%s" % (want, err[-1500:]))
    harness.eq(os.listdir(os.path.join(a.storage, "spool")), [], "nothing written in the spool")


def test_planted_symlink_refused_target_unchanged(d):
    a = harness.Agent(d, CONF)
    target = os.path.join(d, "precious")
    with open(target, "w") as f:
        f.write("root's file\n")
    os.makedirs(os.path.join(a.storage, "spool"), mode=0o700)
    os.chmod(a.storage, 0o700)
    link = os.path.join(a.storage, "spool", "cursor.server")
    os.symlink(target, link)
    rc, _, err = a.once(timeout=60)
    harness.eq(rc, 2, "--once exit status")
    if "%s is a symbolic link" % link not in err:
        harness.fail("no error naming the link:\n" + err[-1500:])
    with open(target) as f:
        harness.eq(f.read(), "root's file\n", "the link's target")
    harness.eq(os.readlink(link), target, "the link itself")


SECRETS = ("hunter2", "tok3n", "b3arer", "s1g")


def secret_conf(port):
    url = "http://ops:hunter2@127.0.0.1:%d/ingest?x=1&access_token=tok3n&Sig=s1g" % port
    return (CONF.replace("agent: {enabled: no}", "agent: {enabled: yes, interval: 1}") +
            "server: {proto: http, url: '%s', timeout: 2,\n"
            "         headers: {Authorization: 'Bearer b3arer', X-Trace: visible}}\n" % url)


def leaked(text):
    return [s for s in SECRETS if s in text]


def test_url_secrets_never_logged_nor_in_status(d):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens: every send fails, and says so
    a = harness.Agent(d, secret_conf(port))
    a.start("-v")
    try:
        harness.wait_for(lambda: "retrying in" in a.stderr_text(), timeout=20,
                         what="a failed send")
        rc, out, err = a.run("--status")
        harness.eq(rc, 0, "--status (%s)" % err)
        rc, js, _ = a.run("--status", "--json")
    finally:
        a.kill9()  # a SIGTERM would spend 5 s trying to deliver
    log = a.stderr_text()
    want = "http://***@127.0.0.1:%d/ingest?x=1&access_token=***&Sig=***" % port
    if want not in log:
        harness.fail("the log does not name the destination as %r:\n%s" % (want, log[-1500:]))
    harness.eq(leaked(log + out + js), [], "secrets in the log or --status")


def test_print_config_redacts_unless_show_secrets(d):
    a = harness.Agent(d, secret_conf(9))
    rc, out, err = a.run("--print-config")
    harness.eq(rc, 0, "--print-config (%s)" % err)
    harness.eq(leaked(out), [], "secrets in --print-config")
    for want in ('url: "http://<redacted>@127.0.0.1:9/ingest?x=1&access_token=<redacted>&Sig=<redacted>"',
                 '"Authorization": "<redacted>"', '"X-Trace": "visible"'):
        if want not in out:
            harness.fail("--print-config lacks %r:\n%s" % (want, out))
    rc, full, err = a.run("--print-config", "--show-secrets")
    harness.eq(rc, 0, "--print-config --show-secrets (%s)" % err)
    harness.eq(sorted(set(SECRETS) - set(leaked(full))), [], "secrets missing with --show-secrets")
    # what --show-secrets prints is the configuration itself: it loads back the same
    again = os.path.join(d, "printed.yaml")
    with open(again, "w") as f:
        f.write(full)
    p = subprocess.run([harness.BIN, "--print-config", "--show-secrets", "-c", again],
                       capture_output=True, text=True, timeout=30)
    harness.eq(p.stdout, full, "--show-secrets output loaded and printed again")
    rc, _, err = a.run("--show-secrets")
    harness.eq(rc, 2, "--show-secrets without --print-config")


if __name__ == "__main__":
    harness.main(globals())
