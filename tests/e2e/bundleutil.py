"""vm-support bundles built by the tests, in the real layout
(tests/fixtures/bundle/SOURCES.md): a top folder esx-<host>-<date>...,
commands/ named `localcli_<args joined by ->.txt`, nicinfo.sh.txt,
logs under var/run/log/ (6.5+) or var/log/ (6.0), rotated NAME.N.gz, and
files cut into NAME.FRAG-00000, -00001, ... pieces.  The command outputs
and log lines are the real captures under tests/fixtures/ (their
SOURCES/README notes).  Only the Python standard library."""
import gzip
import io
import os
import tarfile

from harness import FIXTURES

TOP = "esx-esx01.lab-2024-05-01--10.22-1234"
# commands/uname_-a.txt and vmware_-vl.txt as vm-support saves them: the
# outputs of `uname -a` and `vmware -vl` on the host (SOURCES.md).
UNAME = ("VMkernel esx01.lab 7.0.3 #1 SMP Release build-21930508 Jun  6 2023 "
         "19:18:15 x86_64 x86_64 x86_64 ESXi\n")
VMWARE_VL = "VMware ESXi 7.0.3 build-21930508\nVMware ESXi 7.0 Update 3\n"
UPTIME_US = "1036800000000\n"  # 12 days, `localcli system stats uptime get`


def fixture(rel):
    with open(os.path.join(FIXTURES, rel), "rb") as f:
        return f.read().decode()


NIC_LIST = fixture("esxi/esxcli-network-nic-list/esxi90-vmxnet3.txt")
NIC_STATS = fixture("esxi/esxcli-network-nic-stats-get/kb341594-vmnic2-rx-drops.txt")


def nic_stats(nic="vmnic0", crc=0, dropped=None):
    t = NIC_STATS.replace("vmnic2", nic)
    t = t.replace("Receive CRC errors: 0", "Receive CRC errors: %d" % crc)
    if dropped is not None:
        t = t.replace("Receive packets dropped: 2452783244",
                      "Receive packets dropped: %d" % dropped)
    return t


NIC_GET = fixture("esxi/esxcli-network-nic-get/esxi90-vmxnet3.txt")


def nicinfo(crc=0, dropped=None):
    """commands/nicinfo.sh.txt as ESXi's nicinfo.sh writes it (SOURCES.md):
    a title, `localcli network nic list`, then per NIC "NIC:  vmnicN",
    `network nic get`, `network nic stats get -n vmnicN`, and its private
    statistics right after (no blank line between)."""
    return ("Network Interface Cards Information.\n\n" + NIC_LIST + "\n" +
            "NIC:  vmnic0\n\n" + NIC_GET + nic_stats("vmnic0", crc, dropped) +
            "NIC Private statistics:\n   rx_packets : 6801\n   tx_packets : 4218\n\n")


def base_commands(crc=0, dropped=None):
    return {
        "uname_-a.txt": UNAME,
        "vmware_-vl.txt": VMWARE_VL,
        "localcli_system-stats-uptime-get.txt": UPTIME_US,
        "nicinfo.sh.txt": nicinfo(crc, dropped),
        "localcli_storage-core-device-list.txt":
            fixture("esxi/esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt"),
        "localcli_storage-filesystem-list.txt":
            fixture("esxi/esxcli-storage-filesystem-list/esxi90.txt"),
        "localcli_storage-vmfs-extent-list.txt":
            fixture("esxi/esxcli-storage-vmfs-extent-list/esxi90.txt"),
        "vdq_-q--H.txt": fixture("esxi/vdq-qH/esxi7-nested-partial.txt"),
    }


def gz(data):
    return gzip.compress(data.encode() if isinstance(data, str) else data)


def split(name, data, size):
    """NAME.FRAG-00000 ... of size bytes each (the last shorter)."""
    return [("%s.FRAG-%05d" % (name, i // size), data[i:i + size])
            for i in range(0, max(len(data), 1), size)]


def members(cmds, logs, layout="6.5", frag=None, top=TOP):
    """(path, bytes) in archive order: commands first, then the logs in the
    order given (a list of (name, data))."""
    logdir = "var/run/log" if layout == "6.5" else "var/log"
    out = [(top + "/vm-support-incident-key", b"")]
    items = [("commands/" + n, t.encode() if isinstance(t, str) else t)
             for n, t in sorted(cmds.items())]
    items += [(logdir + "/" + n, t.encode() if isinstance(t, str) else t)
              for n, t in logs]
    for p, d in items:
        if frag and len(d) > frag:
            out += [(top + "/" + n, x) for n, x in split(p, d, frag)]
        else:
            out.append((top + "/" + p, d))
    return out


def write_tgz(path, mems, mtime=1714558920, extra=None):
    """A gzip'd ustar archive of mems; extra(tar) may add hostile members."""
    with tarfile.open(path, "w:gz", format=tarfile.GNU_FORMAT) as t:
        for p, d in mems:
            ti = tarfile.TarInfo(p)
            ti.size = len(d)
            ti.mtime = mtime
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(d))
        if extra:
            extra(t)
    return path


def write_dir(root, mems, mtime=1714558920):
    for p, d in mems:
        fp = os.path.join(root, p)
        os.makedirs(os.path.dirname(fp), exist_ok=True)
        with open(fp, "wb") as f:
            f.write(d)
        os.utime(fp, (mtime, mtime))
    return os.path.join(root, mems[0][0].split("/")[0])
