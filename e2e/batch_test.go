package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// batchItems is one sequence of submissions: valid, repeated, conflicting,
// invalid in every way the single POST refuses, and ids repeated within the
// sequence. Items are raw JSON so that schema and type errors can be sent.
var batchItems = []string{
	`{"intentId":"b-1","submissionTarget":"sms.realtime","payload":{"to":"+1","text":"hi"}}`,
	`{"intentId":"b-2","submissionTarget":"push.oneshot","payload":[1, 2]}`,
	`{"intentId":"b-1","submissionTarget":"sms.realtime","payload":{ "to" : "+1", "text":"hi" }}`,
	`{"intentId":"b-1","submissionTarget":"sms.realtime","payload":{"to":"+2"}}`,
	`{"intentId":"","submissionTarget":"sms.realtime","payload":{}}`,
	`{"intentId":"b-3","submissionTarget":"fax.realtime","payload":{}}`,
	`{"intentId":"b-4","submissionTarget":"sms.realtime","payload":{"text":"` + strings.Repeat("x", 200) + `"}}`,
	`{"intentId":"b-5","submissionTarget":"sms.realtime"}`,
	`{"intentId":5,"submissionTarget":"sms.realtime","payload":{}}`,
	`"not an object"`,
	`{"intentId":"b\u0007","submissionTarget":"sms.realtime","payload":{}}`,
	`{"intentId":"b-6","submissionTarget":"sms.realtime","payload":null}`,
	`{"intentId":"b-1","submissionTarget":"fax.realtime","payload":{"to":"+1","text":"hi"}}`,
	`{"intentId":"b-1","submissionTarget":"sms.realtime","payload":{"to":"+1","text":"hi"},"notBefore":"2020-01-01T00:00:00Z"}`,
	`{"intentId":"b-7","submissionTarget":"sms.realtime","payload":{},"notBefore":"2999-01-01T00:00:00Z"}`,
	`{"intentId":"b-8","submissionTarget":"sms.realtime","payload":{},"notBefore":"tomorrow"}`,
	`{"intentId":"b-9","submissionTarget":"sms.realtime","payload":{"a":1,"a":2}}`,
}

// batchAnswer is what a client can compare of two answers: the status and,
// for a problem, its type and invalid fields; for an intent, what it is.
type batchAnswer struct {
	Status  int
	Problem string
	Intent  string
}

func answerOf(status int, intent *client.Intent, problem *client.Problem) batchAnswer {
	a := batchAnswer{Status: status}
	if problem != nil {
		a.Problem = problem.Type
		if problem.InvalidFields != nil {
			a.Problem += fmt.Sprint(*problem.InvalidFields)
		}
		if problem.ConflictingFields != nil {
			a.Problem += fmt.Sprint(*problem.ConflictingFields)
		}
	}
	if intent != nil {
		// Not the status: the leader may have run the intent in between.
		a.Intent = intent.IntentId + " " + intent.SubmissionTarget
	}
	return a
}

