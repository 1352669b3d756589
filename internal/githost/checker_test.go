package githost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestCheckerAllowed(t *testing.T) {
	t.Parallel()
	c := NewChecker("127.0.0.1", "Git.Campus.EDU", "[::1]:3000", "10.20.0.0/16", " ", "localhost:8080")
	tests := []struct {
		host, port string
		want       bool
	}{
		{"127.0.0.1", "80", true},
		{"127.0.0.1", "43123", true},
		{"::ffff:127.0.0.1", "80", true},
		{"git.campus.edu", "443", true},
		{"GIT.campus.edu.", "443", true},
		{"::1", "3000", true},
		{"[::1]", "3000", true},
		{"::1", "3001", false},
		{"10.20.3.4", "80", true},
		{"10.21.3.4", "80", false},
		{"localhost", "8080", true},
		{"localhost", "80", false},
		{"127.0.0.2", "80", false},
		{"other.campus.edu", "443", false},
	}
	for _, tc := range tests {
		if got := c.Allowed(tc.host, tc.port); got != tc.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
}

func TestCheckerCheck(t *testing.T) {
	t.Parallel()
	c := NewChecker("127.0.0.1")
	ctx := context.Background()
	tests := []struct {
		host, msg string
	}{
		{"localhost", "Host not allowed: localhost resolves to a private address"},
		{"app.localhost", "Host not allowed: app.localhost resolves to a private address"},
		{"10.0.0.1", "Host not allowed: 10.0.0.1 resolves to a private address"},
		{"169.254.169.254", "Host not allowed: 169.254.169.254 resolves to a private address"},
		{"::1", "Host not allowed: ::1 resolves to a private address"},
		{"100.100.100.200", "Host not allowed: 100.100.100.200 resolves to a private address"}, // Alibaba metadata
		{"169.254.0.23", "Host not allowed: 169.254.0.23 resolves to a private address"},       // Tencent metadata
		{"192.0.2.1", "Host not allowed: 192.0.2.1 resolves to a private address"},             // documentation
		{"64:ff9b::a00:1", "Host not allowed: 64:ff9b::a00:1 resolves to a private address"},   // NAT64 of 10.0.0.1
		{"fd00::10", "Host not allowed: fd00::10 resolves to a private address"},
		{"no-such-host.invalid", "Could not resolve host: no-such-host.invalid"},
	}
	for _, tc := range tests {
		_, err := c.Check(ctx, tc.host, "80")
		if got := gantry.ErrorMessage(err); got != tc.msg {
			t.Errorf("Check(%q): got %q, want %q", tc.host, got, tc.msg)
		}
	}
	if addrs, err := c.Check(ctx, "127.0.0.1", "80"); err != nil || addrs != nil {
		t.Errorf("Check(allowed 127.0.0.1) = %v, %v; want nil, nil", addrs, err)
	}
	if addrs, err := c.Check(ctx, "8.8.8.8", "443"); err != nil || len(addrs) != 1 {
		t.Errorf("Check(8.8.8.8) = %v, %v; want the address", addrs, err)
	}
}

// TestCheckerHTTPClient proves the dial hook: a host name that resolves to
// loopback is refused although 127.0.0.1 itself is allowed, directly and
// after a redirect from an allowed server.
func TestCheckerHTTPClient(t *testing.T) {
	t.Parallel()
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secret")
	}))
	defer private.Close()
	port := private.URL[strings.LastIndex(private.URL, ":")+1:]
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer redirector.Close()

	client := NewChecker("127.0.0.1").HTTPClient(0)
	tests := []struct {
		url, msg string
	}{
		{"http://localhost:" + port + "/", "Host not allowed: localhost resolves to a private address"},
		{redirector.URL + "/to-localhost", "Host not allowed: localhost resolves to a private address"},
		{redirector.URL + "/to-metadata", "Host not allowed: 169.254.169.254 resolves to a private address"},
		{redirector.URL + "/to-file", msgOnlyHTTP},
		{redirector.URL + "/to-self", ""},
		{private.URL + "/", ""},
	}
	for _, tc := range tests {
		resp, err := client.Get(tc.url)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("GET %s: %v", tc.url, err)
				continue
			}
			resp.Body.Close()
			continue
		}
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: got status %d, want error %q", tc.url, resp.StatusCode, tc.msg)
			continue
		}
		if got := gantry.ErrorMessage(err); got != tc.msg {
			t.Errorf("GET %s: got %q (%v), want %q", tc.url, got, err, tc.msg)
		}
	}
}
