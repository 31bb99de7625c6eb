// Package submission is the Go client of SubmissionManager for client
// services: submit an intent, read it, wait until it is final, list
// intents. It is a small hand-written layer over the generated client
// (package client, from api/openapi.yaml): answers come back as values,
// and every error answer as a *Problem whose Type is one of the documented
// constants. Client.API returns the generated client for every other
// operation.
package submission

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// The API's types, under the names this package's calls use.
type (
	// Intent is an intent with its contract snapshot and attempts.
	Intent = client.Intent
	// Request is a submission: intentId, submissionTarget, payload and
	// the optional notBefore.
	Request = client.SubmitIntentRequest
	// Status is an intent's status: pending until one of the final ones.
	Status = client.IntentStatus
)

// The statuses; every one but StatusPending is final.
const (
	StatusPending   = client.IntentStatusPending
	StatusAccepted  = client.IntentStatusAccepted
	StatusRejected  = client.IntentStatusRejected
	StatusExhausted = client.IntentStatusExhausted
)

// Client talks to one SubmissionManager service (or the load balancer in
// front of several). It is safe for concurrent use.
type Client struct {
	api *client.ClientWithResponses
}

// Option configures New.
type Option func(*[]client.ClientOption)

// WithAPIKey sends key as a bearer token on every request, as the service
// demands once it runs with --api-keys.
func WithAPIKey(key string) Option {
	return func(opts *[]client.ClientOption) { *opts = append(*opts, client.WithAPIKey(key)) }
}

// WithHTTPClient makes the requests through doer (an *http.Client with
// its own transport or timeout, say) instead of http.DefaultClient. Keep
// any timeout above the longest wait WaitFinal asks for (30 s).
func WithHTTPClient(doer client.HttpRequestDoer) Option {
	return func(opts *[]client.ClientOption) { *opts = append(*opts, client.WithHTTPClient(doer)) }
}

// New returns a client of the service at baseURL, such as
// "http://127.0.0.1:8000".
func New(baseURL string, opts ...Option) (*Client, error) {
	var copts []client.ClientOption
	for _, o := range opts {
		o(&copts)
	}
	api, err := client.NewClientWithResponses(strings.TrimRight(baseURL, "/"), copts...)
	if err != nil {
		return nil, fmt.Errorf("submission-manager client for %q: %w", baseURL, err)
	}
	return &Client{api: api}, nil
}

// API returns the generated client underneath, for the operations this
// package does not wrap (batches, resubmissions, targets, gateways).
func (c *Client) API() *client.ClientWithResponses { return c.api }

// Submit hands an intent over. It is idempotent: the same intentId with the
// same target, payload and notBefore returns the existing intent with
// created false; anything else under that id is a *Problem of type
// TypeIdempotencyConflict. Retrying after a network error is always safe.
func (c *Client) Submit(ctx context.Context, r Request) (in Intent, created bool, err error) {
	res, err := c.api.SubmitIntentWithResponse(ctx, nil, r)
	switch {
	case err != nil:
		return Intent{}, false, err
	case res.JSON201 != nil:
		return *res.JSON201, true, nil
	case res.JSON200 != nil:
		return *res.JSON200, false, nil
	}
	return Intent{}, false, ProblemOf(res.HTTPResponse, res.Body)
}

// Get reads one intent, with its payload; an unknown intentId is a
// *Problem of type TypeIntentNotFound.
func (c *Client) Get(ctx context.Context, intentID string) (Intent, error) {
	in, _, err := c.get(ctx, intentID, 0)
	return in, err
}

// get reads an intent, asking the service to wait up to wait (whole
// seconds) for it to be final, and reports whether the service waited.
func (c *Client) get(ctx context.Context, intentID string, wait time.Duration) (Intent, bool, error) {
	var params *client.GetIntentParams
	if s := int64(wait / time.Second); s > 0 {
		prefer := fmt.Sprintf("wait=%d", s)
		params = &client.GetIntentParams{Prefer: &prefer}
	}
	res, err := c.api.GetIntentWithResponse(ctx, intentID, params)
	if err != nil {
		return Intent{}, false, err
	}
	if res.JSON200 == nil {
		return Intent{}, false, ProblemOf(res.HTTPResponse, res.Body)
	}
	return *res.JSON200, res.HTTPResponse.Header.Get("Preference-Applied") != "", nil
}

// longestWait bounds one waiting request. The service caps a wait at its
// --max-wait (30 s by default) and then answers with the intent as it
// stands; WaitFinal asks again until the intent is final.
const longestWait = 30 * time.Second

// pauseWhenNotWaited is how long WaitFinal pauses before asking again when
// the service answered a pending intent without waiting (it holds as many
// waiting requests as it takes, or less than a second was left), so that
// the service is never polled in a tight loop.
const pauseWhenNotWaited = time.Second

