package sqlserver

import (
	"context"
	"database/sql/driver"
	"sync"
)

// The request counter: a driver.Connector wrapper (Config.wrapConnector)
// that counts, per pool, what crosses the wire. go-mssqldb sends every
// Exec or Query of a statement as one request (a SQL batch, or an RPC of
// sp_executesql when it has parameters) and reads its whole answer, and it
// sends BEGIN, COMMIT and ROLLBACK of a database/sql transaction as one
// transaction-manager request each; a ping is a "select 1;" batch. Each of
// them is one round trip. Preparing a statement sends nothing (the driver
// only rewrites the text), and neither does a session reset (a flag on the
// next request), so neither counts. A login is the connection's handshake:
// several round trips, counted apart, since a warm pool never pays it.

// requestKind is what one round trip carried.
type requestKind int

const (
	kindQuery requestKind = iota // a SQL batch or RPC: the adapter's statements
	kindBegin
	kindCommit
	kindRollback
	kindPing
	kindCount
)

// poolCounts is what one pool sent.
type poolCounts struct {
	Requests [kindCount]int
	// Queries holds the text of every query request, in order, for the
	// statement count (statementsIn).
	Queries []string
	// Logins and Closes count connections opened and closed.
	Logins, Closes int
}

// RoundTrips is every request that took a round trip.
func (c poolCounts) RoundTrips() int {
	n := 0
	for _, r := range c.Requests {
		n += r
	}
	return n
}

// requestCounter counts the requests of every pool of one DB.
type requestCounter struct {
	mu    sync.Mutex
	pools map[string]*poolCounts
}

func newRequestCounter() *requestCounter {
	return &requestCounter{pools: map[string]*poolCounts{}}
}

// wrap is a Config.wrapConnector.
func (rc *requestCounter) wrap(pool string, c driver.Connector) driver.Connector {
	return &countingConnector{Connector: c, pool: pool, rc: rc}
}

func (rc *requestCounter) add(pool string, f func(*poolCounts)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := rc.pools[pool]
	if p == nil {
		p = &poolCounts{}
		rc.pools[pool] = p
	}
	f(p)
}

// snapshot returns a copy of pool's counts.
func (rc *requestCounter) snapshot(pool string) poolCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := rc.pools[pool]
	if p == nil {
		return poolCounts{}
	}
	out := *p
	out.Queries = append([]string(nil), p.Queries...)
	return out
}

// since returns what pool sent after the snapshot before.
func (rc *requestCounter) since(pool string, before poolCounts) poolCounts {
	now := rc.snapshot(pool)
	for k := range now.Requests {
		now.Requests[k] -= before.Requests[k]
	}
	now.Queries = now.Queries[len(before.Queries):]
	now.Logins -= before.Logins
	now.Closes -= before.Closes
	return now
}

type countingConnector struct {
	driver.Connector
	pool string
	rc   *requestCounter
}

func (c *countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c.rc.add(c.pool, func(p *poolCounts) { p.Logins++ })
	return &countingConn{Conn: conn, c: c}, nil
}

// countingConn forwards every optional interface database/sql asks of
// go-mssqldb's connection: without CheckNamedValue, database/sql would
// convert the driver's own parameter types (mssql.NVarCharMax) to plain
// values.
type countingConn struct {
	driver.Conn
	c *countingConnector
}

func (cc *countingConn) count(k requestKind, query string) {
	cc.c.rc.add(cc.c.pool, func(p *poolCounts) {
		p.Requests[k]++
		if k == kindQuery {
			p.Queries = append(p.Queries, query)
		}
	})
}

func (cc *countingConn) Prepare(query string) (driver.Stmt, error) {
	return cc.PrepareContext(context.Background(), query)
}

func (cc *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := cc.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &countingStmt{Stmt: st, conn: cc, query: query}, nil
}

func (cc *countingConn) Begin() (driver.Tx, error) {
	return cc.BeginTx(context.Background(), driver.TxOptions{})
}

func (cc *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	cc.count(kindBegin, "")
	tx, err := cc.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &countingTx{Tx: tx, conn: cc}, nil
}

func (cc *countingConn) Ping(ctx context.Context) error {
	cc.count(kindPing, "")
	return cc.Conn.(driver.Pinger).Ping(ctx)
}

func (cc *countingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return cc.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

func (cc *countingConn) ResetSession(ctx context.Context) error {
	return cc.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (cc *countingConn) IsValid() bool { return cc.Conn.(driver.Validator).IsValid() }

func (cc *countingConn) Close() error {
	cc.c.rc.add(cc.c.pool, func(p *poolCounts) { p.Closes++ })
	return cc.Conn.Close()
}

type countingTx struct {
	driver.Tx
	conn *countingConn
}

func (t *countingTx) Commit() error {
	t.conn.count(kindCommit, "")
	return t.Tx.Commit()
}

func (t *countingTx) Rollback() error {
	t.conn.count(kindRollback, "")
	return t.Tx.Rollback()
}

type countingStmt struct {
	driver.Stmt
	conn  *countingConn
	query string
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	s.conn.count(kindQuery, s.query)
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	s.conn.count(kindQuery, s.query)
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

var (
	_ driver.Connector          = (*countingConnector)(nil)
	_ driver.ConnPrepareContext = (*countingConn)(nil)
	_ driver.ConnBeginTx        = (*countingConn)(nil)
	_ driver.Pinger             = (*countingConn)(nil)
	_ driver.NamedValueChecker  = (*countingConn)(nil)
	_ driver.SessionResetter    = (*countingConn)(nil)
	_ driver.Validator          = (*countingConn)(nil)
	_ driver.StmtExecContext    = (*countingStmt)(nil)
	_ driver.StmtQueryContext   = (*countingStmt)(nil)
)
