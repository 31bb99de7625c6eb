package core

import (
	"errors"
	"testing"
	"time"
)

func TestWithNotBeforeSchedulesTheFirstAttempt(t *testing.T) {
	now := policyCreatedAt
	tests := []struct {
		name               string
		notBefore, wantDue time.Time
	}{
		{"none: due at once", time.Time{}, now},
		{"in the past: due at once", now.Add(-time.Hour), now},
		{"ahead: due then", now.Add(time.Hour), now.Add(time.Hour)},
	}
	for _, tt := range tests {
		in := NewIntent("i", deadlineContract, []byte(`{}`), now).WithNotBefore(tt.notBefore)
		if !in.NextDueAt.Equal(tt.wantDue) || !in.NotBefore.Equal(tt.notBefore) {
			t.Errorf("%s: NextDueAt %v NotBefore %v, want %v and %v", tt.name, in.NextDueAt, in.NotBefore, tt.wantDue, tt.notBefore)
		}
	}
}

func TestDeadlineCountsFromNotBeforeWhenLater(t *testing.T) {
	now := policyCreatedAt
	window := time.Duration(deadlineContract.MaxAcceptanceSeconds) * time.Second
	later := NewIntent("i", deadlineContract, []byte(`{}`), now).WithNotBefore(now.Add(time.Hour))
	if d, _ := deadlineContract.Deadline(later.DeadlineStart()); !d.Equal(now.Add(time.Hour + window)) {
		t.Errorf("scheduled an hour ahead: deadline %v, want an hour plus the window after creation", d)
	}
	earlier := NewIntent("i", deadlineContract, []byte(`{}`), now).WithNotBefore(now.Add(-time.Hour))
	if d, _ := deadlineContract.Deadline(earlier.DeadlineStart()); !d.Equal(now.Add(window)) {
		t.Errorf("notBefore in the past: deadline %v, want the window after creation", d)
	}
	// Accepted an hour and a second later: in time for the scheduled intent.
	accepted := &Outcome{Status: OutcomeAccepted}
	dec := Decide(deadlineContract, later.DeadlineStart(), 1, now.Add(time.Hour+time.Second), AttemptResult{Outcome: accepted}, time.Second)
	if dec.Status != StatusAccepted {
		t.Errorf("acceptance within the window after notBefore: %s, want accepted", dec.Status)
	}
}

func TestCheckNotBeforeCapsHowFarAhead(t *testing.T) {
	now := policyCreatedAt
	for _, ok := range []time.Time{{}, now.Add(-365 * 24 * time.Hour), now, now.Add(DefaultMaxNotBefore)} {
		if err := CheckNotBefore(ok, now, DefaultMaxNotBefore); err != nil {
			t.Errorf("CheckNotBefore(%v) = %v, want nil", ok, err)
		}
	}
	err := CheckNotBefore(now.Add(DefaultMaxNotBefore+time.Second), now, DefaultMaxNotBefore)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "notBefore" {
		t.Errorf("beyond the cap: %v, want a field error naming notBefore", err)
	}
}
