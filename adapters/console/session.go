package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// sessionCookie names the console's session cookie.
const sessionCookie = "sm_console"

// session is what the signed cookie carries: when it expires, a random
// nonce (the CSRF token is bound to it, and an operator session is kept in
// the store under its digest), and whether an operator signed in. It never
// carries a key, nor anything derived from one. secret is the one that
// signs it.
type session struct {
	Expires  time.Time
	Nonce    string
	Operator bool
	secret   core.SessionSecret
}

// id is the store's name of an operator session.
func (ss session) id() core.SessionID { return core.SessionIDOf([]byte(ss.Nonce)) }

// sessions signs and checks session cookies with the store's random secret,
// shared by every instance (secretCache), and keeps operator sessions in
// the store, so that signing out ends one on every instance. An anonymous
// session (the sign-in form's, or any visitor's of an open console) is
// only signed: it grants nothing but a CSRF token, and storing one per
// visitor would let anyone fill the store.
type sessions struct {
	store   ports.SessionStore
	secrets *secretCache
	// ttl is the longest a session lasts; a cookie claiming more is
	// refused, whoever signed it.
	ttl time.Duration
}

func newSessions(store ports.SessionStore, clock ports.Clock, ttl time.Duration) *sessions {
	return &sessions{store: store, secrets: &secretCache{store: store, clock: clock}, ttl: ttl}
}

// refusal is a cookie the console does not accept; any other error from
// reading a session is the store's failure.
type refusal string

func (r refusal) Error() string { return string(r) }

const (
	errNoSession  refusal = "no session"
	errBadSession refusal = "the session cookie is not valid"
	errExpired    refusal = "the session has expired"
	errEnded      refusal = "the session has ended (signed out, or every session was ended)"
)

// refused reports whether err is a refusal of the cookie rather than a
// failure to check it.
func refused(err error) bool {
	var r refusal
	return errors.As(err, &r)
}

// anonymous starts an unsigned-in session with a fresh nonce.
func (s *sessions) anonymous(ctx context.Context, now time.Time) (session, error) {
	secret, err := s.secrets.secret(ctx)
	if err != nil {
		return session{}, err
	}
	var nonce [32]byte
	_, _ = rand.Read(nonce[:]) // crypto/rand.Read never fails
	return session{Expires: now.Add(s.ttl), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), secret: secret}, nil
}

// start begins an operator session: a fresh nonce, kept in the store until
// it expires or is ended. Expired sessions are purged on the way.
func (s *sessions) start(ctx context.Context, now time.Time) (session, error) {
	ss, err := s.anonymous(ctx, now)
	if err != nil {
		return session{}, err
	}
	ss.Operator = true
	if _, err := s.store.EndExpiredSessions(ctx, now); err != nil {
		return session{}, err
	}
	if err := s.store.StartSession(ctx, core.ConsoleSession{ID: ss.id(), StartedAt: now, ExpiresAt: ss.Expires}); err != nil {
		return session{}, err
	}
	return ss, nil
}

// end ends an operator session on every instance.
func (s *sessions) end(ctx context.Context, ss session) error {
	if !ss.Operator {
		return nil
	}
	_, err := s.store.EndSession(ctx, ss.id())
	return err
}

// payload is what a cookie's MAC covers.
func (ss session) payload() string {
	role := "0"
	if ss.Operator {
		role = "1"
	}
	return strconv.FormatInt(ss.Expires.Unix(), 10) + "|" + ss.Nonce + "|" + role
}

// sign returns "generation.payload.mac" for a session.
func (ss session) sign() string {
	payload := ss.payload()
	gen := strconv.FormatInt(ss.secret.Generation, 10)
	return gen + "." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." +
		base64.RawURLEncoding.EncodeToString(mac(ss.secret, "session|"+gen+"|"+payload))
}

func mac(secret core.SessionSecret, msg string) []byte {
	m := hmac.New(sha256.New, secret.Key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// verify checks a cookie value: its signature by the current secret, its
// expiry (which may lie no further ahead than the longest session), and
// for an operator session that the store still keeps it.
func (s *sessions) verify(ctx context.Context, value string, now time.Time) (session, error) {
	parts := strings.Split(value, ".")
	if len(parts) != 3 {
		return session{}, errBadSession
	}
	gen, err1 := strconv.ParseInt(parts[0], 10, 64)
	raw, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	got, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || gen < 1 {
		return session{}, errBadSession
	}
	secret, current, err := s.secrets.generation(ctx, gen)
	if err != nil {
		return session{}, err
	}
	if !current || !hmac.Equal(got, mac(secret, "session|"+parts[0]+"|"+string(raw))) {
		return session{}, errBadSession
	}
	fields := strings.Split(string(raw), "|")
	if len(fields) != 3 {
		return session{}, errBadSession
	}
	exp, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return session{}, errBadSession
	}
	ss := session{Expires: time.Unix(exp, 0), Nonce: fields[1], Operator: fields[2] == "1", secret: secret}
	switch {
	case !now.Before(ss.Expires):
		return session{}, errExpired
	case ss.Expires.After(now.Add(s.ttl)):
		return session{}, errBadSession // longer than any session lasts: not ours
	}
	if ss.Operator {
		kept, found, err := s.store.ConsoleSession(ctx, ss.id())
		if err != nil {
			return session{}, err
		}
		if !found {
			return session{}, errEnded
		}
		if !now.Before(kept.ExpiresAt) {
			return session{}, errExpired
		}
	}
	return ss, nil
}

// read returns the request's valid session.
func (s *sessions) read(r *http.Request, now time.Time) (session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, errNoSession
	}
	return s.verify(r.Context(), c.Value, now)
}

// write sets the session cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's request carries it), Secure when the
// console is served over TLS (directly or behind a TLS-terminating proxy
// that says so), scoped to the console and expiring with the session.
func (s *sessions) write(w http.ResponseWriter, r *http.Request, ss session, now time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: ss.sign(), Path: "/ui/",
		Expires: ss.Expires, MaxAge: max(1, int(ss.Expires.Sub(now)/time.Second)),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
}

// clear removes the session cookie.
func (s *sessions) clear(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)})
}

func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// csrfToken is the token every form of a session carries: a MAC of the
// session's nonce, so it is valid for that session only and a new session
// (after sign-in) gets a new token.
func (ss session) csrfToken() string {
	return base64.RawURLEncoding.EncodeToString(mac(ss.secret, "csrf|"+ss.Nonce))
}

// checkCSRF compares a submitted token with the session's in constant time.
func (ss session) checkCSRF(token string) error {
	want := ss.csrfToken()
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return fmt.Errorf("the form's CSRF token does not match this session; reload the page and try again")
	}
	return nil
}
