package core

import (
	"fmt"
	"testing"
	"time"
)

var throttleT0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// TestAuthThrottleBurstThenOnePerInterval: Burst failures at once are
// allowed, the next must wait an Interval, and afterwards one failure per
// Interval is all an address gets.
func TestAuthThrottleBurstThenOnePerInterval(t *testing.T) {
	p := AuthThrottlePolicy{Burst: 3, Interval: 10 * time.Second}
	th := NewAuthThrottle(p, 0)
	now := throttleT0
	for i := range 3 {
		if wait := th.RetryAfter("a", now); wait != 0 {
			t.Fatalf("failure %d refused (wait %v) within the burst", i+1, wait)
		}
		wait, throttled := th.Fail("a", now)
		if last := i == 2; throttled != last || (wait > 0) != last {
			t.Fatalf("failure %d: wait %v, throttled %v", i+1, wait, throttled)
		}
	}
	if wait := th.RetryAfter("a", now); wait != 10*time.Second {
		t.Fatalf("after the burst: wait %v, want the interval", wait)
	}
	if wait := th.RetryAfter("b", now); wait != 0 {
		t.Fatalf("another address waits %v for a's failures", wait)
	}
	if wait := th.RetryAfter("a", now.Add(4*time.Second)); wait != 6*time.Second {
		t.Fatalf("4s later: wait %v, want 6s", wait)
	}
	now = now.Add(10 * time.Second)
	if wait := th.RetryAfter("a", now); wait != 0 {
		t.Fatalf("an interval later: wait %v, want none", wait)
	}
	if wait, throttled := th.Fail("a", now); wait != 10*time.Second || !throttled {
		t.Fatalf("the one failure of the interval: wait %v (throttled %v), want another interval", wait, throttled)
	}
	// Long after, everything has drained: a whole burst again.
	now = now.Add(time.Hour)
	for i := range 2 {
		if wait, _ := th.Fail("a", now); wait != 0 {
			t.Fatalf("after draining, failure %d waits %v", i+1, wait)
		}
	}
}

// TestAuthThrottleIsBounded: a flood of addresses never grows the table
// beyond its bound; drained addresses are forgotten first, and addresses it
// cannot track share one allowance.
func TestAuthThrottleIsBounded(t *testing.T) {
	p := AuthThrottlePolicy{Burst: 2, Interval: time.Second}
	th := NewAuthThrottle(p, 4)
	for i := range 4 {
		th.Fail(fmt.Sprint("busy", i), throttleT0)
	}
	// Untracked addresses share the overflow allowance of 2.
	for i := range 2 {
		if wait, _ := th.Fail(fmt.Sprint("flood", i), throttleT0); i == 1 && wait == 0 {
			t.Fatal("the overflow allowance did not run out")
		}
	}
	if th.Tracked() != 4 {
		t.Fatalf("tracking %d addresses, bound 4", th.Tracked())
	}
	if wait := th.RetryAfter("flood-new", throttleT0); wait == 0 {
		t.Fatal("an untracked address is not held to the shared allowance")
	}
	if wait := th.RetryAfter("busy0", throttleT0); wait != 0 {
		t.Fatalf("a tracked address with one failure waits %v", wait)
	}
	// Once the busy addresses drained, a new one takes a place of its own.
	later := throttleT0.Add(time.Minute)
	if wait, _ := th.Fail("late", later); wait != 0 || th.Tracked() != 1 {
		t.Fatalf("after draining: wait %v, tracking %d (want 1: the drained were forgotten)", wait, th.Tracked())
	}
}

func TestAuthThrottleOffAndValidate(t *testing.T) {
	th := NewAuthThrottle(AuthThrottlePolicy{}, 0)
	for range 100 {
		if wait, _ := th.Fail("a", throttleT0); wait != 0 {
			t.Fatal("a throttle with Burst 0 throttled")
		}
	}
	for _, p := range []AuthThrottlePolicy{{Burst: -1}, {Burst: 1}} {
		if p.Validate() == nil {
			t.Errorf("%+v validated", p)
		}
	}
	if err := (AuthThrottlePolicy{Burst: DefaultAuthFailureBurst, Interval: DefaultAuthFailureInterval}).Validate(); err != nil {
		t.Error(err)
	}
}
