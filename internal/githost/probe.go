package githost

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gantryhq/gantry"
)

// maxProbeBody is how much of the info/refs answer the probe reads.
const maxProbeBody = 8 << 10

// dumbRefLine is one line of a dumb-HTTP info/refs file.
var dumbRefLine = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})\t\S+$`)

// probed is what probe learnt of a repository's host.
type probed struct {
	final *RepoRef // where the repository was redirected to, or nil
	// dumb is set when the host answered with a dumb-HTTP ref list (a plain
	// file, as any static web server serves a bare repository) instead of
	// a smart-HTTP advertisement: it cannot make shallow clones.
	dumb bool
}

// probe asks ref's smart-HTTP endpoint (GET <clone URL>/info/refs?service=
// git-upload-pack) through c's HTTP client, so that every hop of a redirect
// is checked, and classifies the answer: 404/410 not found, 401/403 private,
// a 200 with the smart content type (application/x-git-upload-pack-
// advertisement) smart, a 200 whose body is a dumb-HTTP ref list dumb, any
// other 200 (a web page) not a git repository. With a token, redirects to
// another host are refused so the token never leaves the host it was meant
// for.
func probe(ctx context.Context, c *Checker, ref *RepoRef, token string, timeout time.Duration) (probed, error) {
	client := c.HTTPClient(0)
	defer client.CloseIdleConnections()
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if token != "" && req.URL.Host != via[0].URL.Host {
			return gantry.Errorf(gantry.EINVALID, "Repository URL redirects to another host: %s", shown(req.URL.Host))
		}
		return checkRedirect(req, via)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref.CloneURL+"/info/refs?service=git-upload-pack", nil)
	if err != nil {
		return probed{}, err
	}
	req.Header.Set("User-Agent", "git/2 (gantry)")
	req.Header.Set("Accept", "*/*")
	if token != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token)))
	}
	resp, err := client.Do(req)
	if err != nil {
		return probed{}, httpError(ctx, err, ref, timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return probed{}, httpError(ctx, err, ref, timeout)
	}
	var p probed
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		ct := resp.Header.Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "application/x-git-upload-pack-advertisement"):
		case dumbRefs(body):
			p.dumb = true
		default:
			return probed{}, errNotGit(ref)
		}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return probed{}, errPrivate()
	case code == http.StatusNotFound || code == http.StatusGone:
		return probed{}, errNotFound(ref)
	case code == http.StatusTooManyRequests || code >= 500:
		return probed{}, gantry.Errorf(gantry.EUNAVAILABLE, "The git host %s is not answering properly (HTTP %d); try again later", shown(ref.Host), code)
	case code >= 300 && code < 400:
		return probed{}, gantry.Errorf(gantry.EINVALID, "Repository URL redirects elsewhere: %s", shown(ref.WebURL))
	default:
		return probed{}, gantry.Errorf(gantry.EINVALID, "The git host %s answered HTTP %d for %s", shown(ref.Host), code, shown(ref.WebURL))
	}

	u := resp.Request.URL
	if u.String() == req.URL.String() {
		return p, nil
	}
	path, ok := strings.CutSuffix(u.Path, "/info/refs")
	if !ok {
		return probed{}, gantry.Errorf(gantry.EINVALID, "Repository URL redirects elsewhere: %s", shown(ref.WebURL))
	}
	final, err := ParseRepoURL(u.Scheme + "://" + u.Host + path)
	if err != nil {
		return probed{}, gantry.Errorf(gantry.EINVALID, "Repository URL redirects elsewhere: %s", shown(ref.WebURL))
	}
	final.Branch = ref.Branch
	p.final = final
	return p, nil
}

// dumbRefs reports whether body is a dumb-HTTP info/refs file (possibly
// empty, for an empty repository). A body of maxProbeBody bytes was cut
// short: its last, partial, line is not read.
func dumbRefs(body []byte) bool {
	if len(body) >= maxProbeBody {
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			body = body[:i]
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if !dumbRefLine.MatchString(line) {
			return false
		}
	}
	return true
}

// httpError turns a transport error of a request to ref's host into a
// user-facing error.
func httpError(ctx context.Context, err error, ref *RepoRef, timeout time.Duration) error {
	var ge *gantry.Error
	if errors.As(err, &ge) {
		return ge
	}
	if err := timeoutOr(ctx, err, ref.Host, timeout); err != nil {
		var ge *gantry.Error
		if errors.As(err, &ge) {
			return ge
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &dnsErr):
		return gantry.Errorf(gantry.EINVALID, "Could not resolve host: %s", shown(ref.Hostname()))
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr),
		strings.Contains(err.Error(), "tls:"):
		return gantry.Errorf(gantry.EINVALID, "Could not establish a secure connection to %s", shown(ref.Host))
	}
	return errUnreachable(ref.Host)
}
