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
		db, _ := migratedDB(t, databaseOptions{})
		return db.Leases()
	})
}

func TestSessionConformance(t *testing.T) {
	serverDSN(t)
	sessiontest.Run(t, func(t *testing.T) ports.SessionStore {
		db, _ := migratedDB(t, databaseOptions{})
		return db.Sessions()
	})
}

func TestStoreConformance(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		db, dsn := migratedDB(t, databaseOptions{})
		return harness(t, db, dsn)
	})
}

// TestStoreConformanceReadCommittedSnapshot runs the store suite on a
// database with READ_COMMITTED_SNAPSHOT on (Azure SQL Database's default),
// where plain reads use row versions instead of locks.
func TestStoreConformanceReadCommittedSnapshot(t *testing.T) {
	if serverIsBabelfish(t, adminDB(t)) {
		t.Skip(noSnapshotOnBabelfish)
	}
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		db, dsn := migratedDB(t, databaseOptions{readCommittedSnapshot: true})
		return harness(t, db, dsn)
	})
}

// harness wraps an open database for the store suite.
func harness(t *testing.T, db *DB, dsn string) storetest.Harness {
	return storetest.Harness{
		Store:  db.Store(),
		Leases: db.Leases(),
		Restart: func(t *testing.T) storetest.Harness {
			if err := db.Close(); err != nil {
				t.Fatalf("close before restart: %v", err)
			}
			return harness(t, openTestDB(t, dsn), dsn)
		},
		ShareLastModified: func(t *testing.T, intentIDs []string) {
			shareLastModified(t, db, intentIDs)
		},
	}
}
