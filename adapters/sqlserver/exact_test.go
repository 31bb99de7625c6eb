package sqlserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// awkwardIDs are intentIds that JSON must escape ("\"" and "\\") or that
// are not ASCII: each must come back exactly as sent, whichever statement
// carried it. Babelfish's OPENJSON hands string values back still escaped
// (`a\"b` for `a"b`), so these catch a set travelling through JSON.
var awkwardIDs = []string{`quote"d`, `back\slash`, `both\"`, `"`, `\`, "é👋", "<&>", "~", "~0~1", "A", "a"}

// awkwardPayload is a payload whose bytes JSON must escape and that holds
// non-ASCII text: it is stored and read back byte for byte.
var awkwardPayload = json.RawMessage(`{"text":"say \"hi\" \\ \u00e9 👋","n":1}`)

// asciiAwkwardPayload is a payload of printable ASCII only, which the
// batch insert carries in its JSON (payloadTravelsInJSON), whose bytes JSON
// must escape and look like jsontext.go's codes, and longer than
// Babelfish's OPENJSON WITH reads whole.
var asciiAwkwardPayload = json.RawMessage(`{"text":"say \"hi\" \\ ~0 ~1 \u00e9 \ud83d\udc4b","pad":"` + strings.Repeat(`~\"x`, 1200) + `"}`)

// TestValuesTravelExactly stores and reads back intents with awkward ids,
// targets, payloads and contracts through every path that carries many
// intents at once (the batch insert, as the text statement and as the
// procedure, GetIntents, listing with attempts), and checks each value
// against what was sent.
func TestValuesTravelExactly(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload json.RawMessage
		inJSON  bool
	}{{"non-ASCII payload", awkwardPayload, false}, {"long ASCII payload", asciiAwkwardPayload, true}} {
		if !json.Valid(c.payload) || payloadTravelsInJSON(c.payload) != c.inJSON {
			t.Fatalf("%s: the payload is not JSON, or does not take the request meant for it", c.name)
		}
		t.Run(c.name, func(t *testing.T) { valuesTravelExactly(t, c.payload) })
	}
}

// valuesTravelExactly is TestValuesTravelExactly with every intent's
// payload payload.
func valuesTravelExactly(t *testing.T, payload json.RawMessage) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	ctx := context.Background()
	contract := testContract
	contract.SubmissionTarget = `tar"get\x`
	contract.GatewayURL = `http://127.0.0.1:9/sms?q="x"\y`
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var batch []core.Intent
	for _, id := range awkwardIDs {
		batch = append(batch, core.NewIntent(id, contract, payload, created))
	}
	res, err := s.CreateIntents(ctx, batch)
	if err != nil {
		t.Fatalf("CreateIntents: %v", err)
	}
	for i, r := range res {
		if !r.Created || r.Refused != nil {
			t.Fatalf("item %d (%q): created=%v refused=%v", i, batch[i].IntentID, r.Created, r.Refused)
		}
		assertExact(t, "CreateIntents", r.Intent, batch[i])
	}
	// A repeat of the batch finds every intent: the taken rows are read back
	// by intentId.
	again, err := s.CreateIntents(ctx, batch)
	if err != nil {
		t.Fatalf("CreateIntents again: %v", err)
	}
	for i, r := range again {
		if r.Created {
			t.Errorf("repeat of %q created a second intent", batch[i].IntentID)
		}
		assertExact(t, "CreateIntents repeat", r.Intent, batch[i])
	}

	// Every intent gets an attempt, so reads of many intents must attach
	// attempts by intentId.
	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-test", time.Hour)
	for _, id := range awkwardIDs {
		if err := s.StartAttempt(ctx, ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: created.Add(time.Second)}); err != nil {
			t.Fatalf("StartAttempt(%q): %v", id, err)
		}
	}
	got, err := s.GetIntents(ctx, awkwardIDs)
	if err != nil {
		t.Fatalf("GetIntents: %v", err)
	}
	if len(got) != len(awkwardIDs) {
		t.Fatalf("GetIntents found %d of %d intents", len(got), len(awkwardIDs))
	}
	byID := map[string]core.Intent{}
	for _, in := range batch {
		byID[in.IntentID] = in
	}
	for _, in := range got {
		assertExact(t, "GetIntents", in, byID[in.IntentID])
		if len(in.Attempts) != 1 {
			t.Errorf("GetIntents: %q has %d attempts, want 1", in.IntentID, len(in.Attempts))
		}
	}
	page, err := s.ListIntents(ctx, ports.ListIntentsParams{Limit: len(awkwardIDs) + 1})
	if err != nil {
		t.Fatalf("ListIntents: %v", err)
	}
	var listed []string
	for _, in := range page {
		listed = append(listed, in.IntentID)
		if len(in.Attempts) != 1 {
			t.Errorf("ListIntents: %q has %d attempts, want 1", in.IntentID, len(in.Attempts))
		}
	}
	if want := slices.Sorted(slices.Values(awkwardIDs)); !slices.Equal(slices.Sorted(slices.Values(listed)), want) {
		t.Errorf("ListIntents listed %q, want %q", listed, want)
	}

	// The results travel in one batch, with texts JSON would escape.
	var finishes []ports.FinishAttemptParams
	for i, id := range awkwardIDs {
		o := core.Outcome{Status: core.OutcomeRejected, Reason: `reason "` + id + "\"\\\t~0", MessageID: "m~" + id}
		finishes = append(finishes, ports.FinishAttemptParams{
			Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: created.Add(2 * time.Second), Sent: true,
			Outcome: &o, Decision: core.Decision{Status: core.StatusPending, NextDueAt: created.Add(time.Duration(i) * time.Second)},
		})
		if i%2 == 1 {
			finishes[i].Outcome, finishes[i].Error = nil, `Post "http://127.0.0.1:9/`+id+"\":\n\\x ~1"
		}
		if i%3 == 2 {
			// Longer than Babelfish's OPENJSON WITH reads (jsonTextLong).
			finishes[i].Outcome, finishes[i].Error = nil, strings.Repeat("☃ \"~\n", 1500)+id
		}
	}
	for i, err := range s.FinishAttempts(ctx, finishes) {
		if err != nil {
			t.Fatalf("FinishAttempts item %d (%q): %v", i, awkwardIDs[i], err)
		}
	}
	for _, p := range finishes {
		in, err := s.GetIntent(ctx, p.IntentID)
		if err != nil {
			t.Fatalf("GetIntent(%q): %v", p.IntentID, err)
		}
		a := in.Attempts[0]
		if !in.NextDueAt.Equal(p.Decision.NextDueAt) || a.Error != p.Error || (p.Outcome != nil) != (a.Outcome != nil) ||
			(p.Outcome != nil && *a.Outcome != *p.Outcome) {
			t.Errorf("FinishAttempts of %q stored %+v (next due %v), sent %+v", p.IntentID, a, in.NextDueAt, p)
		}
	}
}

// assertExact compares what a read returned with what was sent.
func assertExact(t *testing.T, read string, got, sent core.Intent) {
	t.Helper()
	if got.IntentID != sent.IntentID || got.SubmissionTarget != sent.SubmissionTarget ||
		string(got.Payload) != string(sent.Payload) || got.Contract.GatewayURL != sent.Contract.GatewayURL ||
		got.Contract.SubmissionTarget != sent.Contract.SubmissionTarget {
		t.Errorf("%s: got id %q target %q payload %s url %q, sent id %q target %q payload %s url %q", read,
			got.IntentID, got.SubmissionTarget, got.Payload, got.Contract.GatewayURL,
			sent.IntentID, sent.SubmissionTarget, sent.Payload, sent.Contract.GatewayURL)
	}
}
