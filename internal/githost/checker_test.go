package githost

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

func TestRestricted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"10.0.0.1", true},
		{"172.16.5.4", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"169.254.0.1", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"198.18.0.1", true},
		{"::1", true},
		{"::", true},
		{"fe80::1", true},
		{"fc00::1", true},
		{"fd00:ec2::254", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.1.1", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of 169.254.169.254
		{"2002:7f00:1::1", true},     // 6to4 of 127.0.0.1
		{"2002:0808:0808::1", false}, // 6to4 of 8.8.8.8
		{"64:ff9b::808:808", false},  // NAT64 of 8.8.8.8
		{"8.8.8.8", false},
		{"140.82.121.3", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"2606:50c0:8000::153", false},
	}
	for _, tc := range tests {
		if got := Restricted(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Restricted(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

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
