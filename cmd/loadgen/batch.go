package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// submitBatches posts the intents in batches of cfg.Batch through POST
// /v1/intents/batch with cfg.Concurrency workers. An item counts as
// accepted when its own result is 201 or 200; its latency is its batch's.
// With a rate, batch b is due at start + b*Batch/rate.
func submitBatches(ctx context.Context, c *client.ClientWithResponses, cfg config, ids []string, payload []byte) intake {
	var (
		next      atomic.Int64
		mu        sync.Mutex
		res       intake
		wg        sync.WaitGroup
		latencies = make([]time.Duration, len(ids))
		ok        = make([]bool, len(ids))
	)
	batches := (len(ids) + cfg.Batch - 1) / cfg.Batch
	bodies := newBodies(cfg.Target, payload)
	fail := func(n int, msg string) {
		mu.Lock()
		defer mu.Unlock()
		res.Errors += n
		if res.FirstError == "" {
			res.FirstError = msg
		}
	}
	start := time.Now()
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for {
				b := int(next.Add(1) - 1)
				if b >= batches || ctx.Err() != nil {
					return
				}
				lo, hi := b*cfg.Batch, min((b+1)*cfg.Batch, len(ids))
				if !waitForTurn(ctx, start, lo, cfg.Rate) {
					return
				}
				buf.Reset()
				buf.WriteString(`{"intents":[`)
				for i := lo; i < hi; i++ {
					if i > lo {
						buf.WriteByte(',')
					}
					buf.Write(bodies.of(ids[i]))
				}
				buf.WriteString(`]}`)
				t0 := time.Now()
				statuses, err := submitBatch(ctx, c, buf.Bytes())
				took := time.Since(t0)
				if err != nil {
					fail(hi-lo, err.Error())
					continue
				}
				if len(statuses) != hi-lo {
					fail(hi-lo, fmt.Sprintf("%d results for a batch of %d", len(statuses), hi-lo))
					continue
				}
				for k, r := range statuses {
					i := lo + k
					latencies[i] = took
					if r.Status == http.StatusCreated || r.Status == http.StatusOK {
						ok[i] = true
						continue
					}
					fail(1, fmt.Sprintf("item %s: HTTP %d: %s", ids[i], r.Status, r.Problem))
				}
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	for i, id := range ids {
		if ok[i] {
			res.Accepted = append(res.Accepted, id)
			res.Latencies = append(res.Latencies, latencies[i])
		}
	}
	return res
}

// batchResult is what the generator reads of one item's result: the
// intent itself is skipped (json.RawMessage), not decoded.
type batchResult struct {
	Status  int             `json:"status"`
	Problem json.RawMessage `json:"problem"`
}

// submitBatch posts one batch and returns its items' results, or an error
// when the batch as a whole was refused.
func submitBatch(ctx context.Context, c *client.ClientWithResponses, body []byte) ([]batchResult, error) {
	resp, err := c.SubmitIntentBatchWithBody(ctx, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("batch refused: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	var out struct {
		Results []batchResult `json:"results"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("batch answer: %w", err)
	}
	return out.Results, nil
}
