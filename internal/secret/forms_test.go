package secret_test

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/gantryhq/gantry/internal/secret"
)

func TestForms(t *testing.T) {
	t.Parallel()
	if got := secret.Forms("abc"); got != nil {
		t.Errorf("a 3-character value gives %q, want nothing masked", got)
	}
	v := "first-line-secret\r\nok\nsecond-line-secret"
	forms := secret.Forms(v)
	for _, want := range []string{v, "first-line-secret", "second-line-secret", base64.StdEncoding.EncodeToString([]byte(v))} {
		if !slices.Contains(forms, want) {
			t.Errorf("forms of %q lack %q", v, want)
		}
	}
	if slices.Contains(forms, "ok") {
		t.Error("a 2-character line is masked")
	}
	for i := 1; i < len(forms); i++ {
		if len(forms[i]) > len(forms[i-1]) {
			t.Fatalf("forms not longest first: %q", forms)
		}
	}
}
