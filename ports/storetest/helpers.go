package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// base is the suite's core time: microsecond precision, not UTC midnight, so
// truncation or a lost time zone shows.
var base = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// at returns base plus n milliseconds.
func at(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }

// smsContract and pushContract are two snapshots that differ in every field
// the store keeps apart (gateway type, mode, policy).
func smsContract(target string) core.Contract {
	return core.Contract{
		SubmissionTarget: target,
		GatewayType:      core.GatewaySMS,
		GatewayURL:       "http://127.0.0.1:9/sms",
		Mode:             core.ModeRealtime,
		Policy:           core.PolicyMaxAttempts,
		MaxAttempts:      20,
		TerminalOutcomes: []string{core.ReasonInvalidRecipient, core.ReasonInvalidMessage},
	}
}

func pushContract(target string) core.Contract {
	return core.Contract{
		SubmissionTarget:     target,
		GatewayType:          core.GatewayPush,
		GatewayURL:           "http://127.0.0.1:9/push",
		Mode:                 core.ModeBatch,
		Policy:               core.PolicyDeadline,
		MaxAcceptanceSeconds: 3600,
		TerminalOutcomes:     []string{},
	}
}

// newIntent is a pending intent as the service builds it.
func newIntent(id string, c core.Contract, payload string, createdAt time.Time) core.Intent {
	return core.NewIntent(id, c, json.RawMessage(payload), createdAt)
}

func mustCreate(t testing.TB, s ports.Store, in core.Intent) core.Intent {
	t.Helper()
	res, err := s.CreateIntent(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateIntent(%s): %v", in.IntentID, err)
	}
	if !res.Created {
		t.Fatalf("CreateIntent(%s): Created=false for a new intentId", in.IntentID)
	}
	return res.Intent
}

func mustGet(t testing.TB, s ports.Store, id string) core.Intent {
	t.Helper()
	in, err := s.GetIntent(context.Background(), id)
	if err != nil {
		t.Fatalf("GetIntent(%s): %v", id, err)
	}
	return in
}

// leader acquires the default lease for a long time: its fence guards the
// execution writes of a test.
func leader(t testing.TB, h Harness) core.Fence {
	t.Helper()
	return leasetest.MustAcquire(t, h.Leases, core.DefaultLeaseName, "storetest-leader", leasetest.LongLease).Fence()
}

func start(t testing.TB, s ports.Store, f core.Fence, id string, n int, startedAt time.Time) {
	t.Helper()
	err := s.StartAttempt(context.Background(), ports.StartAttemptParams{Fence: f, IntentID: id, Number: n, StartedAt: startedAt})
	if err != nil {
		t.Fatalf("StartAttempt(%s, %d): %v", id, n, err)
	}
}

func finish(t testing.TB, s ports.Store, p ports.FinishAttemptParams) {
	t.Helper()
	if err := s.FinishAttempt(context.Background(), p); err != nil {
		t.Fatalf("FinishAttempt(%s, %d): %v", p.IntentID, p.Number, err)
	}
}

// retryAfter is a finished attempt that failed and is retried at nextDue.
func retryAfter(f core.Fence, id string, n int, finishedAt, nextDue time.Time) ports.FinishAttemptParams {
	return ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: n, FinishedAt: finishedAt,
		Error: "gateway timeout", Sent: true,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: nextDue},
	}
}

// accept is a finished attempt the gateway accepted.
func accept(f core.Fence, id string, n int, finishedAt time.Time) ports.FinishAttemptParams {
	o := core.Outcome{Status: core.OutcomeAccepted, MessageID: "msg-" + id}
	return ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: n, FinishedAt: finishedAt, Outcome: &o, Sent: true,
		Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: &o},
	}
}

// exhaust is a finished attempt after which the policy gives up.
func exhaust(f core.Fence, id string, n int, finishedAt time.Time) ports.FinishAttemptParams {
	o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
	return ports.FinishAttemptParams{
		Fence: f, IntentID: id, Number: n, FinishedAt: finishedAt, Outcome: &o, Sent: true,
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedMaxAttempts},
	}
}

// complete runs one attempt to the given finish.
func complete(t testing.TB, s ports.Store, p ports.FinishAttemptParams) {
	t.Helper()
	start(t, s, p.Fence, p.IntentID, p.Number, p.FinishedAt.Add(-time.Millisecond))
	finish(t, s, p)
}

func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

// assertIntent compares every field the store keeps. LastModifiedAt is
// compared only when want has one.
func assertIntent(t testing.TB, got, want core.Intent) {
	t.Helper()
	diff := func(field string, g, w any) {
		t.Helper()
		t.Errorf("intent %s: %s = %v, want %v", want.IntentID, field, g, w)
	}
	if got.IntentID != want.IntentID {
		diff("IntentID", got.IntentID, want.IntentID)
	}
	if got.SubmissionTarget != want.SubmissionTarget {
		diff("SubmissionTarget", got.SubmissionTarget, want.SubmissionTarget)
	}
	if string(got.Payload) != string(want.Payload) {
		diff("Payload", string(got.Payload), string(want.Payload))
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		diff("CreatedAt", got.CreatedAt, want.CreatedAt)
	}
	if got.Status != want.Status {
		diff("Status", got.Status, want.Status)
	}
	if !reflect.DeepEqual(got.Contract, want.Contract) {
		diff("Contract", got.Contract, want.Contract)
	}
	if !got.NextDueAt.Equal(want.NextDueAt) {
		diff("NextDueAt", got.NextDueAt, want.NextDueAt)
	}
	if got.AttemptCount != want.AttemptCount {
		diff("AttemptCount", got.AttemptCount, want.AttemptCount)
	}
	if !reflect.DeepEqual(got.FinalOutcome, want.FinalOutcome) {
		diff("FinalOutcome", got.FinalOutcome, want.FinalOutcome)
	}
	if got.ExhaustedReason != want.ExhaustedReason {
		diff("ExhaustedReason", got.ExhaustedReason, want.ExhaustedReason)
	}
	if got.TraceParent != want.TraceParent {
		diff("TraceParent", got.TraceParent, want.TraceParent)
	}
	if !want.LastModifiedAt.IsZero() && !got.LastModifiedAt.Equal(want.LastModifiedAt) {
		diff("LastModifiedAt", got.LastModifiedAt, want.LastModifiedAt)
	}
	if len(got.Attempts) != len(want.Attempts) {
		diff("len(Attempts)", len(got.Attempts), len(want.Attempts))
		return
	}
	for i := range got.Attempts {
		assertAttempt(t, want.IntentID, got.Attempts[i], want.Attempts[i])
	}
}

func assertAttempt(t testing.TB, id string, got, want core.Attempt) {
	t.Helper()
	if got.Number != want.Number || !got.StartedAt.Equal(want.StartedAt) || !got.FinishedAt.Equal(want.FinishedAt) ||
		!reflect.DeepEqual(got.Outcome, want.Outcome) || got.Error != want.Error {
		t.Errorf("intent %s attempt %d: got %+v (outcome %+v), want %+v (outcome %+v)",
			id, want.Number, got, got.Outcome, want, want.Outcome)
	}
}

// assertUnchanged checks that a refused write left the intent exactly as it
// was, its change marker included.
func assertUnchanged(t testing.TB, s ports.Store, before core.Intent) {
	t.Helper()
	after := mustGet(t, s, before.IntentID)
	assertIntent(t, after, before)
}
