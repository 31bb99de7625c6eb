package ports

import (
	"context"
	"encoding/json"

	"github.com/submissionmanager/submission-manager/core"
)

// SubmitParams is one attempt's submission, routed by the intent's contract
// snapshot: the engine never re-resolves the target at execution time.
type SubmitParams struct {
	GatewayType core.GatewayType
	GatewayURL  string
	// Reference is the intentId, the same on every attempt, so that a gateway
	// can refuse a second submission of one intent with duplicate_reference.
	Reference string
	Payload   json.RawMessage
}

// Gateway submits one attempt to a gateway and reads its answer. It returns a
// well-formed outcome, built with core.NewOutcome (the engine trusts it as
// given), or an error for anything else (transport failure, timeout, non-200
// status, invalid body); the error text says which. A Gateway never retries
// on its own: the engine owns attempts.
type Gateway interface {
	Submit(ctx context.Context, p SubmitParams) (core.Outcome, error)
}
