package gatewaysim

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// Config sets how the simulated gateways behave. The zero Config serves both
// gateway types on free loopback ports and accepts every new reference at
// once, which is what most tests want.
type Config struct {
	// Listen maps a gateway type to its listen address; a type left out
	// listens on 127.0.0.1:0 (a free port, see Simulator.URL).
	Listen map[core.GatewayType]string
	// Latency delays every answer; LatencyJitter adds a uniformly drawn
	// extra delay in [0, LatencyJitter].
	Latency       time.Duration
	LatencyJitter time.Duration
	// RejectRatio is the share of unscripted submissions, from 0 to 1,
	// answered rejected (with a reason drawn from Reasons) instead of
	// accepted. The binary's --accept-ratio flag sets 1 - RejectRatio.
	RejectRatio float64
	// Reasons is the mix of rejection reasons; it defaults to
	// provider_failure alone.
	Reasons []WeightedReason
	// Mode answers unscripted submissions; it defaults to ModeNormal.
	Mode Mode
	// Scripts are the scripted answers per reference at start (and after a
	// reset), for both gateway types.
	Scripts map[string][]Step
	// Logger receives start, stop and control events; it defaults to
	// discarding them.
	Logger *slog.Logger
	// NoLookup turns the optional lookup route off: it answers 404, as a
	// gateway without it would.
	NoLookup bool
}

// WeightedReason is one rejection reason of the mix with its relative weight.
type WeightedReason struct {
	Reason string
	Weight float64
}

// ParseReasons reads a reason mix such as
// "provider_failure=0.5,invalid_recipient=0.5". Weights are relative; they
// need not add up to 1.
func ParseReasons(s string) ([]WeightedReason, error) {
	var mix []WeightedReason
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		reason, weight, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("reason %q has no weight: want reason=weight", part)
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(weight), 64)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("reason %q: weight must be a number >= 0", part)
		}
		mix = append(mix, WeightedReason{Reason: strings.TrimSpace(reason), Weight: w})
	}
	return mix, nil
}

// behaviour is a validated Config, shared read-only by the gateways.
type behaviour struct {
	latency     time.Duration
	jitter      time.Duration
	rejectRatio float64
	// reasons and cumulative are the reason mix as a cumulative
	// distribution, so a draw is one random number and a short scan.
	reasons    []string
	cumulative []float64
	mode       Mode
	scripts    map[string][]Step
	noLookup   bool
}

func newBehaviour(cfg Config) (behaviour, error) {
	b := behaviour{latency: cfg.Latency, jitter: cfg.LatencyJitter, rejectRatio: cfg.RejectRatio, mode: cfg.Mode, noLookup: cfg.NoLookup}
	if b.latency < 0 || b.jitter < 0 {
		return behaviour{}, fmt.Errorf("latency and latency jitter must not be negative")
	}
	if b.rejectRatio < 0 || b.rejectRatio > 1 {
		return behaviour{}, fmt.Errorf("reject ratio %v is outside [0, 1]", b.rejectRatio)
	}
	if b.mode == "" {
		b.mode = ModeNormal
	}
	if _, err := ParseMode(string(b.mode)); err != nil {
		return behaviour{}, err
	}
	mix := cfg.Reasons
	if len(mix) == 0 {
		mix = []WeightedReason{{Reason: core.ReasonProviderFailure, Weight: 1}}
	}
	total := 0.0
	for _, r := range mix {
		if r.Reason == "" || r.Weight < 0 {
			return behaviour{}, fmt.Errorf("reason mix entry %+v needs a reason and a weight >= 0", r)
		}
		total += r.Weight
		b.reasons = append(b.reasons, r.Reason)
		b.cumulative = append(b.cumulative, total)
	}
	if total <= 0 {
		return behaviour{}, fmt.Errorf("reason mix has no positive weight")
	}
	for ref, steps := range cfg.Scripts {
		for _, s := range steps {
			if _, err := ParseStep(string(s)); err != nil {
				return behaviour{}, fmt.Errorf("script of %q: %w", ref, err)
			}
		}
	}
	b.scripts = maps.Clone(cfg.Scripts)
	return b, nil
}

// delay draws one answer's latency.
func (b behaviour) delay() time.Duration {
	if b.jitter <= 0 {
		return b.latency
	}
	return b.latency + rand.N(b.jitter+1)
}

// draw decides an unscripted outcome: accepted, or the rejection reason.
func (b behaviour) draw() (accept bool, reason string) {
	if b.rejectRatio == 0 || rand.Float64() >= b.rejectRatio {
		return true, ""
	}
	x := rand.Float64() * b.cumulative[len(b.cumulative)-1]
	for i, c := range b.cumulative {
		if x < c {
			return false, b.reasons[i]
		}
	}
	return false, b.reasons[len(b.reasons)-1]
}
