package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// newClient builds an SDK client. For an http:// service it sends through
// the generator's lean HTTP/1.1 doer (doer.go), which opens a keep-alive
// connection per concurrent request, so the generator measures the service
// and neither dial latency nor its own HTTP bookkeeping; https:// goes
// through net/http's Transport. The returned func closes idle connections.
func newClient(cfg config) (*client.ClientWithResponses, func(), error) {
	var (
		doer      client.HttpRequestDoer
		closeIdle func()
	)
	if strings.HasPrefix(cfg.URL, "https://") {
		transport := &http.Transport{
			MaxIdleConns:        cfg.Concurrency * 2,
			MaxIdleConnsPerHost: cfg.Concurrency * 2,
			IdleConnTimeout:     90 * time.Second,
		}
		doer, closeIdle = &http.Client{Transport: transport, Timeout: 30 * time.Second}, transport.CloseIdleConnections
	} else {
		lean, err := newLeanDoer(cfg.URL, 30*time.Second)
		if err != nil {
			return nil, nil, err
		}
		doer, closeIdle = lean, lean.Close
	}
	opts := []client.ClientOption{client.WithHTTPClient(doer)}
	if cfg.APIKey != "" {
		opts = append(opts, client.WithAPIKey(cfg.APIKey))
	}
	c, err := client.NewClientWithResponses(cfg.URL, opts...)
	return c, closeIdle, err
}

// run submits the intents, then (unless --wait=false) waits for them and
// builds the report.
func run(ctx context.Context, cfg config, logger *slog.Logger) (*report, error) {
	c, closeIdle, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	defer closeIdle()
	if _, err := c.GetTargetWithResponse(ctx, cfg.Target); err != nil {
		return nil, fmt.Errorf("service at %s does not answer: %w", cfg.URL, err)
	}
	payload := makePayload(cfg.PayloadBytes)
	ids := make([]string, cfg.Count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%07d", cfg.RunID, i)
	}

	logger.Info("intake_started", "count", cfg.Count, "concurrency", cfg.Concurrency, "batch", cfg.Batch, "rate", cfg.Rate, "target", cfg.Target)
	var in intake
	if cfg.Batch > 1 {
		in = submitBatches(ctx, c, cfg, ids, payload)
	} else {
		in = submitAll(ctx, c, cfg, ids, payload)
	}
	rep := newReport(cfg, in)
	logger.Info("intake_finished", "seconds", in.Elapsed.Seconds(), "errors", in.Errors)
	if !cfg.Wait {
		return rep, nil
	}
	intents, unfinished, err := waitAll(ctx, c, cfg, in.Accepted, logger)
	if err != nil {
		return nil, err
	}
	rep.addExecution(intents, unfinished)
	return rep, nil
}

// intake is what the submission phase measured.
type intake struct {
	Elapsed   time.Duration
	Latencies []time.Duration
	Errors    int
	// FirstError is kept verbatim so an operator sees why intake failed.
	FirstError string
	// Accepted holds the intentIds the service stored (201 or 200).
	Accepted []string
}

// submitAll posts every intent with cfg.Concurrency workers. With a rate,
// intent i is due at start + i/rate: an open-loop schedule that, unlike a
// ticker, drops no sends when the generator is briefly descheduled.
func submitAll(ctx context.Context, c *client.ClientWithResponses, cfg config, ids []string, payload []byte) intake {
	var (
		next      atomic.Int64
		mu        sync.Mutex
		res       intake
		wg        sync.WaitGroup
		latencies = make([]time.Duration, len(ids))
		ok        = make([]bool, len(ids))
	)
	bodies := newBodies(cfg.Target, payload)
	start := time.Now()
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				if !waitForTurn(ctx, start, i, cfg.Rate) {
					return
				}
				req := bodies.of(ids[i])
				t0 := time.Now()
				status, body, err := submit(ctx, c, req)
				latencies[i] = time.Since(t0)
				if err == nil && (status == http.StatusCreated || status == http.StatusOK) {
					ok[i] = true
					continue
				}
				mu.Lock()
				res.Errors++
				if res.FirstError == "" {
					if err != nil {
						res.FirstError = err.Error()
					} else {
						res.FirstError = fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(body)))
					}
				}
				mu.Unlock()
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

// submit posts one intent and reads the status. The body is read in full
// (so the connection is reused) but decoded only by the caller of an error:
// the generator must not spend on JSON the CPU the service under test needs.
func submit(ctx context.Context, c *client.ClientWithResponses, body []byte) (int, []byte, error) {
	resp, err := c.SubmitIntentWithBody(ctx, nil, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, err
	}
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// bodies builds SubmitIntentRequest documents without encoding the same
// target and payload for every intent: only the intentId differs.
type bodies struct{ head []byte }

func newBodies(target string, payload []byte) bodies {
	t, _ := json.Marshal(target) // a string always encodes
	head := append([]byte(`{"submissionTarget":`), t...)
	head = append(head, `,"payload":`...)
	head = append(head, payload...)
	head = append(head, `,"intentId":`...)
	return bodies{head: head}
}

// of returns the body submitting intentID.
func (b bodies) of(intentID string) []byte {
	id, _ := json.Marshal(intentID)
	out := make([]byte, 0, len(b.head)+len(id)+1)
	out = append(append(append(out, b.head...), id...), '}')
	return out
}

// makePayload returns a JSON object of roughly n bytes shaped like an SMS.
func makePayload(n int) []byte {
	const head = `{"to":"+15550100","text":"`
	const tail = `"}`
	fill := n - len(head) - len(tail)
	if fill < 1 {
		fill = 1
	}
	return []byte(head + strings.Repeat("x", fill) + tail)
}

// waitForTurn paces an open-loop run: the n-th intent of a run at rate
// intents/s is sent n/rate seconds after start, however late the ones
// before it were (no send is dropped). It reports false when ctx ended
// first; a zero rate never waits.
func waitForTurn(ctx context.Context, start time.Time, n int, rate float64) bool {
	if rate <= 0 {
		return true
	}
	wait := time.Until(start.Add(time.Duration(float64(n) / rate * float64(time.Second))))
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
