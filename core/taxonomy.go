package core

import "slices"

// OutcomeStatus is what a gateway said about one submission: a fact, not a
// decision. Whether it ends the intent is decided by the contract's policy.
type OutcomeStatus string

// The two statuses a well-formed gateway answer can carry.
const (
	OutcomeAccepted OutcomeStatus = "accepted"
	OutcomeRejected OutcomeStatus = "rejected"
)

// Rejection reasons of the gateway outcome taxonomy. Gateways may send others;
// those are recorded as said and are never terminal.
const (
	ReasonInvalidRequest     = "invalid_request"
	ReasonDuplicateReference = "duplicate_reference"
	ReasonInvalidRecipient   = "invalid_recipient"
	ReasonInvalidMessage     = "invalid_message"
	ReasonProviderFailure    = "provider_failure"
	ReasonUnregisteredToken  = "unregistered_token"
)

// rejectionReasons is the code-known taxonomy per gateway type. A contract's
// terminalOutcomes must be a subset of its gateway type's list.
var rejectionReasons = map[GatewayType][]string{
	GatewaySMS: {
		ReasonInvalidRequest,
		ReasonDuplicateReference,
		ReasonInvalidRecipient,
		ReasonInvalidMessage,
		ReasonProviderFailure,
	},
	GatewayPush: {
		ReasonInvalidRequest,
		ReasonDuplicateReference,
		ReasonProviderFailure,
		ReasonUnregisteredToken,
	},
}

// GatewayTypes lists the known gateway types in a stable order.
func GatewayTypes() []GatewayType { return []GatewayType{GatewaySMS, GatewayPush} }

// Known reports whether t is a gateway type SubmissionManager can talk to.
func (t GatewayType) Known() bool {
	_, ok := rejectionReasons[t]
	return ok
}

// RejectionReasons returns a copy of the taxonomy's rejection reasons for t,
// or nil for an unknown type.
func (t GatewayType) RejectionReasons() []string {
	return slices.Clone(rejectionReasons[t])
}

// KnowsReason reports whether reason belongs to t's taxonomy.
func (t GatewayType) KnowsReason(reason string) bool {
	return slices.Contains(rejectionReasons[t], reason)
}
