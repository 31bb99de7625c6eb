package httpapi

import (
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// intentFromCore renders an intent for clients. It shows what the spec
// promises and nothing internal: the contract without its routing URL, the
// final outcome only for accepted and rejected intents, the exhausted reason
// only for exhausted ones, and no next due time (retry timing is not a
// contract term).
func intentFromCore(in core.Intent) apigen.Intent {
	out := apigen.Intent{
		IntentId:         in.IntentID,
		SubmissionTarget: in.SubmissionTarget,
		Status:           apigen.IntentStatus(in.Status),
		CreatedAt:        in.CreatedAt.UTC(),
		NotBefore:        timePtr(in.NotBefore),
		Contract:         contractFromCore(in.Contract),
		Attempts:         make([]apigen.Attempt, 0, len(in.Attempts)),
	}
	for _, a := range in.Attempts {
		out.Attempts = append(out.Attempts, attemptFromCore(a))
	}
	if (in.Status == core.StatusAccepted || in.Status == core.StatusRejected) && in.FinalOutcome != nil {
		out.FinalOutcome = outcomeFromCore(*in.FinalOutcome)
	}
	if in.Status == core.StatusExhausted && in.ExhaustedReason != "" {
		out.ExhaustedReason = ptr(apigen.ExhaustedReason(in.ExhaustedReason))
	}
	if in.PossiblyAccepted {
		out.PossiblyAccepted = ptr(true)
	}
	if in.AcceptedAfterDeadline {
		out.AcceptedAfterDeadline = ptr(true)
		if in.AcceptedMessageID != "" {
			out.AcceptedMessageId = ptr(in.AcceptedMessageID)
		}
	}
	if in.ResubmittedFrom != "" {
		out.ResubmittedFrom = ptr(in.ResubmittedFrom)
	}
	if in.ResubmittedAs != "" {
		out.ResubmittedAs = ptr(in.ResubmittedAs)
	}
	if len(in.Events) > 0 {
		events := make([]apigen.IntentEvent, len(in.Events))
		for i, e := range in.Events {
			events[i] = eventFromCore(e)
		}
		out.Events = &events
	}
	return out
}

// eventFromCore renders an operator's action: who, what, when; the console
// session only by its tag.
func eventFromCore(e core.IntentEvent) apigen.IntentEvent {
	out := apigen.IntentEvent{
		Number: e.Number, At: e.At.UTC(), Action: apigen.IntentEventAction(e.Action),
		Surface: apigen.IntentEventSurface(e.Actor.Surface), Role: apigen.IntentEventRole(e.Actor.Role.String()),
	}
	if e.Actor.Session != "" {
		out.Session = ptr(e.Actor.Session)
	}
	return out
}

// attemptFromCore renders an attempt. Its sent is whether it counts as a
// try (core.Attempt.Tried): an open attempt's call may have been made.
func attemptFromCore(a core.Attempt) apigen.Attempt {
	out := apigen.Attempt{Number: a.Number, StartedAt: a.StartedAt.UTC(), Sent: a.Tried()}
	if a.Finished() {
		out.FinishedAt = ptr(a.FinishedAt.UTC())
	}
	if a.Outcome != nil {
		out.Outcome = outcomeFromCore(*a.Outcome)
	}
	if a.Error != "" {
		out.Error = ptr(a.Error)
	}
	if a.HolderID != "" {
		out.HolderId, out.LeaseEpoch = ptr(a.HolderID), ptr(a.Epoch)
	}
	return out
}

func outcomeFromCore(o core.Outcome) *apigen.Outcome {
	out := &apigen.Outcome{Status: apigen.OutcomeStatus(o.Status)}
	if o.Reason != "" {
		out.Reason = ptr(o.Reason)
	}
	return out
}

// contractFromCore renders a contract without its gatewayUrl: routing is
// SubmissionManager's business, not a client's.
func contractFromCore(c core.Contract) apigen.Contract {
	out := apigen.Contract{
		SubmissionTarget: c.SubmissionTarget,
		GatewayType:      apigen.GatewayType(c.GatewayType),
		Mode:             apigen.Mode(c.Mode),
		Policy:           apigen.Policy(c.Policy),
		TerminalOutcomes: append([]string{}, c.TerminalOutcomes...),
	}
	switch c.Policy {
	case core.PolicyDeadline:
		out.MaxAcceptanceSeconds = ptr(c.MaxAcceptanceSeconds)
	case core.PolicyMaxAttempts:
		out.MaxAttempts = ptr(c.MaxAttempts)
	}
	return out
}

// timePtr renders an optional time: nil for the zero time.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return ptr(t.UTC())
}

// deref reads an optional field, the zero value when absent.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
