package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Registry is the set of contracts SubmissionManager accepts submissions for,
// keyed by submissionTarget. It is immutable after construction and hands out
// clones only, so every request goroutine can share one Registry without locks
// and no caller can change the contract another caller snapshots.
type Registry struct {
	byTarget map[string]Contract
	// sorted holds the contracts ordered by submissionTarget, so listing the
	// registry is deterministic without sorting on every call.
	sorted []Contract
}

// NewRegistry validates contracts by the same rules as DecodeRegistry and
// builds a registry from them. It exists for callers that hold contracts
// rather than registry JSON (tests, tools); a zero MaxAcceptanceSeconds or
// MaxAttempts counts as omitted. The error is a *RegistryError listing every
// problem, with paths as if the contracts were the registry's targets array.
func NewRegistry(contracts []Contract) (*Registry, error) {
	var chk registryCheck
	if len(contracts) == 0 {
		chk.add("$.targets", "must list at least one target")
	}
	for i, c := range contracts {
		chk.target(i, contractFields(c))
	}
	if err := chk.err(); err != nil {
		return nil, err
	}
	return buildRegistry(contracts), nil
}

// buildRegistry indexes contracts that have already passed validation.
func buildRegistry(contracts []Contract) *Registry {
	r := &Registry{
		byTarget: make(map[string]Contract, len(contracts)),
		sorted:   make([]Contract, 0, len(contracts)),
	}
	for _, c := range contracts {
		c = c.Clone()
		r.byTarget[c.SubmissionTarget] = c
		r.sorted = append(r.sorted, c)
	}
	slices.SortFunc(r.sorted, func(a, b Contract) int {
		return strings.Compare(a.SubmissionTarget, b.SubmissionTarget)
	})
	return r
}

// Lookup resolves a submissionTarget to its contract. The contract is a clone:
// it is the snapshot an intent keeps, and changing it changes nothing here.
func (r *Registry) Lookup(submissionTarget string) (Contract, bool) {
	c, ok := r.byTarget[submissionTarget]
	if !ok {
		return Contract{}, false
	}
	return c.Clone(), true
}

// Contracts returns clones of every contract, sorted by submissionTarget, so
// that listings (the API, logs at start-up) are stable across restarts.
func (r *Registry) Contracts() []Contract {
	out := make([]Contract, len(r.sorted))
	for i, c := range r.sorted {
		out[i] = c.Clone()
	}
	return out
}

// Len returns the number of contracts.
func (r *Registry) Len() int { return len(r.sorted) }

// MarshalJSON encodes the registry in the document shape DecodeRegistry
// reads, targets sorted by submissionTarget, so that a loaded registry can be
// written back (or shown) and decoded to the same contracts.
func (r *Registry) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Targets []Contract `json:"targets"`
	}{Targets: r.Contracts()})
}

// RegistryError reports every problem found in a registry, not only the
// first, so that an operator fixes the file in one pass.
type RegistryError struct {
	Problems []RegistryProblem
}

// Error lists every problem, one per line, after a one-line summary.
func (e *RegistryError) Error() string {
	var b strings.Builder
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(&b, "invalid submission target registry: %d %s", len(e.Problems), noun)
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return b.String()
}

// RegistryProblem is one invalid part of a registry, located by a JSON path
// such as `$.targets[2].gatewayUrl` so that it can be found in the file.
type RegistryProblem struct {
	Path    string
	Message string
}

// String renders the problem as "path: message".
func (p RegistryProblem) String() string { return p.Path + ": " + p.Message }
