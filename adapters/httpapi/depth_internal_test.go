package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTooDeepAtNamesThePathToTheDeepValue(t *testing.T) {
	deep := strings.Repeat("[", maxBodyDepth+1) + strings.Repeat("]", maxBodyDepth+1)
	shallow := strings.Repeat("[", maxBodyDepth-3) + strings.Repeat("]", maxBodyDepth-3)
	tests := []struct {
		body, want string
		deep       bool
	}{
		{`{"intentId":"a","payload":` + deep + `}`, "payload", true},
		{`{"intentId":"[[[{","pay\"load":1,"extra":` + deep + `}`, "extra[0][0]", true},
		{`{"intents":[{"payload":1},{"a":"]]","payload":` + deep + `}]}`, "intents[1].payload", true},
		{`{"intents":[{"payload":1},{"x":{"y":` + deep + `}}]}`, "intents[1].x", true},
		{deep, "[0][0][0]", true},
		{`{"payload":` + shallow + `}`, "", false},
		{`{"payload":"` + strings.Repeat("[", 2*maxBodyDepth) + `"}`, "", false},
	}
	for _, tt := range tests {
		got, deep := tooDeepAt([]byte(tt.body))
		if got != tt.want || deep != tt.deep {
			t.Errorf("tooDeepAt(%.50s...) = %q, %v; want %q, %v", tt.body, got, deep, tt.want, tt.deep)
		}
	}
	// The limit is encoding/json's: a body just within it is valid JSON,
	// one level more is not.
	if !json.Valid([]byte(`{"payload":` + strings.Repeat("[", maxBodyDepth-1) + strings.Repeat("]", maxBodyDepth-1) + `}`)) {
		t.Error("json.Valid refuses a body maxBodyDepth levels deep")
	}
	if json.Valid([]byte(`{"payload":` + strings.Repeat("[", maxBodyDepth) + strings.Repeat("]", maxBodyDepth) + `}`)) {
		t.Error("json.Valid takes a body deeper than maxBodyDepth: the limit moved")
	}
}
