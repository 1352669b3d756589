package clustertest

import (
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/gantryhq/gantry/internal/acmedns/acmednstest"
)

// TestOneCertificateShared (B12): replica A obtains the public host's
// certificate and the live domain's wildcard from an ACME CA (pebble);
// replica B, started next on the same database, serves the very same
// certificates without ordering its own. Before certmagic kept them in
// PostgreSQL each replica ordered its own into its data folder.
func TestOneCertificateShared(t *testing.T) {
	c := newCluster(t, nil)
	plainA := acmednstest.FreePort(t)
	port := func() string { return strconv.Itoa(acmednstest.FreePort(t)) }
	httpA, httpsA, httpB, httpsB := strconv.Itoa(plainA), port(), port(), port()
	// HTTP-01 validations reach A's plain listener.
	ca := acmednstest.Start(t, acmednstest.Options{HTTPPort: plainA})
	dnsAddr := ca.DNSServer(t, "apps.test")
	for k, v := range map[string]string{
		"GANTRY_TLS": "acme", "GANTRY_ACME_CA": ca.DirectoryURL, "GANTRY_ACME_CA_ROOT": ca.APIRootFile,
		"GANTRY_ACME_RESOLVERS": dnsAddr, "GANTRY_DNS_PROVIDER": "rfc2136", "GANTRY_RFC2136_SERVER": dnsAddr,
		"GANTRY_RFC2136_KEY_NAME": acmednstest.TSIGKeyName, "GANTRY_RFC2136_SECRET": acmednstest.TSIGSecret,
		"GANTRY_PUBLIC_URL": "https://gantry.test:" + httpsA, "GANTRY_LIVE_DOMAIN": "apps.test",
	} {
		c.env[k] = v
	}
	client := ca.LoopbackClient(t)
	// serial returns the serial number of the certificate served for
	// host on an HTTPS port, waiting until one is.
	serial := func(r *replica, host, port string) string {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			res, err := client.Get(fmt.Sprintf("https://%s:%s/", host, port))
			if err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res.TLS.PeerCertificates[0].SerialNumber.String()
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s on replica %s: %v", host, r.node, err)
			}
		}
	}
	a := c.start("a", "--addr", "127.0.0.1:"+httpA, "--https-addr", "127.0.0.1:"+httpsA)
	publicA, wildcardA := serial(a, "gantry.test", httpsA), serial(a, "blog.apps.test", httpsA)
	b := c.start("b", "--addr", "127.0.0.1:"+httpB, "--https-addr", "127.0.0.1:"+httpsB)
	publicB, wildcardB := serial(b, "gantry.test", httpsB), serial(b, "blog.apps.test", httpsB)
	if publicA != publicB || wildcardA != wildcardB {
		t.Fatalf("replica B serves certificates %s (public host) and %s (wildcard), A %s and %s: want the same ones", publicB, wildcardB, publicA, wildcardA)
	}
}
