package main

// Faults injected at the HTTP layer, for a client's defences: the next
// `count` SOAP calls of a method (or of any method: "*") are answered with
// a crafted response instead of the simulator's.  Kinds:
//   - huge:    a well-formed envelope of size_mb MB (streamed: the
//              simulator holds none of it), one long string in a returnval
//   - deep:    a returnval nested depth levels deep
//   - garbage: bytes that are not XML, status 200
//   - status:  an empty body with HTTP status `status` (e.g. 503)
//   - fault:   a SOAP fault of class `fault` (a vim25 fault, e.g.
//              SystemError), status 500, as vCenter sends it
//   - hang:    no answer for `seconds` (then the simulator's own)
// And a delay: every call (or one method's) waits `ms` first.

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

type injection struct {
	kind    string
	count   int
	sizeMB  int
	depth   int
	status  int
	fault   string
	seconds int
}

var injections struct {
	mu    sync.Mutex
	by    map[string]*injection // method or "*"
	delay map[string]time.Duration
}

func init() {
	injections.by = map[string]*injection{}
	injections.delay = map[string]time.Duration{}
	controls["inject"] = ctlInject
	controls["set_delay"] = ctlSetDelay
}

// take returns the injection for a call of method, if any, and counts it.
func takeInjection(method string) (*injection, time.Duration) {
	injections.mu.Lock()
	defer injections.mu.Unlock()
	d := injections.delay["*"] + injections.delay[method]
	for _, key := range []string{method, "*"} {
		if in := injections.by[key]; in != nil && in.count > 0 {
			in.count--
			c := *in
			if in.count == 0 {
				delete(injections.by, key)
			}
			return &c, d
		}
	}
	return nil, d
}

const envOpen = `<?xml version="1.0" encoding="UTF-8"?>` +
	`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ` +
	`xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
	`<soapenv:Body>`
const envClose = `</soapenv:Body></soapenv:Envelope>`

// serve answers the call as the injection says; false: let the simulator
// answer (after a hang).
func (in *injection) serve(rw http.ResponseWriter, method string) bool {
	switch in.kind {
	case "hang":
		time.Sleep(time.Duration(in.seconds) * time.Second)
		return false
	case "status":
		rw.WriteHeader(in.status)
	case "garbage":
		rw.Header().Set("Content-Type", "text/xml; charset=utf-8")
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write([]byte("\x00\x01<<not xml>> \xff\xfe garbage\n"))
	case "fault":
		rw.Header().Set("Content-Type", "text/xml; charset=utf-8")
		rw.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(rw, `%s<soapenv:Fault><faultcode>ServerFaultCode</faultcode>`+
			`<faultstring>injected %s</faultstring><detail><%sFault xmlns="urn:vim25" xsi:type="%s"></%sFault></detail>`+
			`</soapenv:Fault>%s`, envOpen, in.fault, in.fault, in.fault, in.fault, envClose)
	case "deep":
		rw.Header().Set("Content-Type", "text/xml; charset=utf-8")
		rw.WriteHeader(http.StatusOK)
		w := bufio.NewWriter(rw)
		fmt.Fprintf(w, `%s<%sResponse xmlns="urn:vim25">`, envOpen, method)
		for i := 0; i < in.depth; i++ {
			w.WriteString("<returnval>")
		}
		for i := 0; i < in.depth; i++ {
			w.WriteString("</returnval>")
		}
		fmt.Fprintf(w, `</%sResponse>%s`, method, envClose)
		_ = w.Flush()
	case "huge":
		rw.Header().Set("Content-Type", "text/xml; charset=utf-8")
		rw.WriteHeader(http.StatusOK)
		w := bufio.NewWriter(rw)
		fmt.Fprintf(w, `%s<%sResponse xmlns="urn:vim25"><returnval>`, envOpen, method)
		chunk := strings.Repeat("esxwatch", 1024/8*64) // 64 KiB
		for n := 0; n < in.sizeMB*16; n++ {
			if _, err := w.WriteString(chunk); err != nil {
				return true // the client hung up: what it should do
			}
		}
		fmt.Fprintf(w, `</returnval></%sResponse>%s`, method, envClose)
		_ = w.Flush()
	}
	return true
}

// inject {method, kind, count?, size_mb?, depth?, status?, fault?, seconds?}
func ctlInject(w *world, req map[string]interface{}) (interface{}, error) {
	method, err := argString(req, "method")
	if err != nil {
		return nil, err
	}
	kind, err := argString(req, "kind")
	if err != nil {
		return nil, err
	}
	in := &injection{kind: kind, count: 1}
	opt := func(key string, dst *int, def int) error {
		*dst = def
		if _, ok := req[key]; !ok {
			return nil
		}
		v, err := argInt(req, key)
		if err == nil && v < 0 {
			err = badRequest("%q must be >= 0", key)
		}
		*dst = int(v)
		return err
	}
	for _, o := range []struct {
		key string
		dst *int
		def int
	}{{"count", &in.count, 1}, {"size_mb", &in.sizeMB, 100}, {"depth", &in.depth, 100000},
		{"status", &in.status, 503}, {"seconds", &in.seconds, 30}} {
		if err := opt(o.key, o.dst, o.def); err != nil {
			return nil, err
		}
	}
	if in.fault, err = argOptString(req, "fault", "SystemError"); err != nil {
		return nil, err
	}
	switch kind {
	case "huge", "deep", "garbage", "status", "hang":
	case "fault":
		if newFault(in.fault) == nil {
			return nil, badRequest("fault %q: not a vim25 fault class", in.fault)
		}
	default:
		return nil, badRequest("kind %q: not huge, deep, garbage, status, fault or hang", kind)
	}
	injections.mu.Lock()
	defer injections.mu.Unlock()
	if in.count == 0 {
		delete(injections.by, method)
		return nil, nil
	}
	injections.by[method] = in
	return nil, nil
}

// set_delay {ms, method?}: every SOAP call (or that method's) waits ms
// milliseconds before it is served (0 removes the delay).
func ctlSetDelay(w *world, req map[string]interface{}) (interface{}, error) {
	ms, err := argInt(req, "ms")
	if err != nil {
		return nil, err
	}
	if ms < 0 {
		return nil, badRequest("ms must be >= 0")
	}
	method, err := argOptString(req, "method", "*")
	if err != nil {
		return nil, err
	}
	injections.mu.Lock()
	defer injections.mu.Unlock()
	if ms == 0 {
		delete(injections.delay, method)
	} else {
		injections.delay[method] = time.Duration(ms) * time.Millisecond
	}
	return nil, nil
}
