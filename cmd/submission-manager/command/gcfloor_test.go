package command

import (
	"bytes"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestGCPercentForKeepsTheHeapGoalAtTheFloorWhileTheHeapIsSmall: a small
// live heap may grow to heapFloor before a collection; from half the floor
// on, Go's default applies.
func TestGCPercentForKeepsTheHeapGoalAtTheFloorWhileTheHeapIsSmall(t *testing.T) {
	for _, c := range []struct {
		live, roots uint64
		want        int
	}{
		{0, 0, maxGCPercent},
		{1 << 20, 0, maxGCPercent}, // 6,300 % would put the goal at 64 MiB: capped
		{8 << 20, 0, 700},          // 8 MiB live, 56 MiB more: a 64 MiB goal
		{8 << 20, 6 << 20, 400},    // stacks and globals count with the heap
		{2 << 20, 5 << 20, 885},    // not 1,000: the roots would take it past 64 MiB
		{16 << 20, 0, 300},
		{30 << 20, 30 << 20, 100}, // never below Go's default
		{heapFloor/2 - 1, 0, 100},
		{heapFloor / 2, 0, 100},
		{1 << 30, 1 << 20, 100},
	} {
		got := gcPercentFor(c.live, c.roots)
		if got != c.want {
			t.Errorf("gcPercentFor(%d MiB live, %d MiB roots) = %d, want %d", c.live>>20, c.roots>>20, got, c.want)
		}
		if goal := c.live + (c.live+c.roots)*uint64(got)/100; got > 100 && goal > heapFloor {
			t.Errorf("live %d, roots %d: GOGC %d puts the goal at %d, past the floor %d", c.live, c.roots, got, goal, heapFloor)
		}
	}
}

// TestGCFloorTunesGOGCAndGivesItBack starts the floor with GOGC unset: it
// raises GOGC for this test process's small heap, and stop puts back what
// it found. With GOGC set, it says it is off and changes nothing.
func TestGCFloorTunesGOGCAndGivesItBack(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	before := gcPercent()
	t.Cleanup(func() { debug.SetGCPercent(before) })

	unset := func(string) (string, bool) { return "", false }
	stop := startGCFloor(unset, time.Millisecond, log)
	runtime.GC() // a live heap to read
	// Nothing signals the floor's retune, so GOGC is read every few
	// milliseconds, for five seconds at most.
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

	// With the operator's GOGC the floor starts nothing, so there is no
	// retune to wait for: it says it is off, before it returns.
	set := func(name string) (string, bool) { return "100", name == "GOGC" }
	debug.SetGCPercent(250)
	logs.Reset()
	stop = startGCFloor(set, time.Millisecond, log)
	if !strings.Contains(logs.String(), "msg=gc_floor_off") {
		stop()
		t.Fatalf("the floor did not say it is off with GOGC set; it logged %q", logs.String())
	}
	stop()
	if got := gcPercent(); got != 250 {
		t.Fatalf("GOGC %d with GOGC set by the operator, want it untouched (250)", got)
	}
}
