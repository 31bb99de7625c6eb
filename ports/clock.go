package ports

import "time"

// Clock is the core's only source of time. Production uses the wall clock;
// tests inject a fake one and advance it, so no test of the core sleeps.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once d has passed on this clock.
	NewTimer(d time.Duration) Timer
	// NewTimerAt returns a timer that fires once this clock reaches at. A
	// deadline held as a time is armed without a reading of Now of the
	// caller's in between, which the clock could move past (a fake clock
	// advanced by a test, a thread descheduled): the timer would then fire
	// that much late.
	NewTimerAt(at time.Time) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did so.
	Stop() bool
}
