package main

// The simulated world's state that the simulator lacks or gets wrong, the
// fixes installed into govmomi's registry (simulator.Map.Put of types that
// embed the simulator's own), and the SOAP front handler (request counts,
// the "restart" that drops every session).

import (
	"bytes"
	"encoding/xml"
	"github.com/vmware/govmomi/vim25/soap"
	"log"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
)

type world struct {
	opts   *options
	server *simulator.Server

	// gate: SOAP requests hold it shared; a restart holds it alone while
	// it empties the simulator's session table.
	gate sync.RWMutex

	mu       sync.Mutex
	requests map[string]int64 // SOAP method name -> count
	total    int64
	restarts int

	perf   *perfState
	events *eventState
	vsan   *vsanState
}

func newWorld(o *options) *world {
	return &world{opts: o, requests: map[string]int64{}}
}

// hosts returns every HostSystem, sorted by name.
func (w *world) hosts() []*simulator.HostSystem {
	var hs []*simulator.HostSystem
	for _, obj := range simulator.Map.All("HostSystem") {
		if h, ok := obj.(*simulator.HostSystem); ok {
			hs = append(hs, h)
		}
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
	return hs
}

func (w *world) hostCount() int { return len(simulator.Map.All("HostSystem")) }

// findHost by name ("DC0_C0_H0") or managed object id ("host-21").
func (w *world) findHost(name string) *simulator.HostSystem {
	for _, obj := range simulator.Map.All("HostSystem") {
		h, ok := obj.(*simulator.HostSystem)
		if ok && (h.Name == name || h.Self.Value == name) {
			return h
		}
	}
	return nil
}

func (w *world) install() error {
	if err := w.installStorage(); err != nil {
		return err
	}
	if err := w.installPaging(); err != nil {
		return err
	}
	if err := w.installVsan(); err != nil {
		return err
	}
	if err := w.installPerf(); err != nil {
		return err
	}
	return w.installEvents()
}

// soapMethod peeks at the first element inside soapenv:Body.
func soapMethod(body []byte) string {
	d := xml.NewDecoder(strings.NewReader(string(body)))
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			return "?"
		}
		if se, ok := tok.(xml.StartElement); ok {
			if inBody {
				return se.Name.Local
			}
			inBody = se.Name.Local == "Body"
		}
	}
}

type countingBody struct {
	data []byte
	pos  int
}

func (c *countingBody) Read(p []byte) (int, error) {
	if c.pos >= len(c.data) {
		return 0, ioEOF
	}
	n := copy(p, c.data[c.pos:])
	c.pos += n
	return n, nil
}

func (c *countingBody) Close() error { return nil }

// wrap puts the front handler before the simulator's mux.
func (w *world) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		name := ""
		if r.Method == http.MethodPost && (strings.HasPrefix(r.URL.Path, "/sdk") || r.URL.Path == "/vsanHealth") {
			body, err := readLimited(r.Body, 64<<20)
			_ = r.Body.Close()
			if err != nil {
				http.Error(rw, err.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			name = soapMethod(body)
			w.mu.Lock()
			w.requests[name]++
			w.total++
			w.mu.Unlock()
			r.Body = &countingBody{data: body}
			in, delay := takeInjection(name)
			if delay > 0 {
				time.Sleep(delay)
			}
			if in != nil && in.serve(rw, name) {
				return
			}
		}
		if name != "CreateCollectorForEvents" {
			w.gate.RLock()
			defer w.gate.RUnlock()
			next.ServeHTTP(rw, r)
			return
		}
		// The simulator creates the collector; then, before the client
		// sees its reference, it is swapped for one over the history.
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		w.gate.RLock()
		next.ServeHTTP(rec, r)
		w.gate.RUnlock()
		if ref, ok := collectorRef(rec.body.Bytes()); ok && rec.status == http.StatusOK {
			if c, err := r.Cookie(soap.SessionCookieName); err == nil {
				w.gate.Lock()
				if reg := sessionRegistry(c.Value); reg != nil {
					if err := w.events.replaceCollector(reg, ref); err != nil {
						log.Print(err)
					}
				}
				w.gate.Unlock()
			}
		}
		for k, v := range rec.header {
			rw.Header()[k] = v
		}
		rw.WriteHeader(rec.status)
		_, _ = rw.Write(rec.body.Bytes())
	})
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(status int)      { r.status = status }

// dropSessions empties the simulator's session table, as a vCenter restart
// does: every client's next call gets NotAuthenticated and must Login again.
// The table is an unexported field of simulator.SessionManager; every access
// to it happens inside a SOAP request, which the gate keeps out meanwhile.
func (w *world) dropSessions() int {
	w.gate.Lock()
	defer w.gate.Unlock()
	sm := simulator.Map.SessionManager()
	f := reflect.ValueOf(sm).Elem().FieldByName("sessions")
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	n := f.Len()
	f.Set(reflect.MakeMap(f.Type()))
	w.mu.Lock()
	w.restarts++
	w.mu.Unlock()
	return n
}

// withLock runs f holding the simulator's lock on obj (the one its SOAP
// methods hold), so a control change is never seen half-done.
func withLock(obj mo.Reference, f func()) {
	simulator.Map.WithLock(obj, f)
}
