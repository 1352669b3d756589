// Command pebbleserve runs a test ACME CA on loopback — pebble with
// pebble-challtestsrv answering its DNS, and acmednstest's DNS server in
// front (SOA answers, RFC 2136 updates) — for browser journeys,
// screenshots and trying HTTPS on a laptop.
//
//	pebbleserve -http-port 8080 [-zone apps.test] [-root FILE]
//
// -http-port is the port of `gantry serve`'s plain listener (GANTRY_ADDR),
// where pebble sends HTTP-01 validations for every name (challtestsrv
// resolves every name to 127.0.0.1). It prints "listening on URL" once
// ready, then the environment to give `gantry serve`, then
// "challtestsrv URL" (its management API: /set-cname, /set-txt, /add-a …
// for custom domains' records), writes the root of the certificates pebble
// issues to -root (trust it in the browser), and serves until killed.
// Nothing here is secure: it is a test double.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gantryhq/gantry/internal/acmedns/acmednstest"
	"github.com/gantryhq/gantry/internal/processtb"
)

func main() {
	httpPort := flag.Int("http-port", 8080, "port of gantry serve's plain HTTP listener (HTTP-01 validations go there)")
	zone := flag.String("zone", "apps.test", "the live domain: DNS-01 zone lookups find it")
	rootFile := flag.String("root", "", "write the root of the certificates pebble issues here (PEM)")
	flag.Parse()
	tb := processtb.New("pebbleserve")
	ca := acmednstest.Start(tb, acmednstest.Options{HTTPPort: *httpPort})
	dns := ca.DNSServer(tb, *zone)
	if *rootFile != "" {
		if err := os.WriteFile(*rootFile, ca.IssuerRootPEM(tb), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	fmt.Printf("listening on %s\n", ca.DirectoryURL)
	fmt.Printf("GANTRY_TLS=acme GANTRY_ACME_CA=%s GANTRY_ACME_CA_ROOT=%s GANTRY_ACME_RESOLVERS=%s GANTRY_DNS_PROVIDER=rfc2136 GANTRY_RFC2136_SERVER=%s GANTRY_RFC2136_KEY_NAME=%s GANTRY_RFC2136_SECRET=%s GANTRY_DNS_RESOLVER=%s\n",
		ca.DirectoryURL, ca.APIRootFile, dns, dns, acmednstest.TSIGKeyName, acmednstest.TSIGSecret, ca.DNSAddr)
	fmt.Printf("challtestsrv %s\n", ca.ManagementURL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	tb.Close()
}
