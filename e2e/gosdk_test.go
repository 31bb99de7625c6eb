package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/submission"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// TestGoClientAgainstTheService drives the hand-written Go client
// (api/submission) against the real service on SQLite and the simulated
// gateways: created versus repeated submissions, typed problems, waiting
// for the final status, and listing as an iterator across pages.
func TestGoClientAgainstTheService(t *testing.T) {
	svc, _ := startStandard(t)
	sm, err := submission.New(svc.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	order := json.RawMessage(`{"to":"+15550100","text":"Shipped!"}`)

	in, created, err := sm.Submit(ctx, submission.Request{IntentId: "go-1", SubmissionTarget: "sms.realtime", Payload: order})
	if err != nil || !created || in.Status != submission.StatusPending {
		t.Fatalf("first Submit = %s created=%v, %v", in.Status, created, err)
	}
	again, created, err := sm.Submit(ctx, submission.Request{IntentId: "go-1", SubmissionTarget: "sms.realtime",
		Payload: json.RawMessage(`{"text":"Shipped!","to":"+15550100"}`)})
	if err != nil || created || !again.CreatedAt.Equal(in.CreatedAt) {
		t.Fatalf("repeat = created=%v, %v; want the same intent, not created", created, err)
	}

	_, _, err = sm.Submit(ctx, submission.Request{IntentId: "go-1", SubmissionTarget: "sms.batch", Payload: order})
	var p *submission.Problem
	if !errors.As(err, &p) || p.Type != submission.TypeIdempotencyConflict || p.Status != 409 ||
		p.ConflictingFields == nil || len(*p.ConflictingFields) != 1 || (*p.ConflictingFields)[0] != "submissionTarget" {
		t.Fatalf("a conflicting repeat: %v, want an idempotency-conflict naming submissionTarget", err)
	}
	if _, err := sm.Get(ctx, "never-submitted"); !submission.IsProblem(err, submission.TypeIntentNotFound) {
		t.Fatalf("Get of an unknown intent: %v", err)
	}

	waitCtx, cancel := context.WithTimeout(ctx, terminalWait)
	defer cancel()
	final, err := sm.WaitFinal(waitCtx, "go-1")
	if err != nil || final.Status != submission.StatusAccepted || len(final.Attempts) != 1 {
		t.Fatalf("WaitFinal = %s with %d attempts, %v", final.Status, len(final.Attempts), err)
	}
	read, err := sm.Get(ctx, "go-1")
	if err != nil || string(read.Payload) != string(order) {
		t.Fatalf("Get = payload %s, %v; want the payload as stored", read.Payload, err)
	}

	// A scheduled intent stays pending past a short wait: WaitFinal ends
	// with its context and the intent as last read.
	later := time.Now().Add(time.Hour)
	if _, _, err := sm.Submit(ctx, submission.Request{IntentId: "go-later", SubmissionTarget: "sms.realtime", Payload: order, NotBefore: &later}); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancelShort()
	pending, err := sm.WaitFinal(short, "go-later")
	if !errors.Is(err, context.DeadlineExceeded) || pending.Status != submission.StatusPending {
		t.Fatalf("WaitFinal past its deadline = %q, %v", pending.Status, err)
	}

	ids := []string{"go-list-1", "go-list-2", "go-list-3", "go-list-4", "go-list-5"}
	for _, id := range ids {
		if _, _, err := sm.Submit(ctx, submission.Request{IntentId: id, SubmissionTarget: "push.oneshot", Payload: json.RawMessage(`{"token":"t"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var listed []string
	for in, err := range sm.List(ctx, submission.Filter{SubmissionTarget: "push.oneshot", PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, in.IntentId)
	}
	slices.Reverse(ids)
	if !slices.Equal(listed, ids) {
		t.Fatalf("List across pages of 2 = %v, want %v (newest first)", listed, ids)
	}
	var firstTwo []string
	for in, err := range sm.List(ctx, submission.Filter{SubmissionTarget: "push.oneshot", PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		if firstTwo = append(firstTwo, in.IntentId); len(firstTwo) == 2 {
			break
		}
	}
	if !slices.Equal(firstTwo, ids[:2]) {
		t.Fatalf("List stopped after two = %v", firstTwo)
	}
	for _, err := range sm.List(ctx, submission.Filter{PageSize: 501}) {
		if !submission.IsProblem(err, submission.TypeInvalidField) {
			t.Fatalf("List with a page size above 500: %v", err)
		}
	}
}

// TestGoClientSendsTheAPIKey checks WithAPIKey against a service with keys:
// without the key every call is an unauthorized problem.
func TestGoClientSendsTheAPIKey(t *testing.T) {
	svc, _ := startStandard(t, func(cfg *command.ServeConfig) { cfg.APIKeys = []string{"key-1"} })
	without, err := submission.New(svc.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := without.Get(context.Background(), "x"); !submission.IsProblem(err, submission.TypeUnauthorized) {
		t.Fatalf("without a key: %v", err)
	}
	with, err := submission.New(svc.srv.URL(), submission.WithAPIKey("key-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := with.Get(context.Background(), "x"); !submission.IsProblem(err, submission.TypeIntentNotFound) {
		t.Fatalf("with the key: %v, want intent-not-found", err)
	}
}
