package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func testBreaker() *Breaker {
	return NewBreaker(BreakerConfig{Threshold: 3, Window: 10 * time.Second, OpenFor: 5 * time.Second, MaxOpenFor: 12 * time.Second})
}

func TestBreakerOpensAfterConsecutiveFailuresWithinTheWindow(t *testing.T) {
	b := testBreaker()
	for i := range 2 {
		if tr := b.Record(t0.Add(time.Duration(i)*time.Second), true, false); tr != nil {
			t.Fatalf("failure %d: transition %+v", i+1, tr)
		}
	}
	tr := b.Record(t0.Add(2*time.Second), true, false)
	if tr == nil || tr.From != BreakerClosed || tr.To != BreakerOpen || tr.Failures != 3 || !tr.ProbeAt.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("third failure: %+v", tr)
	}
	if a, _ := b.Admit(t0.Add(6 * time.Second)); a != DenyOpen {
		t.Fatalf("before the probe time: %v", a)
	}
}

func TestBreakerSuccessOrAnOldRunResetsTheCount(t *testing.T) {
	b := testBreaker()
	b.Record(t0, true, false)
	b.Record(t0.Add(time.Second), true, false)
	b.Record(t0.Add(2*time.Second), false, false) // a success breaks the run
	b.Record(t0.Add(3*time.Second), true, false)
	b.Record(t0.Add(4*time.Second), true, false)
	if b.State() != BreakerClosed {
		t.Fatal("opened although a success broke the run")
	}
	// The run started at 3 s; a failure at 14 s is outside the window and
	// starts a new run instead of being the third.
	if tr := b.Record(t0.Add(14*time.Second), true, false); tr != nil || b.State() != BreakerClosed {
		t.Fatalf("a failure beyond the window opened it: %+v", tr)
	}
}

func TestBreakerProbesOnceThenClosesOrReopensLonger(t *testing.T) {
	b := testBreaker()
	for range 3 {
		b.Record(t0, true, false)
	}
	probe := t0.Add(5 * time.Second)
	a, tr := b.Admit(probe)
	if a != AdmitProbe || tr == nil || tr.To != BreakerHalfOpen {
		t.Fatalf("at the probe time: %v %+v", a, tr)
	}
	if a, _ := b.Admit(probe); a != DenyProbing {
		t.Fatalf("second call while probing: %v", a)
	}
	// A late result of a call made before the breaker opened says nothing.
	if tr := b.Record(probe, false, false); tr != nil || b.State() != BreakerHalfOpen {
		t.Fatalf("non-probe result changed the state: %+v", tr)
	}
	// Failed probes double the interval up to the bound: 10 s, then 12 s.
	tr = b.Record(probe, true, true)
	if tr == nil || tr.To != BreakerOpen || !tr.ProbeAt.Equal(probe.Add(10*time.Second)) {
		t.Fatalf("failed probe: %+v", tr)
	}
	probe = tr.ProbeAt
	b.Admit(probe)
	tr = b.Record(probe, true, true)
	if !tr.ProbeAt.Equal(probe.Add(12 * time.Second)) {
		t.Fatalf("second failed probe: %+v", tr)
	}
	probe = tr.ProbeAt
	b.Admit(probe)
	tr = b.Record(probe, false, true)
	if tr == nil || tr.From != BreakerHalfOpen || tr.To != BreakerClosed {
		t.Fatalf("successful probe: %+v", tr)
	}
	if a, _ := b.Admit(probe); a != Admit {
		t.Fatalf("closed breaker: %v", a)
	}
	// Closing resets the interval: the next opening waits OpenFor again.
	for range 3 {
		tr = b.Record(probe, true, false)
	}
	if !tr.ProbeAt.Equal(probe.Add(5 * time.Second)) {
		t.Fatalf("reopened after closing: %+v", tr)
	}
}

func TestBreakerAbandonedProbeLetsTheNextCallProbe(t *testing.T) {
	b := testBreaker()
	for range 3 {
		b.Record(t0, true, false)
	}
	at := t0.Add(5 * time.Second)
	b.Admit(at)
	b.Abandon(true)
	if a, _ := b.Admit(at); a != AdmitProbe {
		t.Fatalf("after an abandoned probe: %v", a)
	}
}

