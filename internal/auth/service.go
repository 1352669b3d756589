// Package auth signs users up, in and out: argon2id password hashes,
// signed bearer tokens that each stand for a server-side session (so a
// session can be ended at once), and rate limits on failed sign-ins, wrong
// current passwords and registrations.
package auth

import (
	"context"
	"time"

	"github.com/gantryhq/gantry"
)

// Rate limits (sliding windows, counted in memory per process).
//
// Failed sign-ins are limited three ways, so that someone guessing an
// account's password from elsewhere cannot lock its owner out:
//   - per client address, over every account: LoginFailuresPerAddress per
//     LimitWindow;
//   - per account and address: LoginFailuresPerPair per LimitWindow (a
//     success from that address forgives its failures);
//   - per account, from addresses that have not signed in to it within
//     KnownAddressTTL: LoginFailuresPerAccount per AccountWindow. An
//     address that signed in to the account (or registered it) recently is
//     exempt, and only its own two limits apply; the owner's usual address
//     keeps working while guesses from elsewhere are refused.
//
// Wrong current passwords on a password change: PasswordChecks per account
// per LimitWindow. Registrations: RegisterLimit per client address per
// LimitWindow (accounts created or refused as taken).
const (
	LoginFailuresPerAddress = 30
	LoginFailuresPerPair    = 10
	LoginFailuresPerAccount = 100
	PasswordChecks          = 10
	RegisterLimit           = 10

	LimitWindow     = 15 * time.Minute
	AccountWindow   = time.Hour
	KnownAddressTTL = 30 * 24 * time.Hour
)

// Messages of the accounts API (SPEC §8 for the sign-in and registration
// rate limits).
const (
	MsgInvalidLogin     = "Invalid email or password"
	MsgInactive         = "This account has been deactivated"
	MsgTooManyLogins    = "Too many login attempts. Please wait a few minutes before trying again."
	MsgTooManyRegisters = "Too many registration attempts. Please wait a few minutes before trying again."
	MsgTooManyPasswords = "Too many incorrect current passwords. Please wait a few minutes before trying again."
	MsgWrongPassword    = "Current password is incorrect"
)

// Store is what the accounts service needs of the database
// (internal/store implements it).
type Store interface {
	gantry.UserStore
	gantry.SessionStore
}

// Session is the signed-in session a valid bearer token stands for.
type Session struct {
	ID   string // the token's jti
	User *gantry.User
}

