// Package history reads the console's history windows from the store
// (ports.HistoryStore) and draws nothing: it cuts a window before now into
// buckets, keeps the buckets that can no longer change so that a window is
// read again only where it can have changed, and groups the counts by
// target, by gateway and in total.
package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// DefaultSettle is how long after its end a bucket may still gain counts:
// an intent's created_at and an attempt's finished_at are stamped by an
// instance before its write commits, and instances' clocks differ from
// each other and from the database's by a little. Two minutes covers
// both by far; a bucket older than that is read once and kept.
const DefaultSettle = 2 * time.Minute

// Config wires a Reader.
type Config struct {
	// Store is read for the counts. Required.
	Store ports.HistoryStore
	// Clock tells now. Required.
	Clock ports.Clock
	// Targets returns the registry's contracts: the routing of targets to
	// gateways that the gateway series follow. Required.
	Targets func() []core.Contract
	// Settle is how long after its end a bucket is read again; zero means
	// DefaultSettle.
	Settle time.Duration
}

// Reader is the application's ports.HistoryReader.
type Reader struct {
	cfg Config

	mu      sync.Mutex
	windows map[ports.HistoryWindow]*settled
}

// settled holds a window's buckets that can no longer change, by start
// (Unix seconds); its lock also makes concurrent reads of one window wait
// for each other instead of reading the same rows twice.
type settled struct {
	mu      sync.Mutex
	buckets map[int64][]ports.HistoryRow
}

var _ ports.HistoryReader = (*Reader)(nil)

// New validates cfg and returns a Reader.
func New(cfg Config) (*Reader, error) {
	var errs []error
	if cfg.Store == nil || cfg.Clock == nil || cfg.Targets == nil {
		errs = append(errs, errors.New("history: Config.Store, Clock and Targets are required"))
	}
	if cfg.Settle < 0 {
		errs = append(errs, errors.New("history: Config.Settle must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.Settle = cmp.Or(cfg.Settle, DefaultSettle)
	return &Reader{cfg: cfg, windows: make(map[ports.HistoryWindow]*settled)}, nil
}

// History returns the window ending with the bucket that holds now. It
// reads the store only from the first bucket it does not hold settled.
func (r *Reader) History(ctx context.Context, w ports.HistoryWindow) (ports.HistoryView, error) {
	n := int(w.Span / max(w.Bucket, 1))
	if w.Bucket < time.Second || w.Bucket%time.Second != 0 || w.Span%w.Bucket != 0 || n < 1 || n > ports.MaxHistoryBuckets {
		return ports.HistoryView{}, fmt.Errorf("history: window %v by %v: want whole-second buckets that divide the span, at most %d of them",
			w.Span, w.Bucket, ports.MaxHistoryBuckets)
	}
	now := r.cfg.Clock.Now()
	p := ports.HistoryParams{Bucket: w.Bucket, Buckets: n}
	p.From = p.BucketOf(now).Add(-time.Duration(n-1) * w.Bucket)
	s := r.window(w)
	s.mu.Lock()
	defer s.mu.Unlock()
	for start := range s.buckets {
		if start < p.From.Unix() {
			delete(s.buckets, start)
		}
	}
	first := 0
	for first < n {
		if _, ok := s.buckets[p.Start(int64(first)).Unix()]; !ok {
			break
		}
		first++
	}
	byBucket := make(map[int64][]ports.HistoryRow)
	if first < n {
		read := ports.HistoryParams{From: p.Start(int64(first)), Bucket: w.Bucket, Buckets: n - first}
		rows, err := r.cfg.Store.History(ctx, read)
		if err != nil {
			return ports.HistoryView{}, err
		}
		for _, row := range rows {
			byBucket[row.Start.Unix()] = append(byBucket[row.Start.Unix()], row)
		}
		settledBy := now.Add(-r.cfg.Settle)
		for i := first; i < n; i++ {
			start := p.Start(int64(i))
			if start.Add(w.Bucket).After(settledBy) {
				break
			}
			s.buckets[start.Unix()] = byBucket[start.Unix()]
		}
	}
	var rows []ports.HistoryRow
	for i := range n {
		start := p.Start(int64(i)).Unix()
		if cached, ok := s.buckets[start]; ok && i < first {
			rows = append(rows, cached...)
		} else {
			rows = append(rows, byBucket[start]...)
		}
	}
	return view(w, p, now, rows, r.cfg.Targets()), nil
}

// window returns the settled buckets of w, made on first use.
func (r *Reader) window(w ports.HistoryWindow) *settled {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.windows[w]
	if s == nil {
		s = &settled{buckets: make(map[int64][]ports.HistoryRow)}
		r.windows[w] = s
	}
	return s
}

// view groups rows into series: one per target (every target of the
// registry, and those that left it with counts in the window), one per
// gateway URL the registry routes to, and the total.
func view(w ports.HistoryWindow, p ports.HistoryParams, now time.Time, rows []ports.HistoryRow, contracts []core.Contract) ports.HistoryView {
	v := ports.HistoryView{Window: w, Now: now, Starts: make([]time.Time, p.Buckets)}
	for i := range v.Starts {
		v.Starts[i] = p.Start(int64(i))
	}
	v.Total = ports.HistorySeries{Counts: make([]ports.HistoryCounts, p.Buckets)}
	targets := map[string]*ports.HistorySeries{}
	gateways := map[string]*ports.HistorySeries{}
	series := func(m map[string]*ports.HistorySeries, name string) *ports.HistorySeries {
		if m[name] == nil {
			m[name] = &ports.HistorySeries{Name: name, Counts: make([]ports.HistoryCounts, p.Buckets)}
		}
		return m[name]
	}
	route := make(map[string]string, len(contracts))
	for _, c := range contracts {
		route[c.SubmissionTarget] = c.GatewayURL
		series(targets, c.SubmissionTarget)
		series(gateways, c.GatewayURL)
	}
	for _, row := range rows {
		i := int(row.Start.Sub(p.From) / p.Bucket)
		if i < 0 || i >= p.Buckets {
			continue
		}
		gateway, ok := route[row.SubmissionTarget]
		if !ok {
			gateway = ports.UnroutedGateway
		}
		for _, s := range []*ports.HistorySeries{&v.Total, series(targets, row.SubmissionTarget), series(gateways, gateway)} {
			s.Counts[i] = s.Counts[i].Add(row.Counts)
		}
	}
	v.Targets, v.Gateways = sorted(targets), sorted(gateways)
	return v
}

func sorted(m map[string]*ports.HistorySeries) []ports.HistorySeries {
	out := make([]ports.HistorySeries, 0, len(m))
	for _, s := range m {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b ports.HistorySeries) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
