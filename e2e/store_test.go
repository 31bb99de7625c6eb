package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// The core black-box tests run the real service once per store: the
// embedded SQLite default, and SQL Server (the production store) on the
// server sqlservertest finds, a Babelfish server in CI. Without one the
// SQL Server runs are skipped with the reason, and fail under CI.

func TestMain(m *testing.M) {
	code := m.Run()
	if err := sqlservertest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// store is a database the service can run on in a test.
type store struct {
	name string
	// database returns a tune for startStandard or startPair that points the
	// service at a new database of this store; every application of the
	// tune makes another database, as every SQLite configuration names a
	// file of its own.
	database func(t *testing.T) func(*command.ServeConfig)
}

// stores are the stores the core tests run on.
var stores = []store{
	{name: "sqlite", database: func(*testing.T) func(*command.ServeConfig) {
		return func(*command.ServeConfig) {} // testConfig's file in the test's directory
	}},
	{name: "sqlserver", database: sqlServerDatabase},
}

// sqlServerDatabase points the service at an empty database of its own on
// the test server, dropped when the test ends, and has the service migrate
// it at start, as serve --migrate does in a deployment.
func sqlServerDatabase(t *testing.T) func(*command.ServeConfig) {
	t.Helper()
	sqlservertest.AdminDSN(t) // skip (or fail under CI) before anything starts
	return func(cfg *command.ServeConfig) {
		_, dsn := sqlservertest.Database(t)
		cfg.Database = dsn
		cfg.Migrate = true
	}
}

// storeTests are the core black-box tests, each written once against a
// store parameter.
var storeTests = []struct {
	name string
	run  func(t *testing.T, s store)
}{
	{"CreateRunsTheFirstAttemptAndAccepts", testCreateRunsTheFirstAttemptAndAccepts},
	{"IdempotentRepeatReturnsTheExistingIntent", testIdempotentRepeatReturnsTheExistingIntent},
	{"IdempotencyConflictNamesFieldsAndExistingStatus", testIdempotencyConflictNamesFieldsAndExistingStatus},
	{"IntentIDsTravelVerbatim", testIntentIDsTravelVerbatim},
	{"BatchAnswersEachItemAsASinglePostWould", testBatchAnswersEachItemAsASinglePostWould},
	{"BatchThroughTheGoSDK", testBatchThroughTheGoSDK},
	{"ListPagesNewestFirst", testListPagesNewestFirst},
	{"ResubmissionOverTheAPI", testResubmissionOverTheAPI},
	{"WaitOnAnAPIOnlyInstanceWakesWhenTheLeaderFinishes", testWaitOnAnAPIOnlyInstanceWakesWhenTheLeaderFinishes},
	{"WaitOnAFollowerWakesWhenTheLeaderFinishes", testWaitOnAFollowerWakesWhenTheLeaderFinishes},
	{"TerminalRejectionEndsTheIntent", testTerminalRejectionEndsTheIntent},
	{"RetryThenAcceptance", testRetryThenAcceptance},
	{"ExhaustionByMaxAttempts", testExhaustionByMaxAttempts},
}

// TestStores runs every core test on every store, as
// TestStores/<store>/<test>: `go test -run 'TestStores/sqlserver' ./e2e/`
// runs the SQL Server half.
func TestStores(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			s.database(t) // a store without a server skips (fails under CI) once, here
			for _, c := range storeTests {
				t.Run(c.name, func(t *testing.T) { c.run(t, s) })
			}
		})
	}
}
