package executor

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// factsStore states a number of write batches, as the SQL Server store does.
type factsStore struct {
	*memstore.Store
	facts ports.StoreFacts
}

func (s factsStore) Facts() ports.StoreFacts { return s.facts }

// The number of write batches under way comes from the configuration,
// else from the store's stated fact, else the default.
func TestWriteBatchesComeFromTheStoreUnlessConfigured(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	for _, c := range []struct{ configured, stated, want int }{
		{0, 0, DefaultWriteBatches},
		{0, 2, 2},
		{3, 2, 3},
	} {
		store := factsStore{memstore.New(clock), ports.StoreFacts{WriteBatches: c.stated}}
		e, err := New(Config{Store: store, Clock: clock, WriteBatches: c.configured,
			Gateways: map[core.GatewayType]ports.Gateway{core.GatewaySMS: gatewayfake.New(gatewayfake.Config{Name: "sms", Clock: clock})}})
		if err != nil {
			t.Fatal(err)
		}
		if e.cfg.WriteBatches != c.want {
			t.Errorf("configured %d, stated %d: %d write batches, want %d", c.configured, c.stated, e.cfg.WriteBatches, c.want)
		}
	}
}

// A negative number of write batches is refused, not taken for the default.
func TestNegativeWriteBatchesAreRefused(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	_, err := New(Config{Store: memstore.New(clock), Clock: clock, WriteBatches: -1,
		Gateways: map[core.GatewayType]ports.Gateway{core.GatewaySMS: gatewayfake.New(gatewayfake.Config{Name: "sms", Clock: clock})}})
	if err == nil {
		t.Fatal("New accepted WriteBatches -1")
	}
}
