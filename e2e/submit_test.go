package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

func testCreateRunsTheFirstAttemptAndAccepts(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	// Sent raw: the generated client would compact the payload itself.
	res := submitBody(t, svc.api, `{"intentId": "create-1", "submissionTarget": "sms.realtime",
		"payload": { "to": "+15551234567",  "text": "hi <b>", "z": [1, 2.50] }}`)
	if res.StatusCode() != 201 || res.JSON201 == nil {
		t.Fatalf("create: %d %s", res.StatusCode(), res.Body)
	}
	created := *res.JSON201
	if created.IntentId != "create-1" || created.SubmissionTarget != "sms.realtime" || created.Status != client.IntentStatusPending {
		t.Fatalf("created intent: %+v", created)
	}
	c := created.Contract
	if c.GatewayType != client.Sms || c.Policy != client.Deadline || c.Mode != client.Realtime ||
		c.MaxAcceptanceSeconds == nil || *c.MaxAcceptanceSeconds != 30 || c.MaxAttempts != nil ||
		!slices.Equal(c.TerminalOutcomes, smsTerminal) {
		t.Fatalf("contract snapshot: %+v", c)
	}
	if created.CreatedAt.IsZero() {
		t.Fatal("createdAt is missing")
	}

	done := waitTerminal(t, svc.api, "create-1")
	if done.Status != client.IntentStatusAccepted || done.FinalOutcome == nil || done.FinalOutcome.Status != client.OutcomeStatusAccepted {
		t.Fatalf("want accepted with a final outcome, got %+v", done)
	}
	if done.ExhaustedReason != nil {
		t.Fatalf("an accepted intent has an exhaustedReason: %v", *done.ExhaustedReason)
	}
	if len(done.Attempts) != 1 {
		t.Fatalf("want one attempt, got %+v", done.Attempts)
	}
	a := done.Attempts[0]
	if a.Number != 1 || a.FinishedAt == nil || a.FinishedAt.Before(a.StartedAt) || a.StartedAt.Before(done.CreatedAt) ||
		a.Outcome == nil || a.Outcome.Status != client.OutcomeStatusAccepted || a.Error != nil {
		t.Fatalf("attempt: %+v", a)
	}
	// The gateway got the payload compacted, key order and number spelling
	// kept: byte for byte what the client meant.
	ref := sim.Reference("create-1")
	if ref.Submissions != 1 || string(ref.LastPayload) != `{"to":"+15551234567","text":"hi <b>","z":[1,2.50]}` {
		t.Fatalf("gateway saw %d submissions, last payload %s", ref.Submissions, ref.LastPayload)
	}
}

func testIdempotentRepeatReturnsTheExistingIntent(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	mustCreate(t, svc.api, "repeat-1", "sms.realtime", `{"to":"+1","text":"hi"}`)
	first := waitTerminal(t, svc.api, "repeat-1")

	// Same target, same payload up to white space: the same intent, 200.
	res := submitBody(t, svc.api, `{"intentId":"repeat-1","submissionTarget":"sms.realtime",
		"payload": {
			"to": "+1",
			"text": "hi"
		}}`)
	if res.StatusCode() != 200 || res.JSON200 == nil {
		t.Fatalf("repeat: %d %s, want 200", res.StatusCode(), res.Body)
	}
	again := *res.JSON200
	if again.Status != client.IntentStatusAccepted || !again.CreatedAt.Equal(first.CreatedAt) || len(again.Attempts) != 1 {
		t.Fatalf("repeat returned %+v, want the existing accepted intent", again)
	}
	if n := sim.Reference("repeat-1").Submissions; n != 1 {
		t.Fatalf("a repeat caused a new gateway submission: %d submissions", n)
	}
}

func testIdempotencyConflictNamesFieldsAndExistingStatus(t *testing.T, s store) {
	svc, _ := startStandard(t, s.database(t))
	mustCreate(t, svc.api, "conflict-1", "sms.realtime", `{"a":1,"b":2}`)
	waitTerminal(t, svc.api, "conflict-1")
	cases := []struct {
		target, payload string
		fields          []client.ProblemConflictingFields
	}{
		{"sms.realtime", `{"a":1,"b":2.0}`, []client.ProblemConflictingFields{client.Payload}}, // number spelling matters (key order does not)
		{"sms.batch", `{"a":1,"b":2}`, []client.ProblemConflictingFields{client.SubmissionTarget}},
		{"push.oneshot", `{"a":1.0,"b":2}`, []client.ProblemConflictingFields{client.SubmissionTarget, client.Payload}},
	}
	for _, tc := range cases {
		res := submit(t, svc.api, "conflict-1", tc.target, tc.payload)
		p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 409, "idempotency-conflict")
		if res.ApplicationproblemJSON409 == nil {
			t.Fatal("the generated client did not decode the 409 problem")
		}
		if p.ConflictingFields == nil || !slices.Equal(*p.ConflictingFields, tc.fields) {
			t.Errorf("%s %s: conflictingFields %v, want %v", tc.target, tc.payload, p.ConflictingFields, tc.fields)
		}
		if p.ExistingStatus == nil || *p.ExistingStatus != client.IntentStatusAccepted {
			t.Errorf("existingStatus %v, want accepted", p.ExistingStatus)
		}
		if p.IntentId == nil || *p.IntentId != "conflict-1" {
			t.Errorf("intentId %v, want conflict-1", p.IntentId)
		}
	}
}

