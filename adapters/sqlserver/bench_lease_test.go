package sqlserver

import (
	"context"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkLeaseTakeover times a follower's takeover of an expired lease,
// as a failover after a crash pays it: each iteration has one instance take
// the lease and release it (expired at once, untimed), then another
// instance, whose lease connection has rehearsed the takeover as a
// follower's does while it waits for the expiry, acquire it (timed). The
// instances alternate, on databases opened as serve opens them. Run it on
// a quiet server and on a busy one, where each round trip waits for the
// server's CPU:
// `go test -run '^$' -bench LeaseTakeover -benchtime 40x ./adapters/sqlserver/`.
func BenchmarkLeaseTakeover(b *testing.B) {
	_, dsn := sqlservertest.Database(b)
	ctx := context.Background()
	open := func() *DB {
		db := openBenchDB(b, dsn)
		b.Cleanup(func() { _ = db.Close() })
		return db
	}
	first := open()
	if err := first.Migrate(ctx, "up"); err != nil {
		b.Fatalf("migrate up: %v", err)
	}
	instances := []ports.LeaseStore{first.Leases(), open().Leases()}
	holders := []string{"sm-bench-a", "sm-bench-b"}
	acquire := func(i int) core.Lease {
		lease, acquired, err := instances[i].Acquire(ctx, ports.AcquireLeaseParams{
			LeaseName: core.DefaultLeaseName, HolderID: holders[i], Duration: time.Minute})
		if err != nil || !acquired {
			b.Fatalf("%s: acquired %v, err %v", holders[i], acquired, err)
		}
		return lease
	}
	held := acquire(0)
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		if err := instances[n%2].Release(ctx, held.Fence()); err != nil {
			b.Fatal(err)
		}
		next := (n + 1) % 2
		if err := instances[next].(ports.TakeoverPreparer).PrepareTakeover(ctx, core.DefaultLeaseName); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		held = acquire(next)
	}
}
