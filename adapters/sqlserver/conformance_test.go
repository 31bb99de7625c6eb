package sqlserver

import (
	"testing"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

func TestLeaseConformance(t *testing.T) {
	serverDSN(t)
	leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
		db, _ := migratedDB(t, databaseOptions{})
		return db.Leases()
	})
}
