package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// pollPause spaces the polling rounds when the service does not hold a
// read (no long poll), so that waiting does not itself become the load
// being measured.
const pollPause = 250 * time.Millisecond

// finalReadTimeout bounds the last read of the intents still pending when
// the wait ran out of time.
const finalReadTimeout = 30 * time.Second

// maxWaitSeconds is the longest long poll asked for: below the service's
// default --max-wait (30 s) and the client's own timeout (30 s, run.go).
const maxWaitSeconds = 20

// waitAll waits until every intent is terminal or the wait times out, and
// returns the last representation read of each intent and how many were
// still pending at the end. It must not load the service while it executes
// what it measures: reading every intent again and again would take CPU
// from the executor on the same host. So each round first long-polls the
// newest intent still pending (intents fall due in the order they were
// created, so it is about the last to finish) and only then reads the
// others once (readPending); the few still pending after that are waited
// for the same way.
func waitAll(ctx context.Context, c *client.ClientWithResponses, cfg config, ids []string, logger *slog.Logger) ([]client.Intent, int, error) {
	waitCtx, cancel := context.WithTimeout(ctx, cfg.WaitTimeout)
	defer cancel()
	latest := make(map[string]client.Intent, len(ids))
	pending := ids
	for round := 0; len(pending) > 0; round++ {
		if err := awaitFinal(waitCtx, c, pending[len(pending)-1]); err != nil && !over(waitCtx) {
			return nil, 0, err
		}
		if over(waitCtx) {
			break
		}
		got, err := readPending(waitCtx, c, cfg, pending)
		if err != nil && !over(waitCtx) {
			return nil, 0, err
		}
		pending = keepPending(pending, got, latest)
		logger.Debug("wait_round", "round", round, "pending", len(pending))
	}
	if len(pending) > 0 && ctx.Err() == nil {
		// Out of time: read the intents still pending once more, so the
		// report has how every one of them stands, not how it stood at the
		// previous round (or nothing, when the first long poll timed out).
		last, cancelLast := context.WithTimeout(ctx, finalReadTimeout)
		got, _ := readPending(last, c, cfg, pending)
		cancelLast()
		pending = keepPending(pending, got, latest)
	}
	out := make([]client.Intent, 0, len(latest))
	for _, in := range latest {
		out = append(out, in)
	}
	return out, len(pending), nil
}

// over reports whether ctx ended or its deadline passed. A request cut at
// the deadline (the lean doer sets it on the connection) can fail before
// the context's own timer marks it done, and that failure is the wait's
// timeout, not an error of the service.
func over(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	deadline, ok := ctx.Deadline()
	return ok && !time.Now().Before(deadline)
}

// keepPending records in latest what got read of the pending intents and
// returns those still pending, or not read.
func keepPending(pending []string, got, latest map[string]client.Intent) []string {
	var still []string
	for _, id := range pending {
		in, ok := got[id]
		if ok {
			latest[id] = in
		}
		if !ok || in.Status == client.IntentStatusPending {
			still = append(still, id)
		}
	}
	return still
}

// awaitFinal returns once the intent is terminal or ctx ends, holding one
// long poll at a time, never asked to last past ctx's deadline (the lean
// doer would cut it there, as a failed read): with less than a second left
// it reads without waiting. A service that answers at once (no long poll, at its
// waiter cap, or that short read) is asked again after pollPause.
func awaitFinal(ctx context.Context, c *client.ClientWithResponses, id string) error {
	for !over(ctx) {
		wait := maxWaitSeconds
		if deadline, ok := ctx.Deadline(); ok {
			wait = min(wait, int(time.Until(deadline)/time.Second))
		}
		var params client.GetIntentParams
		if wait >= 1 {
			prefer := client.Prefer(fmt.Sprintf("wait=%d", wait))
			params.Prefer = &prefer
		}
		asked := time.Now()
		resp, err := c.GetIntentWithResponse(ctx, id, &params)
		switch {
		case err != nil:
			return fmt.Errorf("waiting for intent %s: %w", id, err)
		case resp.StatusCode() != http.StatusOK || resp.JSON200 == nil:
			return fmt.Errorf("waiting for intent %s: HTTP %d", id, resp.StatusCode())
		case resp.JSON200.Status != client.IntentStatusPending:
			return nil
		}
		if time.Since(asked) < pollPause {
			select {
			case <-time.After(pollPause):
			case <-ctx.Done():
			}
		}
	}
	return cmp.Or(ctx.Err(), context.DeadlineExceeded)
}

// fetchAll GETs the intents with n workers.
func fetchAll(ctx context.Context, c *client.ClientWithResponses, n int, ids []string) (map[string]client.Intent, error) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		got      = make(map[string]client.Intent, len(ids))
		firstErr error
		work     = make(chan string)
	)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				resp, err := c.GetIntentWithResponse(ctx, id, nil)
				if err != nil && !over(ctx) {
					// A kept-alive connection the service dropped while a
					// long drain ran fails the next request written on it
					// ("broken pipe"); a read is idempotent, so it is sent
					// once more, on a connection dialled afresh.
					resp, err = c.GetIntentWithResponse(ctx, id, nil)
				}
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("reading intent %s: %w", id, err)
					}
				case resp.StatusCode() != http.StatusOK || resp.JSON200 == nil:
					if firstErr == nil {
						firstErr = fmt.Errorf("reading intent %s: HTTP %d", id, resp.StatusCode())
					}
				default:
					got[id] = *resp.JSON200
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, id := range ids {
		select {
		case work <- id:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return got, firstErr
}
