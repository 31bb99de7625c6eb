// Package core holds SubmissionManager's domain: contracts and the registry,
// the intent state machine, policy evaluation and the schedule. It is pure Go:
// it does no I/O, reads time only through values handed to it, and imports no
// adapter, SQL, HTTP or generated code, so every rule here is testable with a
// fake clock and nothing else.
package core

import (
	"slices"
	"time"
)

// GatewayType names a code-known gateway family. It decides how a gateway's
// answer is read; it is bound to a target by the registry, never by a client.
type GatewayType string

// The gateway types SubmissionManager knows how to talk to.
const (
	GatewaySMS  GatewayType = "sms"
	GatewayPush GatewayType = "push"
)

// Mode orders work of equal urgency: realtime targets go before batch targets
// when their attempts are due at the same instant.
type Mode string

// The modes a contract may declare.
const (
	ModeRealtime Mode = "realtime"
	ModeBatch    Mode = "batch"
)

// Policy selects the rule that ends retrying when no terminal outcome came.
type Policy string

// The termination policies a contract may declare.
const (
	PolicyDeadline    Policy = "deadline"
	PolicyMaxAttempts Policy = "max_attempts"
	PolicyOneShot     Policy = "one_shot"
)

// Contract is the snapshot of a registry entry that an intent carries for its
// whole life. It is taken at submission so that later registry edits (a new
// gatewayUrl, a different policy) never change how an accepted intent runs.
type Contract struct {
	SubmissionTarget string      `json:"submissionTarget"`
	GatewayType      GatewayType `json:"gatewayType"`
	GatewayURL       string      `json:"gatewayUrl"`
	Mode             Mode        `json:"mode"`
	Policy           Policy      `json:"policy"`
	// MaxAcceptanceSeconds is set only for the deadline policy: a cumulative
	// bound across all attempts, counted from the intent's creation.
	MaxAcceptanceSeconds int `json:"maxAcceptanceSeconds,omitempty"`
	// MaxAttempts is set only for the max_attempts policy.
	MaxAttempts int `json:"maxAttempts,omitempty"`
	// TerminalOutcomes lists the rejection reasons this contract treats as
	// final. Accepted is always terminal and never listed.
	TerminalOutcomes []string `json:"terminalOutcomes"`
}

// Deadline returns the acceptance deadline of an intent created at createdAt
// under this contract, and false when the contract has no deadline.
func (c Contract) Deadline(createdAt time.Time) (time.Time, bool) {
	if c.Policy != PolicyDeadline {
		return time.Time{}, false
	}
	return createdAt.Add(time.Duration(c.MaxAcceptanceSeconds) * time.Second), true
}

// IsTerminalReason reports whether a rejection with this reason ends the
// intent as REJECTED under this contract.
func (c Contract) IsTerminalReason(reason string) bool {
	return slices.Contains(c.TerminalOutcomes, reason)
}

// Clone returns a copy that shares no slice with c, so a snapshot handed out
// cannot be changed through the registry's copy or the other way round.
func (c Contract) Clone() Contract {
	c.TerminalOutcomes = slices.Clone(c.TerminalOutcomes)
	if c.TerminalOutcomes == nil {
		c.TerminalOutcomes = []string{}
	}
	return c
}
