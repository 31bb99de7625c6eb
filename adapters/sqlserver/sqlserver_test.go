package sqlserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

// These tests cover what is specific to SQL Server, beyond the port suites.

func newTestIntent(id string) core.Intent {
	return core.NewIntent(id, testContract, json.RawMessage(`{"to":"+100"}`), time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC))
}

// TestIntentIDsAreCaseSensitive guards the binary collation of the key:
// under a default case-insensitive collation "A-1" and "a-1" would be one
// primary key.
func TestIntentIDsAreCaseSensitive(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	for _, id := range []string{"Intent-1", "intent-1", "INTENT-1"} {
		res, err := s.CreateIntent(context.Background(), newTestIntent(id))
		if err != nil || !res.Created {
			t.Fatalf("CreateIntent(%s): created=%v err=%v", id, res.Created, err)
		}
	}
	got, err := s.GetIntent(context.Background(), "intent-1")
	if err != nil || got.IntentID != "intent-1" {
		t.Fatalf("GetIntent(intent-1) = %q, %v", got.IntentID, err)
	}
}

// TestTrailingSpaceIDs: SQL Server compares strings as if padded with
// spaces, so "a" and "a " are one key. The store refuses the second rather
// than answer for the wrong intent, and never returns "a" for "a ".
func TestTrailingSpaceIDs(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	ctx := context.Background()
	if _, err := s.CreateIntent(ctx, newTestIntent("a")); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateIntent(ctx, newTestIntent("a "))
	var fe *core.FieldError
	if !errors.As(err, &fe) || fe.Field != "intentId" {
		t.Fatalf("CreateIntent(%q) = %v, want a FieldError on intentId", "a ", err)
	}
	if _, err := s.GetIntent(ctx, "a "); !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatalf("GetIntent(%q) = %v, want core.ErrIntentNotFound", "a ", err)
	}
}

// TestLongAndNonASCIIValues checks the column sizes against what Go counts:
// nvarchar(255) holds 255 UTF-16 code units, and reasons, message ids and
// errors of any length are kept whole.
func TestLongAndNonASCIIValues(t *testing.T) {
	db, _ := migratedDB(t, databaseOptions{})
	s := db.Store()
	ctx := context.Background()
	id := strings.Repeat("é", 253) + "👋" // 255 code units, 508 UTF-8 bytes
	if _, err := s.CreateIntent(ctx, newTestIntent(id)); err != nil {
		t.Fatalf("CreateIntent with a 255-unit id: %v", err)
	}
	lease := leasetest.MustAcquire(t, db.Leases(), core.DefaultLeaseName, "sm-test", time.Hour)
	now := time.Date(2026, 3, 14, 9, 1, 0, 0, time.UTC)
	if err := s.StartAttempt(ctx, ports.StartAttemptParams{Fence: lease.Fence(), IntentID: id, Number: 1, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("gateway said ☃ ", 2000)
	o := core.Outcome{Status: core.OutcomeRejected, Reason: long, MessageID: long}
	err := s.FinishAttempt(ctx, ports.FinishAttemptParams{
		Fence: lease.Fence(), IntentID: id, Number: 1, FinishedAt: now, Outcome: &o, Sent: true,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: now.Add(time.Second)},
	})
	if err != nil {
		t.Fatalf("FinishAttempt with long texts: %v", err)
	}
	got, err := s.GetIntent(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.IntentID != id || len(got.Attempts) != 1 || got.Attempts[0].Outcome == nil ||
		got.Attempts[0].Outcome.Reason != long || got.Attempts[0].Outcome.MessageID != long {
		t.Fatalf("values did not round-trip whole (id %d chars)", len(got.IntentID))
	}
}
