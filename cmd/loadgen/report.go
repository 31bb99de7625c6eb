package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// report is the outcome of one run, printable as text or JSON.
type report struct {
	URL         string `json:"url"`
	Target      string `json:"target"`
	Count       int    `json:"count"`
	Concurrency int    `json:"concurrency"`
	Batch       int    `json:"batch"`

	IntakeSeconds   float64 `json:"intakeSeconds"`
	IntakePerSecond float64 `json:"intakePerSecond"`
	IntakeP50Ms     float64 `json:"intakeP50Ms"`
	IntakeP99Ms     float64 `json:"intakeP99Ms"`
	IntakeMaxMs     float64 `json:"intakeMaxMs"`
	IntakeErrors    int     `json:"intakeErrors"`
	FirstError      string  `json:"firstError,omitempty"`

	// Execution figures come from the service's own timestamps (createdAt,
	// attempt start and finish), so polling does not distort them.
	Attempts              int            `json:"attempts"`
	ExecutionSeconds      float64        `json:"executionSeconds"`
	AttemptsPerSecond     float64        `json:"attemptsPerSecond"`
	IntentsPerSecond      float64        `json:"intentsPerSecond"`
	FirstAttemptLateP50Ms float64        `json:"firstAttemptLatenessP50Ms"`
	FirstAttemptLateP99Ms float64        `json:"firstAttemptLatenessP99Ms"`
	Statuses              map[string]int `json:"statuses"`
	Unfinished            int            `json:"unfinished"`
}

func newReport(cfg config, in intake) *report {
	r := &report{
		URL: cfg.URL, Target: cfg.Target, Count: cfg.Count, Concurrency: cfg.Concurrency, Batch: cfg.Batch,
		IntakeSeconds: in.Elapsed.Seconds(), IntakeErrors: in.Errors, FirstError: in.FirstError,
	}
	if in.Elapsed > 0 {
		r.IntakePerSecond = float64(len(in.Accepted)) / in.Elapsed.Seconds()
	}
	lat := slices.Clone(in.Latencies)
	slices.Sort(lat)
	r.IntakeP50Ms = ms(percentile(lat, 0.50))
	r.IntakeP99Ms = ms(percentile(lat, 0.99))
	if len(lat) > 0 {
		r.IntakeMaxMs = ms(lat[len(lat)-1])
	}
	return r
}

// addExecution derives the execution figures from the intents as last read.
func (r *report) addExecution(intents []client.Intent, unfinished int) {
	r.Unfinished = unfinished
	r.Statuses = map[string]int{}
	var (
		firstCreated, firstStart, lastFinish time.Time
		lateness                             []time.Duration
		terminal                             int
	)
	for _, in := range intents {
		r.Statuses[string(in.Status)]++
		if in.Status != client.IntentStatusPending {
			terminal++
		}
		if firstCreated.IsZero() || in.CreatedAt.Before(firstCreated) {
			firstCreated = in.CreatedAt
		}
		for i, a := range in.Attempts {
			r.Attempts++
			if i == 0 {
				lateness = append(lateness, a.StartedAt.Sub(in.CreatedAt))
			}
			if firstStart.IsZero() || a.StartedAt.Before(firstStart) {
				firstStart = a.StartedAt
			}
			if a.FinishedAt != nil && a.FinishedAt.After(lastFinish) {
				lastFinish = *a.FinishedAt
			}
		}
	}
	if !lastFinish.IsZero() {
		r.ExecutionSeconds = lastFinish.Sub(firstCreated).Seconds()
		if span := lastFinish.Sub(firstStart).Seconds(); span > 0 {
			r.AttemptsPerSecond = float64(r.Attempts) / span
		}
		if r.ExecutionSeconds > 0 {
			r.IntentsPerSecond = float64(terminal) / r.ExecutionSeconds
		}
	}
	slices.Sort(lateness)
	r.FirstAttemptLateP50Ms = ms(percentile(lateness, 0.50))
	r.FirstAttemptLateP99Ms = ms(percentile(lateness, 0.99))
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *report) writeText(w io.Writer) {
	fmt.Fprintf(w, "target %s at %s, %d intents, %d concurrent clients, %d intents per request\n\n", r.Target, r.URL, r.Count, r.Concurrency, max(r.Batch, 1))
	fmt.Fprintf(w, "| figure | value |\n| --- | --- |\n")
	fmt.Fprintf(w, "| intake throughput | %.0f intents/s (%.2f s) |\n", r.IntakePerSecond, r.IntakeSeconds)
	fmt.Fprintf(w, "| intake latency p50 / p99 / max | %.2f / %.2f / %.2f ms |\n", r.IntakeP50Ms, r.IntakeP99Ms, r.IntakeMaxMs)
	fmt.Fprintf(w, "| intake errors | %d |\n", r.IntakeErrors)
	if r.Statuses != nil {
		fmt.Fprintf(w, "| execution throughput | %.0f attempts/s, %.0f intents/s |\n", r.AttemptsPerSecond, r.IntentsPerSecond)
		fmt.Fprintf(w, "| first-attempt lateness p50 / p99 | %.2f / %.2f ms |\n", r.FirstAttemptLateP50Ms, r.FirstAttemptLateP99Ms)
		keys := make([]string, 0, len(r.Statuses))
		for k := range r.Statuses {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "| ended %s | %d |\n", k, r.Statuses[k])
		}
		fmt.Fprintf(w, "| still pending at the end | %d |\n", r.Unfinished)
	}
	if r.FirstError != "" {
		fmt.Fprintf(w, "\nfirst intake error: %s\n", r.FirstError)
	}
}
