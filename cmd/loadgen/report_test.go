package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.50, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("p%.0f = %v, want %v", tc.p*100, got, tc.want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile of nothing = %v, want 0", got)
	}
}

func TestMakePayloadIsValidJSONOfRoughlyTheSize(t *testing.T) {
	for _, n := range []int{16, 128, 4096} {
		p := makePayload(n)
		if !json.Valid(p) {
			t.Fatalf("payload of %d bytes is not JSON: %s", n, p)
		}
		if n >= 64 && len(p) != n {
			t.Errorf("payload for %d bytes has %d", n, len(p))
		}
	}
}

func TestExecutionFiguresComeFromServiceTimestamps(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	intents := []client.Intent{
		{Status: client.IntentStatusAccepted, CreatedAt: t0, Attempts: []client.Attempt{
			{StartedAt: *at(10), FinishedAt: at(20)},
		}},
		{Status: client.IntentStatusExhausted, CreatedAt: *at(100), Attempts: []client.Attempt{
			{StartedAt: *at(130), FinishedAt: at(140)},
			{StartedAt: *at(500), FinishedAt: at(1000)},
		}},
	}
	r := newReport(config{Count: 2}, intake{Elapsed: time.Second, Accepted: []string{"a", "b"},
		Latencies: []time.Duration{time.Millisecond, 3 * time.Millisecond}})
	r.addExecution(intents, 0)
	if r.Attempts != 3 {
		t.Errorf("attempts = %d, want 3", r.Attempts)
	}
	if r.ExecutionSeconds != 1.0 {
		t.Errorf("execution seconds = %v, want 1.0 (first creation to last finish)", r.ExecutionSeconds)
	}
	if want := 3 / 0.99; r.AttemptsPerSecond < want-0.01 || r.AttemptsPerSecond > want+0.01 {
		t.Errorf("attempts/s = %v, want %v", r.AttemptsPerSecond, want)
	}
	if r.FirstAttemptLateP50Ms != 10 || r.FirstAttemptLateP99Ms != 30 {
		t.Errorf("lateness p50/p99 = %v/%v ms, want 10/30", r.FirstAttemptLateP50Ms, r.FirstAttemptLateP99Ms)
	}
	if r.Statuses["accepted"] != 1 || r.Statuses["exhausted"] != 1 {
		t.Errorf("statuses = %v", r.Statuses)
	}
	if r.IntakePerSecond != 2 || r.IntakeP99Ms != 3 {
		t.Errorf("intake = %v/s p99 %v ms, want 2/s and 3 ms", r.IntakePerSecond, r.IntakeP99Ms)
	}
	var sb strings.Builder
	r.writeText(&sb)
	if !strings.Contains(sb.String(), "| ended exhausted | 1 |") {
		t.Errorf("text report lacks the status rows:\n%s", sb.String())
	}
}

func TestFlagsNameTheBadFlag(t *testing.T) {
	for args, want := range map[string]string{
		"--count=0":         "--count",
		"--concurrency=0":   "--concurrency",
		"--rate=-1":         "--rate",
		"--payload-bytes=3": "--payload-bytes",
	} {
		_, err := parseFlags([]string{args}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseFlags(%s) = %v, want an error naming %s", args, err, want)
		}
	}
}
