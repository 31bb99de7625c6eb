package gatewayfake_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/gatewaytest"
)

// The fake runs the suite every gateway client runs: the caller is a
// Network, so a call reaches whichever far side answers at its gatewayUrl,
// and each far side is a fresh Gateway on that network.
func TestGatewayConformance(t *testing.T) {
	network := gatewayfake.NewNetwork()
	var started atomic.Int64
	gatewaytest.Run(t, gatewaytest.Harness{
		NewGateway: func(*testing.T, core.GatewayType) ports.Gateway { return network },
		StartFarSide: func(t *testing.T) gatewaytest.FarSide {
			g := gatewayfake.New(gatewayfake.Config{Name: fmt.Sprintf("far-%d", started.Add(1))})
			network.Add(g)
			t.Cleanup(func() { network.Remove(g) })
			return farSide{g}
		},
		KindOf: gatewayfake.KindOf,
	})
}

// farSide is the suite's view of one fake gateway.
type farSide struct{ g *gatewayfake.Gateway }

var _ gatewaytest.FarSide = farSide{}

func (f farSide) URL(gt core.GatewayType) string { return f.g.URL(gt) }

func (f farSide) Script(ref string, steps ...gatewaytest.Step) error {
	script := make([]gatewayfake.Step, 0, len(steps))
	for _, st := range steps {
		switch {
		case st.Reject != "" && st.Fault != "":
			return fmt.Errorf("script step %+v both rejects and faults", st)
		case st.Fault != "":
			script = append(script, gatewayfake.Step{Fault: st.Fault})
		case st.Reject != "":
			o, err := core.NewOutcome(core.OutcomeRejected, st.Reject, "")
			if err != nil {
				return err
			}
			script = append(script, gatewayfake.Step{Outcome: o})
		default:
			script = append(script, gatewayfake.Step{}) // accepts, or duplicate_reference
		}
	}
	return f.g.Script(ref, script...)
}

func (f farSide) Received(ref string) gatewaytest.Received {
	r := f.g.Received(ref)
	return gatewaytest.Received{Submissions: r.Submissions, Accepted: r.Accepted, LastPayload: r.LastPayload}
}

func (f farSide) Faults() []gatewaytest.Fault {
	var out []gatewaytest.Fault
	for _, flt := range gatewayfake.Faults() {
		out = append(out, gatewaytest.Fault{Name: flt.Name, Kind: flt.Kind, Hangs: flt.Hangs,
			LooksLike: flt.LooksLike, AnswerLost: flt.AnswerLost})
	}
	return out
}
