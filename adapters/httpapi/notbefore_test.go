package httpapi_test

import (
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
)

func TestNotBeforeMustBeAnRFC3339DateTimeGivenOnce(t *testing.T) {
	c := start(t, httpapi.Config{})
	for _, nb := range []string{`"tomorrow"`, `"2026-02-02"`, `"2026-02-02T09:00:00"`, `"2026-02-30T09:00:00Z"`, `12`, `null`, `"x", "notBefore": "2026-02-02T09:00:00Z"`,
		// RFC 3339 offsets run to +23:59, hours have two digits, fractions
		// follow a period.
		`"2026-02-02T09:00:00+24:00"`, `"2026-02-02T09:00:00-23:60"`, `"2026-02-02T9:00:00Z"`, `"2026-02-02T09:00:00,5Z"`,
		// Zero values of common clients, which a store would keep as "none".
		`"0001-01-01T00:00:00Z"`, `"1970-01-01T00:00:00Z"`, `"0000-01-01T00:00:00Z"`} {
		body := `{"intentId":"a","submissionTarget":"t","payload":{},"notBefore":` + nb + `}`
		res := submitRaw(t, c, "application/json", body)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if f := invalidField(t, p); f != "notBefore" {
			t.Errorf("notBefore %s: the problem names %q", nb, f)
		}
	}
	dup := `{"intentId":"a","submissionTarget":"t","payload":{},"notBefore":"2026-02-02T09:00:00Z","notBefore":"2026-02-02T09:00:00Z"}`
	res := submitRaw(t, c, "application/json", dup)
	p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if f := invalidField(t, p); f != "notBefore" || !strings.Contains(*p.Detail, "once") {
		t.Errorf("notBefore twice: %s", res.Body)
	}
}

// TestZeroNotBeforeIsRefusedNotDropped: a client's zero date used to be
// taken as "no notBefore", so the intent was stored without it and a repeat
// without it was a 200 instead of the 409 a different notBefore gets. It is
// refused, and nothing is stored.
func TestZeroNotBeforeIsRefusedNotDropped(t *testing.T) {
	_, c := startStoring(t, httpapi.Config{}, &storingService{})
	body := `{"intentId":"zero","submissionTarget":"sms.realtime","payload":{},"notBefore":"0001-01-01T00:00:00Z"}`
	res := submitRaw(t, c, "application/json", body)
	p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if f := invalidField(t, p); f != "notBefore" || !strings.Contains(*p.Detail, "2000-01-01T00:00:00Z") {
		t.Errorf("zero notBefore: %s", res.Body)
	}
	if res := submitRaw(t, c, "application/json", submitBody("zero", "sms.realtime", `{}`)); res.StatusCode() != 201 {
		t.Errorf("the same intent without notBefore: %d, want 201 (nothing was stored); %s", res.StatusCode(), res.Body)
	}
}