func postBatch(t *testing.T, svc service, body string) *client.SubmitIntentBatchResponse {
	t.Helper()
	res, err := svc.api.SubmitIntentBatchWithBodyWithResponse(context.Background(), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// testBatchAnswersEachItemAsASinglePostWould sends the same sequence as one
// batch to one service and one POST at a time to another, and requires the
// same answer for every item, in order.
func testBatchAnswersEachItemAsASinglePostWould(t *testing.T, s store) {
	small := func(c *command.ServeConfig) { c.MaxPayloadBytes = 100 }
	batched, _ := startStandard(t, s.database(t), small)
	single, _ := startStandard(t, s.database(t), small)
	// One intent stored before: a repeat and a conflict with it.
	items := append([]string{
		`{"intentId":"stored","submissionTarget":"sms.realtime","payload":{"to":"+9"}}`,
		`{"intentId":"stored","submissionTarget":"push.oneshot","payload":{"to":"+9"}}`,
	}, batchItems...)
	for _, s := range []service{batched, single} {
		mustCreate(t, s.api, "stored", "sms.realtime", `{"to":"+9"}`)
	}

	res := postBatch(t, batched, `{"intents":[`+strings.Join(items, ",\n")+`]}`)
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
		t.Fatalf("batch: %d %s", res.StatusCode(), res.Body)
	}
	results := res.JSON200.Results
	if len(results) != len(items) {
		t.Fatalf("%d results for %d items", len(results), len(items))
	}
	for i, item := range items {
		one := submitBody(t, single.api, item)
		var p *client.Problem
		if one.StatusCode() >= 400 {
			p = new(client.Problem)
			if err := json.Unmarshal(one.Body, p); err != nil {
				t.Fatalf("item %d: single answer %d %s", i, one.StatusCode(), one.Body)
			}
		}
		want := answerOf(one.StatusCode(), cmpOr(one.JSON201, one.JSON200), p)
		got := answerOf(results[i].Status, results[i].Intent, results[i].Problem)
		if got != want {
			t.Errorf("item %d %s:\n batch  %+v\n single %+v", i, item, got, want)
		}
	}
	// The created intents run like any other.
	for _, id := range []string{"b-1", "b-2"} {
		if done := waitTerminal(t, batched.api, id); done.Status != client.IntentStatusAccepted {
			t.Errorf("%s ended %s, want accepted", id, done.Status)
		}
	}
}

func cmpOr(a, b *client.Intent) *client.Intent {
	if a != nil {
		return a
	}
	return b
}

// testBatchThroughTheGoSDK submits typed items with the generated client.
func testBatchThroughTheGoSDK(t *testing.T, s store) {
	svc, _ := startStandard(t, s.database(t))
	body := client.SubmitIntentBatchJSONRequestBody{}
	for i := range 3 {
		body.Intents = append(body.Intents, client.SubmitIntentRequest{
			IntentId:         fmt.Sprintf("sdk-%d", i),
			SubmissionTarget: "sms.realtime",
			Payload:          json.RawMessage(`{"to":"+1","text":"<hi>"}`),
		})
	}
	for round, want := range []int{201, 200} {
		res, err := svc.api.SubmitIntentBatchWithResponse(context.Background(), body)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode() != 200 || res.JSON200 == nil || len(res.JSON200.Results) != 3 {
			t.Fatalf("round %d: %d %s", round, res.StatusCode(), res.Body)
		}
		for i, r := range res.JSON200.Results {
			if r.Status != want || r.Intent == nil || r.Intent.IntentId != body.Intents[i].IntentId || r.Problem != nil {
				t.Errorf("round %d item %d: %+v, want %d with the intent", round, i, r, want)
			}
		}
	}
}

// TestBatchRefusedAsAWhole: only a body that is not a batch, or too big a
// batch, is refused as a whole, with one problem document.
func TestBatchRefusedAsAWhole(t *testing.T) {
	svc, _ := startStandard(t, func(c *command.ServeConfig) { c.MaxBatch = 3; c.MaxPayloadBytes = 1000 })
	item := `{"intentId":"x","submissionTarget":"sms.realtime","payload":{}}`
	cases := []struct {
		name, body, contentType string
		status                  int
		problem, field          string
	}{
		{"not JSON", `{"intents":[`, "application/json", 400, "malformed-request", ""},
		{"not an object", `[1]`, "application/json", 400, "malformed-request", ""},
		{"no intents", `{}`, "application/json", 422, "invalid-field", "intents"},
		{"intents not an array", `{"intents":{}}`, "application/json", 422, "invalid-field", "intents"},
		{"intents twice", `{"intents":[` + item + `],"intents":[` + item + `]}`, "application/json", 422, "invalid-field", "intents"},
		{"empty", `{"intents":[]}`, "application/json", 422, "invalid-field", "intents"},
		{"over the cap", `{"intents":[` + strings.Repeat(item+",", 3) + item + `]}`, "application/json", 422, "invalid-field", "intents"},
		{"over the body limit", `{"intents":[{"intentId":"x","submissionTarget":"sms.realtime","payload":"` +
			strings.Repeat("x", 2*1000+16<<10+3*4<<10) + `"}]}`, "application/json", 413, "payload-too-large", ""},
		{"not sent as JSON", `{"intents":[]}`, "text/plain", 415, "unsupported-media-type", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := svc.api.SubmitIntentBatchWithBodyWithResponse(context.Background(), c.contentType, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, c.status, c.problem)
			if c.field != "" && (p.InvalidFields == nil || (*p.InvalidFields)[0].Field != c.field) {
				t.Errorf("problem %+v, want one naming %s", p, c.field)
			}
		})
	}
	got, err := svc.api.GetIntentWithResponse(context.Background(), "x", nil)
	if err != nil || got.StatusCode() != 404 {
		t.Errorf("after refused batches, GET x answered %v %v, want 404", got.StatusCode(), err)
	}
}
