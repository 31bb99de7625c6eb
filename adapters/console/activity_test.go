package console

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
)

func TestActivityRing(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	a := NewActivity(nil, clk)
	a.IntentCreated("t")
	a.IntentCreated("t")
	a.AttemptFinished(core.GatewaySMS, "accepted", time.Millisecond)
	a.FirstAttemptLateness(10 * time.Millisecond)
	a.FirstAttemptLateness(30 * time.Millisecond)
	clk.Advance(time.Second)
	a.IntentCompleted("t", core.StatusAccepted, "")
	s := a.Snapshot()
	n := len(s.Intake)
	if s.Intake[n-2] != 2 || s.Attempts[n-2] != 1 || s.Completions[n-1] != 1 {
		t.Fatalf("last seconds: intake %v attempts %v completions %v", s.Intake[n-3:], s.Attempts[n-3:], s.Completions[n-3:])
	}
	if s.LatenessCount != 2 || s.LatenessAvg != 20*time.Millisecond || s.LatenessMax != 30*time.Millisecond {
		t.Fatalf("lateness %+v", s)
	}
	// A full lap later the old seconds read as empty, not as this lap's.
	clk.Advance(ActivityWindow)
	s = a.Snapshot()
	for i := range s.Intake {
		if s.Intake[i] != 0 || s.Completions[i] != 0 {
			t.Fatalf("second %d still counts events from a lap ago", i)
		}
	}
}
