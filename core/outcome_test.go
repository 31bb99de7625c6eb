package core

import (
	"errors"
	"fmt"
	"testing"
)

// invalidAnswer is the attempt result of an answer NewOutcome refuses: the
// error the gateway adapter returns for it.
func invalidAnswer(status OutcomeStatus, reason string) AttemptResult {
	o, err := NewOutcome(status, reason, "")
	if err == nil {
		panic(fmt.Sprintf("NewOutcome(%q, %q) = %+v, want an error", status, reason, o))
	}
	return AttemptResult{Err: err}
}

func TestNewOutcome(t *testing.T) {
	tests := []struct {
		name      string
		status    OutcomeStatus
		reason    string
		messageID string
		want      Outcome
		wantErr   error  // nil: well-formed
		wantText  string // what the error says
	}{
		{name: "accepted", status: OutcomeAccepted, want: Outcome{Status: OutcomeAccepted}},
		{name: "accepted with message id", status: OutcomeAccepted, messageID: "m-1", want: Outcome{Status: OutcomeAccepted, MessageID: "m-1"}},
		{name: "accepted drops the reason", status: OutcomeAccepted, reason: ReasonProviderFailure, messageID: "m-2", want: Outcome{Status: OutcomeAccepted, MessageID: "m-2"}},
		{name: "rejected with a taxonomy reason", status: OutcomeRejected, reason: ReasonProviderFailure, want: Outcome{Status: OutcomeRejected, Reason: ReasonProviderFailure}},
		{name: "rejected with an unknown reason", status: OutcomeRejected, reason: "rate_limited", want: Outcome{Status: OutcomeRejected, Reason: "rate_limited"}},
		{name: "rejected keeps a message id", status: OutcomeRejected, reason: "rate_limited", messageID: "m-3", want: Outcome{Status: OutcomeRejected, Reason: "rate_limited", MessageID: "m-3"}},
		{name: "missing status", reason: ReasonProviderFailure, wantErr: ErrOutcomeNoStatus, wantText: "gateway answer has no status"},
		{name: "rejected without reason", status: OutcomeRejected, messageID: "m-4", wantErr: ErrOutcomeNoReason, wantText: "gateway answer rejected without a reason"},
		{name: "unknown status", status: "queued", wantErr: ErrOutcomeUnknownStatus, wantText: `gateway answer has unknown status "queued"`},
		{name: "status is case-sensitive", status: "Accepted", wantErr: ErrOutcomeUnknownStatus, wantText: `gateway answer has unknown status "Accepted"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewOutcome(tt.status, tt.reason, tt.messageID)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("NewOutcome = %+v, %v, want %+v", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || err.Error() != tt.wantText {
				t.Fatalf("NewOutcome error %v, want %q matching %v", err, tt.wantText, tt.wantErr)
			}
			if got != (Outcome{}) {
				t.Fatalf("NewOutcome returned both an error and %+v", got)
			}
		})
	}
}

func TestStoredOutcome(t *testing.T) {
	if o := StoredOutcome("", "", ""); o != nil {
		t.Fatalf("no status read back as %+v, want no outcome", o)
	}
	o := StoredOutcome("rejected", "invalid_recipient", "m-1")
	if o == nil || *o != (Outcome{Status: OutcomeRejected, Reason: "invalid_recipient", MessageID: "m-1"}) {
		t.Fatalf("StoredOutcome = %+v", o)
	}
}
