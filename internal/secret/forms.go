package secret

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Minimum lengths of what Forms returns: a whole value shorter than
// MinValueLen is not masked (it would mask ordinary words), and neither is
// a line of a multi-line value, nor an encoded piece, shorter than
// MinFormLen.
const (
	MinValueLen = 4
	MinFormLen  = 8
)

// Forms returns the strings to mask in logs for the secret value v: v
// itself, each line of a multi-line v, and the encodings a build or an app
// commonly prints a secret in — base64 (standard and URL alphabets, with
// or without padding, wrapped at 76 columns as base64(1) does, and as part
// of a longer encoded text such as an HTTP Basic credential, whatever its
// alignment), URL escaping (query, path and JavaScript's
// encodeURIComponent), JSON string escaping and
// lower-case hex. Longest first, without duplicates; nil for a v shorter
// than MinValueLen.
func Forms(v string) []string {
	if len(v) < MinValueLen {
		return nil
	}
	forms := []string{v}
	seen := map[string]bool{v: true}
	add := func(s string) {
		if len(s) >= MinFormLen && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	// Each line: a log line never holds more than one.
	if strings.ContainsAny(v, "\r\n") {
		for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			add(strings.TrimSpace(l))
		}
	}
	// base64: three alignments of v inside a longer encoded text; the
	// characters mixing v's bits with its neighbours' are left out.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for o := range 3 {
			s := enc.EncodeToString(append(make([]byte, o), v...))
			from, to := (8*o+5)/6, 8*(o+len(v))/6
			add(s[from:to])
		}
		full := enc.EncodeToString([]byte(v))
		add(full)
		for len(full) > 76 {
			add(full[:76])
			full = full[76:]
		}
		add(full)
	}
	add(url.QueryEscape(v))
	add(strings.ReplaceAll(url.QueryEscape(v), "+", "%20")) // JavaScript's encodeURIComponent
	add(url.PathEscape(v))
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	add(hex.EncodeToString([]byte(v)))
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}
