package core

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// SessionSecretBytes is the size of the console's session secret: 256
// random bits, drawn by whoever stores the first one or rotates it.
const SessionSecretBytes = 32

// SessionSecret is the key the console signs its session cookies and CSRF
// tokens with. It is random and lives in the store, so every instance behind
// a load balancer signs with the same key, and nothing seen outside the
// store (a cookie, an operator key) helps to guess it. Generation counts
// rotations from 1: a cookie names the generation that signed it, so an
// instance seeing a newer one knows to read the secret again.
type SessionSecret struct {
	Generation int64
	Key        []byte
}

// Validate checks what every store refuses to keep.
func (s SessionSecret) Validate() error {
	if len(s.Key) != SessionSecretBytes {
		return fmt.Errorf("a session secret is %d bytes, got %d", SessionSecretBytes, len(s.Key))
	}
	if s.Generation < 1 {
		return fmt.Errorf("a session secret's generation starts at 1, got %d", s.Generation)
	}
	return nil
}

// SessionID names one signed-in console session in the store: the SHA-256
// digest of the random token its cookie carries, so the store never holds
// what a cookie needs, and reading the store does not let anyone sign in.
type SessionID [sha256.Size]byte

// SessionIDOf returns the store's name of the session whose cookie carries
// token.
func SessionIDOf(token []byte) SessionID { return sha256.Sum256(token) }

// ConsoleSession is an operator's signed-in console session as the store
// keeps it. Only the store's word counts: signing out deletes it, and every
// instance then refuses its cookie, whatever the cookie claims.
type ConsoleSession struct {
	ID        SessionID
	StartedAt time.Time
	ExpiresAt time.Time
}

// ErrSessionExists means a session was started under an ID already stored.
// IDs are digests of 256 random bits, so this is a bug, never chance.
var ErrSessionExists = errors.New("a console session with this ID exists")

// Validate checks what every store refuses to keep.
func (s ConsoleSession) Validate() error {
	if s.StartedAt.IsZero() || !s.ExpiresAt.After(s.StartedAt) {
		return fmt.Errorf("a console session expires after it starts (started %v, expires %v)", s.StartedAt, s.ExpiresAt)
	}
	return nil
}
