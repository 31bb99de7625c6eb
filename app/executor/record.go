package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The error texts of attempts that never got an answer from the gateway.
// They are for people; the attempt's Sent field is what counts tries.
const (
	// OutcomeUnknownError is recorded when a new leader finds an attempt
	// that was started but never finished: the previous leader may or may
	// not have reached the gateway, so the outcome is unknown and the policy
	// treats it like any other non-terminal attempt error.
	OutcomeUnknownError = "outcome unknown: the previous leader stopped during the gateway call"
	// NotSubmittedError is recorded when the leader reserved an attempt but
	// lost its leadership before calling the gateway: the gateway was never
	// called, and the intent stays due at once for the next leader.
	NotSubmittedError = "not submitted: leadership was lost before the gateway call"
	// NotCalledError is recorded when the leader reserved an attempt ahead
	// of a free call slot (slots.go) and stopped leading or shut down before
	// the slot came: like NotSubmittedError, the gateway was never called
	// and the intent stays due at once.
	NotCalledError = "not submitted: the executor stopped before the gateway call"
	// DeadlinePassedError is recorded when an attempt fell due only after
	// its intent's acceptance deadline (no leader executed while the
	// deadline passed): the gateway is not called and the intent is
	// exhausted.
	DeadlinePassedError = "not submitted: the acceptance deadline had passed"
)

// record writes the attempt's result and its decision in one fenced
// FinishAttempt, with the other workers' of the moment (writes.go), and
// tells the scheduler what follows. The write outlives the term's
// cancellation for up to FinishTimeout, so a result the gateway gave is
// recorded even at shutdown, yet still only while this term's lease holds.
func (t *term) record(ctx context.Context, in core.Intent, a core.Attempt, e ended, d core.Decision, finishedAt time.Time) result {
	p := ports.FinishAttemptParams{
		Fence: t.fence, IntentID: in.IntentID, Number: a.Number, FinishedAt: finishedAt,
		Outcome: e.result.Outcome, Decision: d, Sent: e.reach.sent(),
	}
	if e.result.Err != nil {
		p.Error = e.result.Err.Error()
		if p.Error == "" {
			p.Error = "attempt failed without an error message"
		}
	}
	span := t.cfg.Tracer.Start(ctx, ports.SpanResult, ports.AttemptSubject(in, a.Number))
	err := t.writes.finishes.do(p)
	span.End(ports.SpanEnd{Err: err, Status: d.Status, ExhaustedReason: d.ExhaustedReason})
	res, _, ok := t.written(context.WithoutCancel(ctx), "finish attempt", in, a.Number, err, false)
	if !ok {
		return res
	}
	if d.PossiblyAccepted && !in.PossiblyAccepted {
		t.cfg.Metrics.IntentPossiblyAccepted(in.SubmissionTarget)
		t.log.Warn("intent_possibly_accepted", "intent_id", in.IntentID, "attempt", a.Number)
	}
	if d.AcceptedAfterDeadline {
		t.cfg.Metrics.IntentAcceptedAfterDeadline(in.SubmissionTarget)
		t.log.Warn("intent_accepted_after_deadline", "intent_id", in.IntentID, "attempt", a.Number,
			"message_id", d.AcceptedMessageID)
	}
	label := resultLabel(e.result)
	if e.reach == called && !e.calledAt.IsZero() {
		t.cfg.Metrics.AttemptFinished(in.Contract.GatewayType, label, finishedAt.Sub(e.calledAt))
	}
	if t.debug {
		t.log.Debug("attempt_finished", "intent_id", in.IntentID, "attempt", a.Number, "result", label,
			"status", d.Status, "error", p.Error, "next_due_at", d.NextDueAt)
	}
	if d.Status.Terminal() {
		t.cfg.Metrics.IntentCompleted(in.SubmissionTarget, d.Status, completionReason(d))
		return res
	}
	res.next = &core.ScheduleEntry{IntentID: in.IntentID, DueAt: d.NextDueAt, Mode: in.Contract.Mode}
	if e.reach.sent() && core.Tries(a.Number, in.Attempts) == a.Number && e.result.Outcome != nil && !slices.ContainsFunc(in.Attempts, core.InDoubt) {
		// The cache keeps no attempts, so it may only hold intents whose
		// attempt count is also their number of tries, and none with an
		// attempt in doubt, this one included (the possiblyAccepted rule
		// reads those).
		after := in
		after.AttemptCount, after.NextDueAt, after.Attempts = a.Number, d.NextDueAt, nil
		res.known = &after
	}
	return res
}

// written reads the error of a fenced write (StartAttempt, FinishAttempt,
// Reschedule), the one place that does. ok means the write applied. A lost
// fence or a store failure ends leadership (res.err). An intent that moved
// on is stale when the write was made from the known-intent cache (the
// caller reads it afresh), else logged and forgotten. A write cut short by
// the term stopping ends the attempt quietly: ctx is the context the write
// was made under, and a write that outlives the term's cancellation passes
// one that is never cancelled, so its timeout is a failure like any other.
// number is the attempt's, or 0 for a deferral.
func (t *term) written(ctx context.Context, op string, in core.Intent, number int, err error, fromCache bool) (res result, stale, ok bool) {
	res = result{intentID: in.IntentID}
	switch {
	case err == nil:
		return res, false, true
	case errors.Is(err, core.ErrFenced):
		t.cfg.Metrics.FencedWrite()
	case errors.Is(err, core.ErrIntentNotRunnable) && fromCache:
		return res, true, false
	case errors.Is(err, core.ErrIntentNotRunnable):
		t.log.Warn("attempt_not_runnable", "intent_id", in.IntentID, "attempt", number, "error", err.Error())
		return res, false, false
	case isStopping(ctx, err):
		return res, false, false
	}
	if number > 0 {
		op = fmt.Sprintf("%s %d of", op, number)
	}
	res.err = fmt.Errorf("executor: %s %q: %w", op, in.IntentID, err)
	return res, false, false
}

// resultLabel names an attempt's result for metrics: the gateway's status,
// or "error" for anything that was not a well-formed outcome.
func resultLabel(r core.AttemptResult) string {
	if r.Err != nil || r.Outcome == nil {
		return "error"
	}
	return string(r.Outcome.Status)
}

// completionReason is the final outcome's reason or the exhausted reason.
func completionReason(d core.Decision) string {
	if d.Status == core.StatusExhausted {
		return string(d.ExhaustedReason)
	}
	if d.FinalOutcome != nil {
		return d.FinalOutcome.Reason
	}
	return ""
}
