package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func testCreateAndGet(t *testing.T, h Harness) {
	// Key order, escapes and non-ASCII text must come back byte for byte.
	const payload = `{"z":1,"a":[1.50,"\u00e9\n"],"text":"Grüße 👋"}`
	for _, in := range []core.Intent{
		newIntent("intent-sms", smsContract("alerts"), payload, base),
		newIntent("intent-push", pushContract("news"), `[1,2,3]`, at(1)),
	} {
		created := mustCreate(t, h.Store, in)
		if created.LastModifiedAt.IsZero() {
			t.Errorf("created intent %s has no LastModifiedAt", in.IntentID)
		}
		assertIntent(t, created, in)
		got := mustGet(t, h.Store, in.IntentID)
		if len(got.Attempts) != 0 {
			t.Errorf("new intent has %d attempts", len(got.Attempts))
		}
		want := in
		want.LastModifiedAt = created.LastModifiedAt
		assertIntent(t, got, want)
	}
}

func testGetMissing(t *testing.T, h Harness) {
	_, err := h.Store.GetIntent(t.Context(), "no-such-intent")
	wantErr(t, "GetIntent of a missing intent", err, core.ErrIntentNotFound)
}

func testCreateRepeat(t *testing.T, h Harness) {
	in := newIntent("intent-1", smsContract("alerts"), `{"to":"+100"}`, base)
	first := mustCreate(t, h.Store, in)
	before, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The repeat may carry a later creation time: it is the same intent.
	again := newIntent("intent-1", smsContract("alerts"), `{"to":"+100"}`, at(5000))
	res, err := h.Store.CreateIntent(t.Context(), again)
	if err != nil {
		t.Fatalf("idempotent repeat: %v", err)
	}
	if res.Created {
		t.Fatal("idempotent repeat: Created=true, want false")
	}
	assertIntent(t, res.Intent, first)
	after, err := h.Store.LatestChange(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !after.LastModifiedAt.Equal(before.LastModifiedAt) || after.IntentID != before.IntentID {
		t.Fatalf("idempotent repeat moved the change cursor from %+v to %+v: a repeat must write nothing", before, after)
	}
}

func testCreateConcurrent(t *testing.T, h Harness) {
	const n = 32
	in := newIntent("intent-race", smsContract("alerts"), `{"n":1}`, base)
	results := make([]ports.CreateIntentResult, n)
	errs := make([]error, n)
	startLine := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-startLine
			results[i], errs[i] = h.Store.CreateIntent(context.Background(), in)
		})
	}
	close(startLine)
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent create %d: %v", i, errs[i])
		}
		if results[i].Created {
			created++
		}
		want := in
		want.LastModifiedAt = results[0].Intent.LastModifiedAt
		assertIntent(t, results[i].Intent, want)
	}
	if created != 1 {
		t.Fatalf("%d of %d concurrent creates of one intentId report Created=true, want 1", created, n)
	}
	rows, err := h.Store.ListPending(t.Context(), ports.ListPendingParams{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows after concurrent creates of one intentId, want 1", len(rows))
	}
}

// testCreateTakenID pins that a store reports what it holds under a taken
// intentId and judges nothing: whether the new submission repeats it is the
// service's rule, decided in one place.
func testCreateTakenID(t *testing.T, h Harness) {
	existing := mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{"to":"+100"}`, base))
	cases := []struct{ name, target, payload string }{
		{"same", "alerts", `{"to":"+100"}`},
		{"target", "other-target", `{"to":"+100"}`},
		{"payload", "alerts", `{"to":"+200"}`},
		{"payload spacing", "alerts", `{"to": "+100"}`},
		{"both", "other-target", `{"to":"+200"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := h.Store.CreateIntent(t.Context(), newIntent("intent-1", smsContract(c.target), c.payload, at(1)))
			if err != nil || res.Created {
				t.Fatalf("CreateIntent of a taken id: created=%v err=%v, want the stored intent", res.Created, err)
			}
			assertIntent(t, res.Intent, existing)
		})
	}
	assertUnchanged(t, h.Store, existing)
}

func testTakenIDTerminal(t *testing.T, h Harness) {
	f := leader(t, h)
	mustCreate(t, h.Store, newIntent("intent-1", smsContract("alerts"), `{"a":1}`, base))
	complete(t, h.Store, accept(f, "intent-1", 1, at(10)))
	// A taken id returns the intent as it is now, terminal.
	res, err := h.Store.CreateIntent(t.Context(), newIntent("intent-1", smsContract("alerts"), `{"a":2}`, at(20)))
	if err != nil || res.Created {
		t.Fatalf("create under a terminal intent's id: created=%v err=%v", res.Created, err)
	}
	if res.Intent.Status != core.StatusAccepted || res.Intent.AttemptCount != 1 || res.Intent.FinalOutcome == nil ||
		string(res.Intent.Payload) != `{"a":1}` {
		t.Fatalf("returned status %q, attempt count %d, final outcome %v, payload %s; want the stored accepted intent",
			res.Intent.Status, res.Intent.AttemptCount, res.Intent.FinalOutcome, res.Intent.Payload)
	}
}

// ids returns n intent ids with the prefix, in ascending order.
func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}
