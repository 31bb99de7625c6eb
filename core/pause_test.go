package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestGatewayPauseMatchesByTypeOrURL(t *testing.T) {
	byType := GatewayPause{GatewayType: GatewaySMS}
	byURL := GatewayPause{GatewayURL: "http://sms-a"}
	if !byType.Matches("http://anything", GatewaySMS) || byType.Matches("http://sms-a", GatewayPush) {
		t.Error("a type pause must cover every URL of its type and nothing else")
	}
	if !byURL.Matches("http://sms-a", GatewaySMS) || byURL.Matches("http://sms-b", GatewaySMS) {
		t.Error("a URL pause must cover only its URL")
	}
	if !Paused([]GatewayPause{byURL, byType}, "http://x", GatewaySMS) || Paused(nil, "http://x", GatewaySMS) {
		t.Error("Paused")
	}
	if byType.Key() != "sms" || byURL.Key() != "http://sms-a" {
		t.Error("Key")
	}
}

func TestValidateGatewaySelectorNamesTheField(t *testing.T) {
	cases := []struct {
		t     GatewayType
		url   string
		field string
	}{
		{"", "", "gatewayType"},
		{GatewaySMS, "http://x", "gatewayUrl"},
		{"fax", "", "gatewayType"},
		{"", "ftp://x", "gatewayUrl"},
		{"", "not a url", "gatewayUrl"},
		{"", "http://x/" + strings.Repeat("a", 400), "gatewayUrl"},
	}
	for _, c := range cases {
		var fe *FieldError
		if err := ValidateGatewaySelector(c.t, c.url); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("(%q, %q): %v, want a field error on %s", c.t, c.url, err, c.field)
		}
	}
	if err := ValidateGatewaySelector("", "https://gw.example:8443/base"); err != nil {
		t.Error(err)
	}
}

// TestPauseSelectorRoundTrips pins the key a store keeps a pause under: a
// pause read back from its key is the pause that was stored.
func TestPauseSelectorRoundTrips(t *testing.T) {
	at := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	for _, p := range []GatewayPause{
		{GatewayType: GatewaySMS, PausedAt: at},
		{GatewayURL: "https://sms.example/v1", PausedAt: at},
	} {
		kind, selector := PauseSelector(p.GatewayType, p.GatewayURL)
		if got := StoredPause(kind, selector, at); got != p {
			t.Errorf("%+v stored as (%s, %s) reads back as %+v", p, kind, selector, got)
		}
	}
}
