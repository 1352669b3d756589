package secret_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/secret"
)

const (
	key      = "0123456789abcdef0123456789abcdef-test"
	otherKey = "fedcba9876543210fedcba9876543210-test"
)

func mustBox(tb testing.TB, key string, purpose secret.Purpose) *secret.Box {
	tb.Helper()
	b, err := secret.New(key, purpose)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b := mustBox(t, key, secret.EnvSecrets)
	for _, plain := range []string{"", "gho_abc123", "ünïcödé ✓", strings.Repeat("x", 10000), "a\x00b"} {
		sealed, err := b.Seal(plain)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1:") || !secret.IsSealed(sealed) {
			t.Fatalf("got %q, want the v1: prefix", sealed)
		}
		if plain != "" && strings.Contains(sealed, plain) {
			t.Fatalf("sealed value %q contains the plaintext", sealed)
		}
		got, err := b.Open(sealed)
		if err != nil || got != plain {
			t.Fatalf("Open(Seal(%q)) = %q, %v", plain, got, err)
		}
		// A second Box with the same key and purpose opens it too (a restart).
		if got, err := mustBox(t, key, secret.EnvSecrets).Open(sealed); err != nil || got != plain {
			t.Fatalf("another Box: got %q, %v", got, err)
		}
	}
}

func TestSealIsRandomized(t *testing.T) {
	t.Parallel()
	b := mustBox(t, key, secret.EnvSecrets)
	a1, _ := b.Seal("same")
	a2, _ := b.Seal("same")
	if a1 == a2 {
		t.Fatal("two seals of one plaintext are equal: the nonce is not random")
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	b := mustBox(t, key, secret.EnvSecrets)
	sealed, err := b.Seal("gho_secret_token")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	flip := func(i int) string {
		c := append([]byte(nil), raw...)
		c[i] ^= 0x01
		return "v1:" + base64.RawURLEncoding.EncodeToString(c)
	}
	for _, tc := range []struct {
		name  string
		box   *secret.Box
		value string
	}{
		{"wrong key", mustBox(t, otherKey, secret.EnvSecrets), sealed},
		{"wrong purpose", mustBox(t, key, secret.GitHubTokens), sealed},
		{"nonce changed", b, flip(0)},
		{"ciphertext changed", b, flip(14)},
		{"tag changed", b, flip(len(raw) - 1)},
		{"cut short", b, sealed[:len(sealed)-4]},
		{"too short for a nonce and tag", b, "v1:" + base64.RawURLEncoding.EncodeToString(raw[:20])},
		{"no prefix", b, strings.TrimPrefix(sealed, "v1:")},
		{"other version", b, "v2:" + strings.TrimPrefix(sealed, "v1:")},
		{"bad base64", b, "v1:***"},
		{"plaintext", b, "gho_secret_token"},
		{"empty", b, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.box.Open(tc.value)
			if !errors.Is(err, secret.ErrInvalid) || got != "" {
				t.Fatalf("got %q, %v; want ErrInvalid", got, err)
			}
			if strings.Contains(err.Error(), "gho_secret_token") || strings.Contains(err.Error(), key) {
				t.Fatalf("error %q reveals a secret", err)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	if _, err := secret.New("short", secret.EnvSecrets); err == nil {
		t.Error("a key shorter than 32 bytes was accepted")
	}
	if _, err := secret.New(key, secret.Purpose{}); err == nil {
		t.Error("an empty purpose was accepted")
	}
}

// TestPurposeLabels pins each purpose's label: a changed label would make
// every value stored under it unreadable (and sign-in tokens invalid).
func TestPurposeLabels(t *testing.T) {
	t.Parallel()
	want := map[secret.Purpose]string{
		secret.TokenSigning: "gantry token signing v1",
		secret.GitHubTokens: "gantry github tokens v1",
		secret.GitHubStates: "gantry github oauth state v1",
		secret.EnvSecrets:   "gantry env secrets v1",
		secret.GitHubHooks:  "gantry github hooks v1",
		secret.DeployHooks:  "gantry deploy hooks v1",
	}
	if len(want) != 6 {
		t.Fatalf("two purposes share a label: %v", want)
	}
	for p, label := range want {
		if p.String() != label {
			t.Errorf("purpose %q, want %q", p, label)
		}
	}
}
