package watch

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkRegister10k measures the watcher's own bookkeeping for 10,000
// waiters (the registrations, not the requests holding them): the heap it
// holds and the time to register and remove them.
func BenchmarkRegister10k(b *testing.B) {
	const n = 10_000
	h := newHarness(b, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("intent-%d", i)
	}
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		regs := make([]*Waiter, n)
		for i, id := range ids {
			regs[i], _ = h.w.register(id)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		for _, r := range regs {
			r.Done()
		}
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "B/waiter")
	}
}
