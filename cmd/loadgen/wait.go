package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// pollPause spaces the polling rounds so that waiting does not itself become
// the load being measured.
const pollPause = 250 * time.Millisecond

// waitAll reads every intent until it is terminal or the wait times out. It
// returns the last representation read of each intent and how many were
// still pending at the end.
func waitAll(ctx context.Context, c *client.ClientWithResponses, cfg config, ids []string, logger *slog.Logger) ([]client.Intent, int, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.WaitTimeout)
	defer cancel()
	latest := make(map[string]client.Intent, len(ids))
	pending := ids
	for round := 0; len(pending) > 0; round++ {
		if round > 0 {
			select {
			case <-time.After(pollPause):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		got, err := fetchAll(ctx, c, cfg.Concurrency, pending)
		if err != nil && ctx.Err() == nil {
			return nil, 0, err
		}
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
		pending = still
		logger.Debug("wait_round", "round", round, "pending", len(pending))
	}
	out := make([]client.Intent, 0, len(latest))
	for _, in := range latest {
		out = append(out, in)
	}
	return out, len(pending), nil
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
