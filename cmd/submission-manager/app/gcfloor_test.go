package app

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGCPercentForKeepsTheHeapGoalAtTheFloorWhileTheHeapIsSmall: a small
// live heap may grow to heapFloor before a collection; from half the floor
// on, Go's default applies.
func TestGCPercentForKeepsTheHeapGoalAtTheFloorWhileTheHeapIsSmall(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{1 << 20, maxGCPercent}, // 6,300 % would put the goal at 64 MiB: capped
		{8 << 20, 700},          // 8 MiB live, 56 MiB more: a 64 MiB goal
		{16 << 20, 300},
		{heapFloor/2 - 1, 100},
		{heapFloor / 2, 100},
		{1 << 30, 100},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
		if p := gcPercentFor(c.live); p > 100 && p < maxGCPercent {
			if goal := c.live + c.live*uint64(p)/100; goal > heapFloor || goal < heapFloor-c.live/100 {
				t.Errorf("live %d: GOGC %d puts the goal at %d, want about %d", c.live, p, goal, heapFloor)
			}
		}
	}
}

// TestGCFloorTunesGOGCAndGivesItBack starts the floor with GOGC unset: it
// raises GOGC for this test process's small heap, and stop puts back what
// it found. With GOGC set, it changes nothing.
func TestGCFloorTunesGOGCAndGivesItBack(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	before := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(before) })

	unset := func(string) (string, bool) { return "", false }
	stop := startGCFloor(unset, time.Millisecond, log)
	runtime.GC() // a live heap to read
	deadline := time.Now().Add(5 * time.Second)
	var now int
	for time.Now().Before(deadline) {
		now = gcPercent()
		if now > 100 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if now <= 100 {
		t.Fatalf("GOGC %d while the floor ran on a small heap, want above 100", now)
	}
	if got := gcPercent(); got != before {
		t.Fatalf("GOGC %d after stop, want the %d it found", got, before)
	}

	set := func(name string) (string, bool) { return "100", name == "GOGC" }
	debug.SetGCPercent(250)
	stop = startGCFloor(set, time.Millisecond, log)
	time.Sleep(20 * time.Millisecond)
	stop()
	if got := gcPercent(); got != 250 {
		t.Fatalf("GOGC %d with GOGC set by the operator, want it untouched (250)", got)
	}
}
