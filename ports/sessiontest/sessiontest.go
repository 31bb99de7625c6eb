// Package sessiontest is the conformance suite of ports.SessionStore. Every
// implementation runs it from its own tests, on its own real database:
//
//	func TestSessionConformance(t *testing.T) {
//		sessiontest.Run(t, func(t *testing.T) ports.SessionStore {
//			return openFreshDatabase(t).Sessions() // empty schema, closed by t.Cleanup
//		})
//	}
//
// newStore is called once per subtest and must return a store on an empty,
// migrated database that nothing else writes to. The suite checks through
// the port alone that the first stored secret wins (also among concurrent
// callers), that a rotation moves to a new generation and ends every
// session, and that sessions are kept, found, ended and purged by expiry.
// Times are whole microseconds, which every store keeps exactly.
package sessiontest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Run runs every case as a subtest, each on a fresh store.
func Run(t *testing.T, newStore func(t *testing.T) ports.SessionStore) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(t *testing.T, s ports.SessionStore)
	}{
		{"FirstSecretWins", testFirstSecretWins},
		{"ConcurrentFirstSecretsAgree", testConcurrentFirstSecrets},
		{"RotationMovesOnAndEndsSessions", testRotation},
		{"RotateWithoutSecret", testRotateWithoutSecret},
		{"ConcurrentRotations", testConcurrentRotations},
		{"BadSecretsRefused", testBadSecrets},
		{"SessionLifecycle", testSessionLifecycle},
		{"DuplicateSessionRefused", testDuplicateSession},
		{"EndExpiredSessions", testEndExpired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newStore(t))
		})
	}
}

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, core.SessionSecretBytes)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}

func randomID(t *testing.T) core.SessionID {
	t.Helper()
	return core.SessionIDOf(randomKey(t))
}

func mustSecret(t *testing.T, s ports.SessionStore, first []byte) core.SessionSecret {
	t.Helper()
	got, err := s.SessionSecret(t.Context(), first)
	if err != nil {
		t.Fatalf("SessionSecret: %v", err)
	}
	return got
}

func testFirstSecretWins(t *testing.T, s ports.SessionStore) {
	a, b := randomKey(t), randomKey(t)
	got := mustSecret(t, s, a)
	if got.Generation != 1 || !bytes.Equal(got.Key, a) {
		t.Fatalf("first SessionSecret = generation %d, key stored %v; want generation 1 with the given key",
			got.Generation, bytes.Equal(got.Key, a))
	}
	if again := mustSecret(t, s, b); again.Generation != 1 || !bytes.Equal(again.Key, a) {
		t.Fatalf("second SessionSecret replaced the first secret (generation %d)", again.Generation)
	}
}