// Service is the accounts service: registration, sign-in and sign-out,
// token checks and password changes. Create it with NewService.
type Service struct {
	Users     gantry.UserStore
	Sessions  gantry.SessionStore
	Passwords *Passwords
	Tokens    *Tokens

	// The limits described above. LoginByIP, LoginByPair and
	// LoginByAccount count failed sign-ins; KnownAddresses holds the
	// (account, address) pairs that signed in; PasswordChecks counts wrong
	// current passwords by user id; RegisterByIP counts registrations that
	// reached the database.
	LoginByIP      *Limiter
	LoginByPair    *Limiter
	LoginByAccount *Limiter
	KnownAddresses *Known
	PasswordChecks *Limiter
	RegisterByIP   *Limiter

	// Notify welcomes new accounts (gantry.WelcomeNotification). Nil sends
	// nothing.
	Notify gantry.Notifier

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

// NewService returns the accounts service over db with the default rate
// limits.
func NewService(db Store, passwords *Passwords, tokens *Tokens) *Service {
	return &Service{
		Users:          db,
		Sessions:       db,
		Passwords:      passwords,
		Tokens:         tokens,
		LoginByIP:      NewLimiter(LoginFailuresPerAddress, LimitWindow),
		LoginByPair:    NewLimiter(LoginFailuresPerPair, LimitWindow),
		LoginByAccount: NewLimiter(LoginFailuresPerAccount, AccountWindow),
		KnownAddresses: NewKnown(KnownAddressTTL),
		PasswordChecks: NewLimiter(PasswordChecks, LimitWindow),
		RegisterByIP:   NewLimiter(RegisterLimit, LimitWindow),
		Now:            time.Now,
	}
}

// SetNow makes every clock of the service, its tokens and its limiters
// read now (for tests).
func (s *Service) SetNow(now func() time.Time) {
	s.Now, s.Tokens.Now = now, now
	s.KnownAddresses.SetNow(now)
	for _, l := range []*Limiter{s.LoginByIP, s.LoginByPair, s.LoginByAccount, s.PasswordChecks, s.RegisterByIP} {
		l.Now = now
	}
}

// pairKey is the key of an (account, address) pair.
func pairKey(email, clientIP string) string { return email + " " + clientIP }

// Register validates r by the SPEC §5 rules (EINVALID with the first
// failing rule's message), creates the account with the defaults (role
// student, free plan with 3 projects and 5 deployments, active, not
// verified, no avatar, signed in now), welcomes it with a notification and
// returns it with the token of a new session. clientIP becomes a known
// address of the account. A taken username or email is ECONFLICT; more
// than RegisterLimit registrations (created or refused as taken) from
// clientIP in the window are ETOOMANY (a *LimitError).
func (s *Service) Register(ctx context.Context, clientIP string, r gantry.Registration) (_ *gantry.User, _ string, err error) {
	r.Normalize()
	if err := r.Validate(); err != nil {
		return nil, "", err
	}
	if !s.RegisterByIP.Take(clientIP) {
		return nil, "", tooMany(MsgTooManyRegisters, s.RegisterByIP.Wait(clientIP))
	}
	defer func() {
		if err != nil && gantry.ErrorCode(err) != gantry.ECONFLICT {
			s.RegisterByIP.Return(clientIP) // only created and taken count
		}
	}()
	hash, err := s.Passwords.Hash(ctx, r.Password)
	if err != nil {
		return nil, "", err
	}
	now := s.Now()
	u := &gantry.User{
		FullName:     r.FullName,
		Username:     r.Username,
		Email:        r.Email,
		Role:         gantry.RoleStudent,
		Subscription: gantry.Subscription{Plan: gantry.PlanFree, MaxProjects: gantry.DefaultMaxProjects, MaxDeployments: gantry.DefaultMaxDeployments},
		IsActive:     true,
		LastLogin:    &now,
		GitHub:       gantry.GitHubLink{Repos: []gantry.GitHubRepo{}},
		PasswordHash: hash,
	}
	if err := s.Users.CreateUser(ctx, u); err != nil {
		return nil, "", err
	}
	token, err := s.StartSession(ctx, u.ID)
	if err != nil {
		return nil, "", err
	}
	s.KnownAddresses.Add(pairKey(u.Email, clientIP))
	if s.Notify != nil {
		s.Notify.Notify(ctx, gantry.WelcomeNotification(u))
	}
	return u, token, nil
}

// Login checks an email and password and returns the user, with lastLogin
// set to now, and the token of a new session. A missing account and a wrong
// password give the same EUNAUTHORIZED MsgInvalidLogin, after the same
// work. Failures are rate limited as the package comment says: a refused
// attempt is ETOOMANY MsgTooManyLogins (a *LimitError saying how long to
// wait), whether the password is right or not. Attempts are counted before
// the password is checked, so concurrent guesses cannot exceed a limit, and
// given back when they turn out not to be failures. A success forgives the
// failures of its (account, address) pair and makes the address known to
// the account. A deactivated account is EFORBIDDEN.
func (s *Service) Login(ctx context.Context, clientIP, email, password string) (_ *gantry.User, _ string, err error) {
	email = gantry.NormalizeEmail(email)
	if email == "" {
		return nil, "", gantry.Errorf(gantry.EINVALID, "Email is required")
	}
	if password == "" {
		return nil, "", gantry.Errorf(gantry.EINVALID, "Password is required")
	}
	pair := pairKey(email, clientIP)
	known := s.KnownAddresses.Has(pair)
	// A limit whose shared buckets cannot be read refuses with the
	// database's error: not "too many attempts" while it restarts.
	refused := func(l *Limiter, key string, err error) error {
		if err != nil {
			return err
		}
		return tooMany(MsgTooManyLogins, l.Wait(key))
	}
	if ok, err := s.LoginByIP.TakeErr(clientIP); !ok {
		return nil, "", refused(s.LoginByIP, clientIP, err)
	}
	if ok, err := s.LoginByPair.TakeErr(pair); !ok {
		s.LoginByIP.Return(clientIP)
		return nil, "", refused(s.LoginByPair, pair, err)
	}
	if !known {
		if ok, err := s.LoginByAccount.TakeErr(email); !ok {
			s.LoginByIP.Return(clientIP)
			s.LoginByPair.Return(pair)
			return nil, "", refused(s.LoginByAccount, email, err)
		}
	}
	failed := false // a wrong email or password: the attempt keeps counting
	defer func() {
		if !failed {
			s.LoginByIP.Return(clientIP)
			s.LoginByPair.Return(pair)
			if !known {
				s.LoginByAccount.Return(email)
			}
		}
		if err == nil {
			s.LoginByPair.Reset(pair)
			s.KnownAddresses.Add(pair)
		}
	}()
	invalid := gantry.Errorf(gantry.EUNAUTHORIZED, MsgInvalidLogin)
	u, err := s.Users.FindUserByEmail(ctx, email)
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		s.Passwords.VerifyDummy(ctx, password)
		failed = true
		return nil, "", invalid
	} else if err != nil {
		return nil, "", err
	}
	ok, err := s.Passwords.Verify(ctx, u.PasswordHash, password)
	if err != nil {
		return nil, "", err
	} else if !ok {
		failed = true
		return nil, "", invalid
	}
	if !u.IsActive {
		return nil, "", gantry.Errorf(gantry.EFORBIDDEN, MsgInactive)
	}
	now := s.Now().UTC().Truncate(time.Millisecond)
	if err := s.Users.TouchLastLogin(ctx, u.ID, now); err != nil {
		return nil, "", err
	}
	u.LastLogin = &now
	token, err := s.StartSession(ctx, u.ID)
	if err != nil {
		return nil, "", err
	}
	return u, token, nil
}

