package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// resubmission is the intent a service builds to resubmit original.
func resubmission(original core.Intent, newID string, c core.Contract) core.Intent {
	return core.NewResubmission(original, newID, c, at(9000))
}

// endedIntent stores an intent and exhausts it.
func endedIntent(t *testing.T, h Harness, id string) core.Intent {
	t.Helper()
	in := mustCreate(t, h.Store, newIntent(id, smsContract("alerts"), `{"to":"+100","text":"<script>x</script>"}`, base))
	complete(t, h.Store, exhaust(leader(t, h), id, 1, at(10)))
	return in
}

func mustLinks(t *testing.T, s ports.Store, ids ...string) map[string]ports.ResubmissionLinks {
	t.Helper()
	links, err := s.ResubmissionLinks(context.Background(), ids)
	if err != nil {
		t.Fatalf("ResubmissionLinks(%v): %v", ids, err)
	}
	return links
}

func testResubmit(t *testing.T, h Harness) {
	original := endedIntent(t, h, "dead-1")
	// The resubmission takes a contract other than the original's snapshot.
	current := pushContract("alerts")
	want := resubmission(original, "dead-1~r1", current)
	res, err := h.Store.CreateResubmission(t.Context(), want)
	if err != nil {
		t.Fatalf("CreateResubmission: %v", err)
	}
	if !res.Created {
		t.Fatal("CreateResubmission: Created=false for the first resubmission")
	}
	got := mustGet(t, h.Store, "dead-1~r1")
	if got.Status != core.StatusPending || string(got.Payload) != string(original.Payload) ||
		got.Contract.GatewayType != core.GatewayPush || got.SubmissionTarget != "alerts" {
		t.Fatalf("resubmission stored as %+v", got)
	}
	links := mustLinks(t, h.Store, "dead-1", "dead-1~r1", "unrelated")
	if links["dead-1"] != (ports.ResubmissionLinks{As: "dead-1~r1"}) || links["dead-1~r1"] != (ports.ResubmissionLinks{From: "dead-1"}) {
		t.Fatalf("links = %+v", links)
	}
	if _, ok := links["unrelated"]; ok {
		t.Fatal("an intent without links has an entry")
	}
	// Repeating, under the same or another intentId, returns the first
	// resubmission and writes nothing.
	for _, id := range []string{"dead-1~r1", "dead-1-again"} {
		again, err := h.Store.CreateResubmission(t.Context(), resubmission(original, id, current))
		if err != nil {
			t.Fatalf("repeated CreateResubmission(%s): %v", id, err)
		}
		if again.Created || again.Intent.IntentID != "dead-1~r1" {
			t.Fatalf("repeated CreateResubmission(%s) = %s created=%v, want dead-1~r1 not created", id, again.Intent.IntentID, again.Created)
		}
	}
	if _, err := h.Store.GetIntent(t.Context(), "dead-1-again"); err == nil {
		t.Fatal("a repeated resubmission under another id created that intent")
	}
}

func testResubmitRefusals(t *testing.T, h Harness) {
	pending := mustCreate(t, h.Store, newIntent("live-1", smsContract("alerts"), `{}`, base))
	_, err := h.Store.CreateResubmission(t.Context(), resubmission(pending, "live-1~r1", smsContract("alerts")))
	wantErr(t, "resubmitting a pending intent", err, core.ErrIntentNotEnded)

	missing := newIntent("ghost", smsContract("alerts"), `{}`, base)
	_, err = h.Store.CreateResubmission(t.Context(), resubmission(missing, "ghost~r1", smsContract("alerts")))
	wantErr(t, "resubmitting a missing intent", err, core.ErrIntentNotFound)

	ended := endedIntent(t, h, "dead-2")
	_, err = h.Store.CreateResubmission(t.Context(), resubmission(ended, "live-1", smsContract("alerts")))
	wantErr(t, "resubmitting under a taken intentId", err, core.ErrResubmissionIDTaken)
	for _, id := range []string{"live-1~r1", "ghost~r1"} {
		if _, err := h.Store.GetIntent(t.Context(), id); err == nil {
			t.Errorf("a refused resubmission created %s", id)
		}
	}
	if links := mustLinks(t, h.Store, "live-1", "dead-2", "ghost"); len(links) != 0 {
		t.Fatalf("refused resubmissions left links %+v", links)
	}
	assertUnchanged(t, h.Store, pending)
}

func testResubmitConcurrent(t *testing.T, h Harness) {
	const n = 16
	original := endedIntent(t, h, "dead-3")
	results := make([]ports.CreateIntentResult, n)
	errs := make([]error, n)
	startLine := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-startLine
			// Every caller names its own intentId: one must win, the rest
			// must get the winner.
			id := "dead-3~r" + string(rune('a'+i))
			results[i], errs[i] = h.Store.CreateResubmission(context.Background(), resubmission(original, id, smsContract("alerts")))
		})
	}
	close(startLine)
	wg.Wait()
	created, winner := 0, ""
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent CreateResubmission %d: %v", i, errs[i])
		}
		if results[i].Created {
			created++
			winner = results[i].Intent.IntentID
		}
	}
	if created != 1 {
		t.Fatalf("%d concurrent resubmissions created an intent, want exactly 1", created)
	}
	for i := range n {
		if results[i].Intent.IntentID != winner {
			t.Fatalf("caller %d got %s, want the winner %s", i, results[i].Intent.IntentID, winner)
		}
	}
}

func testCountIntents(t *testing.T, h Harness) {
	counts, err := h.Store.CountIntents(t.Context())
	if err != nil || len(counts) != 0 {
		t.Fatalf("CountIntents of an empty store = %v, %v", counts, err)
	}
	mustCreate(t, h.Store, newIntent("a-1", smsContract("alerts"), `{}`, base))
	mustCreate(t, h.Store, newIntent("a-2", smsContract("alerts"), `{}`, at(1)))
	mustCreate(t, h.Store, newIntent("n-1", pushContract("news"), `{}`, at(2)))
	endedIntent(t, h, "a-3")
	counts, err = h.Store.CountIntents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []ports.IntentCount{
		{SubmissionTarget: "alerts", Status: core.StatusExhausted, Count: 1},
		{SubmissionTarget: "alerts", Status: core.StatusPending, Count: 2},
		{SubmissionTarget: "news", Status: core.StatusPending, Count: 1},
	}
	if len(counts) != len(want) {
		t.Fatalf("CountIntents = %+v, want %+v", counts, want)
	}
	for i := range want {
		if counts[i] != want[i] {
			t.Fatalf("CountIntents = %+v, want %+v", counts, want)
		}
	}
}

func testAttemptNamesItsLeader(t *testing.T, h Harness) {
	mustCreate(t, h.Store, newIntent("audit-1", smsContract("alerts"), `{}`, base))
	f := leader(t, h)
	start(t, h.Store, f, "audit-1", 1, at(1))
	got := mustGet(t, h.Store, "audit-1")
	if len(got.Attempts) != 1 || got.Attempts[0].HolderID != f.HolderID || got.Attempts[0].Epoch != f.Epoch {
		t.Fatalf("attempts = %+v, want one made by %s at epoch %d", got.Attempts, f.HolderID, f.Epoch)
	}
}

// operatorCases are the cases of ports.OperatorStore and of the attempt's
// audit fields; Run runs them with the rest.
var operatorCases = []storeCase{
	{"Resubmit", testResubmit},
	{"ResubmitRefusals", testResubmitRefusals},
	{"ResubmitConcurrent", testResubmitConcurrent},
	{"CountIntents", testCountIntents},
	{"AttemptNamesItsLeader", testAttemptNamesItsLeader},
}
