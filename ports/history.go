package ports

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MaxHistoryBuckets bounds one history read: a day of one-minute buckets.
const MaxHistoryBuckets = 1440

// ErrInvalidHistory means a store refused a history read whose window
// breaks HistoryParams.Validate's rules, before it read anything.
var ErrInvalidHistory = errors.New("invalid history window")

// HistoryParams is a window of equal buckets: Buckets of width Bucket
// from From, each holding [start, start+Bucket).
type HistoryParams struct {
	// From is the start of the first bucket: a whole multiple of Bucket
	// since the Unix epoch, so that every reader cuts the same buckets and
	// a bucket once read is the same bucket next time.
	From time.Time
	// Bucket is a whole number of seconds, at least one.
	Bucket time.Duration
	// Buckets is how many, from 1 to MaxHistoryBuckets.
	Buckets int
}

// To is the end of the window (exclusive).
func (p HistoryParams) To() time.Time { return p.From.Add(time.Duration(p.Buckets) * p.Bucket) }

// Validate is the rule every store applies to a history read before it
// reads: whole-second buckets, an aligned start, a bounded count. Stores
// compute bucket numbers in whole seconds from From (SQL Server's
// DATEDIFF counts second boundaries), which these rules make exact.
func (p HistoryParams) Validate() error {
	var problem error
	switch {
	case p.Bucket < time.Second || p.Bucket%time.Second != 0:
		problem = fmt.Errorf("Bucket %v is not a whole number of seconds", p.Bucket)
	case p.Buckets < 1 || p.Buckets > MaxHistoryBuckets:
		problem = fmt.Errorf("Buckets %d is not between 1 and %d", p.Buckets, MaxHistoryBuckets)
	case p.From.Nanosecond() != 0 || p.From.Unix()%int64(p.Bucket/time.Second) != 0:
		problem = fmt.Errorf("From %s is not a multiple of %v since the Unix epoch", p.From.UTC().Format(time.RFC3339Nano), p.Bucket)
	default:
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidHistory, problem)
}

// BucketOf returns the start of the bucket that holds t, which may lie
// outside the window.
func (p HistoryParams) BucketOf(t time.Time) time.Time {
	sec := int64(p.Bucket / time.Second)
	u := t.Unix()
	return time.Unix(u-((u%sec)+sec)%sec, 0).UTC()
}

// HistoryCounts is what happened in one bucket.
type HistoryCounts struct {
	// Submitted counts intents created in the bucket (their CreatedAt).
	Submitted int64
	// Accepted, Rejected and Exhausted count intents that ended in the
	// bucket with that status. An intent ends with its terminal write,
	// which is its last (terminal intents never change), so its end is its
	// LastModifiedAt: the store's own time of that write.
	Accepted, Rejected, Exhausted int64
	// AttemptErrors counts attempts closed in the bucket (their FinishedAt)
	// with an error instead of a gateway answer (a transport error, a
	// timeout, an invalid answer, a lost answer) that reached for the
	// gateway: an attempt closed as never sent is not a gateway's error.
	AttemptErrors int64
}

// Add returns the sum of c and o.
func (c HistoryCounts) Add(o HistoryCounts) HistoryCounts {
	return HistoryCounts{
		Submitted: c.Submitted + o.Submitted, Accepted: c.Accepted + o.Accepted,
		Rejected: c.Rejected + o.Rejected, Exhausted: c.Exhausted + o.Exhausted,
		AttemptErrors: c.AttemptErrors + o.AttemptErrors,
	}
}

// HistoryRow is one target's counts in one bucket.
type HistoryRow struct {
	// Start is the bucket's start, in UTC.
	Start            time.Time
	SubmissionTarget string
	Counts           HistoryCounts
}

// HistoryStore reads what happened over a past window from the intents'
// and attempts' own timestamps, so every instance reads the same history
// and a restart loses none of it. Every Store is one.
type HistoryStore interface {
	// History returns one row per bucket and target with any count,
	// ordered by bucket start and then target; buckets and targets with
	// nothing are absent. A window p.Validate refuses is refused with
	// ErrInvalidHistory before anything is read.
	History(ctx context.Context, p HistoryParams) ([]HistoryRow, error)
}

// HistoryWindow names a span of time before now and how finely it is cut.
type HistoryWindow struct {
	Span   time.Duration
	Bucket time.Duration
}

// The console's two windows: the last hour by the minute, the last day by
// the quarter hour.
var (
	LastHour = HistoryWindow{Span: time.Hour, Bucket: time.Minute}
	LastDay  = HistoryWindow{Span: 24 * time.Hour, Bucket: 15 * time.Minute}
)

// HistorySeries is one line of a chart: a target's, a gateway's or the
// total counts, one per bucket of the view.
type HistorySeries struct {
	// Name is the target or the gateway URL; empty for the total.
	Name   string
	Counts []HistoryCounts
}

// HistoryView is a window's history as the console draws it.
type HistoryView struct {
	Window HistoryWindow
	// Starts are the buckets' starts, oldest first; the last bucket holds
	// now and is still filling.
	Starts []time.Time
	// Now is the reader's time the window was cut at.
	Now time.Time
	// Total sums every target.
	Total HistorySeries
	// Targets are one series per target with any count in the window,
	// ordered by target.
	Targets []HistorySeries
	// Gateways are one series per gateway URL, summing the targets the
	// registry routes to it now, ordered by URL; targets that left the
	// registry are summed under UnroutedGateway.
	Gateways []HistorySeries
}

// UnroutedGateway names the gateway series of targets the registry no
// longer holds.
const UnroutedGateway = "(target not in the registry)"

// HistoryReader is what the application offers about history: a window
// before now, bucketed, as series.
type HistoryReader interface {
	History(ctx context.Context, w HistoryWindow) (HistoryView, error)
}

// HistoryTally gathers counts by bucket and target for a store that reads
// them in parts (submissions, ends, errors), and hands them back in the
// order HistoryStore.History promises. The zero value is ready to use.
type HistoryTally struct {
	rows  []HistoryRow
	index map[historyKey]int
}

type historyKey struct {
	start  int64
	target string
}

// Counts returns the counts of the bucket starting at start (whole
// seconds) for target, to add to.
func (t *HistoryTally) Counts(start time.Time, target string) *HistoryCounts {
	if t.index == nil {
		t.index = make(map[historyKey]int)
	}
	k := historyKey{start.Unix(), target}
	i, ok := t.index[k]
	if !ok {
		i = len(t.rows)
		t.index[k] = i
		t.rows = append(t.rows, HistoryRow{Start: time.Unix(k.start, 0).UTC(), SubmissionTarget: target})
	}
	return &t.rows[i].Counts
}

// Rows returns the counts by bucket start, then target.
func (t *HistoryTally) Rows() []HistoryRow {
	out := slices.Clone(t.rows)
	slices.SortFunc(out, func(a, b HistoryRow) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.SubmissionTarget, b.SubmissionTarget)
	})
	if out == nil {
		out = []HistoryRow{}
	}
	return out
}

// Start returns the start of the bucket numbered n from p.From.
func (p HistoryParams) Start(n int64) time.Time {
	return p.From.Add(time.Duration(n) * p.Bucket).UTC()
}