func TestUnknownTargetIsUnprocessable(t *testing.T) {
	svc, sim := startStandard(t)
	res := submit(t, svc.api, "unknown-1", "fax.realtime", `{}`)
	p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "unknown-submission-target")
	if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "submissionTarget" {
		t.Fatalf("the problem does not name submissionTarget: %+v", p)
	}
	if got, err := svc.api.GetIntentWithResponse(context.Background(), "unknown-1", nil); err != nil || got.StatusCode() != 404 {
		t.Fatalf("a refused intent was stored: %v %v", got.StatusCode(), err)
	}
	if sim.Stats().Total != 0 {
		t.Fatal("a refused intent reached a gateway")
	}
}

func TestOversizedPayloadIsRefusedByItsCompactedSize(t *testing.T) {
	svc, _ := startStandard(t, func(c *command.ServeConfig) { c.MaxPayloadBytes = 1024 })
	over := `"` + strings.Repeat("x", 1023) + `"` // 1025 bytes
	res := submit(t, svc.api, "big-1", "sms.realtime", over)
	p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 413, "payload-too-large")
	if p.Detail == nil || !strings.Contains(*p.Detail, "1024") {
		t.Errorf("detail %v does not state the limit", p.Detail)
	}
	// Exactly at the limit once compacted (["y…"] is 1024 bytes), though
	// larger as sent: the limit is on what is stored and forwarded.
	at := `[` + strings.Repeat(" ", 600) + `"` + strings.Repeat("y", 1020) + `"]`
	res = submitBody(t, svc.api, `{"intentId":"big-2","submissionTarget":"sms.realtime","payload":`+at+`}`)
	if res.StatusCode() != 201 {
		t.Fatalf("a payload of 1024 compacted bytes: %d %s, want 201", res.StatusCode(), res.Body)
	}
	// The whole body is bounded too, far below what a client could send.
	res = submit(t, svc.api, "big-3", "sms.realtime", `"`+strings.Repeat("z", 1<<20)+`"`)
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 413, "payload-too-large")
}

func TestMalformedAndInvalidRequests(t *testing.T) {
	svc, _ := startStandard(t)
	ctx := context.Background()
	for _, body := range []string{`{"intentId": "m-1", "submissionTarget": "sms.realtime", "payload": {}`, `{}}`, `[1]`, ``} {
		res, err := svc.api.SubmitIntentWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 400, "malformed-request")
	}
	res, err := svc.api.SubmitIntentWithBodyWithResponse(ctx, nil, "text/plain", strings.NewReader(`{"intentId":"m-2"}`))
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 415, "unsupported-media-type")

	long := strings.Repeat("i", 256)
	sub := submit(t, svc.api, long, "sms.realtime", `{}`)
	p := problemOf(t, sub.StatusCode(), sub.HTTPResponse.Header.Get("Content-Type"), sub.Body, 422, "invalid-field")
	if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "intentId" {
		t.Fatalf("a 256-character intentId: %+v", p)
	}
	// 255 characters, several bytes each, are fine.
	mustCreate(t, svc.api, strings.Repeat("é", 255), "sms.realtime", `{}`)

	got, err := svc.api.GetIntentWithResponse(ctx, "never-submitted", nil)
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, got.StatusCode(), got.HTTPResponse.Header.Get("Content-Type"), got.Body, 404, "intent-not-found")
}

// testIntentIDsTravelVerbatim submits identifiers with path and URL
// characters, and characters JSON escapes, and reads them back through the
// path parameter.
func testIntentIDsTravelVerbatim(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	for _, id := range []string{"order/42", "a b?c#d%2F", "ünï-コード-🚀", "-", "a/../b", "%2E%2E", `say "hi"\now`} {
		mustCreate(t, svc.api, id, "sms.realtime", `{"n":1}`)
		in := waitTerminal(t, svc.api, id)
		if in.IntentId != id || in.Status != client.IntentStatusAccepted {
			t.Fatalf("intent %q came back as %q %s", id, in.IntentId, in.Status)
		}
		if sim.Reference(id).Accepted != 1 {
			t.Fatalf("the gateway did not see reference %q", id)
		}
	}
}
