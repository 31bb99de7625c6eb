package memstore

import (
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
	"github.com/submissionmanager/submission-manager/ports/sessiontest"
	"github.com/submissionmanager/submission-manager/ports/storetest"
)

// memstore runs the same conformance suites as the SQL stores, so the fake
// every engine test stands on cannot drift from them. These tests live in
// package memstore because the harness needs two things no port offers: a
// restart that reopens the same state, and the suite's shared-timestamp hook.

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return harness(New(newStatementClock()))
	})
}

func TestSessionConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) ports.SessionStore {
		return New(newStatementClock())
	})
}

func TestLeaseConformance(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
		return New(newStatementClock())
	})
}

// harness sees s through the ports. Restart hands the stored state to a new
// Store, as a process restart reads its database again: nothing held by the
// old handle (its wake-up channel, its lock) carries over, only the data.
func harness(s *Store) storetest.Harness {
	return storetest.Harness{
		Store:  s,
		Leases: s,
		Restart: func(t *testing.T) storetest.Harness {
			return harness(reopen(s))
		},
		ShareLastModified: func(t *testing.T, intentIDs []string) {
			shareLastModified(t, s, intentIDs)
		},
		StatementTime: statementTick,
	}
}

// reopen returns a new Store on a deep copy of s's intents and leases and on
// the same clock (the database's clock does not restart with the process).
func reopen(s *Store) *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := New(s.clock)
	for id, in := range s.intents {
		c := cloneIntent(in)
		next.intents[id] = &c
	}
	next.leases = maps.Clone(s.leases)
	next.pauses = maps.Clone(s.pauses)
	next.events = maps.Clone(s.events)
	next.console = sessionState{secret: cloneSecret(s.console.secret), sessions: maps.Clone(s.console.sessions)}
	return next
}

// shareLastModified gives the intents one change timestamp in one locked
// step: the store's now, or one tick past the latest row's when that is
// later, as the suite asks.
func shareLastModified(t *testing.T, s *Store, intentIDs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp := s.clock.Now()
	for _, in := range s.intents {
		if !in.LastModifiedAt.Before(stamp) {
			stamp = in.LastModifiedAt.Add(time.Microsecond)
		}
	}
	for _, id := range intentIDs {
		in, ok := s.intents[id]
		if !ok {
			t.Fatalf("shareLastModified: no intent %q", id)
		}
		in.LastModifiedAt = stamp
	}
}

// statementClock plays the database clock for the suites without anyone
// sleeping: every reading moves it forward by statementTick, as if each
// statement took that long. Time therefore passes exactly as fast as the
// suite talks to the store, whatever the machine's load: a ShortLease
// (leasetest) outlives the few statements a test runs under it, and expires
// after the handful of clock reads leasetest.WaitExpired makes while it
// polls. Readings are microsecond-precise, like the SQL stores' times.
type statementClock struct {
	mu  sync.Mutex
	now time.Time
}

// statementTick is a fifth of leasetest.ShortLease: enough statements for a
// test to start an attempt under a short lease, few enough polls to outwait it.
const statementTick = leasetest.ShortLease / 5

func newStatementClock() *statementClock {
	return &statementClock{now: time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)}
}

func (c *statementClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(statementTick)
	return c.now
}

// NewTimer is never called: the store reads its clock and arms no timers.
func (c *statementClock) NewTimer(time.Duration) ports.Timer {
	panic("memstore: the store arms no timers")
}

// NewTimerAt is never called, as NewTimer.
func (c *statementClock) NewTimerAt(time.Time) ports.Timer {
	panic("memstore: the store arms no timers")
}

var _ ports.Clock = (*statementClock)(nil)
