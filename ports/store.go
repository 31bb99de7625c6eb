package ports

import (
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// CreateIntentResult tells whether CreateIntent inserted the intent or found
// one already stored under the same intentId. The store does not judge
// whether a found intent repeats the new one; the service does, in one place.
type CreateIntentResult struct {
	Intent  core.Intent
	Created bool
	// Refused is set only by CreateIntents, for an item the store cannot
	// hold (a *core.FieldError, as CreateIntent would return it); nothing was
	// stored for it and Intent is empty.
	Refused error
}

// ListIntentsParams selects a page of intents, newest first. Every filter
// that is set must hold (they combine with AND); a zero filter selects all.
type ListIntentsParams struct {
	// Status filters by status when not empty.
	Status core.IntentStatus
	// SubmissionTarget filters by target when not empty.
	SubmissionTarget string
	// PossiblyAccepted, when true, keeps only intents flagged possibly
	// accepted (see core.PossiblyAccepted).
	PossiblyAccepted bool
	// AcceptedAfterDeadline, when true, keeps only intents the gateway
	// accepted at or after their acceptance deadline (see
	// core.Decision.AcceptedAfterDeadline).
	AcceptedAfterDeadline bool
	// IntentIDPrefix, when not empty, keeps only intents whose intentId
	// starts with it, compared exactly (letter case and every character
	// count), so that a team's naming scheme ("otp-") finds its intents.
	IntentIDPrefix string
	// CreatedFrom and CreatedBefore bound CreatedAt to the half-open range
	// [CreatedFrom, CreatedBefore), so that consecutive ranges never share
	// an intent; a zero time leaves its side open. A bound beyond what the
	// store can hold is as good as open on that side.
	CreatedFrom, CreatedBefore time.Time
	// LastResult, when not empty, keeps only intents whose latest attempt
	// (the one numbered AttemptCount) has it in its outcome status, its
	// outcome reason or its error, ignoring the case of ASCII letters: an
	// operator searches for a rejection reason or a fragment of an error
	// text. An intent without attempts has no latest attempt and never
	// matches. Stores find the latest attempt by its key, never by
	// scanning an intent's attempts.
	LastResult string
	// Limit is the page size (at least 1).
	Limit int
	// Before continues a listing toward older intents (the next page):
	// only intents strictly older than this position in (CreatedAt,
	// IntentID) descending order are returned.
	Before *IntentPosition
	// After continues a listing toward newer intents (the previous page):
	// only intents strictly newer than this position are returned, and of
	// those the Limit nearest to it, still newest first. At most one of
	// Before and After is set.
	After *IntentPosition
}

// IntentPosition is a position in the newest-first listing order.
type IntentPosition struct {
	CreatedAt time.Time
	IntentID  string
}

// IntentPage is one page of a listing, as the service cuts it. Next is nil
// on the last page and Prev on the first.
type IntentPage struct {
	Intents []core.Intent
	Next    *IntentPosition
	Prev    *IntentPosition
}

// ListPendingParams pages through every pending intent by intentId, for a
// new leader's full schedule rebuild.
type ListPendingParams struct {
	// AfterIntentID continues after this intentId; empty starts at the first.
	AfterIntentID string
	Limit         int
}

// ScheduleRow is what the schedule needs of an intent: the store's view of
// when it is due and how urgent it is, plus its change marker.
type ScheduleRow struct {
	IntentID       string
	Status         core.IntentStatus
	Mode           core.Mode
	NextDueAt      time.Time
	LastModifiedAt time.Time
}

// ChangeCursor is the composite refresh cursor (last_modified_at, intent_id).
// Its LastModifiedAt must be carried exactly as read from the database.
type ChangeCursor struct {
	LastModifiedAt time.Time
	IntentID       string
}

// ListChangedParams pages through intents changed after a cursor, ordered by
// (last_modified_at, intent_id), skipping nothing when rows share a timestamp.
type ListChangedParams struct {
	After ChangeCursor
	Limit int
}

// StartAttemptParams records an attempt's start before its gateway call: the
// reservation that makes a crash mid-call visible to the next leader.
type StartAttemptParams struct {
	Fence    core.Fence
	IntentID string
	// Number must be the intent's attempt count plus one; otherwise the
	// intent moved on and the store returns core.ErrIntentNotRunnable.
	Number    int
	StartedAt time.Time
}

// FinishAttemptParams closes an attempt and applies the policy's decision to
// the intent in one transaction.
type FinishAttemptParams struct {
	Fence      core.Fence
	IntentID   string
	Number     int
	FinishedAt time.Time
	Outcome    *core.Outcome
	Error      string
	Decision   core.Decision
	// Sent tells whether the attempt reached for the gateway. An attempt
	// closed as never sent is not a try under any policy; the store keeps
	// the fact as data so that tries are counted from it, never from text.
	Sent bool
}

// StoreFacts are what a store states about itself, so that the application
// never switches on a dialect name and a new store cannot forget one.
type StoreFacts struct {
	// ChangeLookback is how far behind its cursor the leader's refresh must
	// read again, because commits can become visible out of the order of
	// their change markers (zero when the store's single writer rules that
	// out).
	ChangeLookback time.Duration
	// WriteBatches is how many fenced batches of one kind (reservations,
	// results) the executor should have under way at once; zero leaves the
	// executor's default. Fewer batches under way make each larger, which
	// pays where every call has a fixed cost that dwarfs its rows' (SQL
	// Server across the network and a procedure's entry); more let one slow
	// write hold back only the writes batched with it.
	WriteBatches int
}

// Store is the durable home of intents and attempts. Writes that change
// execution state are fenced: they apply only while the fence holds an
// unexpired lease in database time, and return core.ErrFenced otherwise.
// Every method maps driver errors onto core errors (core.ErrStoreUnavailable
// for anything that says nothing about the request) and never half-writes.
type Store interface {
	OperatorStore
	// Rescheduler and PauseStore are the gateway protection's writes: a
	// deferral that spends no try, and the operator's stored pauses.
	Rescheduler
	PauseStore
	// Facts states the store's properties the application must respect.
	Facts() StoreFacts
	// CreateIntent inserts a new pending intent, or, when the intentId
	// exists, returns the stored intent with Created=false and judges
	// nothing. It is race-safe across instances: the primary key decides,
	// not a read before the write.
	CreateIntent(ctx context.Context, intent core.Intent) (CreateIntentResult, error)
	// CreateIntents is CreateIntent for many intents, durable in as few
	// commits as the store allows and never half-applied: on error nothing
	// of the call is stored. It returns one result per intent, in order.
	// An intentId that occurs again later in the same call is a repeat of
	// its first occurrence: the later one gets the first one's intent with
	// Created=false. A stored intent may carry an intentId the store holds
	// equal to the one asked for without being identical (SQL Server
	// ignores trailing spaces); the service refuses those.
	CreateIntents(ctx context.Context, intents []core.Intent) ([]CreateIntentResult, error)
	// GetIntent returns an intent with its attempts in order, or
	// core.ErrIntentNotFound.
	GetIntent(ctx context.Context, intentID string) (core.Intent, error)
	// GetIntents is GetIntent for many intents in one read: the stored
	// intents among intentIDs, each with its attempts in order, in no
	// particular order. An intentId not stored is left out, not an error.
	// The leader reads the next due intents with it ahead of their
	// attempts, instead of one GetIntent per attempt.
	GetIntents(ctx context.Context, intentIDs []string) ([]core.Intent, error)
	// ListIntents returns at most p.Limit intents (with their attempts) that
	// match the filters and lie strictly after p.Before (or, with p.After,
	// the p.Limit nearest strictly before p.After), newest first. The store
	// answers this one query shape, walking an index in listing order so
	// that it reads little more than the page; the service decides the
	// page.
	ListIntents(ctx context.Context, p ListIntentsParams) ([]core.Intent, error)
	// ListPending returns a page of pending intents ordered by intentId.
	ListPending(ctx context.Context, p ListPendingParams) ([]ScheduleRow, error)
	// ListChanged returns intents changed after the cursor, in cursor order.
	ListChanged(ctx context.Context, p ListChangedParams) ([]ScheduleRow, error)
	// LatestChange returns the cursor of the most recent change, or the zero
	// cursor for an empty store; a new leader reads it before its rebuild.
	LatestChange(ctx context.Context) (ChangeCursor, error)
	// StartAttempt is a fenced write of an attempt's start. It returns
	// core.ErrFenced when the lease is lost and core.ErrIntentNotRunnable
	// when the intent is terminal or its attempt count is not Number-1.
	// Parameters that p.Validate refuses are refused with ErrInvalidWrite
	// before anything is written.
	StartAttempt(ctx context.Context, p StartAttemptParams) error
	// FinishAttempt is a fenced write that closes the attempt and moves the
	// intent to the decision's status in one transaction. When the decision
	// says PossiblyAccepted, the same write flags the intent for good; when
	// it says AcceptedAfterDeadline, the same write keeps that fact and
	// AcceptedMessageID on the intent, and every read returns them.
	// Parameters that p.Validate refuses are refused with ErrInvalidWrite
	// before anything is written.
	FinishAttempt(ctx context.Context, p FinishAttemptParams) error
	// StartAttempts is StartAttempt for many attempts at once, the
	// executor's reservations of one moment: it returns one answer per
	// item, in order, each exactly what StartAttempt would answer for that
	// item alone, and writes them in as few commits and round trips as the
	// store allows (SQL Server: one round trip, the fence checked once for
	// the whole batch; on Babelfish one for every 64 items). Each item is
	// all or nothing on its own. The store
	// first applies ValidateStarts: an item naming an intent an earlier
	// item names is refused with ErrInvalidWrite.
	StartAttempts(ctx context.Context, attempts []StartAttemptParams) []error
	// FinishAttempts is FinishAttempt for many attempts at once, answered
	// and written as StartAttempts (ValidateFinishes first).
	FinishAttempts(ctx context.Context, attempts []FinishAttemptParams) []error
}
