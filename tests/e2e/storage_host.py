"""A simulated ESXi host's storage, for the datastore/vsan/smart end-to-end
tests: esxcli/localcli/vdq answers built from the real captures in
tests/fixtures/esxi/, with states that a test changes between runs (a path
going dead, an NFS server vanishing, a disk gaining a partition, a SMART
value changing).  Only the Python standard library."""
import os
import re

from harness import FIXTURES, FakeHost

FX = os.path.join(FIXTURES, "esxi")


def fixture(rel):
    with open(os.path.join(FX, rel)) as f:
        return f.read()


# --- esxcli tables ------------------------------------------------------------

def render_table(headers, rows, right=()):
    """esxcli's table shape: header, dashes, rows; columns two spaces
    apart, as wide as their widest cell; `right` columns right-aligned."""
    w = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            w[i] = max(w[i], len(str(c)))
    def line(cells, dash=False):
        out = []
        for i, c in enumerate(cells):
            c = str(c)
            if i == len(cells) - 1 and not dash and headers[i] not in right:
                out.append(c)
            elif headers[i] in right and not dash:
                out.append(c.rjust(w[i]))
            else:
                out.append(c.ljust(w[i]))
        return "  ".join(out).rstrip() if not dash else "  ".join(out)
    text = [line(headers), "  ".join("-" * x for x in w)]
    text += [line(r) for r in rows]
    return "\n".join(text) + "\n"


def parse_table(text):
    """Cells of an esxcli table, split at the dash line's column runs."""
    lines = text.splitlines()
    dash = lines[1]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", dash)]
    def cut(l):
        cells = []
        for i, (s, e) in enumerate(spans):
            end = spans[i + 1][0] if i + 1 < len(spans) else len(l)
            cells.append(l[s:end].strip())
        return cells
    return cut(lines[0]), [cut(l) for l in lines[2:] if l.strip()]


def retable(text, param, column, value, right=()):
    """Re-render a table with one cell changed (the row whose first cell is
    param); widths follow the new content as esxcli's do."""
    headers, rows = parse_table(text)
    ci = headers.index(column)
    for r in rows:
        if r[0] == param:
            r[ci] = value
    return render_table(headers, rows, right)


# --- keyed lists ----------------------------------------------------------------

DEV_TEMPLATE = fixture("esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt")
PATH_TEMPLATE = fixture("esxcli-storage-core-path-list/compellent-iscsi-colon-header.txt")
TEMPLATE_DEV = "mpx.vmhba0:C0:T0:L0"
TEMPLATE_PATH_DEV = "naa.6000d31000771000000000000000000d"


def set_key(text, key, value):
    return re.sub(r"(?m)^(   %s:) .*$" % re.escape(key), lambda m: m.group(1) + " " + value, text)


def device_record(dev, status="on", local=True, vendor=None, model=None,
                  display=None, usb=False, offline=False):
    """One `storage core device list` record, from the ESXi 9.0 capture."""
    t = DEV_TEMPLATE.replace(TEMPLATE_DEV, dev)
    t = set_key(t, "Status", status)
    t = set_key(t, "Is Local", "true" if local else "false")
    t = set_key(t, "Is USB", "true" if usb else "false")
    t = set_key(t, "Is Offline", "true" if offline else "false")
    t = set_key(t, "Is Boot Device", "false")
    if vendor is not None:
        t = set_key(t, "Vendor", vendor)
    if model is not None:
        t = set_key(t, "Model", model)
    if display is not None:
        t = set_key(t, "Display Name", display)
    return t.rstrip("\n") + "\n"


def path_record(dev, target, state="active", adapter="vmhba38"):
    """One `storage core path list` record, from the Compellent capture
    (header line ending in ':')."""
    t = PATH_TEMPLATE.replace(TEMPLATE_PATH_DEV, dev)
    t = t.replace("vmhba38:C0:T1:L1", "%s:C0:T%d:L1" % (adapter, target))
    t = t.replace("vmhba38", adapter)
    t = t.replace(",t,0-", ",t,%d-" % target)
    t = set_key(t, "Target", str(target))
    t = set_key(t, "State", state)
    return t.rstrip("\n") + "\n"


def keyed(records):
    return "\n".join(r.rstrip("\n") + "\n" for r in records)


# --- the host ---------------------------------------------------------------------

SAN_DEV = "naa.6000d31000771000000000000000000d"
SAN_DS = "DS-Compellent01"
SAN_UUID = "5f8b4c97-11111111-2222-54ea7418ec3f"


