package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sessionCookie names the console's session cookie.
const sessionCookie = "sm_console"

// session is what the signed cookie carries: when it expires, a random
// nonce the CSRF token is bound to, and whether an operator signed in.
// It never carries a key, nor anything derived from one key.
type session struct {
	Expires  time.Time
	Nonce    string
	Operator bool
}

// sessions signs and verifies session cookies. The signing key is derived
// from all operator keys, so every instance configured with the same keys
// accepts the same sessions (behind a load balancer) and changing the keys
// ends every session; with no operator key it is random per process.
type sessions struct {
	key []byte
	ttl time.Duration
}

// newSessions derives the signing key from the operator keys, or draws a
// random one when there are none.
func newSessions(operatorKeys []string, ttl time.Duration) sessions {
	mac := hmac.New(sha256.New, []byte("submission-manager console session v1"))
	keys := slices.Clone(operatorKeys)
	slices.Sort(keys)
	for _, k := range keys {
		mac.Write([]byte(k))
		mac.Write([]byte{0})
	}
	if len(keys) == 0 {
		var random [32]byte
		_, _ = rand.Read(random[:]) // crypto/rand.Read never fails
		mac.Write(random[:])
	}
	return sessions{key: mac.Sum(nil), ttl: ttl}
}

// newSession starts a session with a fresh nonce.
func (s sessions) newSession(now time.Time, operator bool) session {
	var nonce [18]byte
	_, _ = rand.Read(nonce[:])
	return session{Expires: now.Add(s.ttl), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), Operator: operator}
}

// sign returns "payload.mac" for a session.
func (s sessions) sign(ss session) string {
	role := "0"
	if ss.Operator {
		role = "1"
	}
	payload := strconv.FormatInt(ss.Expires.Unix(), 10) + "|" + ss.Nonce + "|" + role
	enc := base64.RawURLEncoding.EncodeToString([]byte(payload))
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac("session|"+payload))
}

func (s sessions) mac(msg string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

var (
	errNoSession  = errors.New("no session")
	errBadSession = errors.New("the session cookie is not valid")
	errExpired    = errors.New("the session has expired")
)

// verify checks a cookie value's signature and expiry.
func (s sessions) verify(value string, now time.Time) (session, error) {
	enc, sig, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, errBadSession
	}
	raw, err1 := base64.RawURLEncoding.DecodeString(enc)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(got, s.mac("session|"+string(raw))) {
		return session{}, errBadSession
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 3 {
		return session{}, errBadSession
	}
	exp, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return session{}, errBadSession
	}
	ss := session{Expires: time.Unix(exp, 0), Nonce: parts[1], Operator: parts[2] == "1"}
	if !now.Before(ss.Expires) {
		return session{}, errExpired
	}
	return ss, nil
}

// read returns the request's valid session.
func (s sessions) read(r *http.Request, now time.Time) (session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, errNoSession
	}
	return s.verify(c.Value, now)
}

// write sets the session cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's request carries it), Secure when the
// console is served over TLS (directly or behind a TLS-terminating proxy
// that says so), scoped to the console and expiring with the session.
func (s sessions) write(w http.ResponseWriter, r *http.Request, ss session) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: s.sign(ss), Path: "/ui/",
		Expires: ss.Expires, MaxAge: int(s.ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
}

// clear removes the session cookie.
func (s sessions) clear(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)})
}

func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// csrfToken is the token every form of a session carries: a MAC of the
// session's nonce, so it is valid for that session only and a new session
// (after sign-in) gets a new token.
func (s sessions) csrfToken(ss session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf|" + ss.Nonce))
}

// checkCSRF compares a submitted token with the session's in constant time.
func (s sessions) checkCSRF(ss session, token string) error {
	want := s.csrfToken(ss)
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return fmt.Errorf("the form's CSRF token does not match this session; reload the page and try again")
	}
	return nil
}
