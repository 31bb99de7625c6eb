package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sysclock"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// rebuildIntents is the figure: a new leader must rebuild a
// schedule of one million pending intents in at most 15 s and hold it in at
// most 300 MB of heap.
const rebuildIntents = 1_000_000

// BenchmarkRebuild1M measures a new leader's full schedule rebuild from a
// real SQLite file holding a million pending intents (36-character ids, due
// in an hour so that nothing executes), and the heap the schedule holds.
// Run it with: go test -run '^$' -bench Rebuild1M -benchtime 1x ./e2e/
func BenchmarkRebuild1M(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "rebuild.db")
	db, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "up"); err != nil {
		b.Fatal(err)
	}
	fillPending(b, path, rebuildIntents)

	lease, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "bench", Duration: time.Hour,
	})
	if err != nil || !ok {
		b.Fatalf("acquire: %v %v", ok, err)
	}
	for b.Loop() {
		rebuilt := &rebuildMetrics{want: rebuildIntents, done: make(chan struct{})}
		eng, err := executor.New(executor.Config{
			Store:    db.Store(),
			Gateways: map[core.GatewayType]ports.Gateway{core.GatewaySMS: refuseGateway{b}},
			Clock:    sysclock.New(),
			Metrics:  rebuilt,
		})
		if err != nil {
			b.Fatal(err)
		}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)

		leadCtx, stop := context.WithCancel(ctx)
		start := time.Now()
		leadErr := make(chan error, 1)
		go func() { leadErr <- eng.Lead(leadCtx, lease, func() bool { return true }) }()
		select {
		case <-rebuilt.done:
		case err := <-leadErr:
			b.Fatalf("Lead returned before the rebuild finished: %v", err)
		}
		elapsed := time.Since(start)

		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		stop()
		if err := <-leadErr; err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(elapsed.Seconds(), "rebuild-s")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "schedule-heap-MB")
	}
}

// fillPending inserts n pending intents in one transaction, straight into
// the schema (going through CreateIntent would make the setup, not the
// rebuild, dominate the benchmark's run time).
func fillPending(b *testing.B, path string, n int) {
	b.Helper()
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	now := time.Now().UnixNano()
	contract := `{"submissionTarget":"sms.realtime","gatewayType":"sms","gatewayUrl":"http://127.0.0.1:9","mode":"realtime","policy":"max_attempts","maxAttempts":5,"terminalOutcomes":[]}`
	_, err = raw.Exec(`
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at)
SELECT printf('rebuild-bench-0000-0000-%012d', i), 'sms.realtime', CAST('{"to":"+15550100"}' AS BLOB), ?,
    'sms', CASE WHEN i % 4 = 0 THEN 'batch' ELSE 'realtime' END,
    'pending', ?, ?, 0, ? + i
FROM n`, n, contract, now, now+int64(time.Hour), now)
	if err != nil {
		b.Fatal(err)
	}
	var count int
	if err := raw.QueryRow(`SELECT count(*) FROM submission_intents WHERE status = 'pending'`).Scan(&count); err != nil || count != n {
		b.Fatalf("filled %d pending intents (%v), want %d", count, err, n)
	}
}

// rebuildMetrics signals when the engine first reports the rebuilt schedule.
type rebuildMetrics struct {
	ports.NopMetrics
	want     int
	reported atomic.Bool
	done     chan struct{}
}

func (m *rebuildMetrics) ScheduleSize(n int) {
	if n >= m.want && m.reported.CompareAndSwap(false, true) {
		close(m.done)
	}
}

// refuseGateway fails the benchmark if anything executes.
type refuseGateway struct{ b *testing.B }

func (g refuseGateway) Submit(context.Context, ports.SubmitParams) (core.Outcome, error) {
	g.b.Error("an attempt ran during the rebuild benchmark; every intent is due in an hour")
	return core.Outcome{}, fmt.Errorf("refused")
}