// WaitFinal returns the intent once it is accepted, rejected or exhausted.
// It waits on the service (Prefer: wait, answered as soon as the intent is
// final, by whichever instance) rather than polling, and asks again each
// time the service's cap on one wait passes. Bound it with ctx: when ctx
// ends first, WaitFinal returns the intent as last read (zero if none was)
// with an error that wraps ctx's.
func (c *Client) WaitFinal(ctx context.Context, intentID string) (Intent, error) {
	var last Intent
	for {
		wait := longestWait
		if deadline, ok := ctx.Deadline(); ok {
			// Rounded down, so that the service answers before ctx ends.
			wait = min(wait, time.Until(deadline))
		}
		in, waited, err := c.get(ctx, intentID, wait)
		if err != nil {
			if ctx.Err() != nil {
				return last, fmt.Errorf("waiting for intent %q to be final: %w", intentID, ctx.Err())
			}
			return last, err
		}
		last = in
		if in.Status != StatusPending {
			return in, nil
		}
		if !waited {
			t := time.NewTimer(pauseWhenNotWaited)
			select {
			case <-ctx.Done():
				t.Stop()
				return last, fmt.Errorf("waiting for intent %q to be final: %w", intentID, ctx.Err())
			case <-t.C:
			}
		}
	}
}

// Filter selects the intents List yields; the zero Filter selects all.
type Filter struct {
	Status           Status
	SubmissionTarget string
	// PossiblyAccepted true selects only intents flagged possiblyAccepted.
	PossiblyAccepted bool
	// AcceptedAfterDeadline true selects only intents the gateway accepted
	// after their acceptance deadline (flagged acceptedAfterDeadline).
	AcceptedAfterDeadline bool
	// IntentIDPrefix selects the intents whose intentId starts with it,
	// exactly: letter case counts and no character is a wildcard.
	IntentIDPrefix string
	// CreatedFrom and CreatedBefore select the intents created in
	// [CreatedFrom, CreatedBefore); a zero time leaves its side open.
	CreatedFrom, CreatedBefore time.Time
	// LastResult selects the intents whose latest attempt has it in its
	// outcome status, outcome reason or error, ignoring letter case
	// ("invalid_recipient", "timeout").
	LastResult string
	// PageSize is how many intents one request fetches, 1 to 500; zero
	// leaves it to the service (50).
	PageSize int
}

// List yields the intents that match f, newest first, fetching the next
// page when the loop asks for more; breaking out of the loop stops it. An
// error ends the sequence as its last element.
func (c *Client) List(ctx context.Context, f Filter) iter.Seq2[Intent, error] {
	return func(yield func(Intent, error) bool) {
		cursor := ""
		for {
			page, next, err := c.ListPage(ctx, f, cursor)
			if err != nil {
				yield(Intent{}, err)
				return
			}
			for _, in := range page {
				if !yield(in, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			cursor = next
		}
	}
}

// ListPage returns one page of the intents that match f, newest first,
// starting after cursor ("" for the first page), and the cursor of the
// next page ("" after the last). Use it to resume a listing later; List
// pages for you.
func (c *Client) ListPage(ctx context.Context, f Filter, cursor string) (page []Intent, next string, err error) {
	var params client.ListIntentsParams
	if f.Status != "" {
		params.Status = &f.Status
	}
	if f.SubmissionTarget != "" {
		params.SubmissionTarget = &f.SubmissionTarget
	}
	if f.PossiblyAccepted {
		params.PossiblyAccepted = &f.PossiblyAccepted
	}
	if f.AcceptedAfterDeadline {
		params.AcceptedAfterDeadline = &f.AcceptedAfterDeadline
	}
	if f.IntentIDPrefix != "" {
		params.IntentIdPrefix = &f.IntentIDPrefix
	}
	if f.LastResult != "" {
		params.LastResult = &f.LastResult
	}
	if !f.CreatedFrom.IsZero() {
		from := f.CreatedFrom.UTC().Format(time.RFC3339Nano)
		params.CreatedFrom = &from
	}
	if !f.CreatedBefore.IsZero() {
		before := f.CreatedBefore.UTC().Format(time.RFC3339Nano)
		params.CreatedBefore = &before
	}
	if f.PageSize != 0 {
		params.Limit = &f.PageSize
	}
	if cursor != "" {
		params.Cursor = &cursor
	}
	res, err := c.api.ListIntentsWithResponse(ctx, &params)
	if err != nil {
		return nil, "", err
	}
	if res.JSON200 == nil {
		return nil, "", ProblemOf(res.HTTPResponse, res.Body)
	}
	if res.JSON200.NextCursor != nil {
		next = *res.JSON200.NextCursor
	}
	return res.JSON200.Intents, next, nil
}
