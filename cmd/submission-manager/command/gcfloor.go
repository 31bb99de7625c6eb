package command

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The service keeps a small live heap (the schedule's entries, the caches,
// buffers: a few MiB) while every request and attempt allocates. At Go's
// default GOGC=100 the collector then runs each time a few MiB were
// allocated: 27 times a second in a drain of 9,000 attempts/s, about 8 % of
// the service's CPU, on the cores the executor and intake share. The GC
// floor raises GOGC while the live heap is small, so the heap grows to about
// heapFloor between collections, and gives GOGC back to 100 as the live heap
// approaches half of that: a large schedule (a million pending intents)
// keeps Go's default, and with it the default memory overhead. A memory
// limit (GOMEMLIMIT) still bounds the heap as Go documents; SQLite's own
// memory (its page cache, through cgo) is outside the Go heap and outside
// both.

const (
	// heapFloor is the heap goal the floor aims at while the live heap is
	// small.
	heapFloor = 64 << 20
	// maxGCPercent caps GOGC for a nearly empty heap.
	maxGCPercent = 1000
	// gcRetuneEvery is how often the floor reads the live heap; it changes
	// slowly (the schedule grows and shrinks with the backlog).
	gcRetuneEvery = time.Second
)

// gcPercentFor is the GOGC that puts the next collection's heap goal at
// heapFloor for a live heap of live bytes and roots (goroutine stacks and
// globals, which Go's goal counts with the heap: goal = live + (live +
// roots) × GOGC/100) of roots bytes, never below Go's default of 100 nor
// above maxGCPercent.
func gcPercentFor(live, roots uint64) int {
	switch {
	case live >= heapFloor/2:
		return 100
	case live+roots == 0:
		return maxGCPercent
	default:
		return int(max(min(100*(heapFloor-live)/(live+roots), maxGCPercent), 100))
	}
}

// sampleBytes is a sample's value, or 0 where this Go has no such metric.
func sampleBytes(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// gcPercent reads the GOGC in effect.
func gcPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// startGCFloor retunes GOGC from the live heap every interval until the
// returned stop is called, which waits for it and puts back the GOGC it
// found. An operator's GOGC (the environment variable, "off" included) is
// left alone: the floor then does nothing.
func startGCFloor(env LookupEnv, interval time.Duration, log *slog.Logger) (stop func()) {
	if v, ok := env("GOGC"); ok {
		log.Debug("gc_floor_off", "reason", "GOGC is set", "gogc", v)
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	initial := gcPercent()
	go func() {
		defer close(done)
		sample := []metrics.Sample{
			{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
		}
		current := initial
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if p := gcPercentFor(sampleBytes(sample[0]), sampleBytes(sample[1])+sampleBytes(sample[2])); p != current {
				debug.SetGCPercent(p)
				current = p
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		debug.SetGCPercent(initial)
	}
}
