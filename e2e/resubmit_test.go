package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// testResubmissionOverTheAPI checks POST /v1/intents/{id}/resubmissions on
// the real service on each store: only ended intents, operator keys only,
// idempotent per original, links both ways, the new intent executed.
func testResubmissionOverTheAPI(t *testing.T, s store) {
	svc, sim := startStandard(t, s.database(t), func(c *command.ServeConfig) {
		c.APIKeys, c.OperatorKeys = []string{"client-key"}, []string{"operator-key"}
	})
	withKey := func(key string) *client.ClientWithResponses {
		c, err := client.NewClientWithResponses(svc.srv.URL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+key)
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clientAPI, operatorAPI := withKey("client-key"), withKey("operator-key")
	ctx := context.Background()

	// A pending intent cannot be resubmitted.
	script(t, sim, "slow-1", gatewaysim.Fault(gatewaysim.ModeHang))
	mustCreate(t, clientAPI, "slow-1", "sms.batch", `{"to":"+15550100"}`)
	res, err := operatorAPI.ResubmitIntentWithResponse(ctx, "slow-1", client.ResubmissionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusConflict, "intent-not-ended")

	script(t, sim, "once-1", gatewaysim.Rejected("provider_failure"))
	mustCreate(t, clientAPI, "once-1", "push.oneshot", `{"token":"t"}`)
	if in := waitTerminal(t, clientAPI, "once-1"); in.Status != client.IntentStatusExhausted {
		t.Fatalf("once-1 ended %s", in.Status)
	}
	res, err = clientAPI.ResubmitIntentWithResponse(ctx, "once-1", client.ResubmissionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusForbidden, "forbidden")

	res, err = operatorAPI.ResubmitIntentWithResponse(ctx, "once-1", client.ResubmissionRequest{})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("resubmit: %v %d %s", err, res.StatusCode(), res.Body)
	}
	if res.JSON201.IntentId != "once-1~r1" || res.JSON201.ResubmittedFrom == nil || *res.JSON201.ResubmittedFrom != "once-1" {
		t.Fatalf("resubmission %+v", res.JSON201)
	}
	again, err := operatorAPI.ResubmitIntentWithResponse(ctx, "once-1", client.ResubmissionRequest{IntentId: ptrTo("other")})
	if err != nil || again.JSON200 == nil || again.JSON200.IntentId != "once-1~r1" {
		t.Fatalf("repeat: %v %d %s", err, again.StatusCode(), again.Body)
	}
	// The resubmission runs under the registry's contract; the simulator
	// accepts it now.
	if in := waitTerminal(t, clientAPI, "once-1~r1"); in.Status != client.IntentStatusAccepted {
		t.Fatalf("the resubmission ended %s", in.Status)
	}
	if in := getIntent(t, clientAPI, "once-1"); in.ResubmittedAs == nil || *in.ResubmittedAs != "once-1~r1" {
		t.Fatalf("the original does not link its resubmission: %+v", in.ResubmittedAs)
	}
	// A chosen intentId that names another intent is refused.
	script(t, sim, "once-2", gatewaysim.Rejected("provider_failure"))
	mustCreate(t, clientAPI, "once-2", "push.oneshot", `{"token":"t"}`)
	waitTerminal(t, clientAPI, "once-2")
	res, err = operatorAPI.ResubmitIntentWithResponse(ctx, "once-2", client.ResubmissionRequest{IntentId: ptrTo("slow-1")})
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusConflict, "resubmission-id-taken")
}
