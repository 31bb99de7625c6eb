package sysclock_test

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sysclock"
)

func TestNowAdvancesWithTheWallClock(t *testing.T) {
	c := sysclock.New()
	before := time.Now()
	got := c.Now()
	after := time.Now()
	if got.Before(before) || got.After(after) {
		t.Fatalf("Now() = %v, want between %v and %v", got, before, after)
	}
}

func TestTimerFires(t *testing.T) {
	timer := sysclock.New().NewTimer(time.Millisecond)
	select {
	case <-timer.C():
	case <-time.After(10 * time.Second):
		t.Fatal("a 1ms timer did not fire within 10s")
	}
	if timer.Stop() {
		t.Fatal("Stop reported stopping a timer that had already fired")
	}
}

func TestStoppedTimerNeverFires(t *testing.T) {
	timer := sysclock.New().NewTimer(time.Hour)
	if !timer.Stop() {
		t.Fatal("Stop of a pending timer reported it had already fired")
	}
	select {
	case <-timer.C():
		t.Fatal("a stopped timer fired")
	default:
	}
}
