package core

import (
	"errors"
	"net/url"
	"time"
)

// MaxPausedURLLength bounds a paused gateway URL, so the stores can key
// their pause rows by it (SQL Server index keys are at most 900 bytes).
const MaxPausedURLLength = 400

// ErrPausesUnavailable means the store in use keeps no gateway pauses, so a
// pause could not be seen by every instance and is refused.
var ErrPausesUnavailable = errors.New("gateway pauses are not available on this store")

// GatewayPause is an operator's pause of a gateway: by gateway type (every
// URL of that type) or by one gateway URL. While it is in force the executor
// calls none of the gateways it names; intents wait, and the contract's
// deadline rule still applies. It is an execution policy, never a contract
// term, and is stored so every instance and every next leader sees it.
type GatewayPause struct {
	// Exactly one of GatewayType and GatewayURL is set.
	GatewayType GatewayType
	GatewayURL  string
	// PausedAt is when the pause was first stored.
	PausedAt time.Time
}

// The kinds of a pause's selector, as stores key their pause rows.
const (
	PauseByType = "type"
	PauseByURL  = "url"
)

// PauseSelector is the key a store keeps a pause under: its kind and the
// gateway type or URL it names.
func PauseSelector(t GatewayType, gatewayURL string) (kind, selector string) {
	if gatewayURL != "" {
		return PauseByURL, gatewayURL
	}
	return PauseByType, string(t)
}

// StoredPause rebuilds a pause from the key PauseSelector gave it and the
// time it was stored.
func StoredPause(kind, selector string, pausedAt time.Time) GatewayPause {
	if kind == PauseByURL {
		return GatewayPause{GatewayURL: selector, PausedAt: pausedAt}
	}
	return GatewayPause{GatewayType: GatewayType(selector), PausedAt: pausedAt}
}

// Key names what the pause covers: the gateway type, or the URL.
func (p GatewayPause) Key() string {
	if p.GatewayURL != "" {
		return p.GatewayURL
	}
	return string(p.GatewayType)
}

// Matches reports whether the pause covers a gateway URL of type t.
func (p GatewayPause) Matches(gatewayURL string, t GatewayType) bool {
	if p.GatewayURL != "" {
		return p.GatewayURL == gatewayURL
	}
	return p.GatewayType == t
}

// ValidateGatewaySelector checks an operator's choice of gateways: exactly
// one of a known gateway type and an absolute http(s) URL. Errors are
// *FieldError naming gatewayType or gatewayUrl.
func ValidateGatewaySelector(t GatewayType, gatewayURL string) error {
	switch {
	case t == "" && gatewayURL == "":
		return &FieldError{Field: "gatewayType", Message: "name a gateway type or a gatewayUrl"}
	case t != "" && gatewayURL != "":
		return &FieldError{Field: "gatewayUrl", Message: "name a gateway type or a gatewayUrl, not both"}
	case t != "" && !t.Known():
		return &FieldError{Field: "gatewayType", Message: "must be one of sms, push"}
	case len([]rune(gatewayURL)) > MaxPausedURLLength:
		return &FieldError{Field: "gatewayUrl", Message: "must be at most 400 characters"}
	case gatewayURL != "":
		u, err := url.Parse(gatewayURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &FieldError{Field: "gatewayUrl", Message: "must be an absolute http or https URL"}
		}
	}
	return nil
}

// Paused reports whether any of pauses covers a gateway URL of type t.
func Paused(pauses []GatewayPause, gatewayURL string, t GatewayType) bool {
	for _, p := range pauses {
		if p.Matches(gatewayURL, t) {
			return true
		}
	}
	return false
}
