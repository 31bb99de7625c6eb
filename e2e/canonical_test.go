package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// TestRepeatsCompareCanonicalPayloadsAndNotBefore covers the idempotency
// rules over HTTP: the same data in another key order and escaping is a
// repeat (200) that returns the first submission's payload; a repeated
// member name is a 422 naming its path; a different notBefore is a 409
// naming it; a notBefore beyond --max-not-before is a 422 naming it.
func TestRepeatsCompareCanonicalPayloadsAndNotBefore(t *testing.T) {
	svc, _ := startStandard(t)
	const first = `{"to":"+15550100","text":"<b>"}`
	notBefore := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	body := func(payload, nb string) string {
		b := `{"intentId":"c-1","submissionTarget":"sms.realtime","payload":` + payload
		if nb != "" {
			b += `,"notBefore":"` + nb + `"`
		}
		return b + "}"
	}
	if res := submitBody(t, svc.api, body(first, notBefore)); res.StatusCode() != 201 {
		t.Fatalf("first: %d %s", res.StatusCode(), res.Body)
	}
	res := submitBody(t, svc.api, body(`{"text":"\u003cb\u003e","to":"+15550100"}`, notBefore))
	if res.StatusCode() != 200 || res.JSON200 == nil {
		t.Fatalf("repeat in another key order and escaping: %d %s, want 200", res.StatusCode(), res.Body)
	}
	stored := getIntent(t, svc.api, "c-1")
	if stored.NotBefore == nil {
		t.Fatal("the intent does not show its notBefore")
	}

	res = submitBody(t, svc.api, body(first, ""))
	p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 409, "idempotency-conflict")
	if p.ConflictingFields == nil || !slices.Equal(*p.ConflictingFields, []client.ProblemConflictingFields{"notBefore"}) {
		t.Errorf("conflict without notBefore names %v, want [notBefore]", p.ConflictingFields)
	}

	res = submitBody(t, svc.api, `{"intentId":"c-2","submissionTarget":"sms.realtime","payload":{"a":{"b":1,"b":2}}}`)
	p = problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "payload.a.b" {
		body, _ := json.Marshal(p)
		t.Errorf("repeated member: %s, want the field payload.a.b", body)
	}

	far := time.Now().Add(31 * 24 * time.Hour).UTC().Format(time.RFC3339)
	res = submitBody(t, svc.api, `{"intentId":"c-3","submissionTarget":"sms.realtime","payload":{},"notBefore":"`+far+`"}`)
	p = problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "notBefore" {
		t.Errorf("notBefore 31 days ahead: %s, want the field notBefore", res.Body)
	}
}
