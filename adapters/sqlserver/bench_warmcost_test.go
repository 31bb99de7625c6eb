package sqlserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkWarmUpCost reports what each part of serve's warm-ups costs on
// new connections of a migrated database: its time (ns/op: the timer runs
// only around the part), and the database server's CPU for it
// (server-cpu-ms/op) where the server runs here as PostgreSQL's backends
// (Babelfish, backendCPU). Each iteration opens the
// database again, so every part logs in and runs its statements on new
// backends, as a fresh instance does. On Babelfish a backend's first parse
// of a kind of statement costs far more than its later ones (its T-SQL
// parser learns the grammar's decisions per process), so these parts are
// most of what a fresh leader spends before its first attempt, and the
// query pool's warm-up, one query connection's cost times the pool's size,
// runs beside its first drain (docs/sqlserver.md, "Connections").
// "acquire-cold" is a first acquire of a new lease without warmLeases.
// `go test -run '^$' -bench WarmUpCost -benchtime 3x ./adapters/sqlserver/`.
func BenchmarkWarmUpCost(b *testing.B) {
	dsn := migratedBenchDSN(b)
	ctx := context.Background()
	acquire := func(ctx context.Context, db *DB) error {
		_, ok, err := db.Leases().Acquire(ctx, ports.AcquireLeaseParams{
			LeaseName: "warm-cost-" + rand.Text(), HolderID: "bench", Duration: time.Minute})
		if err == nil && !ok {
			err = fmt.Errorf("the new lease was not acquired")
		}
		return err
	}
	parts := []struct {
		name string
		warm func(context.Context, *DB) error
	}{
		{"due-lane", func(ctx context.Context, db *DB) error { return db.warmDueLane(ctx) }},
		{"reservations-lane", func(ctx context.Context, db *DB) error { return db.warmBatchLane(ctx, laneReservations) }},
		{"results-lane", func(ctx context.Context, db *DB) error { return db.warmBatchLane(ctx, laneResults) }},
		{"start-reads", func(ctx context.Context, db *DB) error { return db.warmStartReads(ctx) }},
		{"leases", func(ctx context.Context, db *DB) error { return db.warmLeases(ctx) }},
		{"acquire-cold", acquire},
		{"WarmExecution", func(ctx context.Context, db *DB) error { return db.WarmExecution(ctx) }},
		{"query-connection", func(ctx context.Context, db *DB) error { return db.WarmQueries(ctx) }},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			var cpu float64
			measured := true
			for b.Loop() {
				b.StopTimer()
				// One query connection, so that "query-connection" is one
				// connection's warm-up; the other parts open what they use.
				db, err := Open(ctx, Config{DSN: dsn, MaxOpenConns: 1, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					b.Fatalf("Open: %v", err)
				}
				withoutStatistics(db)
				cpu0, _, ok := backendCPU(tdsPort(b))
				b.StartTimer()
				if err := p.warm(ctx, db); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				cpu1, _, _ := backendCPU(tdsPort(b))
				measured = measured && ok
				cpu += cpu1 - cpu0
				_ = db.Close()
				b.StartTimer()
			}
			if measured {
				b.ReportMetric(cpu*1000/float64(b.N), "server-cpu-ms/op")
			}
		})
	}
}
