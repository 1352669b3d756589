package deploy

import "testing"

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
