"""VMware's vSphere API simulator for the tests (tests/vcsim/, README there).

    from vcsim import Vcsim
    with Vcsim(workdir, cluster_hosts=3, standalone=1) as sim:
        sim.url, sim.cert, sim.username, sim.password   # for the agent
        sim.set_link("DC0_C0_H0", "vmnic1", up=False)
        sim.post_event("DC0_C0_H0", "esx.problem.storage.apd.start", "...")

Vcsim builds the simulator (tests/vcsim/build.sh, cached), starts it, waits
until it is ready (its ready file, polled) and wraps every control call.
SoapClient is a plain SOAP 1.1 client (urllib, the XML written out here) for
checking the simulated world through the documented API independently of
esxwatch's own client.  Only the Python standard library is used.
"""
import json
import os
import re
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(TOP, "tests", "vcsim", "build.sh")

_binary = None


class VcsimError(Exception):
    """A control call the simulator refused (status, message)."""

    def __init__(self, status, msg):
        super().__init__("vcsim control: %s: %s" % (status, msg))
        self.status = status
        self.msg = msg


def binary():
    """The simulator's binary (built once, cached by build.sh)."""
    global _binary
    if _binary is None:
        out = subprocess.run(["sh", BUILD], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.strip()
        _binary = out.splitlines()[-1]
    return _binary


class Vcsim:
    """One simulator process.  model "vpx" (a vCenter: clusters of
    cluster_hosts hosts plus standalone hosts per datacenter) or "esx" (one
    host's own endpoint).  TLS unless tls=False; the certificate and key are
    written into workdir (vcsim-cert.pem, vcsim-key.pem) and kept across
    restart()."""

    def __init__(self, workdir, model="vpx", dc=1, clusters=1, cluster_hosts=3,
                 standalone=1, datastores=1, username="esxwatch",
                 password="vcsim-Secret-1", tls=True, event_history=1000,
                 extra_args=()):
        self.workdir = workdir
        self.model = model
        self.username = username
        self.password = password
        self.tls = tls
        self.cert = os.path.join(workdir, "vcsim-cert.pem") if tls else None
        self.key = os.path.join(workdir, "vcsim-key.pem") if tls else None
        self.ready_file = os.path.join(workdir, "vcsim-ready.json")
        self.log = os.path.join(workdir, "vcsim.log")
        self.args = ["-model", model, "-dc", str(dc), "-cluster", str(clusters),
                     "-cluster-hosts", str(cluster_hosts), "-standalone", str(standalone),
                     "-ds", str(datastores), "-username", username, "-password", password,
                     "-event-history", str(event_history)] + list(extra_args)
        self.proc = None
        self.listen = "127.0.0.1:0"
        self.control_listen = "127.0.0.1:0"
        self.url = self.control = None
        self.hosts = 0
        self.start_ms = None

    # --- process ---

    def start(self, timeout=60.0):
        os.makedirs(self.workdir, exist_ok=True)
        if os.path.exists(self.ready_file):
            os.unlink(self.ready_file)
        cmd = [binary()] + self.args + ["-listen", self.listen, "-control", self.control_listen,
                                        "-ready-file", self.ready_file]
        if self.tls:
            cmd += ["-cert", self.cert, "-key", self.key]
        else:
            cmd += ["-no-tls"]
        # the datastores' backing directories go under workdir, so even a
        # kill() leaves nothing behind elsewhere
        tmp = os.path.join(self.workdir, "tmp")
        os.makedirs(tmp, exist_ok=True)
        env = dict(os.environ, TMPDIR=tmp)
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=logf, env=env)
        logf.close()
        end = time.time() + timeout
        while not os.path.exists(self.ready_file):
            if self.proc.poll() is not None:
                raise RuntimeError("vcsim exited %d: %s" % (self.proc.returncode, self.log_text()))
            if time.time() > end:
                self.stop()
                raise RuntimeError("vcsim not ready after %.0fs" % timeout)
            time.sleep(0.02)
        with open(self.ready_file) as f:
            ready = json.load(f)
        self.url = ready["url"]
        self.control = ready["control"]
        self.hosts = ready["hosts"]
        self.start_ms = ready["start_ms"]
        # a restart() listens on the same ports
        self.listen = re.match(r"https?://([^/]+)/", self.url).group(1)
        self.control_listen = self.control.split("//", 1)[1]
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, new_cert=False):
        """Stop and start the process again: same address, same certificate
        (new_cert: a new one, as after a certificate replacement), a fresh
        world (every session, collector and posted event gone, as after a
        vCenter reinstall).  drop_sessions() is the lighter restart."""
        self.stop()
        if new_cert and self.tls:
            for f in (self.cert, self.key):
                if os.path.exists(f):
                    os.unlink(f)
        return self.start()

    def kill(self):
        """SIGKILL (an endpoint that vanishes)."""
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # --- control calls ---

    def call(self, name, **args):
        data = json.dumps({k: v for k, v in args.items() if v is not None}).encode()
        req = urllib.request.Request(self.control + "/" + name, data=data,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            body = e.read()
            try:
                msg = json.loads(body)["error"]
            except (ValueError, KeyError):
                msg = body.decode(errors="replace")
            raise VcsimError(e.code, msg) from None

    def host_list(self):
        """[{name, moid, parent, pnics}], sorted by name."""
        return self.call("hosts")["hosts"]

    def datastores(self):
        """[{name, moid, lun, mounts: [{host, accessible, inaccessible_reason}]}]"""
        return self.call("datastores")["datastores"]

    def set_link(self, host, pnic, up, speed_mb=None, duplex=None):
        return self.call("set_link", host=host, pnic=pnic, up=up, speed_mb=speed_mb, duplex=duplex)

    def set_datastore(self, host, datastore, accessible, reason=None):
        """reason: AllPathsDown_Start, AllPathsDown_Timeout, PermanentDeviceLoss"""
        return self.call("set_datastore", host=host, datastore=datastore,
                         accessible=accessible, reason=reason)

    def set_lun(self, host, lun, state):
        """lun: canonical name or a datastore name (its extent's LUN);
        state: a ScsiLunState (ok, off, error, lostCommunication, ...)"""
        return self.call("set_lun", host=host, lun=lun, state=state)

    def set_path(self, host, path, state):
        """path: "vmhba64:C0:T0:L0"; state: active, standby, disabled, dead, unknown"""
        return self.call("set_path", host=host, path=path, state=state)

    def set_connection(self, host, state):
        """state: connected, notResponding, disconnected"""
        return self.call("set_connection", host=host, state=state)

    def set_maintenance(self, host, on):
        return self.call("set_maintenance", host=host, on=on)

    def post_event(self, host, event_type_id=None, message="", type="EventEx",
                   severity=None, arguments=None):
        """An EventEx (event_type_id) or another vim25 event class (type) for
        host.  Returns the event's key."""
        return self.call("post_event", host=host, event_type_id=event_type_id, message=message,
                         type=type, severity=severity, arguments=arguments)["key"]

    def set_counter(self, host, pnic, counter, value):
        """counter: net.errorsRx, net.errorsTx, net.droppedRx, net.droppedTx"""
        return self.call("set_counter", host=host, pnic=pnic, counter=counter, value=value)

    def counters(self):
        """{"counters": {"net.errorsRx": key, ...}, "interval": 20}"""
        return self.call("counters")

    def events(self):
        """{count, oldest_key, newest_key, rolled_over, collectors}"""
        return self.call("events")

    def vsan_disks(self, host):
        """{canonical name: state} of the disks QueryDisksForVsan lists"""
        return self.call("vsan_disks", host=host)["disks"]

    def set_vsan_disk(self, host, disk, state, fault=None, message=None):
        """state: eligible, ineligible (fault: a vim25 fault class, default
        DiskHasPartitions), inUse"""
        return self.call("set_vsan_disk", host=host, disk=disk, state=state, fault=fault, message=message)

    def set_smart(self, host, disk, parameter=None, value=None, threshold=None, worst=None, error=None):
        """a VsanSmartParameterType's value (or error: the disk's SMART
        query fails with that reason) in the vSAN health service"""
        return self.call("set_smart", host=host, disk=disk, parameter=parameter, value=value,
                         threshold=threshold, worst=worst, error=error)

    def inject(self, method, kind, count=1, size_mb=None, depth=None, status=None, fault=None,
               seconds=None):
        """The next count calls of method ("*": any) answered with: huge
        (size_mb MB), deep (depth nested returnvals), garbage, status (HTTP
        status), fault (a vim25 fault class, default SystemError), hang
        (seconds, then the real answer).  count=0 removes it."""
        return self.call("inject", method=method, kind=kind, count=count, size_mb=size_mb, depth=depth,
                         status=status, fault=fault, seconds=seconds)

    def set_delay(self, ms, method=None):
        """every SOAP call (or method's) waits ms first; 0 removes it"""
        return self.call("set_delay", ms=ms, method=method)

    def drop_sessions(self):
        """vCenter restarted: every session gone (NotAuthenticated next)."""
        return self.call("restart")["sessions_dropped"]

    def stats(self, reset=False):
        """SOAP requests served: {total, methods: {name: n}, restarts}"""
        return self.call("stats", reset=reset)

    def ssl_context(self):
        return ssl.create_default_context(cafile=self.cert) if self.tls else None


# --- a plain SOAP client (the documented vim25 calls, written out) ---

SOAPENV = "http://schemas.xmlsoap.org/soap/envelope/"
VIM = "urn:vim25"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
NS = {"s": SOAPENV, "v": VIM, "xsi": XSI}


class SoapFault(Exception):
    def __init__(self, fault_type, text):
        super().__init__("%s: %s" % (fault_type, text))
        self.type = fault_type
        self.text = text


def moref(kind, value, tag="_this"):
    return '<%s type="%s">%s</%s>' % (tag, escape(kind), escape(value), tag)


class SoapClient:
    """vim25 over SOAP 1.1 with urllib: a session cookie, nothing else."""

    def __init__(self, url, ssl_context=None):
        self.url = url
        self.ctx = ssl_context
        self.cookie = None
        self.requests = 0
        self.sc = None

    def call(self, method, inner, url=None, ns="urn:vim25"):
        body = ('<?xml version="1.0" encoding="UTF-8"?>'
                '<soapenv:Envelope xmlns:soapenv="%s" xmlns:xsi="%s"><soapenv:Body>'
                '<%s xmlns="%s">%s</%s></soapenv:Body></soapenv:Envelope>'
                % (SOAPENV, XSI, method, ns, inner, method)).encode()
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": "urn:vim25/7.0"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        req = urllib.request.Request(url or self.url, data=body, headers=headers)
        self.requests += 1
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=60) as r:
                data = r.read()
                sc = r.headers.get("Set-Cookie")
        except urllib.error.HTTPError as e:
            data = e.read()
            sc = None
        if sc:
            self.cookie = sc.split(";", 1)[0]
        root = ET.fromstring(data)
        fault = root.find("s:Body/s:Fault", NS)
        if fault is not None:
            detail = fault.find("detail")
            kind = "?"
            if detail is not None and len(detail):
                kind = detail[0].get("{%s}type" % XSI) or detail[0].tag.split("}")[-1]
            raise SoapFault(kind, fault.findtext("faultstring") or "")
        return root.find("s:Body", NS)[0]

    def retrieve_service_content(self):
        r = self.call("RetrieveServiceContent", moref("ServiceInstance", "ServiceInstance"))
        rv = r.find("v:returnval", NS)
        self.sc = {c.tag.split("}")[-1]: c.text for c in rv if c.get("type")}
        self.sc_types = {c.tag.split("}")[-1]: c.get("type") for c in rv if c.get("type")}
        return rv

    def ref(self, name):
        return self.sc_types[name], self.sc[name]

    def login(self, user, password):
        if self.sc is None:
            self.retrieve_service_content()
        self.call("Login", moref(*self.ref("sessionManager"))
                  + "<userName>%s</userName><password>%s</password>" % (escape(user), escape(password)))

    def logout(self):
        self.call("Logout", moref(*self.ref("sessionManager")))

    def container_view(self, kind="HostSystem"):
        r = self.call("CreateContainerView", moref(*self.ref("viewManager"))
                      + moref("Folder", self.sc["rootFolder"], "container")
                      + "<type>%s</type><recursive>true</recursive>" % kind)
        return r.findtext("v:returnval", namespaces=NS)

    def retrieve(self, kind, paths, view=None, objs=None, max_objects=None):
        """RetrievePropertiesEx (+ ContinueRetrievePropertiesEx) of paths of
        every kind object in a ContainerView (or the given [(type, moid)]).
        Returns {moid: {path: element or None}}."""
        pc = moref(*self.ref("propertyCollector"))
        prop = "<propSet><type>%s</type>%s</propSet>" % (
            kind, "".join("<pathSet>%s</pathSet>" % p for p in paths))
        if objs is None:
            objset = ('<objectSet><obj type="ContainerView">%s</obj><skip>true</skip>'
                      '<selectSet xsi:type="TraversalSpec"><name>view</name><type>ContainerView</type>'
                      '<path>view</path><skip>false</skip></selectSet></objectSet>' % escape(view))
        else:
            objset = "".join('<objectSet><obj type="%s">%s</obj></objectSet>' % (t, escape(v))
                             for t, v in objs)
        opts = "<options>%s</options>" % (
            "<maxObjects>%d</maxObjects>" % max_objects if max_objects else "")
        r = self.call("RetrievePropertiesEx", pc + "<specSet>%s%s</specSet>%s" % (prop, objset, opts))
        out = {}
        while True:
            rv = r.find("v:returnval", NS)
            if rv is None:
                break
            for oc in rv.findall("v:objects", NS):
                moid = oc.findtext("v:obj", namespaces=NS)
                d = out.setdefault(moid, {})
                for ps in oc.findall("v:propSet", NS):
                    d[ps.findtext("v:name", namespaces=NS)] = ps.find("v:val", NS)
            token = rv.findtext("v:token", namespaces=NS)
            if not token:
                break
            r = self.call("ContinueRetrievePropertiesEx", pc + "<token>%s</token>" % escape(token))
        return out

    def create_filter(self, kind, paths, view):
        """CreateFilter on the session's PropertyCollector: paths of every
        kind object of a ContainerView."""
        spec = ("<spec><propSet><type>%s</type>%s</propSet>"
                '<objectSet><obj type="ContainerView">%s</obj><skip>true</skip>'
                '<selectSet xsi:type="TraversalSpec"><name>view</name><type>ContainerView</type>'
                "<path>view</path><skip>false</skip></selectSet></objectSet></spec>"
                "<partialUpdates>false</partialUpdates>") % (
                    kind, "".join("<pathSet>%s</pathSet>" % p for p in paths), escape(view))
        r = self.call("CreateFilter", moref(*self.ref("propertyCollector")) + spec)
        return r.findtext("v:returnval", namespaces=NS)

    def wait_for_updates(self, version="", max_wait=5, max_updates=None):
        """WaitForUpdatesEx -> (new version, [(moid, [(name, op, val)])]);
        self.truncated: the answer's UpdateSet.truncated"""
        r = self.call("WaitForUpdatesEx", moref(*self.ref("propertyCollector"))
                      + "<version>%s</version><options><maxWaitSeconds>%d</maxWaitSeconds>%s</options>"
                      % (escape(version), max_wait, "" if max_updates is None else
                         "<maxObjectUpdates>%d</maxObjectUpdates>" % max_updates))
        rv = r.find("v:returnval", NS)
        self.truncated = rv is not None and rv.findtext("v:truncated", namespaces=NS) == "true"
        if rv is None:
            return version, []
        out = []
        for fs in rv.findall("v:filterSet", NS):
            for ou in fs.findall("v:objectSet", NS):
                out.append((ou.findtext("v:obj", namespaces=NS),
                            [(c.findtext("v:name", namespaces=NS), c.findtext("v:op", namespaces=NS),
                              c.find("v:val", NS)) for c in ou.findall("v:changeSet", NS)]))
        return rv.findtext("v:version", namespaces=NS), out

    def query_disks_for_vsan(self, vsan_system, names=()):
        """HostVsanSystem.QueryDisksForVsan -> [(canonical, state, fault type, message)]"""
        r = self.call("QueryDisksForVsan", moref("HostVsanSystem", vsan_system)
                      + "".join("<canonicalName>%s</canonicalName>" % escape(n) for n in names))
        out = []
        for x in r.findall("v:returnval", NS):
            err = x.find("v:error", NS)
            out.append((x.findtext("v:disk/v:canonicalName", namespaces=NS), x.findtext("v:state", namespaces=NS),
                        None if err is None else err.find("v:fault", NS).get("{%s}type" % XSI),
                        None if err is None else err.findtext("v:localizedMessage", namespaces=NS)))
        return out

    def smart_summary(self, cluster):
        """vSAN health: VsanQueryVcClusterSmartStatsSummary on /vsanHealth ->
        {hostname: {disk: {parameter: (value, threshold, worst)} or error}}"""
        url = self.url.rsplit("/", 1)[0] + "/vsanHealth"
        r = self.call("VsanQueryVcClusterSmartStatsSummary",
                      moref("VsanVcClusterHealthSystem", "vsan-cluster-health-system")
                      + '<cluster type="ClusterComputeResource">%s</cluster>' % escape(cluster),
                      url=url, ns="urn:vsan")
        vs = {"v": "urn:vsan"}
        out = {}

        def num(el, tag):
            t = el.findtext("v:" + tag, namespaces=vs)
            return None if t is None else int(t)
        for h in r.findall("v:returnval", vs):
            disks = out.setdefault(h.findtext("v:hostname", namespaces=vs), {})
            for d in h.findall("v:smartStats", vs):
                err = d.find("v:error", vs)
                if err is not None:
                    disks[d.findtext("v:disk", namespaces=vs)] = ("error", err.get("{%s}type" % XSI))
                    continue
                disks[d.findtext("v:disk", namespaces=vs)] = {
                    p.findtext("v:parameter", namespaces=vs): (num(p, "value"), num(p, "threshold"), num(p, "worst"))
                    for p in d.findall("v:stats", vs)}
        return out

    def query_perf(self, specs):
        """specs: [(host moid, [(counterId, instance)], maxSample)] ->
        {host moid: {(counterId, instance): [values]}, "_samples": {...}}"""
        xml = ""
        for moid, metrics, max_sample in specs:
            xml += '<querySpec><entity type="HostSystem">%s</entity>' % escape(moid)
            if max_sample:
                xml += "<maxSample>%d</maxSample>" % max_sample
            for cid, inst in metrics:
                xml += "<metricId><counterId>%d</counterId><instance>%s</instance></metricId>" % (
                    cid, escape(inst))
            xml += "<intervalId>20</intervalId></querySpec>"
        r = self.call("QueryPerf", moref(*self.ref("perfManager")) + xml)
        out = {}
        for em in r.findall("v:returnval", NS):
            moid = em.findtext("v:entity", namespaces=NS)
            d = out.setdefault(moid, {})
            d["_samples"] = [(s.findtext("v:timestamp", namespaces=NS),
                              int(s.findtext("v:interval", namespaces=NS)))
                             for s in em.findall("v:sampleInfo", NS)]
            for v in em.findall("v:value", NS):
                key = (int(v.findtext("v:id/v:counterId", namespaces=NS)),
                       v.findtext("v:id/v:instance", default="", namespaces=NS))
                d[key] = [int(x.text) for x in v.findall("v:value", NS)]
        return out

    def query_perf_counter(self, ids):
        r = self.call("QueryPerfCounter", moref(*self.ref("perfManager"))
                      + "".join("<counterId>%d</counterId>" % i for i in ids))
        out = {}
        for c in r.findall("v:returnval", NS):
            out[int(c.findtext("v:key", namespaces=NS))] = (
                c.findtext("v:groupInfo/v:key", namespaces=NS) + "."
                + c.findtext("v:nameInfo/v:key", namespaces=NS),
                c.findtext("v:rollupType", namespaces=NS))
        return out

    def create_event_collector(self, entity=None, recursion="all", type_ids=(), page=None,
                               begin=None):
        f = ""
        if entity:
            f += '<entity><entity type="%s">%s</entity><recursion>%s</recursion></entity>' % (
                entity[0], escape(entity[1]), recursion)
        if begin:
            f += "<time><beginTime>%s</beginTime></time>" % begin
        f += "".join("<eventTypeId>%s</eventTypeId>" % escape(t) for t in type_ids)
        if page:
            f += "<maxCount>%d</maxCount>" % page
        r = self.call("CreateCollectorForEvents", moref(*self.ref("eventManager"))
                      + "<filter>%s</filter>" % f)
        return r.findtext("v:returnval", namespaces=NS)

    def read_next_events(self, collector, max_count=100):
        """[{key, type, eventTypeId, host, message, created}] oldest first"""
        r = self.call("ReadNextEvents", moref("EventHistoryCollector", collector)
                      + "<maxCount>%d</maxCount>" % max_count)
        return [parse_event(e) for e in r.findall("v:returnval", NS)]

    def destroy_collector(self, collector):
        self.call("DestroyCollector", moref("EventHistoryCollector", collector))


def parse_event(e):
    return {
        "key": int(e.findtext("v:key", namespaces=NS)),
        "type": e.get("{%s}type" % XSI),
        "eventTypeId": e.findtext("v:eventTypeId", namespaces=NS),
        "host": e.findtext("v:host/v:host", namespaces=NS),
        "hostName": e.findtext("v:host/v:name", namespaces=NS),
        "message": e.findtext("v:fullFormattedMessage", namespaces=NS),
        "severity": e.findtext("v:severity", namespaces=NS),
        "created": e.findtext("v:createdTime", namespaces=NS),
        "arguments": {a.findtext("v:key", namespaces=NS): a.findtext("v:value", namespaces=NS)
                      for a in e.findall("v:arguments", NS)},
    }
