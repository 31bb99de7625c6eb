package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
	"github.com/submissionmanager/submission-manager/core"
)

// lateOperatorKey is the operator key of the late-acceptance tests.
const lateOperatorKey = "operator-key-for-late-acceptances"

// lateDeadline is the acceptance deadline of sms.late, and lateLatency the
// simulator's answer time past it. The deadline leaves the leader time to
// start the attempt on a slow shared SQL Server (2 s was too short on a
// loaded CI machine: the attempt was due past its deadline and never
// called); the latency is a lower bound, so the acceptance always arrives
// after the deadline.
const (
	lateDeadline = 5 * time.Second
	lateLatency  = lateDeadline + 500*time.Millisecond
)

// startLate starts a simulator with sim's behaviour and the service on
// store s with an operator key and the targets sms.late (the deadline
// policy, lateDeadline) and push.oneshot, as the issue reproduced it:
// --retry-delay 9s, longer than the deadline, so no retry can save the
// intent either.
func startLate(t *testing.T, s store, sim gatewaysim.Config, tune ...func(*command.ServeConfig)) (service, *gatewaysim.Simulator, *client.ClientWithResponses) {
	t.Helper()
	gw, err := gatewaysim.Start(sim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, []registryTarget{
		{"sms.late", "sms", gw.URL(core.GatewaySMS), "realtime", "deadline", int(lateDeadline / time.Second), 0, smsTerminal},
		{"push.oneshot", "push", gw.URL(core.GatewayPush), "batch", "one_shot", 0, 0, pushTerminal},
	})
	cfg := testConfig(dir, registry)
	cfg.RetryDelay = 9 * time.Second
	// The call waits for the simulator's late answer, which arrives after
	// the deadline (a shorter timeout would end it before the deadline).
	cfg.GatewayTimeout = lateLatency + 2*time.Second
	cfg.OperatorKeys = []string{lateOperatorKey}
	s.database(t)(&cfg)
	for _, f := range tune {
		f(&cfg)
	}
	svc := startService(t, cfg)
	api, err := client.NewClientWithResponses(svc.srv.URL(), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+lateOperatorKey)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return svc, gw, api
}

// TestLateAcceptanceIsFlaggedAndNeverResentBlindly reproduces defect 1 of
// the delivery-safety issue on every store: the gateway answers after the
// acceptance deadline, so the intent is exhausted as the spec says; it must
// also be flagged acceptedAfterDeadline with the gateway's message id,
// listed by the filter, left out of a bulk resubmission, and resubmitted
// on its own only with the risk acknowledged.
func TestLateAcceptanceIsFlaggedAndNeverResentBlindly(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			svc, sim, api := startLate(t, s, gatewaysim.Config{Latency: lateLatency})
			ctx := context.Background()
			// plain-1 ends first, exhausted without an acceptance; it also
			// warms the leader up, so late-1's attempt starts in time.
			script(t, sim, "plain-1", gatewaysim.Rejected("provider_failure"))
			mustCreate(t, api, "plain-1", "push.oneshot", `{"token":"t"}`)
			if plain := waitTerminal(t, api, "plain-1"); plain.Status != client.IntentStatusExhausted || plain.AcceptedAfterDeadline != nil {
				t.Fatalf("plain-1 ended %s, flagged %v", plain.Status, plain.AcceptedAfterDeadline)
			}
			mustCreate(t, api, "late-1", "sms.late", `{"to":"+15550100","text":"hello"}`)
			in := waitTerminal(t, api, "late-1")
			if in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil || *in.ExhaustedReason != client.DeadlineExceeded {
				t.Fatalf("late-1 ended %s (%v), want exhausted by the deadline, as the spec says", in.Status, in.ExhaustedReason)
			}
			if got := outcomes(in); len(got) != 1 || got[0] != "accepted" {
				t.Fatalf("attempts %v, want the one accepted call", got)
			}
			message := gatewayMessageID(t, sim, "late-1")
			if in.AcceptedAfterDeadline == nil || !*in.AcceptedAfterDeadline || in.AcceptedMessageId == nil || *in.AcceptedMessageId != message {
				t.Fatalf("late-1 is not flagged as accepted after the deadline with message %s: %+v %v", message, in.AcceptedAfterDeadline, in.AcceptedMessageId)
			}
			listed, err := api.ListIntentsWithResponse(ctx, &client.ListIntentsParams{AcceptedAfterDeadline: ptrTo(true)})
			if err != nil || listed.JSON200 == nil || len(listed.JSON200.Intents) != 1 || listed.JSON200.Intents[0].IntentId != "late-1" {
				t.Fatalf("acceptedAfterDeadline=true lists %s, want late-1 only (%v)", listed.Body, err)
			}

			// A bulk resubmission of the exhausted intents (the CLI's, over
			// the API) takes plain-1 and leaves late-1 out, saying so.
			var out, errOut bytes.Buffer
			env := map[string]string{"SUBMISSION_URL": svc.srv.URL(), command.APIKeyEnv: lateOperatorKey}
			code := command.Main(ctx, []string{"intents", "resubmit", "--status", "exhausted", "--yes"},
				func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &out, &errOut)
			if code != command.ExitOK || !strings.Contains(out.String(), "plain-1") || strings.Contains(out.String(), "late-1") ||
				!strings.Contains(errOut.String(), "1 intent(s) the gateway may already have delivered left out") {
				t.Fatalf("bulk resubmission: exit %d\n%s%s", code, &out, &errOut)
			}
			if got := getIntent(t, api, "plain-1"); got.ResubmittedAs == nil {
				t.Fatal("the bulk resubmission did not resubmit plain-1")
			}

			// On its own: refused without the acknowledgement, nothing
			// sent; resubmitted with it.
			res, err := api.ResubmitIntentWithResponse(ctx, "late-1", client.ResubmissionRequest{})
			if err != nil {
				t.Fatal(err)
			}
			p := problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusConflict, "delivery-risk")
			if p.Detail == nil || !strings.Contains(*p.Detail, "after its acceptance deadline (message "+message+")") {
				t.Fatalf("the refusal does not name the risk: %s", res.Body)
			}
			if missing, err := api.GetIntentWithResponse(ctx, "late-1~r1", nil); err != nil || missing.StatusCode() != http.StatusNotFound {
				t.Fatalf("the refused resubmission created late-1~r1: %d %v", missing.StatusCode(), err)
			}
			if st := sim.Reference("late-1"); st.Submissions != 1 || st.Accepted != 1 {
				t.Fatalf("the gateway saw %d submissions of late-1, %d accepted; want 1 and 1", st.Submissions, st.Accepted)
			}
			res, err = api.ResubmitIntentWithResponse(ctx, "late-1", client.ResubmissionRequest{AcknowledgeDeliveryRisk: ptrTo(true)})
			if err != nil || res.JSON201 == nil || res.JSON201.IntentId != "late-1~r1" {
				t.Fatalf("acknowledged resubmission: %v %d %s", err, res.StatusCode(), res.Body)
			}
		})
	}
}

