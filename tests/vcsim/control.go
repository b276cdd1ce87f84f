package main

// The control endpoint: plain JSON over HTTP on loopback.  Every call is a
// POST of a JSON object to /<name>; the answer is a JSON object, or
// {"error": "..."} with status 400/404.  See README.md for the calls.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
)

type ctlFunc func(w *world, req map[string]interface{}) (interface{}, error)

var controls = map[string]ctlFunc{}

type ctlError struct {
	status int
	msg    string
}

func (e *ctlError) Error() string { return e.msg }

func badRequest(format string, a ...interface{}) error {
	return &ctlError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...interface{}) error {
	return &ctlError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}

func argString(req map[string]interface{}, key string) (string, error) {
	v, ok := req[key]
	if !ok {
		return "", badRequest("missing %q", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", badRequest("%q: not a string", key)
	}
	return s, nil
}

func argOptString(req map[string]interface{}, key, def string) (string, error) {
	if v, ok := req[key]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return "", badRequest("%q: not a string", key)
		}
		return s, nil
	}
	return def, nil
}

func argBool(req map[string]interface{}, key string) (bool, error) {
	v, ok := req[key]
	if !ok {
		return false, badRequest("missing %q", key)
	}
	b, ok := v.(bool)
	if !ok {
		return false, badRequest("%q: not a boolean", key)
	}
	return b, nil
}

func argInt(req map[string]interface{}, key string) (int64, error) {
	v, ok := req[key]
	if !ok {
		return 0, badRequest("missing %q", key)
	}
	f, ok := v.(float64)
	if !ok || f != float64(int64(f)) {
		return 0, badRequest("%q: not an integer", key)
	}
	return int64(f), nil
}

func (w *world) host(req map[string]interface{}) (*hostRef, error) {
	name, err := argString(req, "host")
	if err != nil {
		return nil, err
	}
	h := w.findHost(name)
	if h == nil {
		return nil, notFound("no host %q", name)
	}
	return &hostRef{h}, nil
}

func (w *world) serveControl(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		name := r.URL.Path[1:]
		f, ok := controls[name]
		if !ok {
			writeJSON(rw, http.StatusNotFound, map[string]string{"error": "no control call " + name})
			return
		}
		req := map[string]interface{}{}
		if r.Method == http.MethodPost {
			body, err := readLimited(r.Body, 1<<20)
			if err == nil && len(body) > 0 {
				err = json.Unmarshal(body, &req)
			}
			if err != nil {
				writeJSON(rw, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
		}
		res, err := f(w, req)
		if err != nil {
			status := http.StatusBadRequest
			if ce, ok := err.(*ctlError); ok {
				status = ce.status
			}
			writeJSON(rw, status, map[string]string{"error": err.Error()})
			return
		}
		if res == nil {
			res = map[string]bool{"ok": true}
		}
		writeJSON(rw, http.StatusOK, res)
	})
	go func() { _ = http.Serve(l, mux) }()
	return l.Addr().String(), nil
}

func writeJSON(rw http.ResponseWriter, status int, v interface{}) {
	b, _ := json.Marshal(v)
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_, _ = rw.Write(append(b, '\n'))
}

func init() {
	controls["hosts"] = ctlHosts
	controls["restart"] = ctlRestart
	controls["stats"] = ctlStats
}

// hosts: every host, name and moid, sorted by name.
func ctlHosts(w *world, _ map[string]interface{}) (interface{}, error) {
	type hostInfo struct {
		Name   string   `json:"name"`
		Moid   string   `json:"moid"`
		Parent string   `json:"parent"`
		Pnics  []string `json:"pnics"`
	}
	var out []hostInfo
	for _, h := range w.hosts() {
		hi := hostInfo{Name: h.Name, Moid: h.Self.Value}
		if h.Parent != nil {
			hi.Parent = h.Parent.Type + ":" + h.Parent.Value
		}
		withLock(h, func() {
			if h.Config != nil && h.Config.Network != nil {
				for _, p := range h.Config.Network.Pnic {
					hi.Pnics = append(hi.Pnics, p.Device)
				}
			}
		})
		out = append(out, hi)
	}
	return map[string]interface{}{"hosts": out}, nil
}

// restart: drop every session (as a vCenter restart does).
func ctlRestart(w *world, _ map[string]interface{}) (interface{}, error) {
	n := w.dropSessions()
	return map[string]int{"sessions_dropped": n}, nil
}

// stats: SOAP requests served, per method; {"reset": true} zeroes them.
func ctlStats(w *world, req map[string]interface{}) (interface{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]interface{}{"total": w.total, "methods": copyCounts(w.requests),
		"restarts": w.restarts}
	if r, ok := req["reset"].(bool); ok && r {
		w.requests = map[string]int64{}
		w.total = 0
	}
	return out, nil
}

func copyCounts(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
