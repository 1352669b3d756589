package deploy_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/gantryhq/gantry"
)

// A build that prints its secrets as they are, line by line, base64'd
// (whole, wrapped, inside an HTTP Basic credential), URL-escaped and
// JSON-quoted: none of them can be read back from its log.
func TestSecretFormsRedactedFromLogs(t *testing.T) {
	e := newEnv(t)
	e.withSecrets()
	ctx := context.Background()
	key := "-----BEGIN TEST KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nbK4pV9nq0x7TzR1mW3sYc2uE5fH8jL\n-----END TEST KEY-----"
	token := "s3cr3t/p@ss w0rd+42&more"
	print := `set -e
echo "raw:"; printf '%s\n' "$KEY"
echo "b64: $(printf '%s' "$KEY" | base64 -w0)"
echo "wrapped:"; printf '%s' "$KEY" | base64
echo "basic: Authorization: Basic $(printf 'deploy:%s' "$TOKEN" | base64 -w0)"
echo "b64url: $(printf '%s' "$TOKEN" | base64 -w0 | tr '+/' '-_' | tr -d =)"
node -e 'console.log("url: " + encodeURIComponent(process.env.TOKEN))'
node -e 'console.log("json: " + JSON.stringify(process.env.KEY))'
mkdir -p dist && echo ok > dist/index.html
`
	p := e.project("printer", map[string]string{
		"package.json": `{"name":"printer","version":"1.0.0","private":true,"scripts":{"build":"sh print.sh"}}`,
		"print.sh":     print,
	})
	if _, err := e.projects().SetEnv(ctx, e.user.ID, p.ID, []gantry.EnvVar{
		{Key: "KEY", Value: key, IsSecret: true}, {Key: "TOKEN", Value: token, IsSecret: true},
	}); err != nil {
		t.Fatal(err)
	}
	d := e.deploy(p)
	e.mustLive(d)
	logs := e.logs(d.ID)
	all := strings.Join(logs, "\n")
	// Every form was printed, and masked.
	for _, label := range []string{"b64: ", "basic: ", "b64url: ", "url: ", "json: "} {
		i := strings.Index(all, label)
		if i < 0 {
			t.Fatalf("the build did not print %q:\n%s", label, all)
		}
		if line, _, _ := strings.Cut(all[i:], "\n"); !strings.Contains(line, gantry.SecretMask) {
			t.Errorf("line %q is not masked", line)
		}
	}
	// Nothing in the log decodes to a secret or one of its lines.
	secrets := []string{token}
	for _, l := range strings.Split(key, "\n") {
		if !strings.HasPrefix(l, "-----") {
			secrets = append(secrets, l)
		}
	}
	leaks := func(s string) bool {
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				return true
			}
		}
		return false
	}
	var wrapped strings.Builder // base64(1)'s lines, joined again
	for _, line := range logs {
		if leaks(line) {
			t.Errorf("a secret is in the log line %q", line)
		}
		for _, f := range strings.Fields(strings.TrimPrefix(strings.TrimPrefix(line, "info: "), "warning: ")) {
			var decoded []string
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(f); err == nil {
					decoded = append(decoded, string(b))
				}
			}
			if s, err := url.QueryUnescape(f); err == nil {
				decoded = append(decoded, s)
			}
			var js string
			if json.Unmarshal([]byte(f), &js) == nil {
				decoded = append(decoded, js)
			}
			for _, s := range decoded {
				if leaks(s) {
					t.Errorf("the log line %q decodes to a secret", line)
				}
			}
			if len(f) == 76 || strings.HasSuffix(f, "=") {
				wrapped.WriteString(f)
			}
		}
	}
	if b, err := base64.StdEncoding.DecodeString(wrapped.String()); err == nil && leaks(string(b)) {
		t.Errorf("base64's wrapped lines decode to a secret:\n%s", all)
	}
}
