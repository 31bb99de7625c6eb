package memstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/storetest"
)

// tickingClock moves one microsecond per reading, as a database's commit
// timestamps do, so every write gets a later change marker.
type tickingClock struct {
	*clocktest.Clock
	mu sync.Mutex
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Advance(time.Microsecond)
	return c.Clock.Now()
}

var _ ports.Clock = (*tickingClock)(nil)

func TestRescheduleConformance(t *testing.T) {
	storetest.RunReschedule(t, func(t *testing.T) storetest.Harness {
		s := memstore.New(&tickingClock{Clock: clocktest.New(time.Now().UTC().Truncate(time.Microsecond))})
		return storetest.Harness{Store: s, Leases: s}
	})
}

func TestPauseConformance(t *testing.T) {
	storetest.RunPauses(t, func(t *testing.T) storetest.Harness {
		s := memstore.New(&tickingClock{Clock: clocktest.New(time.Now().UTC().Truncate(time.Microsecond))})
		return storetest.Harness{Store: s, Leases: s}
	})
}
