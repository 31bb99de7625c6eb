package gateway_test

import (
	"fmt"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports/gatewaytest"
)

// simFarSide is the conformance suite's far side backed by the gateway
// simulator, over real HTTP on loopback.
type simFarSide struct{ sim *gatewaysim.Simulator }

var _ gatewaytest.FarSide = simFarSide{}

// startFarSide starts a simulator with the zero Config (every new reference
// accepted at once) and closes it in the test's cleanup.
func startFarSide(t *testing.T) gatewaytest.FarSide {
	t.Helper()
	sim, err := gatewaysim.Start(gatewaysim.Config{})
	if err != nil {
		t.Fatalf("start gateway simulator: %v", err)
	}
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("close gateway simulator: %v", err)
		}
	})
	return simFarSide{sim: sim}
}

func (f simFarSide) URL(gt core.GatewayType) string { return f.sim.URL(gt) }

func (f simFarSide) Script(ref string, steps ...gatewaytest.Step) error {
	script := make([]gatewaysim.Step, 0, len(steps))
	for _, st := range steps {
		switch {
		case st.Reject != "" && st.Fault != "":
			return fmt.Errorf("script step %+v both rejects and faults", st)
		case st.Fault != "":
			m, err := gatewaysim.ParseMode(st.Fault)
			if err != nil {
				return err
			}
			script = append(script, gatewaysim.Fault(m))
		case st.Reject != "":
			script = append(script, gatewaysim.Rejected(st.Reject))
		default:
			script = append(script, gatewaysim.StepAccepted)
		}
	}
	return f.sim.Script(ref, script...)
}

func (f simFarSide) Received(ref string) gatewaytest.Received {
	st := f.sim.Reference(ref)
	return gatewaytest.Received{Submissions: st.Submissions, Accepted: st.Accepted, LastPayload: st.LastPayload}
}

// faultKinds is the error kind the Client reports for each fault mode of
// the simulator, as a caller with a deadline sees it.
var faultKinds = map[gatewaysim.Mode]gateway.Kind{
	gatewaysim.ModeHang:            gateway.KindTimeout,
	gatewaysim.ModeDrop:            gateway.KindTransport,
	gatewaysim.ModeNotJSON:         gateway.KindNotJSON,
	gatewaysim.ModeEmptyBody:       gateway.KindNotJSON,
	gatewaysim.ModeNotObject:       gateway.KindNotObject,
	gatewaysim.ModeNoStatus:        gateway.KindNoStatus,
	gatewaysim.ModeUnknownStatus:   gateway.KindUnknownStatus,
	gatewaysim.ModeNoReason:        gateway.KindNoReason,
	gatewaysim.ModeReasonNotString: gateway.KindBadField,
	gatewaysim.ModeOversized:       gateway.KindTooLarge,
	gatewaysim.ModeAcceptThenHang:  gateway.KindTimeout,
	gatewaysim.ModeAcceptThenDrop:  gateway.KindTransport,
	gatewaysim.HTTPStatusMode(503): gateway.KindHTTPStatus,
}

// looksLike pairs each fault that accepts before failing with the fault it
// looks like on the wire.
var looksLike = map[gatewaysim.Mode]gatewaysim.Mode{
	gatewaysim.ModeAcceptThenHang: gatewaysim.ModeHang,
	gatewaysim.ModeAcceptThenDrop: gatewaysim.ModeDrop,
}

func (f simFarSide) Faults() []gatewaytest.Fault {
	var faults []gatewaytest.Fault
	for _, m := range gatewaysim.FaultModes() {
		faults = append(faults, gatewaytest.Fault{
			Name:      string(m),
			Kind:      string(faultKinds[m]),
			Hangs:     m == gatewaysim.ModeHang || m == gatewaysim.ModeAcceptThenHang,
			LooksLike: string(looksLike[m]),
			// Every fault but an HTTP status leaves no readable answer.
			AnswerLost: faultKinds[m] != gateway.KindHTTPStatus,
		})
	}
	return faults
}

// TestFaultKindsCoverEverySimulatorFault keeps the table above complete, so
// a new simulator fault cannot skip the suite's kind check.
func TestFaultKindsCoverEverySimulatorFault(t *testing.T) {
	for _, m := range gatewaysim.FaultModes() {
		if faultKinds[m] == "" {
			t.Errorf("fault mode %s has no expected error kind", m)
		}
	}
}
