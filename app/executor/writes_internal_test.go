package executor

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// A batcher answers every write with its own item's answer, and gathers
// the writes that queue while its senders are busy into as few store calls
// as there are senders, whatever their number.
func TestBatcherGathersWritesAndAnswersEach(t *testing.T) {
	for _, senders := range []int{1, 2, DefaultWriteBatches} {
		t.Run(fmt.Sprint(senders, " senders"), func(t *testing.T) { testBatcherGathers(t, senders) })
	}
}

func testBatcherGathers(t *testing.T, senders int) {
	gate := make(chan struct{})
	held := make(chan struct{}, senders)
	var (
		mu    sync.Mutex
		calls [][]int
	)
	b := newBatcher(t.Context(), 64, func(_ context.Context, items []int) []error {
		mu.Lock()
		calls = append(calls, append([]int(nil), items...))
		first := len(calls) <= senders
		mu.Unlock()
		if first {
			held <- struct{}{}
			<-gate // the first call of each sender is held
		}
		errs := make([]error, len(items))
		for i, it := range items {
			if it%2 == 1 {
				errs[i] = fmt.Errorf("odd %d", it)
			}
		}
		return errs
	})
	var wg sync.WaitGroup
	for range senders {
		wg.Go(b.run)
	}
	const writes = 40
	answers := make([]chan error, writes)
	for i := range answers {
		answers[i] = make(chan error, 1)
		b.queue <- pendingWrite[int]{item: i, answer: answers[i]}
		if i < senders {
			<-held // one sender more is busy with this write alone
		}
	}
	close(gate)
	for i, a := range answers {
		if err := <-a; (i%2 == 1) != (err != nil) || (err != nil && err.Error() != fmt.Sprintf("odd %d", i)) {
			t.Errorf("write %d answered %v", i, err)
		}
	}
	close(b.queue)
	wg.Wait()
	if n := len(calls); n > 2*senders {
		t.Errorf("%d writes went in %d store calls (%v), want at most %d: writes queued behind busy senders are gathered",
			writes, n, calls, 2*senders)
	}
}
