package memstore_test

import (
	"testing"

	"github.com/submissionmanager/submission-manager/ports/storetest"
)

// TestOperatorConformance holds the fake to the store's operator cases
// (resubmission, counts, attempt audit fields), as the SQL stores are.
func TestOperatorConformance(t *testing.T) {
	storetest.RunOperator(t, func(t *testing.T) storetest.Harness {
		s, _ := newStore()
		return storetest.Harness{Store: s, Leases: s}
	})
}
