package console

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// newTestSessions returns sessions on a fresh store, with the store and
// the clock they read.
func newTestSessions(t *testing.T, ttl time.Duration) (*sessions, *memstore.Store, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	return newSessions(store, clk, ttl), store, clk
}

func mustStart(t *testing.T, s *sessions, now time.Time) session {
	t.Helper()
	ss, err := s.start(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

func TestSessionRoundTripAndExpiry(t *testing.T) {
	s, _, _ := newTestSessions(t, time.Hour)
	ctx := context.Background()
	ss := mustStart(t, s, t0)
	got, err := s.verify(ctx, ss.sign(), t0.Add(59*time.Minute))
	if err != nil || !got.Operator || got.Nonce != ss.Nonce {
		t.Fatalf("verify = %+v, %v", got, err)
	}
	if _, err := s.verify(ctx, ss.sign(), t0.Add(time.Hour)); err != errExpired {
		t.Fatalf("verify at expiry: %v, want errExpired", err)
	}
}

// TestSessionSecretIsNotDerivedFromKeys: cookies are signed with the
// store's random secret, so consoles with the same operator keys but
// another store refuse each other's cookies; an anonymous cookie thus says
// nothing about the keys and cannot be used to guess them offline.
func TestSessionSecretIsNotDerivedFromKeys(t *testing.T) {
	a, _, _ := newTestSessions(t, time.Hour)
	b, _, _ := newTestSessions(t, time.Hour)
	ctx := context.Background()
	anon, err := a.anonymous(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.verify(ctx, anon.sign(), t0); err == nil {
		t.Fatal("a console on another store accepted the cookie")
	}
	if anon.secret.Generation != 1 || len(anon.secret.Key) != 32 {
		t.Fatalf("secret generation %d, %d bytes", anon.secret.Generation, len(anon.secret.Key))
	}
}

func TestSessionRefusesTampering(t *testing.T) {
	s, _, _ := newTestSessions(t, time.Hour)
	ctx := context.Background()
	anon, _ := s.anonymous(ctx, t0)
	value := anon.sign()
	parts := strings.Split(value, ".")
	// Turning an anonymous session into an operator's without the store.
	op := anon
	op.Operator = true
	forged := strings.Split(op.sign(), ".")
	for name, v := range map[string]string{
		"payload swapped":   parts[0] + "." + forged[1] + "." + parts[2],
		"no signature":      parts[0] + "." + parts[1],
		"other generation":  "2." + parts[1] + "." + parts[2],
		"empty":             "",
		"garbage":           "!!!.!!!.!!!",
		"operator unstored": op.sign(), // signed right, but no sign-in kept it
	} {
		if _, err := s.verify(ctx, v, t0); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !refused(err) {
			t.Errorf("%s: %v is not a refusal", name, err)
		}
	}
}

// TestCookieExpiryIsBounded: a cookie may not claim to last longer than a
// session does, even with a valid signature (as a leaked or forged secret
// would give); and an operator cookie ends when the store's session does.
func TestCookieExpiryIsBounded(t *testing.T) {
	s, store, _ := newTestSessions(t, time.Hour)
	ctx := context.Background()
	anon, _ := s.anonymous(ctx, t0)
	anon.Expires = t0.Add(10 * 365 * 24 * time.Hour)
	if _, err := s.verify(ctx, anon.sign(), t0); err == nil {
		t.Fatal("a cookie claiming ten years was accepted")
	}
	op := mustStart(t, s, t0)
	kept, _, _ := store.ConsoleSession(ctx, op.id())
	if !kept.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("kept session expires %v", kept.ExpiresAt)
	}
	// Re-signed an hour later to expire later still: within the bound from
	// then, but the store's session has expired.
	op.Expires = t0.Add(90 * time.Minute)
	if _, err := s.verify(ctx, op.sign(), t0.Add(time.Hour)); err != errExpired {
		t.Fatalf("an operator cookie outliving its stored session: %v, want errExpired", err)
	}
}

// TestSignOutAndRotationEndSessionsEverywhere: two instances on one store
// accept each other's sessions; ending one (sign-out) ends it on both, and
// a rotation of the secret ends every session and every older cookie.
func TestSignOutAndRotationEndSessionsEverywhere(t *testing.T) {
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	a, b := newSessions(store, clk, time.Hour), newSessions(store, clk, time.Hour)
	ctx := context.Background()
	one, two := mustStart(t, a, t0), mustStart(t, a, t0)
	if _, err := b.verify(ctx, one.sign(), t0); err != nil {
		t.Fatalf("the other instance refused the session: %v", err)
	}
	if one.csrfToken() == two.csrfToken() {
		t.Fatal("two sessions share a CSRF token")
	}
	if err := a.end(ctx, one); err != nil {
		t.Fatal(err)
	}
	if _, err := b.verify(ctx, one.sign(), t0); err != errEnded {
		t.Fatalf("the other instance after sign-out: %v, want errEnded", err)
	}
	if _, err := b.verify(ctx, two.sign(), t0); err != nil {
		t.Fatalf("ending one session ended another: %v", err)
	}
	anon, _ := a.anonymous(ctx, t0)
	if _, err := store.RotateSessionSecret(ctx, make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.verify(ctx, two.sign(), t0); err != errEnded {
		t.Fatalf("an operator session after rotation: %v, want errEnded", err)
	}
	clk.Advance(secretRefresh)
	if _, err := b.verify(ctx, anon.sign(), clk.Now()); err == nil {
		t.Fatal("a cookie of the rotated-away secret is still accepted")
	}
	if next, _ := b.anonymous(ctx, clk.Now()); next.secret.Generation != 2 {
		t.Fatalf("after rotation new cookies are signed by generation %d", next.secret.Generation)
	}
}

func TestCSRFBoundToSession(t *testing.T) {
	s, _, _ := newTestSessions(t, time.Hour)
	one, two := mustStart(t, s, t0), mustStart(t, s, t0)
	if err := one.checkCSRF(one.csrfToken()); err != nil {
		t.Fatalf("own token refused: %v", err)
	}
	for name, tok := range map[string]string{"empty": "", "other session's": two.csrfToken(), "truncated": one.csrfToken()[:10]} {
		if err := one.checkCSRF(tok); err == nil {
			t.Errorf("%s token accepted", name)
		}
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	s, _, _ := newTestSessions(t, time.Hour)
	for _, tls := range []bool{false, true} {
		r := httptest.NewRequest("GET", "/ui/", nil)
		if tls {
			r = httptest.NewRequest("GET", "https://console.example/ui/", nil)
		}
		w := httptest.NewRecorder()
		s.write(w, r, mustStart(t, s, t0), t0)
		c := w.Result().Cookies()[0]
		if !c.HttpOnly || c.SameSite != 3 /* Strict */ || c.Path != "/ui/" || c.Secure != tls || c.MaxAge != 3600 {
			t.Errorf("tls=%v: cookie %+v", tls, c)
		}
	}
}
