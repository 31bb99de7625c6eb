package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/ports"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DB is one open SQLite database: a single writer connection and a pool of
// read-only connections on the same file.
type DB struct {
	cfg     Config
	log     *slog.Logger
	writeDB *sql.DB
	readDB  *sql.DB
	reads   *sqlitedb.Queries
}

// Open opens (creating if missing) the database file and checks that both
// the writer and a reader can use it. It does not migrate: call Migrate.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	writeDB, err := sql.Open("sqlite", cfg.writerDSN())
	if err != nil {
		return nil, storeError("open writer", err)
	}
	// One connection: SQLite has one writer at a time anyway, and keeping it
	// forever keeps its pragmas and prepared statements.
	writeDB.SetMaxOpenConns(1)
	writeDB.SetMaxIdleConns(1)
	writeDB.SetConnMaxLifetime(0)
	writeDB.SetConnMaxIdleTime(0)
	// The writer connects first so WAL mode is on before any reader opens.
	if err := writeDB.PingContext(ctx); err != nil {
		writeDB.Close()
		return nil, storeError("open writer", err)
	}
	readDB, err := sql.Open("sqlite", cfg.readerDSN())
	if err != nil {
		writeDB.Close()
		return nil, storeError("open readers", err)
	}
	readDB.SetMaxOpenConns(cfg.ReadConns)
	readDB.SetMaxIdleConns(cfg.ReadConns)
	readDB.SetConnMaxIdleTime(0)
	readDB.SetConnMaxLifetime(0)
	if err := readDB.PingContext(ctx); err != nil {
		readDB.Close()
		writeDB.Close()
		return nil, storeError("open readers", err)
	}
	db := &DB{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "sqlite", "path", cfg.Path),
		writeDB: writeDB,
		readDB:  readDB,
		reads:   sqlitedb.New(readDB),
	}
	db.log.Debug("sqlite store opened", "synchronous", string(cfg.Synchronous))
	return db, nil
}

// Store returns the intent store on this database.
func (db *DB) Store() ports.Store { return &intentStore{db: db} }

// Leases returns the lease store on this database.
func (db *DB) Leases() ports.LeaseStore { return &leaseStore{db: db} }

// Close closes every connection. Operations still running fail with
// core.ErrStoreUnavailable.
func (db *DB) Close() error {
	return errors.Join(db.readDB.Close(), db.writeDB.Close())
}

// write runs fn in one write transaction and commits it; when fn fails,
// nothing it wrote stays. fn's own verdicts (core errors) are returned as
// they are, everything else through storeError.
func (db *DB) write(ctx context.Context, op string, fn func(ctx context.Context, q *sqlitedb.Queries) error) error {
	tx, err := db.writeDB.BeginTx(ctx, nil)
	if err != nil {
		return storeError(op, err)
	}
	if err := fn(ctx, sqlitedb.New(tx)); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil {
			db.log.Warn("rollback failed", "op", op, "err", rbErr)
		}
		return storeError(op, err)
	}
	if err := tx.Commit(); err != nil {
		return storeError(op, fmt.Errorf("commit: %w", err))
	}
	return nil
}

// read runs fn in one read transaction, so that everything it reads comes
// from the same snapshot (an intent and its attempts agree).
func (db *DB) read(ctx context.Context, op string, fn func(ctx context.Context, q *sqlitedb.Queries) error) error {
	tx, err := db.readDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeError(op, err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to undo
	return storeError(op, fn(ctx, sqlitedb.New(tx)))
}
