package load

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// NeedTools ends the program with Fatalf when one of tools (wrk, nginx,
// node) is not installed.
func NeedTools(tools ...string) {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			Fatalf("%s is not installed: run `make deps-bench` (apt-get install nginx wrk)", tool)
		}
	}
}

// TempDir makes a temporary folder named prefix followed by a random
// string, removed at RunExit, and opens it to every user (0755), so that
// the processes the benchmark starts as other users (nginx's workers, the
// sandbox's runs) can pass through to what it holds.
func TempDir(prefix string) string {
	dir, err := os.MkdirTemp("", prefix)
	Must(err)
	AtExit(func() { os.RemoveAll(dir) })
	Must(os.Chmod(dir, 0o755))
	return dir
}

// AssetPath is the path of the 200 KB asset in WriteSite's site.
const AssetPath = "/assets/app-3f9a2c1d.js"

// WriteSite writes the published site the static benchmarks serve into
// dir/site and returns that folder: a small HTML page (index.html) and a
// 200 KB asset at AssetPath.
func WriteSite(dir string) string {
	site := filepath.Join(dir, "site")
	Must(os.MkdirAll(filepath.Join(site, "assets"), 0o755))
	Must(os.WriteFile(filepath.Join(site, "index.html"), []byte(`<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body><h1>Hello from a student project</h1><p>`+strings.Repeat("Gantry ", 40)+`</p></body></html>`), 0o644))
	asset := make([]byte, 150*1024)
	_, _ = rand.Read(asset)
	// 200 KB of base64 text: a realistic bundle size. wrk asks for no
	// compression, so the servers send the file as it is.
	Must(os.WriteFile(filepath.Join(site, filepath.FromSlash(AssetPath)), []byte(base64.StdEncoding.EncodeToString(asset)[:200*1024]), 0o644))
	return site
}

// NginxConf is an nginx.conf for StartNginx: nginx in the foreground
// with a worker a CPU, its pid file, error log and temporary files in dir,
// and http (directives and server blocks, each line indented) in its http
// block.
func NginxConf(dir, http string) string {
	return fmt.Sprintf(`worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
daemon off;
events { worker_connections 4096; }
http {
  client_body_temp_path %[1]s/tmp; proxy_temp_path %[1]s/tmp; fastcgi_temp_path %[1]s/tmp; uwsgi_temp_path %[1]s/tmp; scgi_temp_path %[1]s/tmp;
%[2]s}
`, dir, http)
}

// NginxAccessLog is the access_log directive for nginx writing one line
// per request to file in its combined format, or none when file is "".
// Its lines are buffered as Gantry's are (64 KiB, or 100 ms after the
// first: api.NewTextHandler), so both write the same way.
func NginxAccessLog(file string) string {
	if file == "" {
		return "access_log off;"
	}
	return "access_log " + file + " combined buffer=64k flush=100ms;"
}

// InTurn calls f for each of items in turn (never two at the same time),
// rounds times, the order reversed every other round, so that a machine
// shared with other work disturbs them alike.
func InTurn[T any](rounds int, items []T, f func(round int, item T)) {
	for round := range rounds {
		order := slices.Clone(items)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, it := range order {
			f(round, it)
		}
	}
}
