package deploy

import (
	"testing"

	"github.com/gantryhq/gantry/internal/runtime"
)

func TestErrorLine(t *testing.T) {
	for line, want := range map[string]bool{
		"Error: listen EADDRINUSE":                              true,
		"KeyError: 'DATABASE_URL'":                              true,
		"Traceback (most recent call last):":                    true,
		"    at Server.<anonymous> (/workspace/server.js:12:9)": true,
		"npm ERR! code ELIFECYCLE":                              true,
		"UnhandledPromiseRejectionWarning: boom":                false,
		"FATAL ERROR: heap limit":                               true,
		"127.0.0.1 - - \"GET / HTTP/1.1\" 200 -":                false,
		"Listening on port 3000":                                false,
		"warning: deprecated API":                               false,
		"0 errors":                                              false,
		"terrorism is not a word this app logs":                 false,
	} {
		if got := errorLine.MatchString(line); got != want {
			t.Errorf("%q: got %v, want %v", line, got, want)
		}
	}
}

// An app that did not start is diagnosed from its last lines, whose seqs
// the diagnosis names; the port it was given is the runtime line's.
func TestStartDiagnosis(t *testing.T) {
	se := &runtime.StartError{Message: "App did not answer on port 3000 within 60s: make sure it listens on the PORT environment variable"}
	d := startDiagnosis(se, []string{"connecting…", "Server listening on port 8080"}, []int64{11, 12})
	if d == nil || d.Title != "The app listens on port 8080, not on the PORT it was given (3000)" || len(d.Lines) != 1 || d.Lines[0] != 12 {
		t.Fatalf("got %+v", d)
	}
	d = startDiagnosis(&runtime.StartError{Message: "App exited with code 1 during start-up"}, []string{"Error: boom"}, []int64{7})
	if d == nil || d.Title != "The app stopped right after it started" || len(d.Lines) != 1 || d.Lines[0] != 7 {
		t.Fatalf("got %+v", d)
	}
}
