"""Test PKI made at test time with the `openssl` command: a CA, a server
certificate for localhost/127.0.0.1 signed by it, a second (unrelated) CA,
and a server certificate for another name; two self-signed certificates
as a default Log Insight appliance presents (no CA anyone trusts).  Python
standard library only.

    c = certs.make(dirpath)
    c.ca, c.server_crt, c.server_key, c.other_ca, c.wrong_crt, c.wrong_key
    s = certs.make_self_signed(dirpath)
    s.self1_crt, s.self1_key, s.self2_crt, s.self2_key
    certs.pin(crt)  # "sha256//..." of its public key, as openssl computes it
"""
import os
import subprocess


class Certs:
    pass


def _run(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _ca(d, name, cn):
    _run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", name + ".key", "-out", name + ".crt", "-days", "3",
         "-subj", "/CN=" + cn,
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)


def _leaf(d, name, ca, cn, san):
    _run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn, cwd=d)
    with open(os.path.join(d, name + ".ext"), "w") as f:
        f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\n"
                "keyUsage=digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth,clientAuth\n" % san)
    _run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
         "-CAcreateserial", "-out", name + ".crt", "-days", "3", "-extfile", name + ".ext", cwd=d)


def _self_signed(d, name, cn):
    _run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key",
         "-out", name + ".crt", "-days", "3", "-subj", "/CN=" + cn,
         "-addext", "subjectAltName=DNS:" + cn, cwd=d)


def pin(crt):
    """The SPKI SHA-256 pin of a certificate, computed by openssl itself."""
    pub = subprocess.run(["openssl", "x509", "-in", crt, "-pubkey", "-noout"],
                         check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub,
                         check=True, capture_output=True).stdout
    import base64
    import hashlib
    return "sha256//" + base64.b64encode(hashlib.sha256(der).digest()).decode()


def make(d):
    """Create (once per directory) and return the paths."""
    os.makedirs(d, exist_ok=True)
    c = Certs()
    p = lambda n: os.path.join(d, n)
    c.ca, c.ca_key = p("ca.crt"), p("ca.key")
    c.server_crt, c.server_key = p("server.crt"), p("server.key")
    c.other_ca = p("other-ca.crt")
    c.wrong_crt, c.wrong_key = p("wrong.crt"), p("wrong.key")
    if not os.path.exists(c.wrong_crt):
        _ca(d, "ca", "esxwatch test CA")
        _ca(d, "other-ca", "some other CA")
        _leaf(d, "server", "ca", "localhost", "DNS:localhost,IP:127.0.0.1")
        _leaf(d, "wrong", "ca", "loginsight.example.com", "DNS:loginsight.example.com")
    return c


def make_self_signed(d):
    """Two unrelated self-signed certificates (as two default appliances,
    or one whose certificate was regenerated)."""
    os.makedirs(d, exist_ok=True)
    c = Certs()
    p = lambda n: os.path.join(d, n)
    c.self1_crt, c.self1_key = p("self1.crt"), p("self1.key")
    c.self2_crt, c.self2_key = p("self2.crt"), p("self2.key")
    if not os.path.exists(c.self2_crt):
        _self_signed(d, "self1", "li-appliance.example.com")
        _self_signed(d, "self2", "li-appliance.example.com")
    return c
