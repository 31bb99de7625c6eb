package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGrowPoolAddsAConnectionOnlyWhileRequestsWait drives growPool over a
// pool of connections that do nothing (no server): the limit stays where it
// starts while every connection is in use and nobody waits, and after a
// moment's wait in a step the pool spent mostly idle; a request that waits gets the connection that one
// step opens (and warms), with one login, and the limit rises no further
// while nobody else waits; requests that keep waiting raise it to its
// ceiling and no further, one warmed connection a step; idle connections
// keep their own bound.
func TestGrowPoolAddsAConnectionOnlyWhileRequestsWait(t *testing.T) {
	const from, to, maxIdle, every = 2, 5, 4, 20 * time.Millisecond
	var logins, warmed atomic.Int64
	pool := sql.OpenDB(idleConnector{logins: &logins})
	t.Cleanup(func() { _ = pool.Close() })
	warm := func(context.Context, *sql.Conn) error {
		warmed.Add(1)
		return nil
	}
	g := growPool(pool, from, to, maxIdle, every, warm, slog.Default())
	t.Cleanup(g.close)
	ctx := t.Context()
	limit := func() int { return pool.Stats().MaxOpenConnections }

	// A moment's wait, then a step mostly idle: no growth.
	var burstHeld []*sql.Conn
	for range from {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		burstHeld = append(burstHeld, c)
	}
	got := make(chan *sql.Conn)
	go func() {
		c, _ := pool.Conn(ctx)
		got <- c
	}()
	waitFor(t, func() bool { return pool.Stats().WaitCount == 1 }, "a request to wait")
	for _, c := range burstHeld {
		_ = c.Close()
	}
	_ = (<-got).Close()
	time.Sleep(5 * every)
	if got := limit(); got != from {
		t.Fatalf("after a moment's wait in a step the pool spent idle, the limit went from %d to %d", from, got)
	}
	// Every connection in use, and nobody waiting: no growth either.
	var held []*sql.Conn
	for range from {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(5 * every)
	if got := limit(); got != from {
		t.Fatalf("without a request waiting the limit went from %d to %d", from, got)
	}

	// One request waits: one step opens and warms a connection for it.
	c, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, c)
	time.Sleep(5 * every)
	if got := limit(); got != from+1 {
		t.Fatalf("one request waited once, and the limit went to %d; want %d", got, from+1)
	}
	if got, warm := logins.Load(), warmed.Load(); got != from+1 || warm != 1 {
		t.Fatalf("the step logged in %d connections and warmed %d; want %d in all and 1 warmed", got, warm, from+1)
	}
	for _, c := range held {
		_ = c.Close()
	}

	// Requests that keep waiting raise it to the ceiling, and no further.
	demand, stop := context.WithCancel(ctx)
	var workers sync.WaitGroup
	for range 2 * to {
		workers.Go(func() {
			for demand.Err() == nil {
				c, err := pool.Conn(demand)
				if err != nil {
					return
				}
				time.Sleep(every / 5)
				_ = c.Close()
			}
		})
	}
	waitFor(t, func() bool { return limit() == to }, "the limit to reach its ceiling")
	time.Sleep(5 * every)
	stop()
	workers.Wait()
	if got := limit(); got != to {
		t.Fatalf("the limit went past its ceiling %d to %d", to, got)
	}
	if got, warm := logins.Load(), warmed.Load(); got > to || warm != to-from {
		t.Fatalf("%d logins and %d connections warmed; want at most %d and %d", got, warm, to, to-from)
	}
	if got := pool.Stats().Idle; got > maxIdle {
		t.Fatalf("%d idle connections kept; want at most %d", got, maxIdle)
	}
}

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// idleConnector opens connections that run nothing, counting the logins.
type idleConnector struct{ logins *atomic.Int64 }

func (c idleConnector) Connect(context.Context) (driver.Conn, error) {
	c.logins.Add(1)
	return idleConn{}, nil
}

func (idleConnector) Driver() driver.Driver { return idleDriver{} }

type idleDriver struct{}

func (idleDriver) Open(string) (driver.Conn, error) { return idleConn{}, nil }

type idleConn struct{}

var errIdleConn = errors.New("idle connection: runs nothing")

func (idleConn) Prepare(string) (driver.Stmt, error) { return nil, errIdleConn }
func (idleConn) Close() error                        { return nil }
func (idleConn) Begin() (driver.Tx, error)           { return nil, errIdleConn }
