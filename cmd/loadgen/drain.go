package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// drainPoll is how often awaitDrain asks whether anything is still pending
// unless --drain-poll says otherwise: the granularity of a backlog figure,
// and 50 reads a second.
const drainPoll = 20 * time.Millisecond

// drainReport is what --await-drain prints.
type drainReport struct {
	URL string `json:"url"`
	// DrainedSeconds runs from loadgen's start until the service first
	// answered that no intent is pending.
	DrainedSeconds float64 `json:"drainedSeconds"`
}

// awaitDrain waits until the service answers and holds no pending intent,
// asking for one page of pending intents every poll over a kept-alive
// connection. A backlog benchmark used to ask with a shell loop of curl
// processes, which took about a tenth of a core from the two the drain it
// timed runs on; this costs the host almost nothing, but each ask still
// costs the store a listing (on Babelfish 1-2 ms of its CPU). Until the service
// answers (it is still starting), failed requests are retried; a refusal
// (4xx) ends the wait at once; once the timeout passes, the last failure,
// if any, says why it never drained.
func awaitDrain(ctx context.Context, c *client.ClientWithResponses, timeout, poll time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	status, limit := client.IntentStatusPending, 1
	params := &client.ListIntentsParams{Status: &status, Limit: &limit}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var (
		lastErr  error
		answered bool
	)
	for {
		resp, err := c.ListIntentsWithResponse(ctx, params)
		switch {
		case over(ctx):
			// The timeout cut this request: the answers before say why.
		case err != nil:
			lastErr = err
		case resp.StatusCode() >= 400 && resp.StatusCode() < 500:
			// Refused (a wrong API key, say): asking again will not help.
			return 0, fmt.Errorf("listing pending intents: HTTP %d: %s", resp.StatusCode(), bytes.TrimSpace(resp.Body))
		case resp.JSON200 == nil:
			lastErr = fmt.Errorf("listing pending intents: HTTP %d", resp.StatusCode())
		case len(resp.JSON200.Intents) == 0:
			return time.Since(start), nil
		default:
			lastErr, answered = nil, true
		}
		select {
		case <-ctx.Done():
			switch {
			case lastErr != nil:
				return 0, fmt.Errorf("no drain within %v: %w", timeout, lastErr)
			case !answered:
				return 0, fmt.Errorf("the service did not answer within %v", timeout)
			default:
				return 0, fmt.Errorf("intents still pending after %v", timeout)
			}
		case <-tick.C:
		}
	}
}

// drainMain runs --await-drain and returns the exit code: 1 when the service
// did not drain in time.
func drainMain(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	c, closeIdle, err := newClient(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 1
	}
	defer closeIdle()
	took, err := awaitDrain(ctx, c, cfg.WaitTimeout, cfg.DrainPoll)
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 1
	}
	rep := drainReport{URL: cfg.URL, DrainedSeconds: took.Seconds()}
	if cfg.JSON {
		_ = json.NewEncoder(stdout).Encode(rep)
	} else {
		fmt.Fprintf(stdout, "%s drained after %.3f s\n", rep.URL, rep.DrainedSeconds)
	}
	return 0
}
