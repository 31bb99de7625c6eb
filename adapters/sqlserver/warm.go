package sqlserver

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// WarmQueries readies the query pool before the instance takes traffic: it
// opens the pool's idle connections (MaxIdleConns) at once and runs the
// intake's procedure on each, in a transaction it rolls back. A fresh
// instance otherwise paid for it under its first load: on Babelfish a
// connection's first call of a procedure compiles it there (about 0.7 s
// of the server's CPU for the intake's; the login itself is cheap), so a
// cold instance offered 500 intents/s fell seconds behind in its first
// seconds and took the rest of a minute to catch up (first-attempt
// lateness p99 14-16 s; 0.1-1.9 s with the warm-ups, docs/benchmarks.md's
// mixed phase). serve calls it before it serves requests, bounded by its
// context; a warm-up that fails costs only the warmth.
func (db *DB) WarmQueries(ctx context.Context) error {
	var together sync.WaitGroup
	together.Add(db.cfg.MaxIdleConns)
	warmups := make([]func() error, 0, db.cfg.MaxIdleConns)
	for range db.cfg.MaxIdleConns {
		warmups = append(warmups, func() error { return db.warmIntakeConn(ctx, &together) })
	}
	return concurrently(warmups...)
}

// WarmExecution warms the executor's pool as a follower does (exec_pool.go)
// and, beside it, the lease's connections (warmLeases), and counts them as
// a follower's warm-ups, so the next are a period away. serve calls it
// before the elector starts, and does not wait for the query pool's
// warm-up to start it: a new leader with a backlog drains it while the
// query pool's warm-up (about half a second of Babelfish's CPU for each
// connection) goes on, where it waited for it before.
func (db *DB) WarmExecution(ctx context.Context) error {
	db.warmth.due(db.warmEvery())
	db.rehearsed.due(db.warmEvery())
	return concurrently(
		func() error { return db.warmExecutor(ctx) },
		func() error { return db.warmLeases(ctx) },
	)
}

// warmIntakeConn creates an intent of its own on one connection of the
// query pool, in a transaction it rolls back, so the connection has
// compiled the intake's procedures (submission_create_intent and the
// submission_get_intent it calls) and nothing is stored. The intent's key
// is random, so no other session waits for its row's lock. It keeps its
// connection until every warm-up in together is done, so that each warms
// a connection of its own rather than one another gave back.
func (db *DB) warmIntakeConn(ctx context.Context, together *sync.WaitGroup) error {
	tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		together.Done()
		return mapError(err)
	}
	defer func() {
		together.Done()
		together.Wait()
		_ = tx.Rollback()
	}()
	p, err := warmIntentParams(time.Now())
	if err != nil {
		return err
	}
	if _, _, found, err := createIntentOn(ctx, tx, p); err != nil {
		return err
	} else if !found {
		return fmt.Errorf("sqlserver: the warm-up's intent %q was not read back", p.IntentID)
	}
	return nil
}

// warmIntentParams is the warm-up's intent: valid for every constraint of
// submission_intents, never committed.
func warmIntentParams(now time.Time) (sqlserverdb.InsertIntentParams, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return sqlserverdb.InsertIntentParams{}, err
	}
	return insertIntentParams(core.Intent{
		IntentID:         "submission-manager/warm-up/" + hex.EncodeToString(b),
		SubmissionTarget: "warm-up",
		Payload:          []byte(`{}`),
		Contract:         core.Contract{GatewayType: core.GatewaySMS, Mode: core.ModeRealtime},
		Status:           core.StatusPending,
		CreatedAt:        now,
		NextDueAt:        now,
	})
}
