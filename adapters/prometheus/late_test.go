package prometheus

import (
	"strings"
	"testing"
)

// TestLateAcceptancesAreCountedByTarget: an acceptance after the deadline
// is its own counter, by submission target, apart from the completions
// (where it is one more exhausted intent).
func TestLateAcceptancesAreCountedByTarget(t *testing.T) {
	m := New()
	m.IntentAcceptedAfterDeadline("sms.realtime")
	m.IntentAcceptedAfterDeadline("sms.realtime")
	m.IntentAcceptedAfterDeadline("push.batch")
	text := scrape(t, m)
	for _, want := range []string{
		`submission_manager_intents_accepted_after_deadline_total{submission_target="sms.realtime"} 2`,
		`submission_manager_intents_accepted_after_deadline_total{submission_target="push.batch"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
