package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// SubmitIntentParams is a client's submission as received.
type SubmitIntentParams struct {
	IntentID         string
	SubmissionTarget string
	// Payload is any JSON value; it is compacted before it is stored.
	Payload json.RawMessage
	// NotBefore, when not zero, is the earliest time of the first attempt.
	NotBefore time.Time
	// TraceParent is the W3C traceparent the submission came with, as
	// received; the service keeps it with the intent when it is valid and
	// ignores it otherwise (core.NormalizeTraceParent). It is never part
	// of an idempotent repeat's comparison. Every item of a batch carries
	// the batch request's.
	TraceParent string
	// Refused, set only on an item of SubmitIntents, is the driving
	// adapter's refusal of an item it could not read (not an object, a
	// field of the wrong JSON type). The service answers the item with it
	// and judges nothing else of it, but counts it toward the batch's size:
	// the cap is on what the client sent.
	Refused error
}

// DefaultMaxBatch is the most intents one batch submission may carry unless
// the operator sets another cap. The service enforces the cap; the HTTP API
// only sizes its body limit by it.
const DefaultMaxBatch = 1000

// SubmitIntentResult carries the intent and whether this call created it
// (false for an idempotent repeat).
type SubmitIntentResult struct {
	Intent  core.Intent
	Created bool
}

// SubmitIntentsItem is the answer to one item of a batch submission:
// exactly what SubmitIntent would have returned for it alone.
type SubmitIntentsItem struct {
	Result SubmitIntentResult
	// Err is the item's refusal; the other items do not depend on it.
	Err error
}

// IntentService is what the core offers to driving adapters such as the HTTP
// API: submitting intents and reading them and the contracts.
type IntentService interface {
	// SubmitIntent validates, snapshots the contract and stores the intent.
	// Errors: *core.FieldError for invalid input, core.ErrUnknownTarget,
	// *core.IdempotencyConflictError, core.ErrStoreUnavailable.
	SubmitIntent(ctx context.Context, p SubmitIntentParams) (SubmitIntentResult, error)
	// SubmitIntents judges every item as SubmitIntent would, in order (a
	// later item with an earlier item's intentId is a repeat of it), and
	// stores the new ones in one store call. It returns one answer per item;
	// its error is for the batch as a whole, and then nothing of the batch
	// was stored: a *core.FieldError naming "intents" when the batch is
	// empty or over the service's cap, or core.ErrStoreUnavailable.
	SubmitIntents(ctx context.Context, items []SubmitIntentParams) ([]SubmitIntentsItem, error)
	// GetIntent returns one intent with its attempts or core.ErrIntentNotFound.
	GetIntent(ctx context.Context, intentID string) (core.Intent, error)
	// ListIntents returns a page of intents, newest first.
	ListIntents(ctx context.Context, p ListIntentsParams) (IntentPage, error)
	// Targets returns every contract of the registry, ordered by target.
	Targets() []core.Contract
	// Target returns one contract or core.ErrUnknownTarget.
	Target(submissionTarget string) (core.Contract, error)
}

// LeadershipReporter tells the health endpoint which role this instance has.
type LeadershipReporter interface {
	// Leadership returns the current lease when this instance leads, and
	// leader=false otherwise (lease then describes the last known holder).
	Leadership() (lease core.Lease, leader bool)
}