// TestLateAcceptanceFoundByTheLookupIsFlagged: the gateway accepts the
// call and never answers; the call times out after the deadline, and the
// leader asks the gateway's lookup at once, which reports the acceptance.
// Judged at the lookup's time it is past the deadline: exhausted, and
// flagged by the same rule, with the message id.
func TestLateAcceptanceFoundByTheLookupIsFlagged(t *testing.T) {
	_, sim, api := startLate(t, stores[0], gatewaysim.Config{}, func(c *command.ServeConfig) {
		c.GatewayTimeout = lateDeadline + 500*time.Millisecond
	})
	script(t, sim, "looked-up-1", gatewaysim.Fault(gatewaysim.ModeAcceptThenHang))
	mustCreate(t, api, "looked-up-1", "sms.late", `{"to":"+15550100","text":"hello"}`)
	in := waitTerminal(t, api, "looked-up-1")
	if in.Status != client.IntentStatusExhausted || in.AcceptedAfterDeadline == nil || !*in.AcceptedAfterDeadline ||
		in.AcceptedMessageId == nil || *in.AcceptedMessageId != gatewayMessageID(t, sim, "looked-up-1") {
		t.Fatalf("looked-up-1 ended %s, flagged %v (message %v); want exhausted and flagged with the message id",
			in.Status, in.AcceptedAfterDeadline, in.AcceptedMessageId)
	}
	if got := outcomes(in); len(got) != 1 || got[0] != "accepted" {
		t.Fatalf("attempts %v, want the one call, closed with the looked-up acceptance", got)
	}
	if st := sim.Reference("looked-up-1"); st.Submissions != 1 || st.Accepted != 1 {
		t.Fatalf("the gateway saw %d submissions and %d acceptances, want 1 and 1", st.Submissions, st.Accepted)
	}
}

// gatewayMessageID asks the simulated SMS gateway's lookup for the message
// id it gave the reference's acceptance.
func gatewayMessageID(t *testing.T, sim *gatewaysim.Simulator, ref string) string {
	t.Helper()
	res, err := http.Get(sim.URL(core.GatewaySMS) + "/v1/submissions/" + url.PathEscape(ref))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got gatewayapi.LookupAnswer
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Answer == nil || got.Answer.Status != gatewayapi.Accepted || got.Answer.MessageId == nil {
		t.Fatalf("the gateway's lookup of %s: %+v, want its acceptance with a message id", ref, got)
	}
	return *got.Answer.MessageId
}
