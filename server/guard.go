package server

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/codeport/codeport/contract"
)

// hostPolicy is what WithAllowedHosts configured.
type hostPolicy struct {
	// explicit: WithAllowedHosts was given, so every request is checked;
	// otherwise only unauthenticated requests on a loopback address are.
	explicit bool
	// any: "*" was among the names; nothing is checked.
	any bool
	// names are accepted besides the loopback names, as hostName returns
	// them.
	names []string
}

// checkOrigin refuses a request that a web page could have made against the
// deployment's will: one naming a host the server does not answer to (DNS
// rebinding), or one a browser sent from another origin. It returns nil
// when the request may go on. /healthz is never refused: probes send
// whatever Host they like, and it tells nothing.
func (s *server) checkOrigin(r *http.Request) error {
	if r.URL.Path == "/healthz" || !s.guarded(r) {
		return nil
	}
	if !s.hostAllowed(r.Host) {
		return refuse(contract.CodeHostNotAllowed, "host "+quoteShort(r.Host)+" is not allowed")
	}
	// A browser sends Origin with every POST and every fetch() it makes
	// for a page, cross-origin or not (only plain GETs of images and the
	// like go without, and GETs change nothing here); no contract v1 client
	// is a page of this server's own origin, so only a same-origin Origin
	// is let through. Without this, a page on a loopback origin (another
	// local web server's) could still make the requests a browser sends
	// without a preflight: POST /sessions with no body, or a multipart
	// upload.
	for _, o := range r.Header.Values("Origin") {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return refuse(contract.CodeHostNotAllowed, "cross-origin request from "+quoteShort(o)+" refused")
		}
	}
	return nil
}

// guarded reports whether the request is subject to the host check.
func (s *server) guarded(r *http.Request) bool {
	p := s.cfg.hosts
	switch {
	case p.any:
		return false
	case p.explicit:
		return true
	case s.cfg.token != "" || s.cfg.tenants != nil:
		// A browser cannot attach the bearer token (or a tenant's key) to
		// a request it makes on a page's behalf, so the credential already
		// stops what the check would.
		return false
	}
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return isLoopback(addr)
}

func (s *server) hostAllowed(host string) bool {
	name := hostName(host)
	if name == "" {
		return false
	}
	if name == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	return slices.Contains(s.cfg.hosts.names, name)
}

// hostName is the host of a Host header or of a configured name, without
// port, brackets or trailing dot, in lower case; "" when there is none.
func hostName(h string) string {
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

func isLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case nil:
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// quoteShort quotes a client-supplied value for a detail, shortened.
func quoteShort(s string) string {
	const limit = 64
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return `"` + strings.ReplaceAll(strings.ToValidUTF8(s, "?"), `"`, `\"`) + `"`
}

// requireJSON refuses a body that is not declared as JSON. A request with
// neither a body nor a Content-Type passes, for the decoder to judge: POST
// /sessions takes an empty body (clients send none, and curl -XPOST sends
// no Content-Type), and exec is better told that its body is missing.
//
// JSON's own media type is required, not merely JSON bytes: text/plain,
// application/x-www-form-urlencoded and multipart/form-data are the types
// a browser sends across origins without asking the server first, so
// refusing them is what keeps a web page from running code on an
// unauthenticated server it can reach.
func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	if isJSONMediaType(ct) {
		return nil
	}
	if ct == "" {
		return refuse(contract.CodeUnsupportedMediaType, "request body must be application/json; the request has no Content-Type")
	}
	return refuse(contract.CodeUnsupportedMediaType, "request body must be application/json, not "+quoteShort(ct))
}

// isJSONMediaType reports whether ct is application/json, with parameters
// if any; a charset must be UTF-8, the only one JSON allows.
func isJSONMediaType(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// errReadTimeout answers a body that did not arrive before the read
// deadline (http.Server.ReadTimeout) passed.
var errReadTimeout = refuse(contract.CodeRequestTimeout, "the request body did not arrive within the server's read timeout")
