// Package instances lets every instance record itself in the store (a
// heartbeat: holder id, build, role, last seen) and lists the fleet for
// operators, judging which instances are stale by their own heartbeat
// intervals and who leads by the lease.
package instances

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/submissionmanager/submission-manager/app/clockctx"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Defaults of the heartbeat.
const (
	// DefaultInterval is how often an instance records itself.
	DefaultInterval = 10 * time.Second
	// DefaultRoleCheck is how often it looks at its own role between
	// beats, so that a new leader shows as one within about a second
	// instead of an interval.
	DefaultRoleCheck = time.Second
	// DefaultForgetAfter is how long a record nobody refreshes stays
	// listed (as stale) before the instances delete it.
	DefaultForgetAfter = 24 * time.Hour
)

// HeartbeatConfig wires a Heartbeat.
type HeartbeatConfig struct {
	// Store keeps the records. Required.
	Store ports.InstanceStore
	// Clock times the beats. Required.
	Clock ports.Clock
	// HolderID is this instance's name in the lease. Required.
	HolderID string
	// Version is this instance's build.
	Version string
	// APIOnly says the instance never competes for the lease.
	APIOnly bool
	// Leadership tells whether this instance leads now, from its lease;
	// nil reports a follower (or, with APIOnly, an API-only instance).
	Leadership ports.LeadershipReporter
	// Interval, RoleCheck and ForgetAfter: zero means their defaults.
	Interval, RoleCheck, ForgetAfter time.Duration
	Logger                           *slog.Logger
}

// Heartbeat records this instance in the store on a timer, from Run until
// its context ends; then it removes the record, because a stopped instance
// is not a stale one.
type Heartbeat struct {
	cfg HeartbeatConfig
	log *slog.Logger
}

// NewHeartbeat validates cfg and returns a Heartbeat.
func NewHeartbeat(cfg HeartbeatConfig) (*Heartbeat, error) {
	var errs []error
	if cfg.Store == nil || cfg.Clock == nil || cfg.HolderID == "" {
		errs = append(errs, errors.New("instances: HeartbeatConfig.Store, Clock and HolderID are required"))
	}
	if cfg.Interval < 0 || cfg.RoleCheck < 0 || cfg.ForgetAfter < 0 {
		errs = append(errs, errors.New("instances: Interval, RoleCheck and ForgetAfter must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.RoleCheck = min(cmp.Or(cfg.RoleCheck, DefaultRoleCheck), cfg.Interval)
	cfg.ForgetAfter = cmp.Or(cfg.ForgetAfter, DefaultForgetAfter)
	b := ports.InstanceBeat{HolderID: cfg.HolderID, Version: cfg.Version, Role: ports.RoleFollower, Interval: cfg.Interval}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return &Heartbeat{cfg: cfg, log: cmp.Or(cfg.Logger, slog.Default()).With("holder_id", cfg.HolderID)}, nil
}

// role is this instance's role now.
func (h *Heartbeat) role() ports.InstanceRole {
	switch {
	case h.cfg.APIOnly:
		return ports.RoleAPIOnly
	case h.cfg.Leadership != nil:
		if _, leader := h.cfg.Leadership.Leadership(); leader {
			return ports.RoleLeader
		}
	}
	return ports.RoleFollower
}

// Run beats at once, then every Interval and whenever the role changes
// (looked at every RoleCheck), until ctx ends; then it removes the record
// and returns. A beat the store refuses is logged and tried again at the
// next check: the record goes stale meanwhile, which is the truth.
func (h *Heartbeat) Run(ctx context.Context) {
	var (
		started bool // a beat of this process was recorded
		beaten  ports.InstanceRole
		last    time.Time
	)
	for {
		now := h.cfg.Clock.Now()
		if role := h.role(); !started || role != beaten || now.Sub(last) >= h.cfg.Interval {
			if h.beat(ctx, role, !started) {
				started, beaten, last = true, role, now
			}
		}
		timer := h.cfg.Clock.NewTimer(h.cfg.RoleCheck)
		select {
		case <-ctx.Done():
			timer.Stop()
			h.remove(ctx)
			return
		case <-timer.C():
		}
	}
}

// beat records one beat and forgets the records nobody refreshed for
// ForgetAfter; it reports whether the beat was recorded.
func (h *Heartbeat) beat(ctx context.Context, role ports.InstanceRole, starting bool) bool {
	callCtx, cancel := clockctx.WithTimeout(ctx, h.cfg.Clock, h.cfg.Interval)
	defer cancel()
	err := h.cfg.Store.BeatInstance(callCtx, ports.InstanceBeat{
		HolderID: h.cfg.HolderID, Version: h.cfg.Version, Role: role, Interval: h.cfg.Interval, Starting: starting,
	})
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("instance_heartbeat_failed", "error", err)
		}
		return false
	}
	if n, err := h.cfg.Store.ForgetInstances(callCtx, h.cfg.ForgetAfter); err != nil {
		h.log.Debug("instance_forget_failed", "error", err)
	} else if n > 0 {
		h.log.Info("instances_forgotten", "count", n, "not_seen_for", h.cfg.ForgetAfter)
	}
	return true
}

// remove deletes this instance's record at a graceful stop, within one
// interval: after that the record is left to go stale.
func (h *Heartbeat) remove(ctx context.Context) {
	callCtx, cancel := clockctx.WithTimeout(context.WithoutCancel(ctx), h.cfg.Clock, h.cfg.Interval)
	defer cancel()
	if _, err := h.cfg.Store.RemoveInstance(callCtx, h.cfg.HolderID); err != nil {
		h.log.Warn("instance_remove_failed", "error", err)
	}
}

// StaleBeats is how many of its own heartbeat intervals an instance may
// go unseen before it is stale: one late beat is load, three are a
// stopped, hung or cut-off instance.
const StaleBeats = 3

// StaleAfter is how long an instance beating every interval may go
// unseen before it is stale.
func StaleAfter(interval time.Duration) time.Duration { return StaleBeats * interval }

// leaseName is the lease whose holder leads; the executor's.
const leaseName = core.DefaultLeaseName
