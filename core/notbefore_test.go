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

func TestParseNotBeforeTakesRFC3339DateTimesOnly(t *testing.T) {
	for text, want := range map[string]time.Time{
		"2026-02-02T09:00:00Z":                time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC),
		"2026-02-02T10:00:00.5+01:00":         time.Date(2026, 2, 2, 9, 0, 0, 500_000_000, time.UTC),
		"2026-02-02t09:00:00z":                time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC), // RFC 3339 section 5.6 allows lower case
		"2026-02-02T09:00:00-23:59":           time.Date(2026, 2, 3, 8, 59, 0, 0, time.UTC),
		"2026-02-02T09:00:00.123456789Z":      time.Date(2026, 2, 2, 9, 0, 0, 123456789, time.UTC),
		"2000-01-01T00:00:00Z":                EarliestNotBefore,
		"2000-01-01T01:00:00+01:00":           EarliestNotBefore,
		"9999-12-31T23:59:59.999999999Z":      time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"2026-02-02T09:00:00.000000001+00:00": time.Date(2026, 2, 2, 9, 0, 0, 1, time.UTC),
	} {
		got, err := ParseNotBefore(text)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseNotBefore(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{
		"", "tomorrow", "2026-02-02", "2026-02-02T09:00:00", "2026-02-02 09:00:00Z", "2026-02-30T09:00:00Z",
		"2026-02-02T24:00:00Z", "2026-02-02T09:00:60Z", "2026-13-02T09:00:00Z",
		"2026-02-02T09:00:00+24:00", "2026-02-02T09:00:00-23:60", "2026-02-02T09:00:00+0100", "2026-02-02T09:00:00+01",
		"2026-02-02T9:00:00Z", "2026-2-02T09:00:00Z", "2026-02-02T09:00:00,5Z", "2026-02-02T09:00:00.Z", "2026-02-02T09:00:00Z ",
		"+2026-02-02T09:00:00Z", "２０２６-02-02T09:00:00Z",
		// Before EarliestNotBefore: the zero values of Go, .NET and Unix clients.
		"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1999-12-31T23:59:59.999Z",
		"2000-01-01T00:30:00+01:00",
	} {
		got, err := ParseNotBefore(text)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "notBefore" {
			t.Errorf("ParseNotBefore(%q) = %v, %v; want a field error naming notBefore", text, got, err)
		}
	}
}

func TestCheckNotBeforeRefusesTimesBeforeTheEarliest(t *testing.T) {
	now := policyCreatedAt
	err := CheckNotBefore(EarliestNotBefore.Add(-time.Nanosecond), now, DefaultMaxNotBefore)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "notBefore" {
		t.Errorf("just before the earliest: %v, want a field error naming notBefore", err)
	}
	if err := CheckNotBefore(EarliestNotBefore, now, DefaultMaxNotBefore); err != nil {
		t.Errorf("the earliest itself: %v, want nil", err)
	}
}

func TestCheckNotBeforeSaysHowFarAheadIsAllowed(t *testing.T) {
	now := time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC)
	for _, nb := range []time.Time{now.Add(DefaultMaxNotBefore + time.Second), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		err := CheckNotBefore(nb, now, DefaultMaxNotBefore)
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("notBefore %v: %v, want a field error", nb, err)
		}
		want := "must be at most 30 days (720h0m0s) ahead of the server's clock"
		if fe.Message != want {
			t.Errorf("notBefore %v: %q, want %q", nb, fe.Message, want)
		}
	}
}
