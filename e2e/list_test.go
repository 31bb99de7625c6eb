package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
)

// listAll reads every page of a listing and returns the intentIds in order
// and the number of pages.
func listAll(t *testing.T, c *client.ClientWithResponses, params client.ListIntentsParams) ([]client.Intent, int) {
	t.Helper()
	var all []client.Intent
	pages := 0
	for {
		res, err := c.ListIntentsWithResponse(context.Background(), &params)
		if err != nil {
			t.Fatal(err)
		}
		if res.JSON200 == nil {
			t.Fatalf("list: %d %s", res.StatusCode(), res.Body)
		}
		pages++
		all = append(all, res.JSON200.Intents...)
		if res.JSON200.NextCursor == nil {
			return all, pages
		}
		if pages > 100 {
			t.Fatal("listing does not end")
		}
		params.Cursor = res.JSON200.NextCursor
	}
}

func testListPagesNewestFirst(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	var ids []string
	for i := range 7 {
		id := fmt.Sprintf("list-sms-%d", i)
		if i == 3 {
			script(t, sim, id, gatewaysim.Rejected("invalid_message"))
		}
		mustCreate(t, svc.api, id, "sms.realtime", `{}`)
		ids = append(ids, id)
	}
	for i := range 2 {
		id := fmt.Sprintf("list-push-%d", i)
		mustCreate(t, svc.api, id, "push.oneshot", `{}`)
		ids = append(ids, id)
	}
	for _, id := range ids {
		waitTerminal(t, svc.api, id)
	}

	limit := 3
	all, pages := listAll(t, svc.api, client.ListIntentsParams{Limit: &limit})
	if pages != 3 || len(all) != len(ids) {
		t.Fatalf("%d intents in %d pages, want %d in 3", len(all), pages, len(ids))
	}
	for i, in := range all {
		if want := ids[len(ids)-1-i]; in.IntentId != want {
			t.Fatalf("position %d: %q, want %q (newest first)", i, in.IntentId, want)
		}
		if i > 0 && in.CreatedAt.After(all[i-1].CreatedAt) {
			t.Fatalf("position %d is newer than position %d", i, i-1)
		}
		if len(in.Attempts) == 0 {
			t.Fatalf("listed intent %q comes without its attempts", in.IntentId)
		}
	}

	// An intent created after the first page does not shift the next pages.
	res, err := svc.api.ListIntentsWithResponse(context.Background(), &client.ListIntentsParams{Limit: &limit})
	if err != nil || res.JSON200 == nil || res.JSON200.NextCursor == nil {
		t.Fatalf("first page: %v", err)
	}
	mustCreate(t, svc.api, "list-late", "sms.realtime", `{}`)
	rest, _ := listAll(t, svc.api, client.ListIntentsParams{Limit: &limit, Cursor: res.JSON200.NextCursor})
	if len(rest) != len(ids)-3 || rest[0].IntentId != ids[len(ids)-4] {
		t.Fatalf("after a new intent, the following pages hold %d intents starting at %q", len(rest), rest[0].IntentId)
	}

	target := "push.oneshot"
	pushOnly, _ := listAll(t, svc.api, client.ListIntentsParams{SubmissionTarget: &target})
	if len(pushOnly) != 2 || pushOnly[0].IntentId != "list-push-1" || pushOnly[1].IntentId != "list-push-0" {
		t.Fatalf("filter by target: %+v", pushOnly)
	}
	rejected := client.IntentStatusRejected
	onlyRejected, _ := listAll(t, svc.api, client.ListIntentsParams{Status: &rejected})
	if len(onlyRejected) != 1 || onlyRejected[0].IntentId != "list-sms-3" {
		t.Fatalf("filter by status: %+v", onlyRejected)
	}
	waitTerminal(t, svc.api, "list-late")
	smsTarget := "sms.realtime"
	accepted := client.IntentStatusAccepted
	one := 1
	both, pages := listAll(t, svc.api, client.ListIntentsParams{Status: &accepted, SubmissionTarget: &smsTarget, Limit: &one})
	if len(both) != 7 || pages != 7 { // six accepted of the first seven, and list-late
		t.Fatalf("filter by status and target, one per page: %d intents in %d pages", len(both), pages)
	}
}

func TestListRefusesCursorsItDidNotIssue(t *testing.T) {
	svc, _ := startStandard(t)
	for _, cursor := range []string{"bm90IGEgY3Vyc29y", "%%%"} {
		res, err := svc.api.ListIntentsWithResponse(context.Background(), nil, func(_ context.Context, r *http.Request) error {
			q := r.URL.Query()
			q.Set("cursor", cursor)
			r.URL.RawQuery = q.Encode()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "cursor" {
			t.Fatalf("cursor %q: %+v", cursor, p)
		}
	}
}
