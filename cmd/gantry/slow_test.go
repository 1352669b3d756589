package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/deadline/deadlinetest"
)

// TestServeSlowClients runs `gantry serve` with one-second body, upload
// and idle timeouts: a trickled API body is answered 408 and cut off, a
// trickled body for a live host is cut off by the edge's loops, and idle
// keep-alive connections are closed.
func TestServeSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	s := startServer(t, map[string]string{
		"GANTRY_DATA_DIR": reachableDir(t), "GANTRY_PASSWORD_COST": "1",
		"GANTRY_BODY_TIMEOUT": "1s", "GANTRY_UPLOAD_TIMEOUT": "1s", "GANTRY_IDLE_TIMEOUT": "1s",
	})
	addr := strings.TrimPrefix(s.base, "http://")

	d, got := deadlinetest.Trickle(t, addr, "POST", "localhost:8080", "/api/auth/login")
	if d > 2500*time.Millisecond || !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Errorf("API: connection held %v, answered %.100q; want 408 after about 1 s (the body would take 20 s)", d, got)
	}
	if d, _ := deadlinetest.Trickle(t, addr, "POST", "blog.localhost:8080", "/upload"); d > 3500*time.Millisecond {
		t.Errorf("live host: connection held %v, want closed after about 1-2 s", d)
	}
	for _, host := range []string{"localhost:8080", "blog.localhost:8080"} {
		status, idle := deadlinetest.Idle(t, addr, host, "/api/health")
		if status == 0 || idle < 900*time.Millisecond || idle > 3*time.Second {
			t.Errorf("%s: idle connection closed after %v, want about 1 s", host, idle)
		}
	}
	if s.call(t, "POST", "/api/auth/register", "", `{"username":"ada","email":"ada@example.com","password":"secret123","fullName":"Ada"}`, nil) != 201 {
		t.Error("register with the body sent at once failed")
	}
}
