package core

import (
	"fmt"
	"time"
)

// DefaultMaxNotBefore is how far ahead a submission may schedule its first
// attempt unless the operator sets another cap.
const DefaultMaxNotBefore = 30 * 24 * time.Hour

// CheckNotBefore refuses a notBefore further ahead of now than maxAhead, so
// that no client parks intents in the store for longer than the operator
// allows. A zero notBefore (none given) and any time in the past are fine:
// the past means at once.
func CheckNotBefore(notBefore, now time.Time, maxAhead time.Duration) error {
	if notBefore.IsZero() || !notBefore.After(now.Add(maxAhead)) {
		return nil
	}
	return &FieldError{Field: "notBefore", Message: fmt.Sprintf(
		"is %s ahead; the limit is %s", notBefore.Sub(now).Round(time.Second), maxAhead)}
}

// WithNotBefore schedules a new intent's first attempt: it is due at
// notBefore, or at once when notBefore is zero or not after the creation
// time. NotBefore is kept as the client sent it, because an idempotent
// repeat must match it.
func (i Intent) WithNotBefore(notBefore time.Time) Intent {
	i.NotBefore = notBefore
	if notBefore.After(i.CreatedAt) {
		i.NextDueAt = notBefore
	}
	return i
}

// DeadlineStart is when a deadline contract's acceptance window opens: at
// notBefore when the client scheduled the intent later than its creation,
// at creation otherwise. Counting from creation would let a scheduled send
// expire before its first attempt.
func (i Intent) DeadlineStart() time.Time {
	if i.NotBefore.After(i.CreatedAt) {
		return i.NotBefore
	}
	return i.CreatedAt
}
