package edge

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFingerprinted(t *testing.T) {
	for name, want := range map[string]bool{
		"index-BFfRB1bB.js":               true,
		"index-B_x-1aZ9.js":               true,
		"app.3f9a2c1d.css":                true,
		"main.3f9a2c1d4e5b6a7c.chunk.js":  true,
		"chunk-vendors.4f2b1c9e.js":       true,
		"logo.a1b2c3d4e5.svg":             true,
		"jquery-3.6.0.min.js":             false,
		"favicon.ico":                     false,
		"logo192.png":                     false,
		"material-icons-v140-latin.woff2": false,
		"roboto-latin-400-normal.woff2":   false,
		"photo-20230101.jpg":              false,
		"deadbeefcafe.js":                 false,
		"README":                          false,
		"my-favorite.js":                  false,
		"background-image1.png":           false,
	} {
		if got := fingerprinted(name); got != want {
			t.Errorf("fingerprinted(%q): got %v, want %v", name, got, want)
		}
	}
}

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		ae, coding string
		want       bool
	}{
		{"gzip, deflate, br", "br", true},
		{"gzip, deflate, br", "gzip", true},
		{"gzip;q=1.0, identity; q=0.5, *;q=0", "br", false},
		{"br;q=0", "br", false},
		{"br;q=0.001", "br", true},
		{"BR", "br", true},
		{"*", "br", true},
		{"*;q=0", "br", false},
		{"*, br;q=0", "br", false},
		{"", "br", false},
		{"identity", "gzip", false},
		{"x-gzip", "gzip", false},
	} {
		if got := accepts(tc.ae, tc.coding); got != tc.want {
			t.Errorf("accepts(%q, %q): got %v, want %v", tc.ae, tc.coding, got, tc.want)
		}
	}
}

// TestCleanPath is Caddy's SanitizedPathJoin table, without the join.
func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                    ".",
		"/":                   ".",
		"/foo":                "foo",
		"/foo/":               "foo",
		"/foo/bar":            "foo/bar",
		"/..":                 ".",
		"/../..":              ".",
		"/../foo":             "foo",
		"/foo/../../bar":      "bar",
		"/./foo/./bar/.":      "foo/bar",
		"//foo":               "foo",
		"/%2e%2e":             "%2e%2e",
		"../../../etc/passwd": "etc/passwd",
		"/a/b/../../../../c":  "c",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestSiteRootConfines(t *testing.T) {
	base := t.TempDir()
	site := filepath.Join(base, "site")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(site, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(base, "secret"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(site, "a.txt"), []byte("a"), 0o644))
	must(os.Symlink("../a.txt", filepath.Join(site, "sub", "up-inside")))
	must(os.Symlink("../../secret", filepath.Join(site, "sub", "up-outside")))
	must(os.Symlink(filepath.Join(base, "secret"), filepath.Join(site, "abs")))
	must(os.Symlink("/proc/self/root/etc/passwd", filepath.Join(site, "magic")))
	for _, mode := range []struct {
		name      string
		openat2   bool
		forceMiss bool
	}{{"openat2", true, false}, {"os.Root", false, false}, {"openat2 unavailable", true, true}} {
		t.Run(mode.name, func(t *testing.T) {
			openat2Missing.Store(mode.forceMiss)
			defer openat2Missing.Store(false)
			r, err := openSiteRoot(site, mode.openat2)
			must(err)
			defer r.Close()
			for name, ok := range map[string]bool{
				"a.txt": true, "sub/up-inside": true, "sub/../a.txt": true,
				"../secret": false, "sub/up-outside": false, "abs": false, "magic": false, "/etc/passwd": false,
			} {
				f, err := r.Open(name)
				if ok != (err == nil) {
					t.Errorf("Open(%q): got error %v, want ok=%v", name, err, ok)
				}
				if err == nil {
					f.Close()
				} else if !isNotFound(err) {
					t.Errorf("Open(%q): error %v is not treated as not found", name, err)
				}
			}
			must(r.Close())
			if _, err := r.Open("a.txt"); !errors.Is(err, os.ErrClosed) {
				t.Errorf("Open after Close: got %v, want os.ErrClosed", err)
			}
		})
	}
}
