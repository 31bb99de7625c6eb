package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/ports"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// driverName is the database/sql driver the store opens its connections
// with: mattn/go-sqlite3 (SQLite's C library through cgo), with a connect
// hook for what its DSN cannot say. Statement journals, which a multi-row
// insert needs to undo just itself, stay in memory instead of spilling to a
// temporary file.
const driverName = "sqlite3-submission-manager"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec("PRAGMA temp_store = MEMORY", nil)
			return err
		},
	})
}

// ErrNoDatabase is Open's answer, with Config.MustExist, for a path with no
// file.
var ErrNoDatabase = errors.New("the file does not exist (only serve and migrate up create a database)")

// DB is one open SQLite database: a single writer connection, owned by the
// group-commit goroutine, and a pool of read-only connections on the same
// file.
type DB struct {
	cfg     Config
	log     *slog.Logger
	writeDB *sql.DB
	readDB  *sql.DB
	// reads parses its statements per call; prepared, once the schema
	// exists, holds them prepared (see readQueries).
	reads     *sqlitedb.Queries
	prepared  atomic.Pointer[sqlitedb.Queries]
	preparing sync.Mutex
	writer    *groupCommitter
}

// Open opens (creating if missing, unless cfg.MustExist) the database file
// and checks that both the writer and a reader can use it. It does not
// migrate: call Migrate.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.MustExist {
		if _, err := os.Stat(cfg.Path); err != nil {
			return nil, fmt.Errorf("sqlite: no database at %s: %w", cfg.Path, ErrNoDatabase)
		}
	}
	writeDB, err := sql.Open(driverName, cfg.writerDSN())
	if err != nil {
		return nil, mapError("open writer", err)
	}
	// One connection: SQLite has one writer at a time anyway, and keeping it
	// forever keeps its pragmas and prepared statements.
	writeDB.SetMaxOpenConns(1)
	writeDB.SetMaxIdleConns(1)
	writeDB.SetConnMaxLifetime(0)
	writeDB.SetConnMaxIdleTime(0)
	// The writer connects first, so WAL mode is on before any reader opens,
	// and holding the file's migration lock: its first connect to a new file
	// turns the journal into WAL, which takes an exclusive lock for which
	// SQLite runs no busy handler when another opener holds a shared one, so
	// two processes opening a new file together could fail with "database is
	// locked". Under the lock the later opener finds the file in WAL already.
	err = withFileLock(ctx, cfg.Path, cfg.MigrationLockTimeout, func() error {
		return writeDB.PingContext(ctx)
	})
	if err != nil {
		writeDB.Close()
		return nil, mapError("open writer", err)
	}
	readDB, err := sql.Open(driverName, cfg.readerDSN())
	if err != nil {
		writeDB.Close()
		return nil, mapError("open readers", err)
	}
	readDB.SetMaxOpenConns(cfg.ReadConns)
	readDB.SetMaxIdleConns(cfg.ReadConns)
	readDB.SetConnMaxIdleTime(0)
	readDB.SetConnMaxLifetime(0)
	if err := readDB.PingContext(ctx); err != nil {
		readDB.Close()
		writeDB.Close()
		return nil, mapError("open readers", err)
	}
	db := &DB{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "sqlite", "path", cfg.Path),
		writeDB: writeDB,
		readDB:  readDB,
		reads:   sqlitedb.New(readDB),
	}
	db.writer = newGroupCommitter(writeDB, db.log, cfg.MaxBatch)
	db.log.Debug("sqlite store opened", "synchronous", string(cfg.Synchronous))
	return db, nil
}

// OwnsSchema reports true: the database file is this process's own, no
// other deployment step migrates it, so serve migrates it at every start.
func (db *DB) OwnsSchema() bool { return true }

// WarmExecution and WarmQueries have nothing to do: the file's connections
// open in microseconds and SQLite prepares a statement as cheaply on a
// connection's first use as on its hundredth, so an instance on it takes
// traffic warm from the start.
func (db *DB) WarmExecution(context.Context) error { return nil }

// WarmQueries has nothing to do; see WarmExecution.
func (db *DB) WarmQueries(context.Context) error { return nil }

// Store returns the intent store on this database.
func (db *DB) Store() ports.Store { return &store{db: db} }

// ExecutorStore is Store: the executor shares the file's connections with
// requests. They open in microseconds and nothing warms them, so there is
// no warm-up for the executor's reads to wait behind.
func (db *DB) ExecutorStore() ports.Store { return db.Store() }

// Leases returns the lease store on this database.
func (db *DB) Leases() ports.LeaseStore { return &leaseStore{db: db} }

// Close finishes the write batch in progress, fails the writes still queued
// and every later call with core.ErrStoreUnavailable, stops the writer
// goroutine and closes every connection.
func (db *DB) Close() error {
	return errors.Join(db.writer.close(), db.readDB.Close(), db.writeDB.Close())
}

// write runs fn in a write transaction, shared with the writes of other
// callers submitted at the same time (see groupCommitter), and returns once
// that transaction committed. fn may run several statements but must decide
// its verdicts (core errors) before its first change; they are returned as
// they are, everything else through mapError. Any other failure fails the
// whole batch, so that nothing of fn stays.
func (db *DB) write(ctx context.Context, op string, fn writeFunc) error {
	return db.writer.do(ctx, op, verdictFirst, fn)
}

// writeSingle is write for an fn that writes with one statement and refuses
// only when that statement changed nothing: a constraint SQLite refused it
// for fails just fn.
func (db *DB) writeSingle(ctx context.Context, op string, fn writeFunc) error {
	return db.writer.do(ctx, op, oneStatement, fn)
}

// read runs fn in one read transaction, so that everything it reads comes
// from the same snapshot (an intent and its attempts agree).
func (db *DB) read(ctx context.Context, op string, fn func(ctx context.Context, q *sqlitedb.Queries) error) error {
	return db.readTx(ctx, op, func(ctx context.Context, _ *sql.Tx, q *sqlitedb.Queries) error { return fn(ctx, q) })
}

// readTx is read for an fn that also runs statements sqlc did not write,
// in the same transaction.
func (db *DB) readTx(ctx context.Context, op string, fn func(ctx context.Context, tx *sql.Tx, q *sqlitedb.Queries) error) error {
	// The statements first: preparing them needs a connection of the pool,
	// which this transaction must not hold while it waits for them.
	q := db.readQueries(ctx)
	tx, err := db.readDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return mapError(op, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to undo
	return mapError(op, fn(ctx, tx, q.WithTx(tx)))
}

// readQueries returns the read statements prepared, preparing them once the
// schema exists; until then (or if preparing fails) they are parsed per
// call. It must not be called while holding a read connection: preparing
// takes one. database/sql prepares a statement again on each pooled connection
// only the first time it runs there, in a transaction or not, so a read
// no longer parses its SQL every time.
func (db *DB) readQueries(ctx context.Context) *sqlitedb.Queries {
	if q := db.prepared.Load(); q != nil {
		return q
	}
	db.preparing.Lock()
	defer db.preparing.Unlock()
	if q := db.prepared.Load(); q != nil {
		return q
	}
	q, err := sqlitedb.Prepare(ctx, db.readDB)
	if err != nil {
		return db.reads
	}
	db.prepared.Store(q)
	return q
}
