package ports

import (
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// Metrics receives the events operators run the service by. The core calls
// it; the Prometheus adapter implements it. Implementations must be cheap and
// safe for concurrent use, because they sit on the hot path.
type Metrics interface {
	// IntentCreated counts a newly stored intent (not idempotent repeats).
	IntentCreated(submissionTarget string)
	// IntentCompleted counts an intent reaching a terminal status; reason is
	// the final outcome's reason or the exhausted reason, if any.
	IntentCompleted(submissionTarget string, status core.IntentStatus, reason string)
	// AttemptFinished counts one attempt by gateway type and result
	// ("accepted", "rejected", or "error") and observes its latency.
	AttemptFinished(gatewayType core.GatewayType, result string, latency time.Duration)
	// FirstAttemptLateness observes first attempt start minus intent creation.
	FirstAttemptLateness(d time.Duration)
	// InFlightAttempts reports the number of attempts in flight: reserved
	// and not yet recorded. At most the executor's MaxInFlight of them are
	// reserving or calling the gateway; the others are recording a result.
	InFlightAttempts(n int)
	// ScheduleSize reports the number of intents in the leader's schedule.
	ScheduleSize(n int)
	// Leadership reports whether this instance leads, and at which epoch.
	Leadership(leader bool, epoch int64)
	// FencedWrite counts an execution write refused by the lease fence.
	FencedWrite()
	// IntentPossiblyAccepted counts an intent newly flagged as possibly
	// accepted: the gateway may have accepted an earlier attempt whose
	// answer was lost.
	IntentPossiblyAccepted(submissionTarget string)
	// InDoubtLookup counts a gateway lookup of an attempt in doubt by its
	// answer ("known", "never_received", "unsupported").
	InDoubtLookup(gatewayType core.GatewayType, answer string)
	// IntentAcceptedAfterDeadline counts an intent the gateway accepted at
	// or after its acceptance deadline: exhausted, as the spec says, yet
	// the gateway has its message (core.Decision.AcceptedAfterDeadline).
	IntentAcceptedAfterDeadline(submissionTarget string)
}

// NopMetrics discards every event; it is the default when none is wired.
type NopMetrics struct{}

var _ Metrics = NopMetrics{}

func (NopMetrics) IntentCreated(string)                                    {}
func (NopMetrics) IntentCompleted(string, core.IntentStatus, string)       {}
func (NopMetrics) AttemptFinished(core.GatewayType, string, time.Duration) {}
func (NopMetrics) FirstAttemptLateness(time.Duration)                      {}
func (NopMetrics) InFlightAttempts(int)                                    {}
func (NopMetrics) ScheduleSize(int)                                        {}
func (NopMetrics) Leadership(bool, int64)                                  {}
func (NopMetrics) FencedWrite()                                            {}
func (NopMetrics) IntentPossiblyAccepted(string)                           {}
func (NopMetrics) InDoubtLookup(core.GatewayType, string)                  {}
func (NopMetrics) IntentAcceptedAfterDeadline(string)                      {}
