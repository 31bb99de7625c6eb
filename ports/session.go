package ports

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// SessionStore keeps the console's session secret and its signed-in
// sessions in the database, so every instance behind a load balancer signs
// with one secret and a sign-out ends a session on all of them at once.
// Sessions are operator writes, not execution state: nothing fences them.
type SessionStore interface {
	// SessionSecret returns the current secret. A store without one keeps
	// first (its Generation is ignored: the first is generation 1) and
	// returns it; instances starting together all get the secret that was
	// stored first, never each their own.
	SessionSecret(ctx context.Context, first []byte) (core.SessionSecret, error)
	// RotateSessionSecret keeps key as the next generation's secret,
	// forgets every older one and ends every session, in one step: no
	// session survives a rotation, and cookies signed before it stop
	// verifying wherever the new secret is read. Concurrent rotations each
	// get a generation of their own; the highest is current.
	RotateSessionSecret(ctx context.Context, key []byte) (core.SessionSecret, error)
	// StartSession keeps a new session; an ID already kept is
	// core.ErrSessionExists.
	StartSession(ctx context.Context, s core.ConsoleSession) error
	// ConsoleSession returns the kept session; found is false when there
	// is none (never started, ended, expired and purged, or rotated away).
	// Whether it has expired is the caller's to judge, by its ExpiresAt.
	ConsoleSession(ctx context.Context, id core.SessionID) (s core.ConsoleSession, found bool, err error)
	// EndSession deletes the session and reports whether there was one.
	EndSession(ctx context.Context, id core.SessionID) (bool, error)
	// EndExpiredSessions deletes every session whose ExpiresAt is not
	// after now and returns how many it deleted.
	EndExpiredSessions(ctx context.Context, now time.Time) (int64, error)
}
