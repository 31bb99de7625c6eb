package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// answeringService answers every call with a fixed ended intent, so that
// the role tests see whether a request got through, not what it did.
type answeringService struct{}

var (
	_ ports.IntentService   = answeringService{}
	_ ports.OperatorService = answeringService{}
)

func (answeringService) intent(id string) core.Intent {
	return core.Intent{IntentID: id, SubmissionTarget: "t", Status: core.StatusExhausted, CreatedAt: time.Unix(0, 0),
		ExhaustedReason: core.ExhaustedMaxAttempts, Payload: []byte(`{}`)}
}

func (s answeringService) SubmitIntent(_ context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	return ports.SubmitIntentResult{Intent: s.intent(p.IntentID), Created: true}, nil
}
func (s answeringService) SubmitIntents(_ context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	out := make([]ports.SubmitIntentsItem, len(items))
	for i, p := range items {
		out[i].Result = ports.SubmitIntentResult{Intent: s.intent(p.IntentID), Created: true}
	}
	return out, nil
}
func (s answeringService) GetIntent(_ context.Context, id string) (core.Intent, error) {
	return s.intent(id), nil
}
func (answeringService) ListIntents(context.Context, ports.ListIntentsParams) (ports.IntentPage, error) {
	return ports.IntentPage{}, nil
}
func (answeringService) Targets() []core.Contract { return nil }
func (answeringService) Target(string) (core.Contract, error) {
	return core.Contract{}, core.ErrUnknownTarget
}
func (s answeringService) ResubmitIntent(_ context.Context, p ports.ResubmitIntentParams) (ports.SubmitIntentResult, error) {
	in := s.intent(p.IntentID + "~r1")
	in.ResubmittedFrom = p.IntentID
	return ports.SubmitIntentResult{Intent: in, Created: true}, nil
}
func (answeringService) CountIntents(context.Context) ([]ports.IntentCount, error) { return nil, nil }
func (s answeringService) CancelIntent(_ context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	in := s.intent(p.IntentID)
	in.ExhaustedReason = core.ExhaustedCancelled
	in.Events = []core.IntentEvent{{Number: 1, At: time.Unix(0, 0), Action: core.ActionCancel, Actor: p.Actor}}
	return ports.IntentActionResult{Intent: in, Applied: true}, nil
}
func (s answeringService) RunNow(_ context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	return ports.IntentActionResult{Intent: s.intent(p.IntentID)}, nil
}

func TestRoles(t *testing.T) {
	type call struct {
		method, path, body, key string
		want                    int
	}
	read := func(key string, want int) call { return call{"GET", "/v1/intents/i-1", "", key, want} }
	submit := func(key string, want int) call {
		return call{"POST", "/v1/intents", `{"intentId":"i-1","submissionTarget":"t","payload":{}}`, key, want}
	}
	resubmit := func(key string, want int) call { return call{"POST", "/v1/intents/i-1/resubmissions", `{}`, key, want} }
	batch := func(key string, want int) call {
		return call{"POST", "/v1/intents/batch", `{"intents":[{"intentId":"i-1","submissionTarget":"t","payload":{}}]}`, key, want}
	}
	cases := []struct {
		name             string
		client, operator []string
		calls            []call
	}{
		{"no keys: everything open", nil, nil, []call{read("", 200), submit("", 201), resubmit("", 201)}},
		{"client and operator keys", []string{"c-key"}, []string{"o-key"}, []call{
			read("", 401), read("wrong", 401), read("c-key", 200), read("o-key", 200),
			submit("c-key", 201), submit("o-key", 201), batch("", 401), batch("c-key", 200), batch("o-key", 200),
			resubmit("", 401), resubmit("c-key", 403), resubmit("o-key", 201),
		}},
		{"operator keys only", nil, []string{"o-key"}, []call{read("", 401), read("o-key", 200), resubmit("o-key", 201)}},
		{"client keys only", []string{"c-key"}, nil, []call{read("c-key", 200), batch("c-key", 200), resubmit("c-key", 403), resubmit("", 401)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, err := httpapi.New(httpapi.Config{Service: answeringService{}, APIKeys: c.client, OperatorKeys: c.operator,
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range c.calls {
				req := httptest.NewRequest(k.method, k.path, strings.NewReader(k.body))
				if k.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				if k.key != "" {
					req.Header.Set("Authorization", "Bearer "+k.key)
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != k.want {
					t.Errorf("%s %s with key %q: %d, want %d; %s", k.method, k.path, k.key, rec.Code, k.want, rec.Body)
				}
				if k.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), httpapi.TypeForbidden) {
					t.Errorf("403 without the forbidden problem type: %s", rec.Body)
				}
			}
		})
	}
}
