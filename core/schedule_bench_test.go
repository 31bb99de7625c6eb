package core

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// scheduleBenchSize is the leader's design load: a million pending intents.
const scheduleBenchSize = 1_000_000

// scheduleHeapBudgetMB is the memory target for a million pending intents.
const scheduleHeapBudgetMB = 300

// benchIntentID returns a distinct 36-character id shaped like the UUIDs
// clients typically send, each in its own allocation as a store read makes it.
func benchIntentID(i int) string {
	return fmt.Sprintf("%08x-7a1c-4e2b-9f3d-%012x", uint32(i)*2654435761, i)
}

// fillSchedule schedules n intents over an hour, one in four realtime.
func fillSchedule(n int, rng *rand.Rand) *Schedule {
	s := NewSchedule()
	for i := range n {
		mode := ModeBatch
		if i%4 == 0 {
			mode = ModeRealtime
		}
		s.Upsert(ScheduleEntry{
			IntentID: benchIntentID(i),
			DueAt:    scheduleT0.Add(time.Duration(rng.Int64N(int64(time.Hour)))),
			Mode:     mode,
		})
	}
	return s
}

// BenchmarkScheduleUpsertPop measures the leader's steady state at a million
// pending intents: pop the first due entry, then re-schedule it (a retry).
func BenchmarkScheduleUpsertPop(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := fillSchedule(scheduleBenchSize, rng)
	far := scheduleT0.Add(100000 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		e, ok := s.PopDue(far)
		if !ok {
			b.Fatal("schedule ran empty")
		}
		e.DueAt = e.DueAt.Add(time.Duration(rng.Int64N(int64(time.Hour))))
		s.Upsert(e)
	}
	if s.Len() != scheduleBenchSize {
		b.Fatalf("Len() = %d, want %d", s.Len(), scheduleBenchSize)
	}
}

// BenchmarkScheduleHeap1M reports the live heap a schedule of a million
// intents holds, ids included, against the 300 MB target for a million
// pending intents. Run it with -benchtime=1x: each iteration builds the whole
// schedule.
func BenchmarkScheduleHeap1M(b *testing.B) {
	var heapBytes uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := fillSchedule(scheduleBenchSize, rand.New(rand.NewPCG(3, 4)))
		runtime.GC()
		runtime.ReadMemStats(&after)
		if s.Len() != scheduleBenchSize {
			b.Fatalf("Len() = %d, want %d", s.Len(), scheduleBenchSize)
		}
		runtime.KeepAlive(s)
		heapBytes = after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
	}
	totalMB := float64(heapBytes) / (1 << 20)
	b.ReportMetric(float64(heapBytes)/scheduleBenchSize, "heap-B/entry")
	b.ReportMetric(totalMB, "heap-MB")
	if totalMB > scheduleHeapBudgetMB {
		b.Errorf("a schedule of %d intents holds %.0f MB, over the %d MB target", scheduleBenchSize, totalMB, scheduleHeapBudgetMB)
	}
}
