// esxwatch-vcsim: VMware's vSphere API simulator (govmomi's simulator
// package, Debian's golang-github-vmware-govmomi-dev) with the fixes and the
// control endpoint esxwatch's tests need.  See README.md next to this file.
//
// Build: tests/vcsim/build.sh (prints the cached binary's path).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
)

type options struct {
	model        string
	dc           int
	clusters     int
	clusterHst   int
	standalone   int
	datastores   int
	vms          int
	listen       string
	control      string
	noTLS        bool
	certFile     string
	keyFile      string
	username     string
	password     string
	readyFile    string
	eventHistory int
	retrievePage int
	trace        bool
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.model, "model", "vpx", "vpx (a vCenter) or esx (one host's own endpoint, hostd)")
	flag.IntVar(&o.dc, "dc", 1, "vpx: datacenters")
	flag.IntVar(&o.clusters, "cluster", 1, "vpx: clusters per datacenter")
	flag.IntVar(&o.clusterHst, "cluster-hosts", 3, "vpx: hosts per cluster")
	flag.IntVar(&o.standalone, "standalone", 1, "vpx: standalone hosts per datacenter")
	flag.IntVar(&o.datastores, "ds", 1, "local datastores, each mounted on every host of its datacenter")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:0", "SOAP listen address")
	flag.StringVar(&o.control, "control", "127.0.0.1:0", "control endpoint listen address (plain HTTP, loopback)")
	flag.BoolVar(&o.noTLS, "no-tls", false, "serve plain http (default: https)")
	flag.StringVar(&o.certFile, "cert", "", "TLS certificate PEM: loaded if it exists (with -key), else generated and written here")
	flag.StringVar(&o.keyFile, "key", "", "TLS private key PEM (0600), as -cert")
	flag.StringVar(&o.username, "username", "user", "the one valid user name")
	flag.StringVar(&o.password, "password", "pass", "its password")
	flag.StringVar(&o.readyFile, "ready-file", "", "also write the ready JSON line to this file")
	flag.IntVar(&o.eventHistory, "event-history", 1000, "events kept in the history (older ones roll over, as vCenter's do)")
	flag.IntVar(&o.retrievePage, "retrieve-page", 100, "RetrievePropertiesEx objects per page when maxObjects is unset or larger (0: no limit)")
	flag.BoolVar(&o.trace, "trace", false, "log SOAP traffic to stderr")
	flag.Parse()
	return o
}

// newCert makes a self-signed ECDSA P-256 certificate for localhost and
// 127.0.0.1, as a vCenter's own (VMCA-less) certificate would be.
func newCert() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"esxwatch vcsim"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	return certPEM, keyPEM, nil
}

// loadOrMakeCert: an existing -cert/-key pair is reused (a restarted
// simulator keeps its certificate, as a restarted vCenter does); otherwise a
// new one is generated and written there.
func loadOrMakeCert(o *options) (tls.Certificate, error) {
	if o.certFile != "" && o.keyFile != "" {
		if _, err := os.Stat(o.certFile); err == nil {
			return tls.LoadX509KeyPair(o.certFile, o.keyFile)
		}
	}
	c, k, err := newCert()
	if err != nil {
		return tls.Certificate{}, err
	}
	if o.certFile != "" {
		if err := os.WriteFile(o.certFile, c, 0o644); err != nil {
			return tls.Certificate{}, err
		}
	}
	if o.keyFile != "" {
		if err := os.WriteFile(o.keyFile, k, 0o600); err != nil {
			return tls.Certificate{}, err
		}
	}
	return tls.X509KeyPair(c, k)
}

func buildModel(o *options) (*simulator.Model, error) {
	var m *simulator.Model
	switch o.model {
	case "vpx":
		m = simulator.VPX()
		m.Datacenter = o.dc
		m.Cluster = o.clusters
		m.ClusterHost = 0 // populate() adds hosts and datastores
		m.Host = 0
		m.Datastore = 0
		m.Portgroup = 0
	case "esx":
		m = simulator.ESX()
	default:
		return nil, fmt.Errorf("-model: %q is neither vpx nor esx", o.model)
	}
	if o.model == "esx" {
		m.Datastore = o.datastores
	}
	m.Machine = 0
	m.Autostart = false
	return m, nil
}

// ready is the one JSON line printed on stdout once both listeners serve.
type ready struct {
	URL      string `json:"url"`
	Control  string `json:"control"`
	Cert     string `json:"cert,omitempty"`
	Username string `json:"username"`
	Model    string `json:"model"`
	Hosts    int    `json:"hosts"`
	StartMs  int64  `json:"start_ms"`
}

func run() error {
	t0 := time.Now()
	o := parseFlags()
	log.SetPrefix("vcsim: ")
	simulator.Trace = o.trace
	m, err := buildModel(o)
	if err != nil {
		return err
	}
	if err := m.Create(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	defer m.Remove()
	log.Printf("model created in %v", time.Since(t0))
	if o.model == "vpx" {
		if p := os.Getenv("VCSIM_CPUPROFILE"); p != "" {
			f, err := os.Create(p)
			if err == nil {
				_ = pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		dirs, err := populate(o)
		log.Printf("hosts and datastores added in %v", time.Since(t0))
		defer func() {
			for _, d := range dirs {
				_ = os.RemoveAll(d)
			}
		}()
		if err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	w := newWorld(o)
	if err := w.install(); err != nil {
		return fmt.Errorf("fixes: %w", err)
	}
	log.Printf("fixes installed in %v", time.Since(t0))

	m.Service.Listen = &url.URL{Host: o.listen, User: url.UserPassword(o.username, o.password)}
	if !o.noTLS {
		cert, err := loadOrMakeCert(o)
		if err != nil {
			return fmt.Errorf("certificate: %w", err)
		}
		m.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	if o.model == "vpx" {
		m.Service.RegisterSDK(w.vsanRegistry())
	}
	srv := m.Service.NewServer()
	defer srv.Close()
	w.server = srv
	// The front handler (request counts, restart's gate), set before the
	// URL is announced, so before any client connects.
	srv.Config.Handler = w.wrap(srv.Config.Handler)

	ctl, err := w.serveControl(o.control)
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}

	u := *srv.URL
	u.User = nil
	r := ready{URL: u.String(), Control: "http://" + ctl, Cert: o.certFile,
		Username: o.username, Model: o.model, Hosts: w.hostCount(),
		StartMs: time.Since(t0).Milliseconds()}
	line, _ := json.Marshal(r)
	if o.readyFile != "" {
		tmp := o.readyFile + ".tmp"
		if err := os.WriteFile(tmp, append(line, '\n'), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, o.readyFile); err != nil {
			return err
		}
	}
	fmt.Println(string(line))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}

func main() {
	if err := run(); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "vcsim:", err)
		}
		os.Exit(1)
	}
}
