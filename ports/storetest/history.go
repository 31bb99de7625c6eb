package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// historyCases are the cases of ports.HistoryStore; Run runs them with the
// rest.
var historyCases = []storeCase{
	{"HistoryBucketsByOwnTimestamps", testHistoryBuckets},
	{"HistoryEndsByTerminalWrite", testHistoryEnds},
	{"HistoryRefusesUnalignedWindows", testHistoryRefusals},
}

func historyStore(t *testing.T, h Harness) ports.HistoryStore {
	t.Helper()
	hs, ok := h.Store.(ports.HistoryStore)
	if !ok {
		t.Fatalf("%T does not implement ports.HistoryStore: every store must", h.Store)
	}
	return hs
}

// minute0 is the start of base's minute, a whole minute since the Unix
// epoch (and an even one, so two-minute buckets start there too).
var minute0 = base.Truncate(time.Minute)

// sec returns minute0 plus a fraction of seconds, to the microsecond.
func sec(s float64) time.Time { return minute0.Add(time.Duration(s * float64(time.Second))) }

// fillHistory stores intents and attempts whose own times fall on both
// sides of bucket edges, and returns the intents that ended.
func fillHistory(t *testing.T, h Harness) []string {
	t.Helper()
	s := h.Store
	f := leader(t, h)
	// Created at the first instant of bucket 0 and at its last microsecond.
	mustCreate(t, s, newIntent("h-a1", smsContract("alerts"), `{}`, sec(0)))
	mustCreate(t, s, newIntent("h-a2", smsContract("alerts"), `{}`, sec(59.999999)))
	mustCreate(t, s, newIntent("h-b1", pushContract("billing"), `{}`, sec(60)))
	mustCreate(t, s, newIntent("h-r1", smsContract("alerts"), `{}`, sec(61)))
	// Outside a three-minute window from minute0: before it, and at its end.
	mustCreate(t, s, newIntent("h-early", smsContract("alerts"), `{}`, sec(-0.000001)))
	mustCreate(t, s, newIntent("h-late", smsContract("alerts"), `{}`, sec(180)))

	// h-a1: an error (bucket 0), an unsent attempt (no gateway error), then
	// accepted.
	complete(t, s, retryAfter(f, "h-a1", 1, sec(10), sec(15)))
	complete(t, s, ports.FinishAttemptParams{Fence: f, IntentID: "h-a1", Number: 2, FinishedAt: sec(20),
		Error: "not submitted: leadership was lost before the gateway call", Sent: false,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: sec(21)}})
	complete(t, s, accept(f, "h-a1", 3, sec(70)))
	// h-b1: an error in bucket 2, a retried rejection (an answer, not an
	// error), then exhausted.
	complete(t, s, retryAfter(f, "h-b1", 1, sec(125), sec(126)))
	rejected := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure}
	complete(t, s, ports.FinishAttemptParams{Fence: f, IntentID: "h-b1", Number: 2, FinishedAt: sec(130),
		Outcome: &rejected, Sent: true, Decision: core.Decision{Status: core.StatusPending, NextDueAt: sec(131)}})
	complete(t, s, exhaust(f, "h-b1", 3, sec(135)))
	// h-r1: rejected for good.
	bad := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	complete(t, s, ports.FinishAttemptParams{Fence: f, IntentID: "h-r1", Number: 1, FinishedAt: sec(62),
		Outcome: &bad, Sent: true, Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: &bad}})
	// h-a2: an attempt in flight is nobody's error yet; an error just
	// outside the window is not counted.
	complete(t, s, retryAfter(f, "h-a2", 1, sec(180), sec(181)))
	start(t, s, f, "h-a2", 2, sec(182))
	// h-early: an error at the window's first instant counts.
	complete(t, s, retryAfter(f, "h-early", 1, sec(0), sec(1)))
	return []string{"h-a1", "h-b1", "h-r1"}
}

func testHistoryBuckets(t *testing.T, h Harness) {
	hs := historyStore(t, h)
	ended := fillHistory(t, h)
	for _, id := range ended {
		if lm := mustGet(t, h.Store, id).LastModifiedAt; !lm.Before(sec(-3600)) && lm.Before(sec(3600)) {
			t.Fatalf("the store's clock (%v) is within an hour of the suite's times; the case cannot tell ends from creations", lm)
		}
	}
	row := func(b int, target string, c ports.HistoryCounts) ports.HistoryRow {
		return ports.HistoryRow{Start: minute0.Add(time.Duration(b) * time.Minute), SubmissionTarget: target, Counts: c}
	}
	want := []ports.HistoryRow{
		row(0, "alerts", ports.HistoryCounts{Submitted: 2, AttemptErrors: 2}),
		row(1, "alerts", ports.HistoryCounts{Submitted: 1}),
		row(1, "billing", ports.HistoryCounts{Submitted: 1}),
		row(2, "billing", ports.HistoryCounts{AttemptErrors: 1}),
	}
	p := ports.HistoryParams{From: minute0, Bucket: time.Minute, Buckets: 3}
	assertHistory(t, hs, p, want)

	// Two-minute buckets sum the same facts.
	p2 := ports.HistoryParams{From: minute0, Bucket: 2 * time.Minute, Buckets: 2}
	want2 := []ports.HistoryRow{
		{Start: minute0, SubmissionTarget: "alerts", Counts: ports.HistoryCounts{Submitted: 3, AttemptErrors: 2}},
		{Start: minute0, SubmissionTarget: "billing", Counts: ports.HistoryCounts{Submitted: 1}},
		{Start: minute0.Add(2 * time.Minute), SubmissionTarget: "alerts", Counts: ports.HistoryCounts{Submitted: 1, AttemptErrors: 1}},
		{Start: minute0.Add(2 * time.Minute), SubmissionTarget: "billing", Counts: ports.HistoryCounts{AttemptErrors: 1}},
	}
	assertHistory(t, hs, p2, want2)

	// History is read from what is stored: a restart loses none of it.
	if h.Restart != nil {
		h = h.Restart(t)
		assertHistory(t, historyStore(t, h), p, want)
	}
}

