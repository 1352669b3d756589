package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/secret"
)

// tokenIssuer is the iss claim of every token Gantry signs.
const tokenIssuer = "gantry"

// Messages of rejected tokens.
const (
	MsgSignIn       = "Not authorized: please sign in"
	MsgBadToken     = "Not authorized: invalid token, please sign in again"
	MsgTokenExpired = "Your session has expired: please sign in again"
)

// Tokens issues and checks the bearer tokens of signed-in users: JWTs
// signed with HS256 under a key derived (HKDF-SHA256) from the secret key,
// carrying the user id as subject, a random session id (jti), the issuer
// "gantry", and an expiry. A valid signature is not enough to sign in: the
// session must also still exist (Service.Session).
type Tokens struct {
	key []byte
	ttl time.Duration

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// NewTokens returns a token signer for secret (at least 32 bytes) whose
// tokens are valid for ttl.
func NewTokens(secretKey string, ttl time.Duration) (*Tokens, error) {
	if len(secretKey) < 32 {
		return nil, errors.New("secret key shorter than 32 bytes")
	}
	if ttl <= 0 {
		return nil, errors.New("token lifetime must be positive")
	}
	key, err := secret.DeriveKey(secretKey, secret.TokenSigning, 32)
	if err != nil {
		return nil, err
	}
	return &Tokens{key: key, ttl: ttl, Now: time.Now}, nil
}

// Claims is what a valid token says: whose it is, the id of its session
// (its jti claim) and when it expires.
type Claims struct {
	UserID    string
	SessionID string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Issue returns a signed token for userID and its claims. Each token
// carries a random id (jti, 128 bits), which names its server-side session
// (see Service), so two tokens issued in the same second differ.
func (t *Tokens) Issue(userID string) (string, Claims, error) {
	now := t.Now()
	c := Claims{UserID: userID, SessionID: rand.Text(), IssuedAt: now, ExpiresAt: now.Add(t.ttl)}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer:    tokenIssuer,
		Subject:   userID,
		ID:        c.SessionID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
	})
	s, err := tok.SignedString(t.key)
	if err != nil {
		return "", Claims{}, fmt.Errorf("sign token: %w", err)
	}
	return s, c, nil
}

// Verify checks a token's signature (HS256 only), issuer and expiry
// (required), and that it names a user and a session, and returns its
// claims. It does not look the session up (Service.Session does).
// Failures are EUNAUTHORIZED: MsgTokenExpired for an expired token,
// MsgBadToken for anything else.
func (t *Tokens) Verify(token string) (Claims, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(tokenIssuer),
		jwt.WithTimeFunc(t.Now),
	)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return Claims{}, gantry.Errorf(gantry.EUNAUTHORIZED, MsgTokenExpired)
	case err != nil, claims.Subject == "", claims.ID == "":
		return Claims{}, gantry.Errorf(gantry.EUNAUTHORIZED, MsgBadToken)
	}
	c := Claims{UserID: claims.Subject, SessionID: claims.ID, ExpiresAt: claims.ExpiresAt.Time}
	if claims.IssuedAt != nil {
		c.IssuedAt = claims.IssuedAt.Time
	}
	return c, nil
}