class StorageHost(FakeHost):
    """FakeHost plus a storage state: a local boot disk (mpx.vmhba0, OSDATA),
    a SAN LUN with two iSCSI paths backing DS-Compellent01, an NFS 4.1
    datastore `isos`.  Change the attributes, then apply()."""

    def __init__(self, root):
        FakeHost.__init__(self, root)
        self.san_status = "on"
        self.san_paths = ["active", "active"]
        self.nfs41_accessible = True
        self.nfs_v3 = True
        self.san_ds_present = True

    def device_list(self):
        return keyed([
            fixture("esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt"),
            device_record(SAN_DEV, status=self.san_status, local=False,
                          vendor="COMPELNT", model="Compellent Vol  ",
                          display="COMPELNT iSCSI Disk (%s)" % SAN_DEV),
        ])

    def path_list(self):
        recs = [path_record(TEMPLATE_DEV, 0, "active", adapter="vmhba0")]
        for i, st in enumerate(self.san_paths):
            recs.append(path_record(SAN_DEV, i + 1, st))
        return keyed(recs)

    def extent_list(self):
        headers, rows = parse_table(fixture("esxcli-storage-vmfs-extent-list/esxi90.txt"))
        if self.san_ds_present:
            rows.append([SAN_DS, SAN_UUID, "0", SAN_DEV, "1"])
        return render_table(headers, rows, right=("Extent Number", "Partition"))

    def filesystem_list(self):
        headers, rows = parse_table(fixture("esxcli-storage-filesystem-list/esxi90.txt"))
        if self.san_ds_present:
            rows.append(["/vmfs/volumes/" + SAN_UUID, SAN_DS, SAN_UUID, "true", "VMFS-6",
                          "1099243192320", "549621596160"])
        rows.append(["/vmfs/volumes/a1b2c3d4-e5f60718", "isos", "a1b2c3d4-e5f60718",
                     "true" if self.nfs41_accessible else "false", "NFS41",
                     "0" if not self.nfs41_accessible else "4398046511104",
                     "0" if not self.nfs41_accessible else "2199023255552"])
        return render_table(headers, rows, right=("Mounted", "Size", "Free"))

    def nfs41_list(self):
        # The inaccessible state is the real capture; the accessible one is
        # the same line with the booleans flipped.
        t = fixture("esxcli-storage-nfs41-list/inaccessible-hwaccel-unknown.txt")
        if self.nfs41_accessible:
            t = t.replace("     false    false", "      true     true")
        return t

    def apply(self):
        self.set_both("storage core device list", text=self.device_list())
        self.set_both("storage core path list", text=self.path_list())
        self.set_both("storage vmfs extent list", text=self.extent_list())
        self.set_both("storage filesystem list", text=self.filesystem_list())
        self.set_both("storage nfs list",
                      fixture="esxi/esxcli-storage-nfs-list/esxi80b-synology-nfsv3.txt")
        self.set_both("storage nfs41 list", text=self.nfs41_list())


# --- SMART -------------------------------------------------------------------------

SATA_HDD = "t10.ATA_____ST20000NM007D2D3DJ103________________________________ZVTBXN1D"
SATA_OLD = "t10.ATA_____WDC_WD2502ABYS2D18B7A0________________________WD2DWCAT1H751520"
SMART_5COL = "esxcli-storage-core-device-smart-get/esxi803-sata-hdd-exos.txt"
SMART_4COL = "esxcli-storage-core-device-smart-get/esxi5-6-4col.txt"


def smart_device_list():
    """Two local SATA disks, a USB CD-ROM-like USB disk and a virtual disk:
    only the SATA disks qualify for `smart get`."""
    return keyed([
        device_record(SATA_HDD, vendor="ATA     ", model="ST20000NM007D-3D",
                      display="Local ATA Disk (%s)" % SATA_HDD),
        device_record(SATA_OLD, vendor="ATA     ", model="WDC WD2502ABYS-1",
                      display="Local ATA Disk (%s)" % SATA_OLD),
        device_record("mpx.vmhba32:C0:T0:L0", usb=True, vendor="SanDisk ",
                      model="Ultra Fit       ", display="Local USB Direct-Access (mpx.vmhba32:C0:T0:L0)"),
        fixture("esxcli-storage-core-device-list/esxi90-virtual-disk-hpp.txt"),
    ])


def smart_table(rel, health=None, param=None, column=None, value=None):
    t = fixture(rel)
    if health is not None:
        t = retable(t, "Health Status", "Value", health)
    if param is not None:
        t = retable(t, param, column, value)
    return t
