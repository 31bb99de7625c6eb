package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// actingService is answeringService that records the operator actions it
// is asked for and answers them with err, or with the intent the action
// leaves (events included).
type actingService struct {
	answeringService
	err error

	mu    sync.Mutex
	asked []ports.IntentActionParams
}

func (s *actingService) act(p ports.IntentActionParams, in core.Intent, action core.IntentAction) (ports.IntentActionResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, p)
	if s.err != nil {
		return ports.IntentActionResult{}, s.err
	}
	in.Events = []core.IntentEvent{{Number: 1, At: time.Date(2026, 2, 2, 12, 3, 10, 0, time.UTC), Action: action, Actor: p.Actor}}
	return ports.IntentActionResult{Intent: in, Applied: true}, nil
}

func (s *actingService) CancelIntent(_ context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	in := s.intent(p.IntentID)
	in.ExhaustedReason = core.ExhaustedCancelled
	return s.act(p, in, core.ActionCancel)
}

func (s *actingService) RunNow(_ context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	in := s.intent(p.IntentID)
	in.Status, in.ExhaustedReason = core.StatusPending, ""
	return s.act(p, in, core.ActionRunNow)
}

// startActing serves svc with the given keys and returns a client that
// presents key.
func startActing(t *testing.T, svc *actingService, clientKeys, operatorKeys []string, key string) *client.ClientWithResponses {
	t.Helper()
	srv, err := httpapi.New(httpapi.Config{Service: svc, APIKeys: clientKeys, OperatorKeys: operatorKeys,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := client.NewClientWithResponses(ts.URL, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCancelAndRunNowAnswerTheIntentWithItsEvents: the answers are the
// intent (cancelled, or due), with the action in its events naming the
// API and the key's role, and never the key; the intentId of the path
// reaches the service decoded.
func TestCancelAndRunNowAnswerTheIntentWithItsEvents(t *testing.T) {
	svc := &actingService{}
	c := startActing(t, svc, []string{"c-key"}, []string{"o-key-secret"}, "o-key-secret")
	ctx := t.Context()
	cancelled, err := c.CancelIntentWithResponse(ctx, "order/42", client.IntentActionRequest{})
	if err != nil || cancelled.JSON200 == nil {
		t.Fatalf("cancel: %v %d %s", err, cancelled.StatusCode(), cancelled.Body)
	}
	in := cancelled.JSON200
	if in.IntentId != "order/42" || in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil ||
		*in.ExhaustedReason != client.Cancelled || in.Events == nil || len(*in.Events) != 1 {
		t.Fatalf("cancel answered %s", cancelled.Body)
	}
	e := (*in.Events)[0]
	if e.Number != 1 || e.Action != client.EventActionCancel || e.Surface != client.EventSurfaceAPI ||
		e.Role != client.EventRoleOperator || e.Session != nil || e.At.IsZero() {
		t.Errorf("cancel's event = %+v", e)
	}
	if strings.Contains(string(cancelled.Body), "o-key-secret") {
		t.Errorf("the answer shows the key: %s", cancelled.Body)
	}
	ran, err := c.RunIntentNowWithResponse(ctx, "order/43", client.IntentActionRequest{})
	if err != nil || ran.JSON200 == nil || ran.JSON200.Status != client.IntentStatusPending ||
		ran.JSON200.Events == nil || (*ran.JSON200.Events)[0].Action != client.EventActionRunNow {
		t.Fatalf("run now: %v %d %s", err, ran.StatusCode(), ran.Body)
	}
	want := []ports.IntentActionParams{
		{IntentID: "order/42", Actor: core.Actor{Surface: ports.SurfaceAPI, Role: core.RoleOperator}},
		{IntentID: "order/43", Actor: core.Actor{Surface: ports.SurfaceAPI, Role: core.RoleOperator}},
	}
	if fmt.Sprint(svc.asked) != fmt.Sprint(want) {
		t.Errorf("the service was asked %+v, want %+v", svc.asked, want)
	}
}

// TestActionsOfAnOpenAPIRecordNoRole: without keys the actions are open,
// and the actor's role is none.
func TestActionsOfAnOpenAPIRecordNoRole(t *testing.T) {
	svc := &actingService{}
	c := startActing(t, svc, nil, nil, "")
	res, err := c.CancelIntentWithResponse(t.Context(), "i-1", client.IntentActionRequest{})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("cancel: %v %d %s", err, res.StatusCode(), res.Body)
	}
	if e := (*res.JSON200.Events)[0]; e.Role != client.EventRoleNone || svc.asked[0].Actor.Role != core.RoleNone {
		t.Errorf("open API: event %+v, actor %+v; want role none", e, svc.asked[0].Actor)
	}
}

// TestActionRefusalsAreProblems: each refusal of the service is its
// documented problem, and a client key or no key never reaches it.
func TestActionRefusalsAreProblems(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		typ    string
	}{
		{fmt.Errorf("cancel: %w", core.ErrAttemptInFlight), http.StatusConflict, "attempt-in-flight"},
		{fmt.Errorf("run now: %w", core.ErrIntentEnded), http.StatusConflict, "intent-ended"},
		{core.ErrIntentNotFound, http.StatusNotFound, "intent-not-found"},
		{fmt.Errorf("x: %w", core.ErrStoreUnavailable), http.StatusServiceUnavailable, "store-unavailable"},
	} {
		api := startActing(t, &actingService{err: c.err}, []string{"c-key"}, []string{"o-key"}, "o-key")
		res, err := api.CancelIntentWithResponse(t.Context(), "i-1", client.IntentActionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, c.status, c.typ)
		ran, err := api.RunIntentNowWithResponse(t.Context(), "i-1", client.IntentActionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		problem(t, ran.StatusCode(), ran.HTTPResponse.Header.Get("Content-Type"), ran.Body, c.status, c.typ)
	}
	svc := &actingService{}
	for key, want := range map[string]int{"c-key": http.StatusForbidden, "": http.StatusUnauthorized} {
		api := startActing(t, svc, []string{"c-key"}, []string{"o-key"}, key)
		res, err := api.CancelIntentWithResponse(t.Context(), "i-1", client.IntentActionRequest{})
		if err != nil || res.StatusCode() != want {
			t.Fatalf("cancel with key %q: %v %d, want %d", key, err, res.StatusCode(), want)
		}
		ran, err := api.RunIntentNowWithResponse(t.Context(), "i-1", client.IntentActionRequest{})
		if err != nil || ran.StatusCode() != want {
			t.Fatalf("run now with key %q: %v %d, want %d", key, err, ran.StatusCode(), want)
		}
	}
	if len(svc.asked) != 0 {
		t.Errorf("refused requests reached the service: %+v", svc.asked)
	}
	// The body is a JSON object ({}): no body, or another JSON value, is
	// refused before the service.
	api := startActing(t, svc, nil, nil, "")
	for _, body := range []string{"", "[]", `"x"`} {
		res, err := api.CancelIntentWithBodyWithResponse(t.Context(), "i-1", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, http.StatusBadRequest, "malformed-request")
	}
	if len(svc.asked) != 0 {
		t.Errorf("a refused body reached the service: %+v", svc.asked)
	}
}
