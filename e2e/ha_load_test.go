package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// haLoad submits intents through HAProxy with the generated client from a
// few workers until stopped, as client services would during a failover:
// a request that fails in transport or with a 5xx (an instance killed or
// paused mid-request, a busy database) is sent again with the same intentId
// until it is acknowledged, which idempotency makes safe. It records every
// intentId that was acknowledged (201, or 200 for a repeat).
type haLoad struct {
	api     *client.ClientWithResponses
	targets []string

	cancel context.CancelFunc
	// abortRetries ends retries too, when a failed test gives up.
	abortCtx     context.Context
	abortRetries context.CancelFunc
	wg           sync.WaitGroup

	mu    sync.Mutex
	acked []string
	// ackedMore holds a signal when acked grew since waitAcked last took
	// one; waitAcked, the one waiter at a time, then counts again.
	ackedMore chan struct{}
	// problems holds unexpected answers (4xx), which no retry can fix.
	problems []string
	retries  atomic.Int64
	next     atomic.Int64
}

// startHALoad starts workers submitting through baseURL, each pausing
// between its intents.
func startHALoad(baseURL string, workers int, pause time.Duration, targets []string) (*haLoad, error) {
	api, err := client.NewClientWithResponses(baseURL, client.WithHTTPClient(&http.Client{Timeout: 3 * time.Second}))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	abortCtx, abortRetries := context.WithCancel(context.Background())
	l := &haLoad{api: api, targets: targets, cancel: cancel, abortCtx: abortCtx, abortRetries: abortRetries,
		ackedMore: make(chan struct{}, 1)}
	for range workers {
		l.wg.Go(func() { l.work(ctx, pause) })
	}
	return l, nil
}

// stop ends the load and waits for every worker; an intent being retried
// when stop is called is finished (acknowledged) first, so nothing a client
// was promised is left half-submitted.
func (l *haLoad) stop() {
	l.cancel()
	l.wg.Wait()
}

// abort ends the load without finishing the intents being retried.
func (l *haLoad) abort() {
	l.abortRetries()
	l.stop()
}

func (l *haLoad) work(ctx context.Context, pause time.Duration) {
	for ctx.Err() == nil {
		n := l.next.Add(1)
		id := fmt.Sprintf("load-%05d", n)
		l.submit(id, l.targets[int(n)%len(l.targets)])
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// submit sends one intent until it is acknowledged or refused for good.
func (l *haLoad) submit(id, target string) {
	body := client.SubmitIntentJSONRequestBody{
		IntentId: id, SubmissionTarget: target,
		Payload: json.RawMessage(`{"to":"+15550100","body":"` + id + `"}`),
	}
	deadline := time.Now().Add(haWait)
	for {
		res, err := l.api.SubmitIntentWithResponse(l.abortCtx, nil, body)
		switch {
		case err == nil && (res.StatusCode() == http.StatusCreated || res.StatusCode() == http.StatusOK):
			l.mu.Lock()
			l.acked = append(l.acked, id)
			l.mu.Unlock()
			select {
			case l.ackedMore <- struct{}{}:
			default: // a signal is pending already
			}
			return
		case err == nil && res.StatusCode() < 500:
			l.mu.Lock()
			l.problems = append(l.problems, fmt.Sprintf("%s: %d %s", id, res.StatusCode(), res.Body))
			l.mu.Unlock()
			return
		case l.abortCtx.Err() != nil:
			return
		case time.Now().After(deadline):
			l.mu.Lock()
			l.problems = append(l.problems, fmt.Sprintf("%s: not acknowledged within %s (last error %v)", id, haWait, err))
			l.mu.Unlock()
			return
		}
		l.retries.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
}

// acknowledged returns the intentIds acknowledged so far.
func (l *haLoad) acknowledged() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

// waitAcked waits until at least n more intents were acknowledged than
// when it was called.
func (l *haLoad) waitAcked(n int) error {
	base := len(l.acknowledged())
	bound := time.NewTimer(haWait)
	defer bound.Stop()
	for len(l.acknowledged())-base < n {
		select {
		case <-l.ackedMore:
		case <-bound.C:
			return fmt.Errorf("fewer than %d intents acknowledged within %s", n, haWait)
		}
	}
	return nil
}
