package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
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
	if in.ResubmittedFrom != "" {
		out.ResubmittedFrom = ptr(in.ResubmittedFrom)
	}
	if in.ResubmittedAs != "" {
		out.ResubmittedAs = ptr(in.ResubmittedAs)
	}
	return out
}

func attemptFromCore(a core.Attempt) apigen.Attempt {
	out := apigen.Attempt{Number: a.Number, StartedAt: a.StartedAt.UTC()}
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

// cursor is the position a listing continues from. It travels to clients as
// base64url-encoded JSON, which they must treat as opaque; the time keeps
// nanoseconds so no intent is skipped or repeated at a page boundary.
type cursor struct {
	CreatedAt time.Time `json:"c"`
	IntentID  string    `json:"i"`
}

// The times a cursor may carry: the span of Unix nanoseconds in an int64,
// which the stores use. A forged cursor outside it is refused, not wrapped
// around into a wrong page.
var (
	minCursorTime = time.Unix(0, math.MinInt64).UTC()
	maxCursorTime = time.Unix(0, math.MaxInt64).UTC()
)

func encodeCursor(p ports.IntentPosition) string {
	data, _ := json.Marshal(cursor{CreatedAt: p.CreatedAt.UTC(), IntentID: p.IntentID}) // a cursor always marshals
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeCursor(s string) (*ports.IntentPosition, error) {
	invalid := &core.FieldError{Field: "cursor", Message: "is not a cursor this service issued"}
	data, err := base64.RawURLEncoding.DecodeString(s)
	// A cursor of ours is UTF-8 JSON naming a stored intentId; a forged one
	// with lone surrogates or bad bytes would decode to a different id.
	if err != nil || !utf8.Valid(data) || hasLoneSurrogate(data) {
		return nil, invalid
	}
	var c cursor
	if err := json.Unmarshal(data, &c); err != nil || c.IntentID == "" || c.CreatedAt.IsZero() ||
		c.CreatedAt.Before(minCursorTime) || c.CreatedAt.After(maxCursorTime) {
		return nil, invalid
	}
	return &ports.IntentPosition{CreatedAt: c.CreatedAt, IntentID: c.IntentID}, nil
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
