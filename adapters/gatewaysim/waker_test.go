package gatewaysim

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// clocks are the kernel timers a waker can run on here: the platform's
// (a timerfd on Linux) and the Go timer it falls back to.
func clocks() map[string]func() kernelTimer {
	return map[string]func() kernelTimer{
		"platform": newKernelTimer,
		"go-timer": func() kernelTimer { return newGoTimer() },
	}
}

func TestWakerWakesEachAtItsDeadlineInDeadlineOrder(t *testing.T) {
	// Far enough apart that a wake held back by a busy machine still
	// comes long before one 90 ms or more after it; a waker that fired
	// them in any other order, or all at the last deadline, would not.
	const apart = 90 * time.Millisecond
	for name, clock := range clocks() {
		t.Run(name, func(t *testing.T) {
			w := newWaker(clock())
			defer w.close()
			// Added out of order: a wake earlier than the armed one must
			// re-arm the timer, and equal deadlines must both fire.
			delays := []time.Duration{200, 10, 100, 10, 1}
			for i := range delays {
				delays[i] *= time.Millisecond
			}
			dues := make([]<-chan struct{}, len(delays))
			fired := make(chan error, len(delays))
			start := time.Now()
			for i, d := range delays {
				due, cancel := w.after(d)
				defer cancel()
				dues[i] = due
			}
			for i, d := range delays {
				go func() {
					<-dues[i]
					if early := d - time.Since(start); early > 0 {
						fired <- fmt.Errorf("the %v wake came %v early", d, early)
						return
					}
					for j, other := range delays {
						select {
						case <-dues[j]:
							if other >= d+apart {
								fired <- fmt.Errorf("the %v wake fired no sooner than the %v one", d, other)
								return
							}
						default:
							if other < d {
								fired <- fmt.Errorf("the %v wake fired before the %v one", d, other)
								return
							}
						}
					}
					fired <- nil
				}()
			}
			for range delays {
				select {
				case err := <-fired:
					if err != nil {
						t.Error(err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a wake of at most 200 ms did not fire in 10 s")
				}
			}
		})
	}
}

func TestWakerAnEarlierWakeRearmsTheTimer(t *testing.T) {
	for name, clock := range clocks() {
		t.Run(name, func(t *testing.T) {
			w := newWaker(clock())
			defer w.close()
			_, cancelHour := w.after(time.Hour) // armed for an hour from now
			defer cancelHour()
			due, cancel := w.after(5 * time.Millisecond)
			defer cancel()
			select {
			case <-due:
			case <-time.After(10 * time.Second):
				t.Fatal("a 5 ms wake added after a 1 h one did not fire in 10 s: the timer stayed armed for the hour")
			}
		})
	}
}

func TestWakerCancelForgetsTheWake(t *testing.T) {
	for name, clock := range clocks() {
		t.Run(name, func(t *testing.T) {
			w := newWaker(clock())
			defer w.close()
			cancelled, cancel := w.after(5 * time.Millisecond)
			cancel()
			later, cancelLater := w.after(20 * time.Millisecond)
			defer cancelLater()
			select {
			case <-later:
			case <-time.After(10 * time.Second):
				t.Fatal("a 20 ms wake did not fire in 10 s")
			}
			select {
			case <-cancelled:
				t.Fatal("a cancelled wake fired")
			default:
			}
			w.mu.Lock()
			left := len(w.due)
			w.mu.Unlock()
			if left != 0 {
				t.Errorf("%d wakes are still held after every one fired or was cancelled", left)
			}
			cancel() // again, and after the others fired: a no-op
		})
	}
}

func TestWakerCloseEndsItsGoroutineWithWakesPending(t *testing.T) {
	for name, clock := range clocks() {
		t.Run(name, func(t *testing.T) {
			w := newWaker(clock())
			_, cancel := w.after(time.Hour)
			defer cancel()
			closed := make(chan struct{})
			go func() {
				w.close() // returns once run has returned
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("close did not end the waker's goroutine in 10 s")
			}
		})
	}
}

// BenchmarkLatencyOvershoot measures how late a simulated 5 ms latency
// ends with 64 submissions waiting at once, as in the benchmarks' drains:
// on the waker with each kernel timer, and on a Go timer per submission,
// as the simulator waited before. Run with -benchtime 2000x or more.
func BenchmarkLatencyOvershoot(b *testing.B) {
	const latency, concurrent = 5 * time.Millisecond, 64
	run := func(b *testing.B, wait func()) {
		var total time.Duration
		var mu sync.Mutex
		var wg sync.WaitGroup
		per := max(b.N/concurrent, 1)
		b.ResetTimer()
		for g := range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(g) * latency / concurrent) // spread, as calls are
				var sum time.Duration
				for range per {
					t0 := time.Now()
					wait()
					sum += time.Since(t0) - latency
				}
				mu.Lock()
				total += sum
				mu.Unlock()
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(total.Microseconds())/float64(per*concurrent), "overshoot-us/wait")
	}
	for name, clock := range clocks() {
		b.Run("waker-"+name, func(b *testing.B) {
			w := newWaker(clock())
			defer w.close()
			run(b, func() {
				due, cancel := w.after(latency)
				<-due
				cancel()
			})
		})
	}
	b.Run("timer-per-wait", func(b *testing.B) {
		run(b, func() {
			t := time.NewTimer(latency)
			<-t.C
		})
	})
}
