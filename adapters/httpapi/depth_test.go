package httpapi_test

import (
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
)

func nestedArrays(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// TestTooDeepPayloadsAre422NamingTheLimit: a payload nested beyond the limit
// is an invalid field naming payload and the limit, whether or not the body
// is still deep enough for encoding/json to read (it used to be a 201, or a
// 400 "not a valid JSON document" from 10,000 levels on).
func TestTooDeepPayloadsAre422NamingTheLimit(t *testing.T) {
	_, c := startStoring(t, httpapi.Config{}, &storingService{})
	if res := submitRaw(t, c, "application/json", submitBody("deep-ok", "sms.realtime", nestedArrays(core.MaxPayloadDepth))); res.StatusCode() != 201 {
		t.Fatalf("a payload at the limit: %d, want 201; %s", res.StatusCode(), res.Body)
	}
	// A body that is a deep array is first of all not an object.
	res := submitRaw(t, c, "application/json", nestedArrays(10001))
	problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 400, "malformed-request")
	for _, depth := range []int{core.MaxPayloadDepth + 1, 10000, 10001, 100000} {
		res := submitRaw(t, c, "application/json", submitBody("deep", "sms.realtime", nestedArrays(depth)))
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if f := invalidField(t, p); f != "payload" || !strings.Contains(*p.Detail, "1000 levels") {
			t.Errorf("payload %d levels deep: %s", depth, res.Body)
		}
	}
}

// TestTooDeepBatchIsRefusedNamingTheItem: a batch body deeper than
// encoding/json reads cannot be judged item by item; it is refused as a
// whole, naming the item's payload.
func TestTooDeepBatchIsRefusedNamingTheItem(t *testing.T) {
	c := start(t, httpapi.Config{})
	body := `{"intents":[` + submitBody("a", "t", "{}") + `,` + submitBody("b", "t", nestedArrays(10000)) + `]}`
	res, err := c.SubmitIntentBatchWithBodyWithResponse(t.Context(), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if f := invalidField(t, p); f != "intents[1].payload" {
		t.Errorf("too deep batch: names %q; %s", f, res.Body)
	}
}
