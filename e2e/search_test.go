package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

// The search runs with the core black-box tests, once per store, as
// TestStores/<store>/SearchAndPageBothWays (make test-sqlserver runs its
// SQL Server half).
func init() {
	storeTests = append(storeTests, struct {
		name string
		run  func(t *testing.T, s store)
	}{"SearchAndPageBothWays", testSearchAndPageBothWays})
}

// searchIDs lists with params, following nextCursor, and returns the
// intentIds in order.
func searchIDs(t *testing.T, c *client.ClientWithResponses, params client.ListIntentsParams) []string {
	t.Helper()
	all, _ := listAll(t, c, params)
	ids := make([]string, len(all))
	for i, in := range all {
		ids[i] = in.IntentId
	}
	return ids
}

// testSearchAndPageBothWays searches GET /v1/intents by intentId prefix,
// creation range and latest outcome or error on the real service, pages a
// search forwards and back with nextCursor and prevCursor, and finds the
// same through the Go SDK.
func testSearchAndPageBothWays(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t))
	script(t, sim, "otp-2", gatewaysim.Rejected("invalid_recipient"))
	script(t, sim, "otp-3", gatewaysim.Fault(gatewaysim.HTTPStatusMode(503)))
	var created []client.Intent
	for _, c := range []struct{ id, target string }{
		{"otp-1", "push.oneshot"}, {"otp-2", "sms.realtime"}, {"otp-3", "push.oneshot"}, {"order-1", "push.oneshot"}, {"otp-4", "push.oneshot"},
	} {
		created = append(created, mustCreate(t, svc.api, c.id, c.target, `{"to":"+15550100","token":"t"}`))
	}
	// Read back as stored: a store keeps its own precision of createdAt.
	for i, in := range created {
		created[i] = waitTerminal(t, svc.api, in.IntentId)
	}
	lastError := getIntent(t, svc.api, "otp-3").Attempts[0].Error
	if lastError == nil || !strings.Contains(*lastError, "503") {
		t.Fatalf("otp-3's attempt error %v does not name the 503 it got", lastError)
	}

	str := func(s string) *string { return &s }
	for name, c := range map[string]struct {
		params client.ListIntentsParams
		want   []string
	}{
		"prefix":                {client.ListIntentsParams{IntentIdPrefix: str("otp-")}, []string{"otp-4", "otp-3", "otp-2", "otp-1"}},
		"rejection reason":      {client.ListIntentsParams{LastResult: str("INVALID_recipient")}, []string{"otp-2"}},
		"error fragment":        {client.ListIntentsParams{LastResult: str("503")}, []string{"otp-3"}},
		"accepted with prefix":  {client.ListIntentsParams{LastResult: str("accepted"), IntentIdPrefix: str("otp")}, []string{"otp-4", "otp-1"}},
		"status and target":     {client.ListIntentsParams{Status: ptrTo(client.IntentStatusAccepted), SubmissionTarget: str("push.oneshot"), IntentIdPrefix: str("o")}, []string{"otp-4", "order-1", "otp-1"}},
		"created range":         {client.ListIntentsParams{CreatedFrom: str(created[1].CreatedAt.Format(time.RFC3339Nano)), CreatedBefore: str(created[3].CreatedAt.Format(time.RFC3339Nano))}, []string{"otp-3", "otp-2"}},
		"range in another zone": {client.ListIntentsParams{CreatedFrom: str(created[4].CreatedAt.In(time.FixedZone("", -5*3600)).Format(time.RFC3339Nano))}, []string{"otp-4"}},
	} {
		for _, limit := range []int{1, 50} {
			c.params.Limit = &limit
			if got := searchIDs(t, svc.api, c.params); !slices.Equal(got, c.want) {
				t.Errorf("%s, limit %d: %v, want %v", name, limit, got, c.want)
			}
		}
	}

	// Forwards one intent at a time, then back from the last page by
	// prevCursor: the same intents in reverse, and no prevCursor at the top.
	one := 1
	params := client.ListIntentsParams{IntentIdPrefix: str("otp-"), Limit: &one}
	var forwards []string
	var page *client.IntentPage
	for {
		res, err := svc.api.ListIntentsWithResponse(context.Background(), &params)
		if err != nil || res.JSON200 == nil {
			t.Fatalf("forwards: %v %s", err, res.Body)
		}
		page = res.JSON200
		forwards = append(forwards, page.Intents[0].IntentId)
		if page.NextCursor == nil {
			break
		}
		params.Cursor = page.NextCursor
	}
	var backwards []string
	for page.PrevCursor != nil {
		params.Cursor = page.PrevCursor
		res, err := svc.api.ListIntentsWithResponse(context.Background(), &params)
		if err != nil || res.JSON200 == nil {
			t.Fatalf("backwards: %v %s", err, res.Body)
		}
		page = res.JSON200
		backwards = append(backwards, page.Intents[0].IntentId)
		if len(backwards) > len(forwards) {
			t.Fatal("paging back does not end")
		}
	}
	slices.Reverse(backwards)
	if !slices.Equal(forwards, []string{"otp-4", "otp-3", "otp-2", "otp-1"}) || !slices.Equal(backwards, forwards[:3]) {
		t.Fatalf("forwards %v, backwards (reversed) %v", forwards, backwards)
	}

	// A range that holds nothing by construction is refused, naming it.
	res, err := svc.api.ListIntentsWithResponse(context.Background(), &client.ListIntentsParams{
		CreatedFrom: str("2026-02-02T12:00:00Z"), CreatedBefore: str("2026-02-02T11:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusUnprocessableEntity, "invalid-field")
	if p.InvalidFields == nil || (*p.InvalidFields)[0].Field != "createdBefore" {
		t.Fatalf("reversed range: %s", res.Body)
	}

	// The Go SDK's Filter searches the same way.
	sm, err := submission.New(svc.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var viaSDK []string
	for in, err := range sm.List(context.Background(), submission.Filter{IntentIDPrefix: "otp-", LastResult: "ACCEPTED",
		CreatedFrom: created[0].CreatedAt, PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		viaSDK = append(viaSDK, in.IntentId)
	}
	if !slices.Equal(viaSDK, []string{"otp-4", "otp-1"}) {
		t.Fatalf("the Go SDK found %v", viaSDK)
	}
}
