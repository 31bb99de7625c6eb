package intake_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// notifications records what the service tells its local executor.
type notifications struct {
	mu  sync.Mutex
	ids []string
}

func (n *notifications) Notify(i core.Intent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ids = append(n.ids, i.IntentID)
}

func newService(t *testing.T, maxPayload int) (*intake.Service, *memstore.Store, *notifications, *createdMetrics) {
	t.Helper()
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	reg, err := core.NewRegistry([]core.Contract{smsDeadline, pushBatch})
	if err != nil {
		t.Fatal(err)
	}
	n, m := &notifications{}, newCreatedMetrics()
	svc, err := intake.NewService(intake.ServiceConfig{
		Registry: reg, Store: store, Clock: clk, Metrics: m, MaxPayloadBytes: maxPayload, Notifier: n,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store, n, m
}

func TestSubmitRefusesInvalidInput(t *testing.T) {
	svc, store, n, m := newService(t, 32)
	cases := []struct {
		name, id, target, payload string
		field                     string // the FieldError's field, or "" for a sentinel
		sentinel                  error
	}{
		{"empty intentId", "", "sms.realtime", `{}`, "intentId", nil},
		{"256 characters", strings.Repeat("é", 256), "sms.realtime", `{}`, "intentId", nil},
		{"NUL", "a\x00b", "sms.realtime", `{}`, "intentId", nil},
		{"newline", "a\nb", "sms.realtime", `{}`, "intentId", nil},
		{"C1 control", "a\u0085b", "sms.realtime", `{}`, "intentId", nil},
		{"invalid UTF-8", "a\xffb", "sms.realtime", `{}`, "intentId", nil},
		{"empty target", "i-1", "", `{}`, "submissionTarget", nil},
		{"missing payload", "i-1", "sms.realtime", ``, "payload", nil},
		{"payload not JSON", "i-1", "sms.realtime", `{to:1}`, "payload", nil},
		{"unknown target", "i-1", "fax.realtime", `{}`, "", core.ErrUnknownTarget},
		{"payload over the limit", "i-1", "sms.realtime", `{"text":"` + strings.Repeat("x", 30) + `"}`, "", core.ErrPayloadTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
				IntentID: tc.id, SubmissionTarget: tc.target, Payload: []byte(tc.payload),
			})
			if tc.sentinel != nil {
				if !errors.Is(err, tc.sentinel) {
					t.Fatalf("err = %v, want %v", err, tc.sentinel)
				}
				return
			}
			var fe *core.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err = %v, want a *core.FieldError for %s", err, tc.field)
			}
		})
	}
	if page, _ := store.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 10}); len(page) != 0 {
		t.Fatalf("refused submissions stored %d intents", len(page))
	}
	if len(n.ids) != 0 || len(m.created) != 0 {
		t.Fatalf("refused submissions notified %v and counted %v", n.ids, m.created)
	}
}

func TestSubmitAcceptsBoundaryInput(t *testing.T) {
	svc, _, _, _ := newService(t, 32)
	// 255 two-byte characters; a payload whose raw form is over the limit
	// but whose compacted form (what is stored) is not.
	id := strings.Repeat("é", 255)
	payload := "{\n    \"text\":   \"" + strings.Repeat("x", 20) + "\"\n}"
	res, err := svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: "sms.realtime", Payload: []byte(payload),
	})
	if err != nil || !res.Created {
		t.Fatalf("boundary submission: created=%v err=%v", res.Created, err)
	}
	if string(res.Intent.Payload) != `{"text":"`+strings.Repeat("x", 20)+`"}` {
		t.Fatalf("stored payload %s, want it compacted", res.Intent.Payload)
	}
}

func TestSubmitSnapshotsTheContractAndNotifiesOnlyOnCreate(t *testing.T) {
	svc, _, n, m := newService(t, 0)
	submit := func() ports.SubmitIntentResult {
		res, err := svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
			IntentID: "i-1", SubmissionTarget: "push.batch", Payload: []byte(`{"token":"t"}`),
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := submit()
	in := first.Intent
	if !first.Created || in.Status != core.StatusPending || !in.CreatedAt.Equal(t0) || !in.NextDueAt.Equal(t0) {
		t.Fatalf("created intent %+v, want pending with the first attempt due at creation", in)
	}
	if mustJSON(t, in.Contract) != mustJSON(t, pushBatch) {
		t.Fatalf("snapshot %s, want %s", mustJSON(t, in.Contract), mustJSON(t, pushBatch))
	}
	if submit().Created {
		t.Fatal("the repeat reported Created")
	}
	if len(n.ids) != 1 || m.created["push.batch"] != 1 {
		t.Fatalf("notified %v, counted %v; want one of each for one created intent", n.ids, m.created)
	}
}

func TestReadsValidateAndDelegate(t *testing.T) {
	svc, _, _, _ := newService(t, 0)
	if _, err := svc.GetIntent(t.Context(), "nope"); !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatalf("GetIntent of a missing intent: %v", err)
	}
	var fe *core.FieldError
	if _, err := svc.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 0}); !errors.As(err, &fe) || fe.Field != "limit" {
		t.Fatalf("limit 0: %v", err)
	}
	if _, err := svc.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 5, Status: "done"}); !errors.As(err, &fe) || fe.Field != "status" {
		t.Fatalf("unknown status: %v", err)
	}
	if got := svc.Targets(); len(got) != 2 || got[0].SubmissionTarget != "push.batch" || got[1].SubmissionTarget != "sms.realtime" {
		t.Fatalf("Targets() = %+v, want both, ordered by target", got)
	}
	if _, err := svc.Target("fax"); !errors.Is(err, core.ErrUnknownTarget) {
		t.Fatalf("Target of an unknown target: %v", err)
	}
	if c, err := svc.Target("sms.realtime"); err != nil || c.GatewayURL != smsDeadline.GatewayURL {
		t.Fatalf("Target = %+v, %v", c, err)
	}
}

func TestNewServiceRefusesIncompleteConfig(t *testing.T) {
	if _, err := intake.NewService(intake.ServiceConfig{}); err == nil {
		t.Fatal("NewService accepted an empty config")
	}
}

// TestSubmitJudgesARepeatOnce pins that the service, not the store, decides
// whether a submission under a taken intentId repeats it: the store returns
// what it holds and the service names the conflicting fields and the stored
// status.
func TestSubmitJudgesARepeatOnce(t *testing.T) {
	svc, _, _, _ := newService(t, 1024)
	submit := func(target, payload string) (ports.SubmitIntentResult, error) {
		return svc.SubmitIntent(t.Context(), ports.SubmitIntentParams{
			IntentID: "i-1", SubmissionTarget: target, Payload: []byte(payload),
		})
	}
	if _, err := submit("sms.realtime", `{"to":"+1"}`); err != nil {
		t.Fatal(err)
	}
	if res, err := submit("sms.realtime", `{ "to" : "+1" }`); err != nil || res.Created {
		t.Fatalf("a repeat (compacted alike): created=%v err=%v, want the stored intent", res.Created, err)
	}
	_, err := submit("push.batch", `{"to":"+2"}`)
	var conflict *core.IdempotencyConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("err = %v, want *core.IdempotencyConflictError", err)
	}
	want := []core.ConflictField{core.ConflictSubmissionTarget, core.ConflictPayload}
	if !slices.Equal(conflict.ConflictingFields, want) || conflict.ExistingStatus != core.StatusPending {
		t.Fatalf("conflict = %+v, want fields %v and the stored status pending", conflict, want)
	}
}
