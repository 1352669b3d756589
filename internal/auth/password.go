package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters other than memory (RFC 9106, OWASP's minimum
// profile: 2 passes, 1 lane).
const (
	argonTime    = 2
	argonThreads = 1
	argonSaltLen = 16
	argonKeyLen  = 32
)

// Passwords hashes and checks passwords with argon2id. Hashes are stored in
// the PHC string format ($argon2id$v=19$m=…,t=…,p=…$salt$key), so changing
// the cost later keeps old hashes verifiable. At most GOMAXPROCS hashes run
// at once, which bounds the memory they take to GOMAXPROCS × MemoryMiB.
type Passwords struct {
	memoryKiB uint32
	sem       chan struct{}
	dummy     string // hash of a random password, checked when an account is missing
}

// NewPasswords returns a hasher using memoryMiB MiB per hash (19 is the
// production default, 1 makes tests fast).
func NewPasswords(memoryMiB int) (*Passwords, error) {
	if memoryMiB < 1 || memoryMiB > 1024 {
		return nil, fmt.Errorf("password cost %d MiB is out of range 1–1024", memoryMiB)
	}
	p := &Passwords{
		memoryKiB: uint32(memoryMiB) * 1024,
		sem:       make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
	var random [24]byte
	rand.Read(random[:])
	dummy, err := p.Hash(context.Background(), base64.StdEncoding.EncodeToString(random[:]))
	if err != nil {
		return nil, err
	}
	p.dummy = dummy
	return p, nil
}

// Hash returns the PHC-encoded argon2id hash of password with a random salt.
func (p *Passwords) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	if err := p.acquire(ctx); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, p.memoryKiB, argonThreads, argonKeyLen)
	p.release()
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.memoryKiB, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether password matches hash, comparing in constant time.
// A malformed hash is an error.
func (p *Passwords) Verify(ctx context.Context, hash, password string) (bool, error) {
	var version int
	var memory, time uint32
	var threads uint8
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errors.New("password hash: not argon2id")
	}
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("password hash: unsupported version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil {
		return false, fmt.Errorf("password hash: parameters: %w", err)
	}
	if memory < 8 || memory > 4<<20 || time < 1 || time > 64 || threads < 1 || threads > 64 {
		return false, errors.New("password hash: parameters out of range")
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("password hash: salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false, errors.New("password hash: bad key")
	}
	if err := p.acquire(ctx); err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, time, memory, threads, uint32(len(want)))
	p.release()
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// VerifyDummy spends the time of one Verify and returns false: call it when
// the account is missing, so the answer's timing does not tell.
func (p *Passwords) VerifyDummy(ctx context.Context, password string) {
	p.Verify(ctx, p.dummy, password)
}

func (p *Passwords) acquire(ctx context.Context) error {
	select {
	case p.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *Passwords) release() { <-p.sem }
