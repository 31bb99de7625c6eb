package sqlite

import (
	"testing"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
)

func TestLeaseConformance(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
		return openTestDB(t).Leases()
	})
}
