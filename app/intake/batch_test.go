package intake_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// batchCountingStore counts the store calls a batch makes, and fails the batch
// write when told to.
type batchCountingStore struct {
	*memstore.Store
	creates, batches int
	failBatch        bool
}

func (s *batchCountingStore) CreateIntent(ctx context.Context, in core.Intent) (ports.CreateIntentResult, error) {
	s.creates++
	return s.Store.CreateIntent(ctx, in)
}

func (s *batchCountingStore) CreateIntents(ctx context.Context, in []core.Intent) ([]ports.CreateIntentResult, error) {
	s.batches++
	if s.failBatch {
		return nil, fmt.Errorf("%w: test: the disk is gone", core.ErrStoreUnavailable)
	}
	return s.Store.CreateIntents(ctx, in)
}

func newBatchService(t *testing.T, maxBatch int) (*intake.Service, *batchCountingStore, *notifications) {
	t.Helper()
	clk := clocktest.New(t0)
	store := &batchCountingStore{Store: memstore.New(clk)}
	reg, err := core.NewRegistry([]core.Contract{smsDeadline, pushBatch})
	if err != nil {
		t.Fatal(err)
	}
	n := &notifications{}
	svc, err := intake.NewService(intake.ServiceConfig{
		Registry: reg, Store: store, Clock: clk, MaxPayloadBytes: 32, Notifier: n, MaxBatch: maxBatch,
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store, n
}

func withNotBefore(p ports.SubmitIntentParams, t time.Time) ports.SubmitIntentParams {
	p.NotBefore = t
	return p
}

func item(id, target, payload string) ports.SubmitIntentParams {
	return ports.SubmitIntentParams{IntentID: id, SubmissionTarget: target, Payload: []byte(payload)}
}

// answer is what a client can observe of one submission's answer.
type answer struct {
	Created bool
	Intent  string // intentId, target and payload of the returned intent
	Err     string // the error's kind and text
}

func observe(res ports.SubmitIntentResult, err error) answer {
	if err != nil {
		var fe *core.FieldError
		var conflict *core.IdempotencyConflictError
		switch {
		case errors.As(err, &fe):
			return answer{Err: "field " + fe.Field + ": " + fe.Message}
		case errors.As(err, &conflict):
			return answer{Err: fmt.Sprintf("conflict on %v", conflict.ConflictingFields)}
		}
		return answer{Err: err.Error()}
	}
	return answer{Created: res.Created, Intent: res.Intent.IntentID + " " + res.Intent.SubmissionTarget + " " + string(res.Intent.Payload)}
}

// TestSubmitIntentsJudgesLikeSingleSubmissions sends one sequence of
// submissions once as a batch and once one by one, each to a fresh service
// holding the same stored intents, and requires the same answer for every
// item: validation, repeats and conflicts (with stored intents and with
// earlier items of the batch), unknown targets and the payload limit.
func TestSubmitIntentsJudgesLikeSingleSubmissions(t *testing.T) {
	stored := []ports.SubmitIntentParams{
		item("stored", "sms.realtime", `{"to":"+1"}`),
	}
	batch := []ports.SubmitIntentParams{
		item("new-1", "sms.realtime", `{"to":"+2"}`),
		item("", "sms.realtime", `{}`),
		item("stored", "sms.realtime", `{ "to" : "+1" }`), // repeat of a stored intent
		item("stored", "push.batch", `{"to":"+1"}`),       // conflict with it
		item("bad\nid", "sms.realtime", `{}`),
		item("new-2", "fax.realtime", `{}`),                                     // unknown target
		item("new-3", "sms.realtime", `{"text":"`+strings.Repeat("x", 40)+`"}`), // over the payload limit
		item("new-1", "sms.realtime", `{"to":"+2"}`),                            // repeat of item 0
		item("new-1", "sms.realtime", `{"to":"+9"}`),                            // conflict with item 0
		item("new-1", "fax.realtime", `{"to":"+2"}`),                            // refused target, but the id is taken
		item("stored", "fax.realtime", `{}`),                                    // refused target, stored id
		item("new-4", "", `{}`),
		item("new-5", "push.batch", `not json`),
		item("new-6", "push.batch", `[1,2]`),
		item("new-2", "push.batch", `{}`),                                                     // the unknown-target item stored nothing
		withNotBefore(item("new-1", "sms.realtime", `{"to":"+2"}`), t0.Add(time.Hour)),        // conflict on notBefore
		withNotBefore(item("new-7", "sms.realtime", `{}`), t0.Add(1000*24*time.Hour)),         // too far ahead
		withNotBefore(item("new-7", "sms.realtime", `{}`), t0.Add(time.Hour)),                 // the refused one stored nothing
		withNotBefore(item("new-7", "sms.realtime", `{}`), t0.Add(time.Hour+time.Nanosecond)), // same microsecond: a repeat
		item("new-8", "sms.realtime", `{"a":1,"a":2}`),                                        // duplicate member names
	}
	one, _, _ := newBatchService(t, 0)
	many, store, n := newBatchService(t, 0)
	for _, s := range stored {
		for _, svc := range []*intake.Service{one, many} {
			if _, err := svc.SubmitIntent(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	n.ids = nil
	creates := store.creates
	got, err := many.SubmitIntents(t.Context(), batch)
	if err != nil {
		t.Fatalf("SubmitIntents: %v", err)
	}
	if len(got) != len(batch) {
		t.Fatalf("%d answers for %d items", len(got), len(batch))
	}
	for i, p := range batch {
		want := observe(one.SubmitIntent(t.Context(), p))
		if have := observe(got[i].Result, got[i].Err); have != want {
			t.Errorf("item %d (%q):\n batch  %+v\n single %+v", i, p.IntentID, have, want)
		}
	}
	if store.batches != 1 || store.creates != creates {
		t.Errorf("the batch made %d batch writes and %d single writes, want 1 and 0", store.batches, store.creates-creates)
	}
	if want := []string{"new-1", "new-6", "new-2", "new-7"}; !reflect.DeepEqual(n.ids, want) {
		t.Errorf("the executor was told about %v, want %v (each created intent once, in order)", n.ids, want)
	}
}

func TestSubmitIntentsCaps(t *testing.T) {
	svc, store, _ := newBatchService(t, 3)
	for _, size := range []int{0, 4} {
		items := make([]ports.SubmitIntentParams, size)
		for i := range items {
			items[i] = item(fmt.Sprintf("i-%d", i), "sms.realtime", `{}`)
		}
		_, err := svc.SubmitIntents(t.Context(), items)
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Field != "intents" {
			t.Errorf("a batch of %d with a cap of 3: err = %v, want a field error on intents", size, err)
		}
	}
	if store.batches != 0 {
		t.Errorf("refused batches reached the store %d times", store.batches)
	}
	got, err := svc.SubmitIntents(t.Context(), []ports.SubmitIntentParams{
		item("a", "sms.realtime", `{}`), item("b", "sms.realtime", `{}`), item("c", "sms.realtime", `{}`),
	})
	if err != nil || len(got) != 3 {
		t.Fatalf("a batch at the cap: %d answers, err %v", len(got), err)
	}
	reg, err := core.NewRegistry([]core.Contract{smsDeadline})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intake.NewService(intake.ServiceConfig{
		Registry: reg, Store: store, Clock: clocktest.New(t0), MaxBatch: -1,
	}); err == nil || !strings.Contains(err.Error(), "MaxBatch") {
		t.Errorf("a negative MaxBatch: err = %v, want one naming it", err)
	}
}

// TestSubmitIntentsStoreFailure: when the one write fails, the batch fails
// as a whole and nothing of it is stored or announced.
func TestSubmitIntentsStoreFailure(t *testing.T) {
	svc, store, n := newBatchService(t, 0)
	store.failBatch = true
	_, err := svc.SubmitIntents(t.Context(), []ports.SubmitIntentParams{
		item("a", "sms.realtime", `{}`), item("b", "nope", `{}`),
	})
	if !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("err = %v, want core.ErrStoreUnavailable", err)
	}
	if _, err := store.GetIntent(t.Context(), "a"); !errors.Is(err, core.ErrIntentNotFound) {
		t.Errorf("GetIntent after a failed batch: %v, want not found", err)
	}
	if len(n.ids) != 0 {
		t.Errorf("the executor was told about %v after a failed batch", n.ids)
	}
}
