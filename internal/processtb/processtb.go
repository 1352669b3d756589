// Package processtb lets test doubles made for tests (the fake GitHub, the
// test ACME CA) run as long-lived processes for browser journeys and
// manual trials: TB is the slice of testing.TB they use, where a failure
// ends the process and clean-ups run at Close.
package processtb

import (
	"log"
	"os"
	"testing"
)

// TB is a testing.TB for a process. Only the methods below are set; any
// other panics.
type TB struct {
	testing.TB
	name     string
	cleanups []func()
}

// New returns a TB named name (its temporary folders start with it).
func New(name string) *TB { return &TB{name: name} }

func (p *TB) Helper()                           {}
func (p *TB) Cleanup(f func())                  { p.cleanups = append(p.cleanups, f) }
func (p *TB) Failed() bool                      { return false }
func (p *TB) Fatal(args ...any)                 { p.Close(); log.Fatal(args...) }
func (p *TB) Fatalf(format string, args ...any) { p.Close(); log.Fatalf(format, args...) }
func (p *TB) Skip(args ...any)                  { p.Close(); log.Fatal(args...) }
func (p *TB) Logf(format string, args ...any)   { log.Printf(format, args...) }
func (p *TB) Errorf(format string, args ...any) { log.Printf(format, args...) }
func (p *TB) Name() string                      { return p.name }

// TempDir makes a folder removed at Close.
func (p *TB) TempDir() string {
	dir, err := os.MkdirTemp("", p.name+"-")
	if err != nil {
		p.Fatal(err)
	}
	p.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Close runs the clean-ups, newest first; it may be called again.
func (p *TB) Close() {
	for i := len(p.cleanups) - 1; i >= 0; i-- {
		p.cleanups[i]()
	}
	p.cleanups = nil
}
