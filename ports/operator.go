package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// ResubmissionLinks are an intent's links to the intent it resubmits and to
// the intent that resubmitted it; either is empty when there is none.
type ResubmissionLinks struct {
	From string
	As   string
}

// IntentCount is how many intents of one target are in one status.
type IntentCount struct {
	SubmissionTarget string
	Status           core.IntentStatus
	Count            int64
}

// OperatorStore is what the store offers operators beyond execution:
// resubmission of ended intents, the actions on pending ones
// (InterventionStore) and the counts of the console's overview. Store
// embeds it, so every store carries it and its conformance cases.
type OperatorStore interface {
	InterventionStore
	// CreateResubmission stores intent (new, pending, its ResubmittedFrom
	// naming an ended intent) and the link from the original to it, in one
	// transaction. When the original already has a resubmission it returns
	// that intent with Created=false and writes nothing, whatever intentId
	// was asked: resubmitting is idempotent per original. Errors:
	// core.ErrIntentNotFound (no original), core.ErrIntentNotEnded (the
	// original is pending), core.ErrResubmissionIDTaken (the new intentId
	// names another intent).
	CreateResubmission(ctx context.Context, intent core.Intent) (CreateIntentResult, error)
	// ResubmissionLinks returns the links of those of intentIDs that have
	// any; intents without links are absent from the map.
	ResubmissionLinks(ctx context.Context, intentIDs []string) (map[string]ResubmissionLinks, error)
	// CountIntents returns the number of intents per target and status,
	// ordered by target and status; pairs with no intent are absent.
	CountIntents(ctx context.Context) ([]IntentCount, error)
}

// ResubmitIntentParams asks to resubmit an ended intent.
type ResubmitIntentParams struct {
	// IntentID names the ended intent.
	IntentID string
	// NewIntentID is the resubmission's intentId; empty derives one
	// (core.DeriveResubmissionID).
	NewIntentID string
	// AcknowledgeDeliveryRisk is the operator's explicit confirmation that
	// the gateway may already have delivered the original's message
	// (core.DeliveryRisk) and that it is to be sent again all the same.
	// Without it such an intent is refused with core.ErrDeliveryRisk; a
	// bulk resubmission never sets it.
	AcknowledgeDeliveryRisk bool
}

// OperatorService is what the application offers operators (the console,
// the operator API) beyond IntentService: resubmission and an overview.
type OperatorService interface {
	// ResubmitIntent creates the resubmission of an ended intent, or returns
	// the one that exists (Created=false). Errors: *core.FieldError,
	// core.ErrIntentNotFound, core.ErrIntentNotEnded,
	// core.ErrResubmissionIDTaken, core.ErrDeliveryRisk (the gateway may
	// already have the original's message and the risk was not
	// acknowledged), core.ErrUnknownTarget (the target left the registry),
	// core.ErrStoreUnavailable.
	ResubmitIntent(ctx context.Context, p ResubmitIntentParams) (SubmitIntentResult, error)
	// CountIntents returns the number of intents per target and status.
	CountIntents(ctx context.Context) ([]IntentCount, error)
	// CancelIntent ends a pending intent as exhausted, cancelled, unless an
	// attempt is in flight, and returns it with its events. Cancelling a
	// cancelled intent returns it (Applied=false). Errors:
	// core.ErrIntentNotFound, core.ErrAttemptInFlight, core.ErrIntentEnded,
	// core.ErrStoreUnavailable.
	CancelIntent(ctx context.Context, p IntentActionParams) (IntentActionResult, error)
	// RunNow makes a pending intent's next try due now (the executor still
	// holds it for breakers, limits and pauses) and returns it with its
	// events. An intent already due is returned as it is (Applied=false).
	// Errors: core.ErrIntentNotFound, core.ErrIntentEnded,
	// core.ErrStoreUnavailable.
	RunNow(ctx context.Context, p IntentActionParams) (IntentActionResult, error)
}

// IntentActionResult is the intent after an operator's action, and whether
// the action changed it (false for a repeat that had nothing to do).
type IntentActionResult struct {
	Intent  core.Intent
	Applied bool
}
