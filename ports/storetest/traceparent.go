package storetest

import (
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The traceparents the suite stores: version-00 form, as the service keeps
// them (core.NormalizeTraceParent).
const (
	traceA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
	traceC = "00-5c0a2d3c6c6b4d0c9e4f1a2b3c4d5e6f-1a2b3c4d5e6f7081-01"
)

// traced is a new intent submitted in the trace context tp.
func traced(id string, c core.Contract, createdAt int, tp string) core.Intent {
	in := newIntent(id, c, `{"t":1}`, at(createdAt))
	in.TraceParent = tp
	return in
}

// testTraceParent holds a store to the trace context round trip: an
// intent's TraceParent (empty when the submission carried none) is stored
// by CreateIntent and CreateIntents, read back by every read of intents
// (GetIntent, GetIntents, every ListIntents filter, a taken intentId's
// answer), kept through attempts and a restart, never replaced by a
// repeat's, and carried by a resubmission into its new intent.
func testTraceParent(t *testing.T, h Harness) {
	ctx := t.Context()
	c := smsContract("sms.traced")
	want := map[string]string{"tp-one": traceA, "tp-none": "", "tp-batch-1": traceB, "tp-batch-2": "", "tp-batch-3": traceC,
		"tp-late": traceC}
	for _, in := range []core.Intent{traced("tp-one", c, 0, traceA), traced("tp-none", c, 1, ""), traced("tp-late", c, 7, traceC)} {
		if got := mustCreate(t, h.Store, in); got.TraceParent != in.TraceParent {
			t.Errorf("CreateIntent(%s) returned TraceParent %q, want %q", in.IntentID, got.TraceParent, in.TraceParent)
		}
	}
	batch := []core.Intent{traced("tp-batch-1", c, 2, traceB), traced("tp-batch-2", c, 3, ""), traced("tp-batch-3", c, 4, traceC)}
	created, err := h.Store.CreateIntents(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range created {
		if !r.Created || r.Intent.TraceParent != want[r.Intent.IntentID] {
			t.Errorf("CreateIntents: %s created=%v TraceParent %q, want created with %q",
				r.Intent.IntentID, r.Created, r.Intent.TraceParent, want[r.Intent.IntentID])
		}
	}

	// A repeat carries another request's trace context; the stored one stays.
	again, err := h.Store.CreateIntent(ctx, traced("tp-one", c, 5, traceC))
	if err != nil || again.Created || again.Intent.TraceParent != traceA {
		t.Errorf("a repeat of tp-one: created=%v TraceParent %q, %v; want the stored %q", again.Created, again.Intent.TraceParent, err, traceA)
	}
	taken, err := h.Store.CreateIntents(ctx, []core.Intent{traced("tp-batch-1", c, 6, traceA), traced("tp-none", c, 6, traceA)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range taken {
		if r.Created || r.Intent.TraceParent != want[r.Intent.IntentID] {
			t.Errorf("CreateIntents of the taken %s: created=%v TraceParent %q, want the stored %q",
				r.Intent.IntentID, r.Created, r.Intent.TraceParent, want[r.Intent.IntentID])
		}
	}

	// Attempts change the intent row, not its trace context: tp-one is
	// retried twice, the second time possibly accepted, tp-batch-1 ends
	// and tp-late is accepted after its deadline, so every listing filter
	// below has a traced intent to show.
	f := leader(t, h)
	dup := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
	complete(t, h.Store, retryAfter(f, "tp-one", 1, at(10), at(20)))
	flagged := retryAfter(f, "tp-one", 2, at(30), at(40))
	flagged.Error, flagged.Outcome, flagged.Decision.PossiblyAccepted = "", &dup, true
	complete(t, h.Store, flagged)
	complete(t, h.Store, accept(f, "tp-batch-1", 1, at(50)))
	complete(t, h.Store, lateAcceptance(f, "tp-late", 1, "gw-msg-late"))

	check := func(h Harness, when string) {
		t.Helper()
		for id, tp := range want {
			if got := mustGet(t, h.Store, id).TraceParent; got != tp {
				t.Errorf("%s: GetIntent(%s).TraceParent = %q, want %q", when, id, got, tp)
			}
		}
		many, err := h.Store.GetIntents(ctx, []string{"tp-one", "tp-none", "tp-batch-1", "tp-batch-2", "tp-batch-3", "tp-late"})
		if err != nil {
			t.Fatal(err)
		}
		if len(many) != len(want) {
			t.Errorf("%s: GetIntents found %d intents, want %d", when, len(many), len(want))
		}
		for _, in := range many {
			if in.TraceParent != want[in.IntentID] {
				t.Errorf("%s: GetIntents: %s.TraceParent = %q, want %q", when, in.IntentID, in.TraceParent, want[in.IntentID])
			}
		}
		for _, p := range []ports.ListIntentsParams{
			{},
			{Status: core.StatusPending},
			{SubmissionTarget: c.SubmissionTarget},
			{Status: core.StatusAccepted, SubmissionTarget: c.SubmissionTarget},
			{PossiblyAccepted: true},
			{AcceptedAfterDeadline: true},
			{IntentIDPrefix: "tp-batch"},
			{CreatedFrom: at(2), CreatedBefore: at(5)},
			{LastResult: "accepted"},
			{After: &ports.IntentPosition{CreatedAt: at(-1)}},
		} {
			p.Limit = 10
			listed, err := h.Store.ListIntents(ctx, p)
			if err != nil {
				t.Fatalf("%s: ListIntents(%+v): %v", when, p, err)
			}
			if len(listed) == 0 {
				t.Errorf("%s: ListIntents(%+v) found nothing", when, p)
			}
			for _, in := range listed {
				if in.TraceParent != want[in.IntentID] {
					t.Errorf("%s: ListIntents(%+v): %s.TraceParent = %q, want %q", when, p, in.IntentID, in.TraceParent, want[in.IntentID])
				}
			}
		}
	}
	check(h, "before restart")
	h = h.Restart(t)
	check(h, "after restart")

	// The resubmission of an ended intent is the same message: it stays in
	// the trace it was submitted in.
	res, err := h.Store.CreateResubmission(ctx, resubmission(mustGet(t, h.Store, "tp-batch-1"), "tp-batch-1~r1", c))
	if err != nil || !res.Created || res.Intent.TraceParent != traceB {
		t.Fatalf("CreateResubmission: created=%v TraceParent %q, %v; want created with the original's %q",
			res.Created, res.Intent.TraceParent, err, traceB)
	}
	if got := mustGet(t, h.Store, "tp-batch-1~r1").TraceParent; got != traceB {
		t.Errorf("the stored resubmission's TraceParent = %q, want the original's %q", got, traceB)
	}
}
