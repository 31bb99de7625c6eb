package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/submissionmanager/submission-manager/api/client"
)

// listAbove is how many intents still pending a round of the wait reads by
// listing the run's intents rather than one GET each: after make
// bench-sqlserver's paced lease phases, 300,000 reads one at a time took
// about eight minutes of each phase on Babelfish, where a listing reads a
// page of them, attempts included, in one request.
const listAbove = 2000

// listPage is the page the listing asks for: the API's largest.
const listPage = 500

// readPending reads the pending intents: by listing the run's (prefix)
// when there are more than listAbove of them, one GET each otherwise, so
// that the wait's last rounds, with a few left, do not read the whole run.
func readPending(ctx context.Context, c *client.ClientWithResponses, cfg config, pending []string) (map[string]client.Intent, error) {
	if len(pending) > listAbove && cfg.RunID != "" {
		return fetchListed(ctx, c, cfg.RunID+"-")
	}
	return fetchAll(ctx, c, cfg.Concurrency, pending)
}

// fetchListed reads every intent whose intentId starts with prefix, a page
// at a time, newest first. A page whose connection the service dropped is
// asked for once more, as fetchAll's reads are.
func fetchListed(ctx context.Context, c *client.ClientWithResponses, prefix string) (map[string]client.Intent, error) {
	got := make(map[string]client.Intent)
	limit := listPage
	params := client.ListIntentsParams{IntentIdPrefix: &prefix, Limit: &limit}
	for {
		resp, err := c.ListIntentsWithResponse(ctx, &params)
		if err != nil && !over(ctx) {
			resp, err = c.ListIntentsWithResponse(ctx, &params)
		}
		switch {
		case err != nil:
			return got, fmt.Errorf("listing the intents %s*: %w", prefix, err)
		case resp.StatusCode() != http.StatusOK || resp.JSON200 == nil:
			return got, fmt.Errorf("listing the intents %s*: HTTP %d", prefix, resp.StatusCode())
		}
		for _, in := range resp.JSON200.Intents {
			got[in.IntentId] = in
		}
		if resp.JSON200.NextCursor == nil {
			return got, nil
		}
		params.Cursor = resp.JSON200.NextCursor
	}
}