// StartSession signs userID in: it stores a new session, valid for the
// tokens' lifetime, and returns its bearer token. Sessions of any account
// that have expired are deleted on the way. A missing user is ENOTFOUND.
func (s *Service) StartSession(ctx context.Context, userID string) (string, error) {
	token, c, err := s.Tokens.Issue(userID)
	if err != nil {
		return "", err
	}
	err = s.Sessions.CreateSession(ctx, &gantry.Session{ID: c.SessionID, UserID: userID, CreatedAt: c.IssuedAt, ExpiresAt: c.ExpiresAt})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Session returns the session a bearer token stands for, with its account,
// checking the token (see Tokens.Verify) and then, in one query, that its
// session still exists and the account too. A bad or expired token is
// EUNAUTHORIZED; so is the token of a session that was ended (signed out,
// signed out everywhere, ended by a password change) or issued before
// sessions were stored, and of a deleted account (all MsgSignIn). A
// deactivated account is EFORBIDDEN.
func (s *Service) Session(ctx context.Context, token string) (*Session, error) {
	if token == "" {
		return nil, gantry.Errorf(gantry.EUNAUTHORIZED, MsgSignIn)
	}
	c, err := s.Tokens.Verify(token)
	if err != nil {
		return nil, err
	}
	u, err := s.Sessions.FindSessionUser(ctx, c.SessionID, c.UserID, s.Now())
	if gantry.ErrorCode(err) == gantry.ENOTFOUND {
		return nil, gantry.Errorf(gantry.EUNAUTHORIZED, MsgSignIn)
	} else if err != nil {
		return nil, err
	}
	if !u.IsActive {
		return nil, gantry.Errorf(gantry.EFORBIDDEN, MsgInactive)
	}
	return &Session{ID: c.SessionID, User: u}, nil
}

// Authenticate returns the user a bearer token belongs to, by the rules of
// Session.
func (s *Service) Authenticate(ctx context.Context, token string) (*gantry.User, error) {
	sess, err := s.Session(ctx, token)
	if err != nil {
		return nil, err
	}
	return sess.User, nil
}

// Logout ends sess: its token stops working at once. A session another
// request ended meanwhile is no error.
func (s *Service) Logout(ctx context.Context, sess *Session) error {
	if err := s.Sessions.EndSession(ctx, sess.ID); err != nil && gantry.ErrorCode(err) != gantry.ENOTFOUND {
		return err
	}
	return nil
}

// LogoutAll ends every session of sess's account, sess included, and
// returns how many it ended.
func (s *Service) LogoutAll(ctx context.Context, sess *Session) (int, error) {
	return s.Sessions.EndUserSessions(ctx, sess.User.ID, "")
}

// ChangePassword replaces the password of sess's account after checking
// the current one, and ends every other session of the account (sess keeps
// working). Missing fields and a new password that breaks the SPEC §5
// password rules are EINVALID; a wrong current password is EINVALID
// MsgWrongPassword and counts against the account's PasswordChecks: past
// them, ETOOMANY MsgTooManyPasswords (a *LimitError) until the window has
// passed. Failed sign-ins do not count here, so nobody can lock an owner
// out of changing a password they know. A success forgives the count.
func (s *Service) ChangePassword(ctx context.Context, sess *Session, current, next string) error {
	if current == "" {
		return gantry.Errorf(gantry.EINVALID, "Current password is required")
	}
	if next == "" {
		return gantry.Errorf(gantry.EINVALID, "New password is required")
	}
	if err := gantry.ValidatePassword(next); err != nil {
		return err
	}
	u := sess.User
	if !s.PasswordChecks.Take(u.ID) {
		return tooMany(MsgTooManyPasswords, s.PasswordChecks.Wait(u.ID))
	}
	ok, err := s.Passwords.Verify(ctx, u.PasswordHash, current)
	if err != nil {
		s.PasswordChecks.Return(u.ID)
		return err
	} else if !ok {
		return gantry.Errorf(gantry.EINVALID, MsgWrongPassword) // the attempt keeps counting
	}
	s.PasswordChecks.Reset(u.ID)
	hash, err := s.Passwords.Hash(ctx, next)
	if err != nil {
		return err
	}
	_, err = s.Sessions.ChangePasswordHash(ctx, u.ID, hash, sess.ID)
	return err
}
