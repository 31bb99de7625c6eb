package leader_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
)

func TestNewRejectsInvalidConfig(t *testing.T) {
	w := newWorld(t)
	valid := w.config("sm-01", 4*time.Second)
	for _, tc := range []struct {
		name   string
		mutate func(*leader.Config)
		want   string
	}{
		{"renew equal to duration", func(c *leader.Config) { c.RenewInterval = c.LeaseDuration }, "RenewInterval (10s) must be below LeaseDuration (10s)"},
		{"renew above duration", func(c *leader.Config) { c.RenewInterval = 11 * time.Second }, "must be below LeaseDuration"},
		{"renew above default duration", func(c *leader.Config) { c.LeaseDuration = 0; c.RenewInterval = time.Minute }, "RenewInterval (1m0s) must be below LeaseDuration (1m0s)"},
		{"negative duration", func(c *leader.Config) { c.LeaseDuration = -time.Second }, "LeaseDuration must be positive"},
		{"negative renew", func(c *leader.Config) { c.RenewInterval = -time.Second }, "RenewInterval must be positive"},
		{"negative acquire", func(c *leader.Config) { c.AcquireInterval = -time.Second }, "AcquireInterval must be positive"},
		{"no lease store", func(c *leader.Config) { c.Leases = nil }, "Leases is required"},
		{"no clock", func(c *leader.Config) { c.Clock = nil }, "Clock is required"},
		{"no holder", func(c *leader.Config) { c.HolderID = "" }, "HolderID is required"},
		{"holder too long", func(c *leader.Config) { c.HolderID = strings.Repeat("h", 129) }, "at most 128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.mutate(&cfg)
			e, err := leader.New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: elector=%v err=%v, want an error containing %q", e != nil, err, tc.want)
			}
		})
	}
	if _, err := leader.New(valid); err != nil {
		t.Fatalf("New(valid config): %v", err)
	}
}

// TestZeroConfigTakesTheSpecDefaults observes the defaults through behaviour:
// the lease row's name and duration, the renew timer and a follower's
// acquire timer.
func TestZeroConfigTakesTheSpecDefaults(t *testing.T) {
	w := newWorld(t)
	cfg := w.config("sm-01", 0)
	cfg.LeaseDuration, cfg.RenewInterval, cfg.LeaseName = 0, 0, ""
	_, x := w.start(cfg)
	c := x.next()
	l := w.lease() // reads core.DefaultLeaseName
	if l.HolderID != "sm-01" || l.Epoch != 1 || !l.ExpiresAt.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("lease = %+v, want sm-01 at epoch 1 expiring at t0+60s", l)
	}
	if c.lease != l {
		t.Fatalf("executor got lease %+v, want the acquired row %+v", c.lease, l)
	}
	w.waitTimer(t0.Add(20 * time.Second)) // the default renew interval

	follower := w.config("sm-02", 0)
	follower.LeaseDuration, follower.RenewInterval = 0, 0
	_, fx := w.start(follower)
	w.waitTimer(t0.Add(30 * time.Second)) // the default acquire interval
	fx.none()
}

func TestDefaultHolderID(t *testing.T) {
	if got := leader.DefaultHolderID("sm-host", 4242, "a1b2c3"); got != "sm-host-4242-a1b2c3" {
		t.Errorf("DefaultHolderID = %q, want sm-host-4242-a1b2c3", got)
	}
	if got := leader.DefaultHolderID("", 7, "r"); got != "unknown-7-r" {
		t.Errorf("DefaultHolderID without hostname = %q, want unknown-7-r", got)
	}
	long := leader.DefaultHolderID(strings.Repeat("h", 300), 123456, "abcdef")
	if len(long) != 128 || !strings.HasSuffix(long, "-123456-abcdef") {
		t.Errorf("DefaultHolderID of a long hostname = %q (%d bytes), want 128 bytes keeping -pid-random", long, len(long))
	}
	// The result must be accepted as a HolderID.
	w := newWorld(t)
	cfg := w.config(long, time.Second)
	if _, err := leader.New(cfg); err != nil {
		t.Errorf("New rejects DefaultHolderID's result: %v", err)
	}
}

func TestRunRefusesASecondConcurrentLoop(t *testing.T) {
	w := newWorld(t)
	e, x := w.start(w.config("sm-01", 4*time.Second))
	x.next()
	err := e.Run(context.Background(), func(context.Context, core.Lease, func() bool) error {
		t.Error("the second Run started an executor")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Run = %v, want an already-running error", err)
	}
}
