package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"sync/atomic"
)

// database/sql asks a connection to reset its session each time it takes
// it from the pool again, and go-mssqldb then flags the next request
// RESETCONNECTION, which the server runs as sp_reset_connection. On
// Babelfish the reset costs far more than its name says: every statement
// the session had planned (those of the procedures it calls, and of the
// table functions they call) is analysed and planned again at its next
// execution. Measured on one database (BenchmarkCreateIntentParallel, 64
// goroutines, alternated): 1,218-1,309 intents/s with the reset and
// 1,861-2,056 without; BenchmarkExecutorRounds at one item a batch, 6.1-6.3
// ms of server CPU per attempt with it and 2.7-4.6 without.
//
// The queries' and the executor's pools therefore reset a session only
// when its last use may have left something behind: a request that failed
// or was cut off (an error, a cancelled context, a request that ended
// before its rows did), or a transaction at another isolation level than
// read committed, which SQL Server keeps for the session's later
// statements. Nothing else this adapter sends outlives its request: a
// procedure's SET options end with it on both servers. A parameterised
// batch's end with it on SQL Server but stay with the session on Babelfish,
// so the one batch that sets any (interventionBatch) sets them back last.
// The pools that hold session state on purpose (the lease lock's pin, and
// goose's session lock) keep the reset, and so does the lease pool.

// keepSession wraps c so that its connections skip needless resets.
func keepSession(c driver.Connector) driver.Connector { return keptConnector{c} }

type keptConnector struct{ driver.Connector }

func (c keptConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &keptConn{Conn: conn}, nil
}

// keptConn forwards every optional interface database/sql asks of
// go-mssqldb's connection (without CheckNamedValue, database/sql would turn
// the driver's own parameter types, mssql.NVarCharMax, into plain values).
type keptConn struct {
	driver.Conn
	// dirty is set when a use may have left state behind, and cleared by
	// the reset it then asks for. Rows may be closed from database/sql's
	// cancellation goroutine, hence atomic.
	dirty atomic.Bool
}

// mark records err's outcome: any error leaves the session dirty.
func (c *keptConn) mark(err error) error {
	if err != nil {
		c.dirty.Store(true)
	}
	return err
}

func (c *keptConn) ResetSession(ctx context.Context) error {
	if c.dirty.Swap(false) {
		return c.Conn.(driver.SessionResetter).ResetSession(ctx)
	}
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

func (c *keptConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *keptConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, c.mark(err)
	}
	return &keptStmt{Stmt: st, conn: c}, nil
}

func (c *keptConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *keptConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if level := sql.IsolationLevel(opts.Isolation); level != sql.LevelDefault && level != sql.LevelReadCommitted {
		c.dirty.Store(true)
	}
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, c.mark(err)
	}
	return keptTx{Tx: tx, conn: c}, nil
}

func (c *keptConn) Ping(ctx context.Context) error {
	return c.mark(c.Conn.(driver.Pinger).Ping(ctx))
}

func (c *keptConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

func (c *keptConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

type keptTx struct {
	driver.Tx
	conn *keptConn
}

func (t keptTx) Commit() error   { return t.conn.mark(t.Tx.Commit()) }
func (t keptTx) Rollback() error { return t.conn.mark(t.Tx.Rollback()) }

type keptStmt struct {
	driver.Stmt
	conn *keptConn
}

func (s *keptStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	return res, s.conn.mark(err)
}

func (s *keptStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, s.conn.mark(err)
	}
	return &keptRows{Rows: rows, conn: s.conn}, nil
}

// keptRows marks the session dirty unless its request is read to the end:
// the last result set to io.EOF, with no error on the way or at Close.
// Rows closed early are read to the end first (database/sql's QueryRow
// reads one row), so only a request that did not complete leaves its
// session dirty: go-mssqldb's Close cancels what is still unread.
type keptRows struct {
	driver.Rows
	conn *keptConn
	done bool
}

func (r *keptRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	switch {
	case errors.Is(err, io.EOF):
		r.done = !r.HasNextResultSet()
	case err != nil:
		r.conn.dirty.Store(true)
	}
	return err
}

func (r *keptRows) HasNextResultSet() bool {
	return r.Rows.(driver.RowsNextResultSet).HasNextResultSet()
}

func (r *keptRows) NextResultSet() error {
	err := r.Rows.(driver.RowsNextResultSet).NextResultSet()
	if err != nil && !errors.Is(err, io.EOF) {
		r.conn.dirty.Store(true)
	}
	return err
}

func (r *keptRows) Close() error {
	if !r.done {
		r.drain()
	}
	err := r.Rows.Close()
	if !r.done || err != nil {
		r.conn.dirty.Store(true)
	}
	return err
}

// drain reads the rest of the request, every result set, until it ends
// or fails (a cancelled request fails at once).
func (r *keptRows) drain() {
	for {
		err := r.Next(make([]driver.Value, len(r.Columns())))
		switch {
		case err == nil:
		case !errors.Is(err, io.EOF) || !r.HasNextResultSet() || r.NextResultSet() != nil:
			return
		}
	}
}

func (r *keptRows) ColumnTypeScanType(i int) reflect.Type {
	return r.Rows.(driver.RowsColumnTypeScanType).ColumnTypeScanType(i)
}

func (r *keptRows) ColumnTypeDatabaseTypeName(i int) string {
	return r.Rows.(driver.RowsColumnTypeDatabaseTypeName).ColumnTypeDatabaseTypeName(i)
}

func (r *keptRows) ColumnTypeLength(i int) (int64, bool) {
	return r.Rows.(driver.RowsColumnTypeLength).ColumnTypeLength(i)
}

func (r *keptRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	return r.Rows.(driver.RowsColumnTypePrecisionScale).ColumnTypePrecisionScale(i)
}

func (r *keptRows) ColumnTypeNullable(i int) (bool, bool) {
	return r.Rows.(driver.RowsColumnTypeNullable).ColumnTypeNullable(i)
}
