// Package sqlite is the zero-setup store of SubmissionManager: intents,
// attempts and the leadership lease in one embedded SQLite file, driven by
// mattn/go-sqlite3, SQLite's own C library through cgo. It implements ports.Store and
// ports.LeaseStore; cmd opens it with Open, runs Migrate and wires Store and
// Leases.
//
// # Driver
//
// The store ran on the pure Go modernc.org/sqlite (SQLite translated to Go)
// until profiles showed its one writer taking about 40 % of the service's
// CPU, which intake and execution share on a small host. The same benchmarks with SQLite's C library
// (`go test -run '^$' -bench 'CreateIntentParallel$|AttemptParallel|ReservePerIntent'`,
// 2 shared cores): 20.5 against 15.1 µs per create, 41.2 against 28.4 µs per
// attempt (reserve and finish), 15.8 against 11.0 µs per reservation. At
// 8,000 intents/s offered, intake and execution at once, the service kept
// up at 7.7k-8.0k attempts/s instead of 6.9k. Single reads are a little
// slower through cgo (GetIntentParallel 16.3 against 18.9 µs); writes are
// what the one writer connection serializes. The price is a C compiler at
// build time.
//
// # Time
//
// Every time is stored as an INTEGER of Unix nanoseconds in UTC, so core
// times (created_at, next_due_at, attempt start and finish) round-trip
// exactly, to the nanosecond, and come back in UTC. Lease times come from
// SQLite's own clock inside the statement (millisecond resolution), and
// lease expiry and fencing compare against that clock only, never the
// caller's.
//
// last_modified_at is made strictly increasing: the writer stamps each change
// with the larger of its clock (to the millisecond, as SQLite reads it) and
// the newest stamp plus one nanosecond, reading the newest stamp once per
// write transaction, under BEGIN IMMEDIATE, which keeps every other writer
// out, in this process or another. That orders changes by commit, so the
// refresh cursor (last_modified_at, intent_id) can never skip a row committed
// after a page was read, not even one committed in the same millisecond.
//
// # Layout and durability
//
// The file runs in WAL mode with foreign keys on and a busy timeout. Reads go
// through a pool of read-only connections, each multi-statement read in one
// read transaction. Writes go through a single writer connection owned by a
// group-commit goroutine: operations submitted concurrently are gathered into
// one BEGIN IMMEDIATE transaction, and every caller is answered with its own
// result only after the commit. No operation needs a SAVEPOINT (which copies
// every page it touches to a sub-journal): each refuses (a fenced write, an
// intent that moved on, an idempotency conflict) only while it has changed
// nothing, its first writing statement carrying in its WHERE every condition
// the rest of the operation needs, so the batch goes on; an error after an operation's first change fails the whole batch,
// and nothing of it commits. For the same reason the per-intent writes do
// not use RETURNING, which SQLite runs as a trigger under a statement
// journal (the lease's, a few per second, do). One fsync covers a whole
// batch, which is what lets synchronous=FULL keep up with thousands of writes per second: an
// acknowledged write is on disk (TestAcknowledgedWritesSurviveKill).
//
// Benchmarks (bench_test.go: 64 clients, synchronous=FULL, 2 shared cores,
// runs interleaved) went from 3,100-3,300 creates/s (p99 ~100 ms) and
// 1,400-2,000 attempts/s (p99 110-220 ms) with one transaction per write, to
// 10,500-21,000 creates/s (p99 7-21 ms) and 9,100-12,700 attempts/s (p99
// 8-20 ms) with group commit; without savepoints, RETURNING and a MAX
// subquery per write, 23,000-27,500 creates/s (p99 5-7 ms) and 12,600-16,400
// attempts/s (p99 6-9 ms).
//
// Several processes may open the same file (SQLite locks it), but each
// process should open it once: the group-commit writer is per DB.
package sqlite