func testConcurrentFirstSecrets(t *testing.T, s ports.SessionStore) {
	const callers = 8
	got := make([]core.SessionSecret, callers)
	errs := make([]error, callers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range callers {
		key := randomKey(t)
		wg.Go(func() {
			<-start
			got[i], errs[i] = s.SessionSecret(t.Context(), key)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent first SessionSecret: %v", err)
	}
	for i, g := range got {
		if g.Generation != 1 || !bytes.Equal(g.Key, got[0].Key) {
			t.Fatalf("caller %d got generation %d and another key than caller 0: instances would sign apart", i, g.Generation)
		}
	}
}

func testRotation(t *testing.T, s ports.SessionStore) {
	ctx := t.Context()
	first := mustSecret(t, s, randomKey(t))
	id := randomID(t)
	if err := s.StartSession(ctx, core.ConsoleSession{ID: id, StartedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	next := randomKey(t)
	rotated, err := s.RotateSessionSecret(ctx, next)
	if err != nil {
		t.Fatalf("RotateSessionSecret: %v", err)
	}
	if rotated.Generation != first.Generation+1 || !bytes.Equal(rotated.Key, next) {
		t.Fatalf("rotation gave generation %d (key kept: %v), want %d with the new key",
			rotated.Generation, bytes.Equal(rotated.Key, next), first.Generation+1)
	}
	if cur := mustSecret(t, s, randomKey(t)); cur.Generation != rotated.Generation || !bytes.Equal(cur.Key, next) {
		t.Fatalf("after rotation SessionSecret = generation %d, want %d", cur.Generation, rotated.Generation)
	}
	if _, found, err := s.ConsoleSession(ctx, id); err != nil || found {
		t.Fatalf("a session survived the rotation: found=%v err=%v", found, err)
	}
}

func testRotateWithoutSecret(t *testing.T, s ports.SessionStore) {
	key := randomKey(t)
	got, err := s.RotateSessionSecret(t.Context(), key)
	if err != nil || got.Generation != 1 || !bytes.Equal(got.Key, key) {
		t.Fatalf("rotation of a store without a secret = generation %d, %v; want generation 1 with the key", got.Generation, err)
	}
	if cur := mustSecret(t, s, randomKey(t)); cur.Generation != 1 || !bytes.Equal(cur.Key, key) {
		t.Fatalf("after the first rotation SessionSecret = generation %d", cur.Generation)
	}
}

func testConcurrentRotations(t *testing.T, s ports.SessionStore) {
	const rotators = 4
	base := mustSecret(t, s, randomKey(t))
	got := make([]core.SessionSecret, rotators)
	errs := make([]error, rotators)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range rotators {
		key := randomKey(t)
		wg.Go(func() {
			<-start
			got[i], errs[i] = s.RotateSessionSecret(t.Context(), key)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent rotations: %v", err)
	}
	gens := make([]int64, rotators)
	for i, g := range got {
		gens[i] = g.Generation
	}
	slices.Sort(gens)
	for i, g := range gens {
		if g != base.Generation+1+int64(i) {
			t.Fatalf("concurrent rotations got generations %v, want each its own after %d", gens, base.Generation)
		}
	}
	last := got[slices.IndexFunc(got, func(g core.SessionSecret) bool { return g.Generation == gens[rotators-1] })]
	if cur := mustSecret(t, s, randomKey(t)); cur.Generation != last.Generation || !bytes.Equal(cur.Key, last.Key) {
		t.Fatalf("current secret is generation %d, want the last rotation's %d", cur.Generation, last.Generation)
	}
}

func testBadSecrets(t *testing.T, s ports.SessionStore) {
	ctx := t.Context()
	for _, key := range [][]byte{nil, make([]byte, core.SessionSecretBytes-1), make([]byte, core.SessionSecretBytes+1)} {
		if _, err := s.SessionSecret(ctx, key); err == nil {
			t.Errorf("SessionSecret kept a %d-byte secret", len(key))
		}
		if _, err := s.RotateSessionSecret(ctx, key); err == nil {
			t.Errorf("RotateSessionSecret kept a %d-byte secret", len(key))
		}
	}
	if err := s.StartSession(ctx, core.ConsoleSession{ID: randomID(t), StartedAt: t0, ExpiresAt: t0}); err == nil {
		t.Error("StartSession kept a session that expires as it starts")
	}
}

func testSessionLifecycle(t *testing.T, s ports.SessionStore) {
	ctx := t.Context()
	want := core.ConsoleSession{ID: randomID(t), StartedAt: t0.Add(123456 * time.Microsecond), ExpiresAt: t0.Add(8 * time.Hour)}
	if err := s.StartSession(ctx, want); err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	other := core.ConsoleSession{ID: randomID(t), StartedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := s.StartSession(ctx, other); err != nil {
		t.Fatalf("StartSession: %v", err)
	}
	got, found, err := s.ConsoleSession(ctx, want.ID)
	if err != nil || !found {
		t.Fatalf("ConsoleSession of a started session: found=%v err=%v", found, err)
	}
	if got.ID != want.ID || !got.StartedAt.Equal(want.StartedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("ConsoleSession = %+v, want %+v", got, want)
	}
	if ended, err := s.EndSession(ctx, want.ID); err != nil || !ended {
		t.Fatalf("EndSession = %v, %v; want true", ended, err)
	}
	if _, found, err := s.ConsoleSession(ctx, want.ID); err != nil || found {
		t.Fatalf("ConsoleSession after EndSession: found=%v err=%v", found, err)
	}
	if ended, err := s.EndSession(ctx, want.ID); err != nil || ended {
		t.Fatalf("second EndSession = %v, %v; want false", ended, err)
	}
	if _, found, err := s.ConsoleSession(ctx, other.ID); err != nil || !found {
		t.Fatalf("ending one session ended another: found=%v err=%v", found, err)
	}
	if _, found, err := s.ConsoleSession(ctx, randomID(t)); err != nil || found {
		t.Fatalf("ConsoleSession of an unknown ID: found=%v err=%v", found, err)
	}
}

func testDuplicateSession(t *testing.T, s ports.SessionStore) {
	ctx := t.Context()
	sess := core.ConsoleSession{ID: randomID(t), StartedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := s.StartSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	later := sess
	later.ExpiresAt = t0.Add(2 * time.Hour)
	if err := s.StartSession(ctx, later); !errors.Is(err, core.ErrSessionExists) {
		t.Fatalf("StartSession of a kept ID: %v, want core.ErrSessionExists", err)
	}
	if got, _, _ := s.ConsoleSession(ctx, sess.ID); !got.ExpiresAt.Equal(sess.ExpiresAt) {
		t.Fatalf("the refused start changed the session: expires %v", got.ExpiresAt)
	}
}

func testEndExpired(t *testing.T, s ports.SessionStore) {
	ctx := t.Context()
	now := t0.Add(time.Hour)
	ids := map[time.Duration]core.SessionID{}
	for _, d := range []time.Duration{-time.Minute, -time.Microsecond, 0, time.Microsecond, time.Minute} {
		id := randomID(t)
		ids[d] = id
		if err := s.StartSession(ctx, core.ConsoleSession{ID: id, StartedAt: t0, ExpiresAt: now.Add(d)}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.EndExpiredSessions(ctx, now)
	if err != nil || n != 3 {
		t.Fatalf("EndExpiredSessions = %d, %v; want the 3 sessions expiring at or before now", n, err)
	}
	for d, id := range ids {
		_, found, err := s.ConsoleSession(ctx, id)
		if err != nil || found != (d > 0) {
			t.Errorf("session expiring at now%+v: found=%v err=%v", d, found, err)
		}
	}
}
