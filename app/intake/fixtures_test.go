package intake_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

// The contracts the tests submit to.
var (
	smsDeadline = core.Contract{
		SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://sms-a.test",
		Mode: core.ModeRealtime, Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 30,
		TerminalOutcomes: []string{core.ReasonInvalidRequest, core.ReasonInvalidRecipient, core.ReasonInvalidMessage},
	}
	pushBatch = core.Contract{
		SubmissionTarget: "push.batch", GatewayType: core.GatewayPush, GatewayURL: "http://push-b.test",
		Mode: core.ModeBatch, Policy: core.PolicyMaxAttempts, MaxAttempts: 5,
		TerminalOutcomes: []string{core.ReasonUnregisteredToken},
	}
)

// createdMetrics counts the intents the service reports created, per target:
// the only metric intake emits.
type createdMetrics struct {
	ports.NopMetrics
	mu      sync.Mutex
	created map[string]int
}

func newCreatedMetrics() *createdMetrics { return &createdMetrics{created: map[string]int{}} }

func (m *createdMetrics) IntentCreated(target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created[target]++
}

// mustJSON is v as JSON, to compare snapshots by their stored form.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