// testHistoryEnds counts the ended intents in the buckets of their
// terminal writes, the store's own time, read back as LastModifiedAt.
func testHistoryEnds(t *testing.T, h Harness) {
	hs := historyStore(t, h)
	ended := fillHistory(t, h)
	first, last := time.Time{}, time.Time{}
	type end struct {
		target string
		at     time.Time
		status core.IntentStatus
	}
	var ends []end
	for _, id := range ended {
		in := mustGet(t, h.Store, id)
		ends = append(ends, end{in.SubmissionTarget, in.LastModifiedAt, in.Status})
		if first.IsZero() || in.LastModifiedAt.Before(first) {
			first = in.LastModifiedAt
		}
		if in.LastModifiedAt.After(last) {
			last = in.LastModifiedAt
		}
	}
	p := ports.HistoryParams{Bucket: time.Minute}
	p.From = p.BucketOf(first)
	p.Buckets = int(p.BucketOf(last).Sub(p.From)/time.Minute) + 1
	type key struct {
		start  time.Time
		target string
	}
	counts := map[key]ports.HistoryCounts{}
	for _, e := range ends {
		k := key{p.BucketOf(e.at), e.target}
		c := counts[k]
		switch e.status {
		case core.StatusAccepted:
			c.Accepted++
		case core.StatusRejected:
			c.Rejected++
		case core.StatusExhausted:
			c.Exhausted++
		default:
			t.Fatalf("%s ended %s", e.target, e.status)
		}
		counts[k] = c
	}
	var want []ports.HistoryRow
	for k, c := range counts {
		want = append(want, ports.HistoryRow{Start: k.start, SubmissionTarget: k.target, Counts: c})
	}
	slices.SortFunc(want, compareRows)
	assertHistory(t, hs, p, want)
}

func testHistoryRefusals(t *testing.T, h Harness) {
	hs := historyStore(t, h)
	for name, p := range map[string]ports.HistoryParams{
		"From inside a bucket":  {From: minute0.Add(time.Second), Bucket: time.Minute, Buckets: 1},
		"From with a fraction":  {From: minute0.Add(time.Millisecond), Bucket: time.Second, Buckets: 1},
		"a fractional bucket":   {From: minute0, Bucket: 1500 * time.Millisecond, Buckets: 1},
		"no bucket":             {From: minute0, Buckets: 1},
		"no buckets":            {From: minute0, Bucket: time.Minute},
		"too many buckets":      {From: minute0, Bucket: time.Minute, Buckets: ports.MaxHistoryBuckets + 1},
		"a negative bucket":     {From: minute0, Bucket: -time.Minute, Buckets: 1},
		"a quarter not aligned": {From: minute0, Bucket: 15 * time.Minute, Buckets: 1},
	} {
		if _, err := hs.History(context.Background(), p); !errors.Is(err, ports.ErrInvalidHistory) {
			t.Errorf("%s: err = %v, want ErrInvalidHistory", name, err)
		}
	}
	// An empty store has no history, but a valid window is no error.
	got, err := hs.History(context.Background(), ports.HistoryParams{From: minute0, Bucket: time.Minute, Buckets: 60})
	if err != nil || len(got) != 0 {
		t.Fatalf("history of an empty store: %+v %v", got, err)
	}
}

func compareRows(a, b ports.HistoryRow) int {
	if c := a.Start.Compare(b.Start); c != 0 {
		return c
	}
	switch {
	case a.SubmissionTarget < b.SubmissionTarget:
		return -1
	case a.SubmissionTarget > b.SubmissionTarget:
		return 1
	}
	return 0
}

func assertHistory(t *testing.T, hs ports.HistoryStore, p ports.HistoryParams, want []ports.HistoryRow) {
	t.Helper()
	got, err := hs.History(context.Background(), p)
	if err != nil {
		t.Fatalf("History(%+v): %v", p, err)
	}
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = got[i].Start.Equal(want[i].Start) && got[i].Start.Location() == time.UTC &&
			got[i].SubmissionTarget == want[i].SubmissionTarget && got[i].Counts == want[i].Counts
	}
	if !same {
		t.Fatalf("History(from %s, %v x %d):\n got  %+v\n want %+v", p.From.Format(time.RFC3339), p.Bucket, p.Buckets, got, want)
	}
}
