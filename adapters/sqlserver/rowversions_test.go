package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
)

// babelfishReadsRowVersions proves, on Babelfish, why the store suite does
// not run a second time there with READ_COMMITTED_SNAPSHOT on: the option
// cannot be turned on (no ALTER DATABASE), and what it changes on SQL
// Server, a READ COMMITTED read of a row that another transaction has
// changed and not committed reading the row's last committed version
// instead of waiting for the writer's lock, is how Babelfish's READ
// COMMITTED reads anyway, as PostgreSQL's does. So TestStoreConformance
// runs the suite there under those semantics; should either half stop
// holding, this fails and the suite has to run with the option.
func babelfishReadsRowVersions(t *testing.T) {
	ctx := context.Background()
	name, dsn := sqlservertest.Database(t)
	if _, err := adminDB(t).ExecContext(ctx, "ALTER DATABASE "+name+" SET READ_COMMITTED_SNAPSHOT ON WITH ROLLBACK IMMEDIATE"); err == nil {
		t.Fatal("Babelfish turned READ_COMMITTED_SNAPSHOT on: run the store suite with it there (freshDatabase)")
	}
	db := openTestDB(t, dsn)
	if err := db.Migrate(ctx, "up"); err != nil {
		t.Fatalf("migrate up: %v", err)
	}
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	if _, err := db.Store().CreateIntent(ctx, core.NewIntent("row-versions", testContract, json.RawMessage(`{}`), created)); err != nil {
		t.Fatal(err)
	}
	writer, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = writer.Rollback() }()
	if _, err := writer.ExecContext(ctx, `UPDATE submission_intents SET created_at = DATEADD(day, 1, created_at) WHERE intent_id = 'row-versions'`); err != nil {
		t.Fatal(err)
	}
	// Under locking READ COMMITTED the read waits for the writer, which
	// holds its transaction open until the test ends: the bound is the
	// failure, not a measure.
	readCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reader, err := db.queries.BeginTx(readCtx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reader.Rollback() }()
	var read time.Time
	if err := reader.QueryRowContext(readCtx, `SELECT created_at FROM submission_intents WHERE intent_id = 'row-versions'`).Scan(&read); err != nil {
		t.Fatalf("a READ COMMITTED read of a row changed by an open transaction: %v", err)
	}
	if !read.Equal(created) {
		t.Fatalf("the read saw created_at %s, want the committed %s", read, created)
	}
}
