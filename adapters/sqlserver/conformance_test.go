package sqlserver

import (
	"testing"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
	"github.com/submissionmanager/submission-manager/ports/sessiontest"
	"github.com/submissionmanager/submission-manager/ports/storetest"
)

func TestLeaseConformance(t *testing.T) {
	serverDSN(t)
	leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
		db, _, _ := suiteDB(t)
		return db.Leases()
	})
}

func TestSessionConformance(t *testing.T) {
	serverDSN(t)
	sessiontest.Run(t, func(t *testing.T) ports.SessionStore {
		db, _, _ := suiteDB(t)
		return db.Sessions()
	})
}

func TestStoreConformance(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return suiteHarness(t, (*DB).Store)
	})
}

// TestExecutorStoreConformance runs the store cases of the executor's calls
// that depend on the store's pool against the store serve hands the
// executor: the same type as Store's, on the executor's fourth pool, whose
// sessions are kept and reset by the same rules. Its rebuild and refresh
// (ListPending, ListChanged, LatestChange) and its reads of single intents
// go through that pool; the fenced batches and the reads of due intents go
// through their lanes from either store, so TestStoreConformance covers them, and a
// reservation, a result and a stale fence here show the path. The whole
// suite here took four more minutes of every CI run.
func TestExecutorStoreConformance(t *testing.T) {
	serverDSN(t)
	storetest.RunCases(t, func(t *testing.T) storetest.Harness {
		return suiteHarness(t, (*DB).ExecutorStore)
	}, "CreateAndGet", "GetMissing", "GetIntents", "StartAttempt", "FinishAttemptRetry", "FencedStaleEpoch",
		"ListPendingPaging", "LatestChangeEmpty", "ListChangedPaging", "ListChangedSharedTimestamp", "PossiblyAccepted")
}

// TestStoreConformanceReadCommittedSnapshot runs the store suite on a
// database with READ_COMMITTED_SNAPSHOT on (Azure SQL Database's default),
// where plain reads use row versions instead of locks. Babelfish cannot
// turn it on and reads row versions anyway, which the test proves there
// instead (babelfishReadsRowVersions).
func TestStoreConformanceReadCommittedSnapshot(t *testing.T) {
	if serverIsBabelfish(t, adminDB(t)) {
		babelfishReadsRowVersions(t)
		return
	}
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		db, dsn := migratedDB(t, databaseOptions{readCommittedSnapshot: true})
		return harness(t, db, dsn)
	})
}

// suiteHarness wraps the store that store picks of a database the suite's
// cases hand on to each other open (suiteDB).
func suiteHarness(t *testing.T, store func(*DB) ports.Store) storetest.Harness {
	db, dsn, restarted := suiteDB(t)
	h := harnessOn(t, db, dsn, store)
	restart := h.Restart
	h.Restart = func(t *testing.T) storetest.Harness {
		restarted()
		return restart(t)
	}
	return h
}

// harness wraps an open database's Store for the store suite.
func harness(t *testing.T, db *DB, dsn string) storetest.Harness {
	return harnessOn(t, db, dsn, (*DB).Store)
}

// harnessOn wraps the store that store picks of an open database, and of
// the database opened again on a restart.
func harnessOn(t *testing.T, db *DB, dsn string, store func(*DB) ports.Store) storetest.Harness {
	return storetest.Harness{
		Store:  store(db),
		Leases: db.Leases(),
		Restart: func(t *testing.T) storetest.Harness {
			if err := db.Close(); err != nil {
				t.Fatalf("close before restart: %v", err)
			}
			return harnessOn(t, openTestDB(t, dsn), dsn, store)
		},
		ShareLastModified: func(t *testing.T, intentIDs []string) {
			shareLastModified(t, db, intentIDs)
		},
	}
}
