package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// lateAcceptance is a finished attempt the gateway accepted at or after the
// deadline: the decision exhausts the intent and keeps the acceptance.
func lateAcceptance(f core.Fence, id string, n int, messageID string) ports.FinishAttemptParams {
	o := core.Outcome{Status: core.OutcomeAccepted, MessageID: messageID}
	return ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: n, FinishedAt: at(100 + n), Outcome: &o, Sent: true,
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded,
			AcceptedAfterDeadline: true, AcceptedMessageID: messageID},
	}
}

// lateFact is what a store keeps of an acceptance after the deadline.
type lateFact struct {
	accepted, possibly bool
	messageID          string
}

func lateFactOf(in core.Intent) lateFact {
	return lateFact{in.AcceptedAfterDeadline, in.PossiblyAccepted, in.AcceptedMessageID}
}

// testAcceptedAfterDeadline: a FinishAttempt (alone or in a batch) whose
// decision says the gateway accepted after the deadline keeps that fact and
// the message id on the exhausted intent; every read returns them (one,
// many, a taken id's read-back, the listing, after a restart); the listing
// filtered on the fact returns exactly those intents, with the other
// filters (possiblyAccepted's and the search's among them) and paging both
// ways applied; and a write
// whose decision contradicts its attempt is refused before anything is
// written.
func testAcceptedAfterDeadline(t *testing.T, h Harness) {
	ctx := context.Background()
	f := leader(t, h)
	c, other := pushContract("push.late"), pushContract("push.other")
	ids := []string{"late-1", "late-2", "late-3", "late-4", "late-5"}
	for i, id := range ids {
		k := c
		if id == "late-5" {
			k = other
		}
		mustCreate(t, h.Store, newIntent(id, k, `{}`, at(i)))
	}
	// late-1 and late-2 end in one batch: a late acceptance and a plain
	// exhaustion by the deadline, which is no acceptance.
	start(t, h.Store, f, "late-1", 1, at(10))
	start(t, h.Store, f, "late-2", 1, at(10))
	plain := retryAfter(f, "late-2", 1, at(20), at(30))
	plain.Decision = core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedDeadlineExceeded}
	for i, err := range h.Store.FinishAttempts(ctx, []ports.FinishAttemptParams{lateAcceptance(f, "late-1", 1, "gw-msg-1"), plain}) {
		if err != nil {
			t.Fatalf("FinishAttempts item %d: %v", i, err)
		}
	}
	// late-3: accepted late on its second attempt, without a message id.
	complete(t, h.Store, retryAfter(f, "late-3", 1, at(20), at(30)))
	complete(t, h.Store, lateAcceptance(f, "late-3", 2, ""))
	// late-4: possibly accepted (an attempt in doubt, then a duplicate),
	// then accepted late: both facts.
	complete(t, h.Store, retryAfter(f, "late-4", 1, at(20), at(30)))
	dup := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
	p := retryAfter(f, "late-4", 2, at(40), at(50))
	p.Error, p.Outcome, p.Decision.PossiblyAccepted = "", &dup, true
	complete(t, h.Store, p)
	complete(t, h.Store, lateAcceptance(f, "late-4", 3, "gw-msg-4"))
	// late-5, on another target, accepted late.
	complete(t, h.Store, lateAcceptance(f, "late-5", 1, "gw-msg-5"))

	want := map[string]lateFact{
		"late-1": {accepted: true, messageID: "gw-msg-1"},
		"late-2": {},
		"late-3": {accepted: true},
		"late-4": {accepted: true, possibly: true, messageID: "gw-msg-4"},
		"late-5": {accepted: true, messageID: "gw-msg-5"},
	}
	check := func(what string, in core.Intent) {
		t.Helper()
		if got := lateFactOf(in); got != want[in.IntentID] {
			t.Errorf("%s: %s has %+v, want %+v", what, in.IntentID, got, want[in.IntentID])
		}
		if in.Status != core.StatusExhausted || in.ExhaustedReason != core.ExhaustedDeadlineExceeded || in.FinalOutcome != nil {
			t.Errorf("%s: %s is %s (%s, final %+v), want exhausted by the deadline, as the spec says",
				what, in.IntentID, in.Status, in.ExhaustedReason, in.FinalOutcome)
		}
	}
	for _, id := range ids {
		in := mustGet(t, h.Store, id)
		check("GetIntent", in)
		if last, ok := in.LastAttempt(); want[id].accepted && (!ok || last.Outcome == nil || last.Outcome.Status != core.OutcomeAccepted ||
			last.Outcome.MessageID != want[id].messageID) {
			t.Errorf("GetIntent: %s's last attempt %+v, want the acceptance with message %q", id, last, want[id].messageID)
		}
	}
	many, err := h.Store.GetIntents(ctx, ids)
	if err != nil || len(many) != len(ids) {
		t.Fatalf("GetIntents: %d intents, %v", len(many), err)
	}
	var again []core.Intent
	for _, in := range many {
		check("GetIntents", in)
		again = append(again, newIntent(in.IntentID, c, `{}`, at(90)))
	}
	taken, err := h.Store.CreateIntents(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range taken {
		if r.Created {
			t.Fatalf("CreateIntents created the taken id %s", r.Intent.IntentID)
		}
		check("CreateIntents of a taken id", r.Intent)
	}
	all, err := h.Store.ListIntents(ctx, ports.ListIntentsParams{Limit: 10, Status: core.StatusExhausted})
	if err != nil || len(all) != len(ids) {
		t.Fatalf("ListIntents: %d intents, %v", len(all), err)
	}
	for _, in := range all {
		check("ListIntents", in)
	}

	list := func(p ports.ListIntentsParams) []string {
		t.Helper()
		p.AcceptedAfterDeadline = true
		got, err := h.Store.ListIntents(ctx, p)
		if err != nil {
			t.Fatalf("ListIntents(%+v): %v", p, err)
		}
		var listed []string
		for _, in := range got {
			listed = append(listed, in.IntentID)
			check("ListIntents filtered", in)
		}
		return listed
	}
	assertIDs := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	assertIDs("accepted after the deadline", list(ports.ListIntentsParams{Limit: 10}), "late-5", "late-4", "late-3", "late-1")
	assertIDs("first page", list(ports.ListIntentsParams{Limit: 2}), "late-5", "late-4")
	l4 := mustGet(t, h.Store, "late-4")
	assertIDs("after late-4", list(ports.ListIntentsParams{Limit: 10,
		Before: &ports.IntentPosition{CreatedAt: l4.CreatedAt, IntentID: "late-4"}}), "late-3", "late-1")
	assertIDs("on the target", list(ports.ListIntentsParams{Limit: 10, SubmissionTarget: "push.late"}), "late-4", "late-3", "late-1")
	assertIDs("exhausted on the other target", list(ports.ListIntentsParams{Limit: 10, SubmissionTarget: "push.other",
		Status: core.StatusExhausted}), "late-5")
	assertIDs("pending", list(ports.ListIntentsParams{Limit: 10, Status: core.StatusPending}))
	assertIDs("and possibly accepted", list(ports.ListIntentsParams{Limit: 10, PossiblyAccepted: true}), "late-4")
	assertIDs("and possibly accepted on the other target", list(ports.ListIntentsParams{Limit: 10, PossiblyAccepted: true,
		SubmissionTarget: "push.other"}))
	// With the search's filters, and paged toward newer intents.
	assertIDs("and an intentId prefix", list(ports.ListIntentsParams{Limit: 10, IntentIDPrefix: "late-4"}), "late-4")
	assertIDs("in a creation range", list(ports.ListIntentsParams{Limit: 10, CreatedFrom: at(1), CreatedBefore: at(4)}),
		"late-4", "late-3")
	assertIDs("and the latest result", list(ports.ListIntentsParams{Limit: 10, LastResult: "ACCEPTED", CreatedBefore: at(4)}),
		"late-4", "late-3", "late-1")
	l3 := mustGet(t, h.Store, "late-3")
	assertIDs("before late-3", list(ports.ListIntentsParams{Limit: 1,
		After: &ports.IntentPosition{CreatedAt: l3.CreatedAt, IntentID: "late-3"}}), "late-4")
	for _, limit := range []int{1, 3} {
		back := listBackward(t, h.Store, ports.ListIntentsParams{Limit: limit, AcceptedAfterDeadline: true,
			IntentIDPrefix: "late-", CreatedFrom: at(0)}, nil)
		for _, in := range back {
			check("ListIntents backwards", in)
		}
		assertIDs(fmt.Sprintf("read backwards, %d a page", limit), intentIDs(back), "late-5", "late-4", "late-3", "late-1")
	}

	// A decision that contradicts its attempt is refused, nothing written.
	mustCreate(t, h.Store, newIntent("late-bad", c, `{}`, at(9)))
	start(t, h.Store, f, "late-bad", 1, at(10))
	before := mustGet(t, h.Store, "late-bad")
	noAcceptance := lateAcceptance(f, "late-bad", 1, "")
	noAcceptance.Outcome, noAcceptance.Error = nil, "gateway timeout"
	otherMessage := lateAcceptance(f, "late-bad", 1, "gw-msg-x")
	otherMessage.Decision.AcceptedMessageID = "gw-msg-y"
	notExhausted := lateAcceptance(f, "late-bad", 1, "gw-msg-x")
	notExhausted.Decision = core.Decision{Status: core.StatusAccepted, FinalOutcome: notExhausted.Outcome, AcceptedAfterDeadline: true,
		AcceptedMessageID: "gw-msg-x"}
	for what, bad := range map[string]ports.FinishAttemptParams{
		"an error closing an acceptance after the deadline": noAcceptance,
		"another message id than the attempt's":             otherMessage,
		"an accepted intent accepted after the deadline":    notExhausted,
	} {
		wantErr(t, what, h.Store.FinishAttempt(ctx, bad), ports.ErrInvalidWrite)
		assertUnchanged(t, h.Store, before)
		if got := mustGet(t, h.Store, "late-bad"); got.AcceptedAfterDeadline || got.AcceptedMessageID != "" {
			t.Errorf("%s: the refused write flagged the intent: %+v", what, lateFactOf(got))
		}
	}

	// The facts outlive the process.
	h = h.Restart(t)
	for _, id := range ids {
		check("after a restart", mustGet(t, h.Store, id))
	}
}
