// Package sysclock implements ports.Clock over the time package: the wall
// clock production runs on. The core never reads time any other way, so this
// is the only place the process's notion of "now" comes from.
package sysclock

import (
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// Clock is the system clock. Its zero value is ready to use.
type Clock struct{}

var _ ports.Clock = Clock{}

// New returns the system clock.
func New() Clock { return Clock{} }

// Now returns the current time with its monotonic reading, so durations
// measured between two Now calls survive wall-clock steps.
func (Clock) Now() time.Time { return time.Now() }

// NewTimer returns a timer backed by time.NewTimer.
func (Clock) NewTimer(d time.Duration) ports.Timer { return timer{t: time.NewTimer(d)} }

// NewTimerAt returns a timer backed by time.NewTimer, until at (on the
// monotonic clock when at carries its reading).
func (Clock) NewTimerAt(at time.Time) ports.Timer { return timer{t: time.NewTimer(time.Until(at))} }

// timer adapts *time.Timer to ports.Timer.
type timer struct{ t *time.Timer }

func (t timer) C() <-chan time.Time { return t.t.C }
func (t timer) Stop() bool          { return t.t.Stop() }
