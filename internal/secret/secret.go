// Package secret encrypts short strings kept at rest — GitHub access tokens,
// secret environment variables, OAuth state — with the platform's secret key
// (GANTRY_SECRET_KEY).
//
// A Box seals with AES-256-GCM under a key derived from the secret key by
// HKDF-SHA256 with a purpose label, so every use (tokens, environment
// variables, OAuth state) has a key of its own and a value sealed for one
// purpose never opens under another. A sealed value is text:
//
//	v1:<base64url without padding of nonce(12 bytes) | ciphertext | tag(16 bytes)>
//
// The version prefix leaves room for another algorithm or key later. The
// nonce is random for every Seal, so sealing the same plaintext twice gives
// two different values. Open authenticates before it decrypts: a value that
// was changed, cut, made for another purpose or sealed under another secret
// key fails with ErrInvalid, and no part of the plaintext or the key is ever
// put in an error.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// MinKeyLen is the shortest secret key New accepts, in bytes (the same as
// config.MinSecretKeyLen).
const MinKeyLen = 32

// Version is the prefix of every value Seal returns.
const Version = "v1:"

// ErrInvalid is returned by Open for a value that is not a sealed value of
// this Box: malformed, tampered with, sealed for another purpose or under
// another secret key.
var ErrInvalid = errors.New("secret: cannot open the value: it is malformed or was sealed with another key")

// Box seals and opens strings for one purpose. It is safe for concurrent
// use.
type Box struct {
	aead cipher.AEAD
}

// Purpose names one use of the platform secret key: the HKDF info from
// which that use's key is derived. Each use has its own (a value sealed for
// one cannot be opened as another), and the labels are fixed forever: a
// changed label makes every value stored under it unreadable. Only the
// variables below exist, so a purpose cannot be mistyped.
type Purpose struct{ label string }

// The purposes of the platform secret key.
var (
	TokenSigning  = Purpose{"gantry token signing v1"}      // sign-in tokens (HS256)
	GitHubTokens  = Purpose{"gantry github tokens v1"}      // GitHub access tokens at rest
	GitHubStates  = Purpose{"gantry github oauth state v1"} // OAuth state parameters
	EnvSecrets    = Purpose{"gantry env secrets v1"}        // secret environment variables at rest
	GitHubHooks   = Purpose{"gantry github hooks v1"}       // repository webhook secrets at rest
	DeployHooks   = Purpose{"gantry deploy hooks v1"}       // deploy hook tokens at rest
	PreviewAccess = Purpose{"gantry preview access v1"}     // preview hand-off tickets and cookies
)

// String returns the purpose's label.
func (p Purpose) String() string { return p.label }

// DeriveKey derives a key of n bytes for purpose from the platform secret
// key with HKDF-SHA256, so no two uses share a key.
func DeriveKey(key string, purpose Purpose, n int) ([]byte, error) {
	if purpose.label == "" {
		return nil, errors.New("secret: a purpose is required")
	}
	k, err := hkdf.Key(sha256.New, []byte(key), nil, purpose.label, n)
	if err != nil {
		return nil, fmt.Errorf("secret: derive key: %w", err)
	}
	return k, nil
}

// New returns a Box whose AES-256 key is HKDF-SHA256(key, purpose). key is
// the platform secret key (at least MinKeyLen bytes).
func New(key string, purpose Purpose) (*Box, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("secret: key shorter than %d bytes", MinKeyLen)
	}
	k, err := DeriveKey(key, purpose, 32)
	if err != nil {
		return nil, fmt.Errorf("secret: derive key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext and returns "v1:" and the base64url (unpadded)
// nonce, ciphertext and tag. The result is safe in URLs, JSON and SQL text
// columns. Seal fails only when the system's random source does.
func (b *Box) Seal(plaintext string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret: random nonce: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return Version + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open authenticates and decrypts a value Seal returned. Anything else —
// another version, bad base64, a cut or altered value, another purpose or
// secret key — is ErrInvalid.
func (b *Box) Open(sealed string) (string, error) {
	enc, ok := strings.CutPrefix(sealed, Version)
	if !ok {
		return "", ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", ErrInvalid
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", ErrInvalid
	}
	return string(plain), nil
}

// IsSealed reports whether s looks like a value Seal returned (it has the
// version prefix); it does not check that it opens.
func IsSealed(s string) bool { return strings.HasPrefix(s, Version) }
