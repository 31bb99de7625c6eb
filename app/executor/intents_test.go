package executor_test

// What the tests feed the executor: intents as the intake service stores
// them, and the fake gateway's scripted answers.

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/ports"
)

// Gateway answers the scripts use.
var (
	accepted        = gatewayfake.Step{Outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}}
	providerFailure = rejected(core.ReasonProviderFailure)
)

func rejected(reason string) gatewayfake.Step {
	return gatewayfake.Step{Outcome: core.Outcome{Status: core.OutcomeRejected, Reason: reason}}
}

// failed is the step whose call fails with err, as a gateway client
// reports a failure.
func failed(err error) gatewayfake.Step { return gatewayfake.Step{Err: err} }

// registry holds the tests' contracts, for what reads the registry beside
// the executor (the operator's gateway service); the executor never does.
func registry(t *testing.T) *core.Registry {
	t.Helper()
	reg, err := core.NewRegistry([]core.Contract{smsDeadline, smsMaxAttempts, pushOneShot, pushBatch})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// newGateway is a strict fake gateway at the URLs of the tests' contracts:
// a call with no scripted answer fails the test.
func newGateway(t *testing.T, clock ports.Clock, name string) *gatewayfake.Gateway {
	serves := map[string]core.GatewayType{}
	for _, c := range []core.Contract{smsDeadline, smsMaxAttempts, pushOneShot, pushBatch} {
		serves[c.GatewayURL] = c.GatewayType
	}
	return gatewayfake.New(gatewayfake.Config{Name: name, Serves: serves, Strict: t, Clock: clock})
}

// submit stores a new intent of contract c, its first attempt due at once,
// and tells this instance's executor about it, as this instance's intake
// service does (its payload compacted, its contract snapshotted).
func (h *harness) submit(id string, c core.Contract, payload string) core.Intent {
	h.t.Helper()
	return h.create(h.store, h.newIntent(id, c, payload), true)
}

// submitAt is submit of a scheduled send: its first attempt due at
// notBefore.
func (h *harness) submitAt(id string, c core.Contract, payload string, notBefore time.Time) core.Intent {
	h.t.Helper()
	return h.create(h.store, h.newIntent(id, c, payload).WithNotBefore(notBefore), true)
}

// submitElsewhere stores a new intent into store as another instance's
// intake service does: no local executor hears of it, only a refresh finds
// it.
func (h *harness) submitElsewhere(store ports.Store, id string, c core.Contract, payload string) core.Intent {
	h.t.Helper()
	return h.create(store, h.newIntent(id, c, payload), false)
}

// newIntent is the intent intake would store for a submission now.
func (h *harness) newIntent(id string, c core.Contract, payload string) core.Intent {
	h.t.Helper()
	compacted, err := core.CompactPayload([]byte(payload))
	if err != nil {
		h.t.Fatal(err)
	}
	return core.NewIntent(id, c, compacted, h.clock.Now())
}

// create stores in, which must be new, and notifies the executor if asked.
func (h *harness) create(store ports.Store, in core.Intent, notify bool) core.Intent {
	h.t.Helper()
	res, err := store.CreateIntent(h.ctx, in)
	if err != nil || !res.Created {
		h.t.Fatalf("create %s: created=%v err=%v", in.IntentID, res.Created, err)
	}
	if notify {
		h.executor.Notify(res.Intent)
	}
	return res.Intent
}

// on scripts the gateway's answers to the next calls for reference.
func (h *harness) on(reference string, steps ...gatewayfake.Step) {
	h.t.Helper()
	if err := h.gw.Script(reference, steps...); err != nil {
		h.t.Fatal(err)
	}
}

// waitCall returns the next call the gateway received.
func (h *harness) waitCall() gatewayfake.Call {
	h.t.Helper()
	c, err := h.gw.NextCall(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}
