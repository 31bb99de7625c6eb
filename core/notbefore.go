package core

import (
	"fmt"
	"time"
)

// DefaultMaxNotBefore is how far ahead a submission may schedule its first
// attempt unless the operator sets another cap.
const DefaultMaxNotBefore = 30 * 24 * time.Hour

// EarliestNotBefore is the earliest notBefore a submission may give. Any
// time in the past means "at once", so an early bound costs a client
// nothing; what it refuses is the zero value of some client's date type
// (Go's and .NET's 0001-01-01, Unix's 1970-01-01, SQL Server's 1753-01-01)
// sent by mistake, which a store would otherwise keep as "none" (SQLite
// stores 1970-01-01T00:00:00Z as its zero) or could not keep at all: such a
// notBefore would be dropped silently, and a repeat without it judged a
// repeat instead of the conflict it is.
var EarliestNotBefore = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// errNotBeforeSyntax refuses a notBefore that is not an RFC 3339 date-time.
var errNotBeforeSyntax = &FieldError{Field: "notBefore", Message: "must be an RFC 3339 date-time, such as 2026-02-02T09:00:00Z"}

// ParseNotBefore reads the notBefore a client sent: an RFC 3339 date-time
// (section 5.6: "2026-02-02T09:00:00Z", "2026-02-02T10:00:00.5+01:00"),
// no earlier than EarliestNotBefore. time.Parse alone is laxer than the
// RFC (it takes offsets such as +24:00 and one-digit hours), so the text's
// shape is checked first and time.Parse only judges the calendar.
func ParseNotBefore(text string) (time.Time, error) {
	if !rfc3339Shape(text) {
		return time.Time{}, errNotBeforeSyntax
	}
	// RFC 3339 allows a lower-case "t" and "z"; time.Parse does not.
	b := []byte(text)
	b[10] = 'T'
	if last := len(b) - 1; b[last] == 'z' {
		b[last] = 'Z'
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, errNotBeforeSyntax
	}
	if err := checkEarliest(t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// rfc3339Shape reports whether text has the shape of RFC 3339's date-time:
// full-date "T" partial-time time-offset, with two-digit fields, a
// fraction after a period, and an offset of Z or ±hh:mm with hh at most 23
// and mm at most 59. The ranges of the other fields are time.Parse's to
// check.
func rfc3339Shape(text string) bool {
	const head = "dddd-dd-ddTdd:dd:dd" // d is a digit, T is T or t
	if len(text) < len(head)+1 {
		return false
	}
	for i := range len(head) {
		c := text[i]
		switch head[i] {
		case 'd':
			if !isDigit(c) {
				return false
			}
		case 'T':
			if c != 'T' && c != 't' {
				return false
			}
		default:
			if c != head[i] {
				return false
			}
		}
	}
	rest := text[len(head):]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	switch {
	case rest == "Z" || rest == "z":
		return true
	case len(rest) != len("+hh:mm") || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':':
		return false
	}
	for _, i := range []int{1, 2, 4, 5} {
		if !isDigit(rest[i]) {
			return false
		}
	}
	return rest[1:3] <= "23" && rest[4:6] <= "59"
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkEarliest refuses a notBefore before EarliestNotBefore.
func checkEarliest(notBefore time.Time) error {
	if notBefore.Before(EarliestNotBefore) {
		return &FieldError{Field: "notBefore", Message: fmt.Sprintf(
			"must not be before %s: a time in the past means at once, so send the current time or leave notBefore out",
			EarliestNotBefore.Format(time.RFC3339))}
	}
	return nil
}

// CheckNotBefore refuses a notBefore further ahead of now than maxAhead, so
// that no client parks intents in the store for longer than the operator
// allows, and one before EarliestNotBefore. A zero notBefore (none given)
// is fine, and so is any other time in the past: the past means at once.
// The refusal names the limit rather than how far ahead notBefore is, which
// for a far-future time would be a meaningless saturated duration, and not
// the latest instant accepted either: that moves with the clock, and two
// identical submissions (one alone, one in a batch) must get one answer.
func CheckNotBefore(notBefore, now time.Time, maxAhead time.Duration) error {
	if notBefore.IsZero() {
		return nil
	}
	if err := checkEarliest(notBefore); err != nil {
		return err
	}
	if !notBefore.After(now.Add(maxAhead)) {
		return nil
	}
	return &FieldError{Field: "notBefore", Message: fmt.Sprintf(
		"must be at most %s ahead of the server's clock", describeDuration(maxAhead))}
}

// describeDuration writes a cap for people: "30 days (720h0m0s)" when it is
// a whole number of days, as the flag's Go syntax otherwise.
func describeDuration(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d == day:
		return "1 day (24h0m0s)"
	case d > day && d%day == 0:
		return fmt.Sprintf("%d days (%s)", d/day, d)
	default:
		return d.String()
	}
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
