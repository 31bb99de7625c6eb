package console

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

func TestSessionRoundTripAndExpiry(t *testing.T) {
	s := newSessions([]string{"op-1", "op-2"}, time.Hour)
	ss := s.newSession(t0, true)
	got, err := s.verify(s.sign(ss), t0.Add(59*time.Minute))
	if err != nil || !got.Operator || got.Nonce != ss.Nonce {
		t.Fatalf("verify = %+v, %v", got, err)
	}
	if _, err := s.verify(s.sign(ss), t0.Add(time.Hour)); err != errExpired {
		t.Fatalf("verify at expiry: %v, want errExpired", err)
	}
}

func TestSessionRefusesTampering(t *testing.T) {
	s := newSessions([]string{"op-1"}, time.Hour)
	anon := s.sign(s.newSession(t0, false))
	payload, mac, _ := strings.Cut(anon, ".")
	// Turning an anonymous session into an operator's without the key.
	forged := s.sign(session{Expires: t0.Add(time.Hour), Nonce: "n", Operator: true})
	forgedPayload, _, _ := strings.Cut(forged, ".")
	for name, v := range map[string]string{
		"payload swapped":    forgedPayload + "." + mac,
		"no signature":       payload,
		"empty":              "",
		"garbage":            "!!!.!!!",
		"other keys' cookie": newSessions([]string{"op-2"}, time.Hour).sign(session{Expires: t0.Add(time.Hour), Nonce: "n", Operator: true}),
	} {
		if _, err := s.verify(v, t0); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSessionsAgreeAcrossInstancesWithTheSameKeys(t *testing.T) {
	a := newSessions([]string{"op-1", "op-2"}, time.Hour)
	b := newSessions([]string{"op-2", "op-1"}, time.Hour)
	ss := a.newSession(t0, true)
	if _, err := b.verify(a.sign(ss), t0); err != nil {
		t.Fatalf("an instance with the same keys refused the session: %v", err)
	}
	if a.csrfToken(ss) != b.csrfToken(ss) {
		t.Fatal("CSRF tokens differ across instances with the same keys")
	}
	// Without operator keys, each process signs with its own random key.
	if _, err := newSessions(nil, time.Hour).verify(newSessions(nil, time.Hour).sign(ss), t0); err == nil {
		t.Fatal("two keyless processes share a signing key")
	}
}

func TestCSRFBoundToSession(t *testing.T) {
	s := newSessions([]string{"op-1"}, time.Hour)
	one, two := s.newSession(t0, true), s.newSession(t0, true)
	if err := s.checkCSRF(one, s.csrfToken(one)); err != nil {
		t.Fatalf("own token refused: %v", err)
	}
	for name, tok := range map[string]string{"empty": "", "other session's": s.csrfToken(two), "truncated": s.csrfToken(one)[:10]} {
		if err := s.checkCSRF(one, tok); err == nil {
			t.Errorf("%s token accepted", name)
		}
	}
}

func TestSessionCookieAttributes(t *testing.T) {
	s := newSessions([]string{"op-1"}, time.Hour)
	for _, tls := range []bool{false, true} {
		r := httptest.NewRequest("GET", "/ui/", nil)
		if tls {
			r = httptest.NewRequest("GET", "https://console.example/ui/", nil)
		}
		w := httptest.NewRecorder()
		s.write(w, r, s.newSession(t0, true))
		c := w.Result().Cookies()[0]
		if !c.HttpOnly || c.SameSite != 3 /* Strict */ || c.Path != "/ui/" || c.Secure != tls || c.MaxAge != 3600 {
			t.Errorf("tls=%v: cookie %+v", tls, c)
		}
		if strings.Contains(c.Value, "op-1") {
			t.Error("the cookie carries the key")
		}
	}
}
