package leader

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The spec's defaults, applied by New to zero-valued Config fields. A lease
// of a minute renewed every 20 s survives two missed renewals. Followers
// look every 30 s and, shown a lease that runs out before their next look,
// try again at its expiry: failover after a crash takes the lease duration
// from the last renewal, not that plus an acquire interval.
const (
	DefaultLeaseDuration   = 60 * time.Second
	DefaultRenewInterval   = 20 * time.Second
	DefaultAcquireInterval = 30 * time.Second
)

// maxHolderIDLen is the width of the lease table's holder_id column.
const maxHolderIDLen = 128

// Config wires an Elector. Zero durations take the spec's defaults and an
// empty LeaseName takes core.DefaultLeaseName; Leases, Clock and HolderID
// are required because the core cannot invent them.
type Config struct {
	// Leases is the SQL-backed lease all instances compete for.
	Leases ports.LeaseStore
	// Clock times renewals and acquire retries and judges, with its
	// monotonic reading, whether the lease may have expired meanwhile.
	Clock ports.Clock
	// LeaseName names the lease row; every instance must use the same one.
	LeaseName string
	// HolderID identifies this instance in the lease row and in logs; it
	// must be unique across instances (see DefaultHolderID).
	HolderID string
	// LeaseDuration is how long an acquire or renew holds the lease, in
	// database time.
	LeaseDuration time.Duration
	// RenewInterval is how often the leader renews; it must be shorter than
	// LeaseDuration or the lease would lapse between renewals.
	RenewInterval time.Duration
	// AcquireInterval is how often a follower tries to take the lease while
	// a live leader holds it; a follower shown a lease that expires sooner
	// tries again at its expiry instead.
	AcquireInterval time.Duration
	// Logger receives the leader_* events; nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives every leadership change; nil means none.
	Metrics ports.Metrics
}

// DefaultHolderID builds the spec's default holder id, hostname-pid-random,
// from parts the caller supplies (the core does no I/O). The random part
// keeps two processes that reuse a pid on one host, or two containers with
// the same hostname, apart. The hostname is shortened so the result fits the
// holder_id column.
func DefaultHolderID(hostname string, pid int, random string) string {
	if hostname == "" {
		hostname = "unknown"
	}
	suffix := "-" + strconv.Itoa(pid) + "-" + random
	if room := maxHolderIDLen - len(suffix); len(hostname) > room {
		hostname = hostname[:max(room, 0)]
	}
	id := hostname + suffix
	if len(id) > maxHolderIDLen {
		id = id[:maxHolderIDLen]
	}
	return id
}

// withDefaults returns the config with zero values replaced by defaults and
// checks what remains, so that a misconfiguration fails at startup rather
// than as a lease that lapses between renewals.
func (c Config) withDefaults() (Config, error) {
	if c.LeaseName == "" {
		c.LeaseName = core.DefaultLeaseName
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = DefaultRenewInterval
	}
	if c.AcquireInterval == 0 {
		c.AcquireInterval = DefaultAcquireInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = ports.NopMetrics{}
	}
	var errs []error
	if c.Leases == nil {
		errs = append(errs, errors.New("leader: Leases is required"))
	}
	if c.Clock == nil {
		errs = append(errs, errors.New("leader: Clock is required"))
	}
	if c.HolderID == "" {
		errs = append(errs, errors.New("leader: HolderID is required"))
	} else if len(c.HolderID) > maxHolderIDLen {
		errs = append(errs, fmt.Errorf("leader: HolderID is %d bytes, at most %d fit the lease row", len(c.HolderID), maxHolderIDLen))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"LeaseDuration", c.LeaseDuration}, {"RenewInterval", c.RenewInterval}, {"AcquireInterval", c.AcquireInterval}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("leader: %s must be positive, got %s", d.name, d.v))
		}
	}
	if c.RenewInterval > 0 && c.LeaseDuration > 0 && c.RenewInterval >= c.LeaseDuration {
		errs = append(errs, fmt.Errorf("leader: RenewInterval (%s) must be below LeaseDuration (%s)", c.RenewInterval, c.LeaseDuration))
	}
	return c, errors.Join(errs...)
}

// safetyMargin is how much earlier than the database the elector considers
// its lease expired. Measuring from the local start of the last successful
// renew is already conservative (the database stamped the expiry later); the
// margin also absorbs clock-rate differences. It stays below the gap between
// RenewInterval and LeaseDuration so a healthy leader never looks expired
// between two renewals.
func (c Config) safetyMargin() time.Duration {
	return min(c.LeaseDuration/10, (c.LeaseDuration-c.RenewInterval)/2)
}
