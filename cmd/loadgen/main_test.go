package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/api/client"
)

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		var stdout, stderr bytes.Buffer
		code := realMain(t.Context(), []string{arg}, &stdout, &stderr)
		if code != 0 || !strings.Contains(stderr.String(), "usage: loadgen [flags]") ||
			!strings.Contains(stderr.String(), "-count") || strings.Contains(stderr.String(), "help requested") {
			t.Errorf("loadgen %s: exit %d, stderr %q; want the usage and exit 0", arg, code, stderr.String())
		}
	}
}

func TestBadFlagExitsTwo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := realMain(t.Context(), []string{"--count=0"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--count") {
		t.Errorf("loadgen --count=0: exit %d, stderr %q; want exit 2 naming --count", code, stderr.String())
	}
}

// TestBodiesEncodeTheRequestTheSDKWould checks the generator's hand-built
// bodies against the SDK's own type: same fields, same values, the payload
// byte for byte, whatever characters the intentId holds.
func TestBodiesEncodeTheRequestTheSDKWould(t *testing.T) {
	payload := makePayload(64)
	b := newBodies(`sms."quoted"`, payload)
	for _, id := range []string{"run-0000001", `odd "id" \ with <html> & ünïcode`} {
		var got client.SubmitIntentRequest
		dec := json.NewDecoder(bytes.NewReader(b.of(id)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("body %s: %v", b.of(id), err)
		}
		if got.IntentId != id || got.SubmissionTarget != `sms."quoted"` || !bytes.Equal(got.Payload, payload) {
			t.Fatalf("body %s decodes to %+v", b.of(id), got)
		}
	}
}