func TestBreakerConfigValidateNamesEveryProblem(t *testing.T) {
	if err := DefaultBreakerConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	err := BreakerConfig{Threshold: 0, Window: 0, OpenFor: 2 * time.Second, MaxOpenFor: time.Second}.Validate()
	for _, want := range []string{"threshold", "window", "max open interval"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
}

func TestIsGatewayFailureSeparatesTheGatewayFromTheProvider(t *testing.T) {
	rejected := func(reason string) AttemptResult {
		return AttemptResult{Outcome: &Outcome{Status: OutcomeRejected, Reason: reason}}
	}
	cases := []struct {
		r     AttemptResult
		extra []string
		want  bool
	}{
		{AttemptResult{Err: errors.New("connection refused")}, nil, true},
		{AttemptResult{Outcome: &Outcome{Status: OutcomeAccepted}}, nil, false},
		{rejected(ReasonProviderFailure), nil, false},
		{rejected(ReasonProviderFailure), []string{ReasonProviderFailure}, true},
		{rejected(ReasonInvalidRecipient), []string{ReasonProviderFailure}, false},
	}
	for i, c := range cases {
		if got := IsGatewayFailure(c.r, c.extra); got != c.want {
			t.Errorf("case %d: got %v", i, got)
		}
	}
}

func TestTokenBucketTakesBurstThenRefillsAtRate(t *testing.T) {
	b, err := NewTokenBucket(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if !b.Take(t0) {
			t.Fatalf("burst token %d refused", i)
		}
	}
	if b.Take(t0) {
		t.Fatal("a fourth token at once")
	}
	if b.Take(t0.Add(99 * time.Millisecond)) {
		t.Fatal("refilled before 100 ms")
	}
	if !b.Take(t0.Add(100 * time.Millisecond)) {
		t.Fatal("not refilled after 100 ms")
	}
	// A long idle period refills only up to the burst.
	later := t0.Add(time.Hour)
	n := 0
	for b.Take(later) {
		n++
	}
	if n != 3 {
		t.Fatalf("after an hour took %d tokens, want the burst 3", n)
	}
}

func TestTokenBucketReservationsQueueAtTheRate(t *testing.T) {
	b, _ := NewTokenBucket(4, 1)
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond}
	for i, w := range want {
		if got := b.Reserve(t0); !got.Equal(t0.Add(w)) {
			t.Errorf("reservation %d at %s, want %s", i, got.Sub(t0), w)
		}
	}
	// Debt is paid back before new calls get a token.
	if b.Take(t0.Add(700 * time.Millisecond)) {
		t.Error("took a token while reservations were outstanding")
	}
	if _, err := NewTokenBucket(0, 1); err == nil {
		t.Error("zero rate accepted")
	}
	if _, err := NewTokenBucket(1, 0); err == nil {
		t.Error("zero burst accepted")
	}
}

// An intent's last try goes through an open breaker (the gates let it);
// its success closes the breaker, its failure leaves it open as it was.
func TestBreakerLastTryClosesOnSuccessOnly(t *testing.T) {
	b := testBreaker()
	for i := range 3 {
		b.Record(t0.Add(time.Duration(i)*time.Second), true, false)
	}
	probeAt := b.ProbeAt()
	if tr := b.RecordLastTry(true); tr != nil || b.State() != BreakerOpen || !b.ProbeAt().Equal(probeAt) {
		t.Fatalf("a failed last try: %+v, state %s, probe at %v (was %v)", tr, b.State(), b.ProbeAt(), probeAt)
	}
	tr := b.RecordLastTry(false)
	if tr == nil || tr.From != BreakerOpen || tr.To != BreakerClosed || b.State() != BreakerClosed {
		t.Fatalf("a successful last try: %+v, state %s", tr, b.State())
	}
	if tr := b.RecordLastTry(false); tr != nil {
		t.Fatalf("a last try on a closed breaker: %+v", tr)
	}
}
