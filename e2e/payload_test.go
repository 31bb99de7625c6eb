package e2e

import "testing"

// TestEveryJSONValueIsAPayload pins the contract's "any JSON value, null
// included": the request validator must let scalars, arrays and null through
// as payloads, and the gateway must receive them as sent.
func TestEveryJSONValueIsAPayload(t *testing.T) {
	svc, sim := startStandard(t)
	for i, payload := range []string{`null`, `true`, `42`, `-1.50e3`, `"text"`, `[]`, `[1,"a",null]`, `{}`, `{"a":null}`} {
		id := "any-json-" + string(rune('a'+i))
		res := submitBody(t, svc.api, `{"intentId":"`+id+`","submissionTarget":"sms.realtime","payload":`+payload+`}`)
		if res.StatusCode() != 201 {
			t.Errorf("payload %s: %d %s, want 201", payload, res.StatusCode(), res.Body)
			continue
		}
		waitTerminal(t, svc.api, id)
		if got := string(sim.Reference(id).LastPayload); got != payload {
			t.Errorf("payload %s reached the gateway as %s", payload, got)
		}
	}
}
