package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
)

// TestGetShowsThePayloadAsStored checks that reading one intent returns its
// payload exactly as stored (compacted, null included), while the answer to
// the submission, which the client sent itself, carries none.
func TestGetShowsThePayloadAsStored(t *testing.T) {
	svc := &storingService{}
	base, c := startStoring(t, httpapi.Config{}, svc)
	for id, tc := range map[string]struct{ sent, stored string }{
		"obj":  {`{ "to": "+1555", "n": 1e999999999 }`, `{"to":"+1555","n":1e999999999}`},
		"null": {`null`, `null`},
		"str":  {`"a\u003cb"`, `"a\u003cb"`},
	} {
		res := submitRaw(t, c, "application/json", submitBody(id, "sms.realtime", tc.sent))
		if res.StatusCode() != http.StatusCreated {
			t.Fatalf("%s: %d %s", id, res.StatusCode(), res.Body)
		}
		if fields := members(t, res.Body); fields["payload"] != nil {
			t.Errorf("%s: the submission's answer carries the payload: %s", id, res.Body)
		}
		get, err := http.Get(base + "/v1/intents/" + url.PathEscape(id))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(get.Body)
		_ = get.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(members(t, body)["payload"]); got != tc.stored {
			t.Errorf("%s: GET payload %q, want %q as stored", id, got, tc.stored)
		}
	}
}

// members decodes a JSON object into its members' raw values.
func members(t *testing.T, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m
}
