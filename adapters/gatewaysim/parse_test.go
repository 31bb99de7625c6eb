package gatewaysim_test

import (
	"reflect"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
)

func TestParseReasons(t *testing.T) {
	got, err := gatewaysim.ParseReasons("provider_failure=0.5, invalid_recipient=0.25,")
	want := []gatewaysim.WeightedReason{{Reason: "provider_failure", Weight: 0.5}, {Reason: "invalid_recipient", Weight: 0.25}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseReasons = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"provider_failure", "x=abc", "x=-1"} {
		if _, err := gatewaysim.ParseReasons(bad); err == nil {
			t.Errorf("ParseReasons(%q) accepted an invalid mix", bad)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, ok := range []string{"normal", "hang", "accept_then_drop", "http_201", "http_503", "http_599"} {
		if m, err := gatewaysim.ParseMode(ok); err != nil || string(m) != ok {
			t.Errorf("ParseMode(%q) = %q, %v", ok, m, err)
		}
	}
	for _, bad := range []string{"", "sleepy", "http_200", "http_600", "http_99", "http_5O3"} {
		if _, err := gatewaysim.ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted an invalid mode", bad)
		}
	}
}

func TestParseScripts(t *testing.T) {
	got, err := gatewaysim.ParseScripts([]byte(`{"a": ["provider_failure", "mode:http_503", "accepted"]}`))
	want := map[string][]gatewaysim.Step{"a": {"provider_failure", gatewaysim.Fault(gatewaysim.HTTPStatusMode(503)), gatewaysim.StepAccepted}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseScripts = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{`[]`, `{"a": ["mode:sleepy"]}`, `{"a": [""]}`, `{"": ["accepted"]}`} {
		if _, err := gatewaysim.ParseScripts([]byte(bad)); err == nil {
			t.Errorf("ParseScripts(%s) accepted an invalid script", bad)
		}
	}
}
