package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sysclock"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// The timings of the in-process HA tests: short enough that a failover takes
// about two seconds, long enough that a loaded test machine keeps its lease.
const (
	haLeaseDuration   = 1500 * time.Millisecond
	haRenewInterval   = 300 * time.Millisecond
	haAcquireInterval = 300 * time.Millisecond
	haRefreshInterval = 100 * time.Millisecond
	haRetryDelay      = 50 * time.Millisecond
	// haWait bounds every poll of the HA tests; it is a safety net, not a
	// timing assertion.
	haWait = 30 * time.Second
	// haStartWait bounds a process's start until it answers: a first
	// instance with --migrate on a new T-SQL database creates every table
	// and procedure, which a loaded machine can stretch past haWait.
	haStartWait = 2 * time.Minute
)

// haTargets are the contracts of the HA tests: a realtime SMS target with a
// generous deadline (an intent survives a failover or two), a batch push
// target that gives up after five attempts, and a target for intents
// scripted to fail many times before acceptance. None waits long on a
// reference the gateway accepted but whose answer a stopped leader could not
// record: its repeats get duplicate_reference, which is not terminal.
func haTargets(sim *gatewaysim.Simulator) []core.Contract {
	return []core.Contract{
		{SubmissionTarget: "sms.busy", GatewayType: core.GatewaySMS, GatewayURL: sim.URL(core.GatewaySMS),
			Mode: core.ModeRealtime, Policy: core.PolicyMaxAttempts, MaxAttempts: 20,
			TerminalOutcomes: []string{"invalid_request", "invalid_recipient", "invalid_message"}},
		{SubmissionTarget: "sms.ha", GatewayType: core.GatewaySMS, GatewayURL: sim.URL(core.GatewaySMS),
			Mode: core.ModeRealtime, Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 20,
			TerminalOutcomes: []string{"invalid_request", "invalid_recipient", "invalid_message"}},
		{SubmissionTarget: "push.ha", GatewayType: core.GatewayPush, GatewayURL: sim.URL(core.GatewayPush),
			Mode: core.ModeBatch, Policy: core.PolicyMaxAttempts, MaxAttempts: 5,
			TerminalOutcomes: []string{"invalid_request", "unregistered_token"}},
	}
}

// haCluster is one SQLite database file shared by any number of in-process
// instances, each with its own sqlite.Open (its own connections, as separate
// processes would have), its own engine, elector and gateway clients, and one
// gateway simulator over HTTP for all of them.
type haCluster struct {
	t        *testing.T
	dbPath   string
	sim      *gatewaysim.Simulator
	registry *core.Registry
	// admin is the test's own handle: it migrates, reads the lease, and
	// plays an outside holder that takes the lease away from a leader.
	admin *sqlite.DB
	audit *auditDB
	// gate, when set, holds every elector started from then on until it is
	// closed, so that they all race for the lease at once.
	gate chan struct{}
}

func newHACluster(t *testing.T, simCfg gatewaysim.Config) *haCluster {
	t.Helper()
	sim, err := gatewaysim.Start(simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	registry, err := core.NewRegistry(haTargets(sim))
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "ha.db")
	ctx := context.Background()
	admin, err := sqlite.Open(ctx, sqlite.Config{Path: dbPath, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.Migrate(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	return &haCluster{t: t, dbPath: dbPath, sim: sim, registry: registry, admin: admin, audit: openAuditDB(t, dbPath)}
}

// haInstance is one SubmissionManager instance of a cluster, wired like
// cmd/submission-manager/app wires the binary, with two test hooks: its
// link to the database can be cut, and its gateway calls are counted.
type haInstance struct {
	holderID string
	db       *sqlite.DB
	link     *dbLink
	service  *intake.Service
	elector  *leader.Elector
	calls    *gatewayCalls
	stop     func()
}

// start runs a new instance until the test ends. tune adjusts its elector.
func (c *haCluster) start(holderID string, tune ...func(*leader.Config)) *haInstance {
	t := c.t
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})).With("instance", holderID)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: c.dbPath, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	link := newDBLink(db.Store(), db.Leases())
	calls := &gatewayCalls{byReference: map[string]int{}}
	gateways := map[core.GatewayType]ports.Gateway{}
	var clients []*gateway.Client
	for _, gt := range core.GatewayTypes() {
		client, err := gateway.New(gt, gateway.Config{Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, client)
		gateways[gt] = countingGateway{inner: client, calls: calls}
	}
	clock := sysclock.New()
	executor, err := executor.New(executor.Config{
		Store:           linkStore{link},
		Gateways:        gateways,
		Clock:           clock,
		Retry:           core.FixedDelay(haRetryDelay),
		RefreshInterval: haRefreshInterval,
		Logger:          log,
	})
	if err != nil {
		t.Fatal(err)
	}
	service, err := intake.NewService(intake.ServiceConfig{
		Registry: c.registry, Store: linkStore{link}, Clock: clock, Notifier: executor,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := leader.Config{
		Leases:          linkLeases{link},
		Clock:           clock,
		HolderID:        holderID,
		LeaseDuration:   haLeaseDuration,
		RenewInterval:   haRenewInterval,
		AcquireInterval: haAcquireInterval,
		Logger:          log,
	}
	for _, f := range tune {
		f(&cfg)
	}
	elector, err := leader.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	gate := c.gate
	go func() {
		if gate != nil {
			select {
			case <-gate:
			case <-runCtx.Done():
				done <- nil
				return
			}
		}
		done <- elector.Run(runCtx, executor.Lead)
	}()
	in := &haInstance{holderID: holderID, db: db, link: link, service: service, elector: elector, calls: calls}
	var once sync.Once
	in.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: elector Run = %v, want nil on shutdown", holderID, err)
				}
			case <-time.After(haWait):
				t.Errorf("%s: elector did not stop within %s", holderID, haWait)
			}
			for _, client := range clients {
				client.Close()
			}
			_ = db.Close()
		})
	}
	t.Cleanup(in.stop)
	return in
}

// leads reports whether the instance's elector says it leads.
func (in *haInstance) leads() bool {
	_, ok := in.elector.Leadership()
	return ok
}

// submit stores an intent through this instance's service, as its HTTP API
// would.
func (in *haInstance) submit(t *testing.T, id, target string) {
	t.Helper()
	res, err := in.service.SubmitIntent(context.Background(), ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: target, Payload: json.RawMessage(`{"to":"+15550100","body":"` + id + `"}`),
	})
	if err != nil || !res.Created {
		t.Fatalf("%s: submit %q: created=%v err=%v", in.holderID, id, res.Created, err)
	}
}

// lease reads the lease row through the admin handle.
func (c *haCluster) lease() core.Lease {
	c.t.Helper()
	l, ok, err := c.admin.Leases().Read(context.Background(), core.DefaultLeaseName)
	if err != nil || !ok {
		c.t.Fatalf("reading the lease: found=%v err=%v", ok, err)
	}
	return l
}

// waitLeader waits until exactly one of the instances leads and the lease
// row names it, and returns it.
func (c *haCluster) waitLeader(instances ...*haInstance) *haInstance {
	c.t.Helper()
	var found *haInstance
	haPoll(c.t, "exactly one instance leading", func() bool {
		found = nil
		for _, in := range instances {
			if in.leads() {
				if found != nil {
					c.t.Fatalf("%s and %s both lead", found.holderID, in.holderID)
				}
				found = in
			}
		}
		if found == nil {
			return false
		}
		l, ok, err := c.admin.Leases().Read(context.Background(), core.DefaultLeaseName)
		return err == nil && ok && l.HolderID == found.holderID
	})
	return found
}

// haPoll checks cond every few milliseconds until it holds, and fails the
// test after haWait.
func haPoll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(haWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s", what, haWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dbLink is an instance's connection to the database, which a test can cut
// (a network partition, or a process that stopped talking) and heal. It also
// counts acquire attempts and signals each on tried, so a test can wait for
// followers to have tried.
type dbLink struct {
	store    ports.Store
	leases   ports.LeaseStore
	cut      atomic.Bool
	acquires atomic.Int64
	// tried holds a signal when acquires moved since a waiter last took one;
	// one waiter at a time re-reads acquires after each.
	tried chan struct{}
}

func newDBLink(store ports.Store, leases ports.LeaseStore) *dbLink {
	return &dbLink{store: store, leases: leases, tried: make(chan struct{}, 1)}
}

// awaitAcquires waits until the link counted at least n acquire attempts,
// failing the test after haWait.
func (l *dbLink) awaitAcquires(t *testing.T, what string, n int64) {
	t.Helper()
	bound := time.NewTimer(haWait)
	defer bound.Stop()
	for l.acquires.Load() < n {
		select {
		case <-l.tried:
		case <-bound.C:
			t.Fatalf("%s: %d acquire attempts within %s, want %d", what, l.acquires.Load(), haWait, n)
		}
	}
}

var errLinkCut = fmt.Errorf("%w: e2e: the link to the database is cut", core.ErrStoreUnavailable)

func (l *dbLink) check() error {
	if l.cut.Load() {
		return errLinkCut
	}
	return nil
}

// linkStore is ports.Store through a dbLink.
type linkStore struct{ l *dbLink }

var _ ports.Store = linkStore{}

func (s linkStore) CreateIntent(ctx context.Context, in core.Intent) (ports.CreateIntentResult, error) {
	if err := s.l.check(); err != nil {
		return ports.CreateIntentResult{}, err
	}
	return s.l.store.CreateIntent(ctx, in)
}

func (s linkStore) CreateIntents(ctx context.Context, in []core.Intent) ([]ports.CreateIntentResult, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.CreateIntents(ctx, in)
}

func (s linkStore) GetIntent(ctx context.Context, id string) (core.Intent, error) {
	if err := s.l.check(); err != nil {
		return core.Intent{}, err
	}
	return s.l.store.GetIntent(ctx, id)
}

func (s linkStore) GetIntents(ctx context.Context, ids []string) ([]core.Intent, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.GetIntents(ctx, ids)
}

// Facts are the store's own: a cut link does not change what it is.
func (s linkStore) Facts() ports.StoreFacts { return s.l.store.Facts() }

func (s linkStore) ListIntents(ctx context.Context, p ports.ListIntentsParams) ([]core.Intent, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.ListIntents(ctx, p)
}

func (s linkStore) ListPending(ctx context.Context, p ports.ListPendingParams) ([]ports.ScheduleRow, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.ListPending(ctx, p)
}

func (s linkStore) ListChanged(ctx context.Context, p ports.ListChangedParams) ([]ports.ScheduleRow, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.ListChanged(ctx, p)
}

func (s linkStore) LatestChange(ctx context.Context) (ports.ChangeCursor, error) {
	if err := s.l.check(); err != nil {
		return ports.ChangeCursor{}, err
	}
	return s.l.store.LatestChange(ctx)
}

func (s linkStore) StartAttempt(ctx context.Context, p ports.StartAttemptParams) error {
	if err := s.l.check(); err != nil {
		return err
	}
	return s.l.store.StartAttempt(ctx, p)
}

func (s linkStore) FinishAttempt(ctx context.Context, p ports.FinishAttemptParams) error {
	if err := s.l.check(); err != nil {
		return err
	}
	return s.l.store.FinishAttempt(ctx, p)
}

func (s linkStore) StartAttempts(ctx context.Context, ps []ports.StartAttemptParams) []error {
	if err := s.l.check(); err != nil {
		return allFailed(len(ps), err)
	}
	return s.l.store.StartAttempts(ctx, ps)
}

func (s linkStore) FinishAttempts(ctx context.Context, ps []ports.FinishAttemptParams) []error {
	if err := s.l.check(); err != nil {
		return allFailed(len(ps), err)
	}
	return s.l.store.FinishAttempts(ctx, ps)
}

// allFailed answers every item of a batch with err.
func allFailed(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func (s linkStore) Reschedule(ctx context.Context, p ports.RescheduleParams) error {
	if err := s.l.check(); err != nil {
		return err
	}
	return s.l.store.Reschedule(ctx, p)
}

func (s linkStore) ListPauses(ctx context.Context) ([]core.GatewayPause, error) {
	if err := s.l.check(); err != nil {
		return nil, err
	}
	return s.l.store.ListPauses(ctx)
}

func (s linkStore) PauseGateway(ctx context.Context, p core.GatewayPause) (core.GatewayPause, error) {
	if err := s.l.check(); err != nil {
		return core.GatewayPause{}, err
	}
	return s.l.store.PauseGateway(ctx, p)
}

func (s linkStore) ResumeGateway(ctx context.Context, t core.GatewayType, gatewayURL string) (bool, error) {
	if err := s.l.check(); err != nil {
		return false, err
	}
	return s.l.store.ResumeGateway(ctx, t, gatewayURL)
}

// linkLeases is ports.LeaseStore through a dbLink.
type linkLeases struct{ l *dbLink }

var _ ports.LeaseStore = linkLeases{}

func (s linkLeases) Acquire(ctx context.Context, p ports.AcquireLeaseParams) (core.Lease, bool, error) {
	s.l.acquires.Add(1)
	select {
	case s.l.tried <- struct{}{}:
	default: // a signal is pending already
	}
	if err := s.l.check(); err != nil {
		return core.Lease{}, false, err
	}
	return s.l.leases.Acquire(ctx, p)
}

func (s linkLeases) Renew(ctx context.Context, p ports.RenewLeaseParams) (core.Lease, error) {
	if err := s.l.check(); err != nil {
		return core.Lease{}, err
	}
	return s.l.leases.Renew(ctx, p)
}

func (s linkLeases) Release(ctx context.Context, f core.Fence) error {
	if err := s.l.check(); err != nil {
		return err
	}
	return s.l.leases.Release(ctx, f)
}

func (s linkLeases) Read(ctx context.Context, name string) (core.Lease, bool, error) {
	if err := s.l.check(); err != nil {
		return core.Lease{}, false, err
	}
	return s.l.leases.Read(ctx, name)
}

// gatewayCalls counts one instance's gateway calls per reference.
type gatewayCalls struct {
	mu          sync.Mutex
	byReference map[string]int
	total       int
}

func (g *gatewayCalls) snapshot() (map[string]int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int, len(g.byReference))
	for k, v := range g.byReference {
		out[k] = v
	}
	return out, g.total
}

func (g *gatewayCalls) count() int {
	_, n := g.snapshot()
	return n
}

// countingGateway records a call before making it, so a call counts even if
// it never returns.
type countingGateway struct {
	inner ports.Gateway
	calls *gatewayCalls
}

func (g countingGateway) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	g.calls.mu.Lock()
	g.calls.byReference[p.Reference]++
	g.calls.total++
	g.calls.mu.Unlock()
	return g.inner.Submit(ctx, p)
}

// stealLease plays an outside holder that takes the lease from its current
// holder, as a successor does once the holder paused past its expiry. It
// does so in one statement, with the expiry and the takeover at the same
// database instant, so that no instance's acquire slips in between: the
// statement is what Release followed at once by Acquire would leave. It
// returns the stolen lease and the outsider's.
func (c *haCluster) stealLease(d time.Duration) (stolen, outsider core.Lease) {
	c.t.Helper()
	ctx := context.Background()
	stolen = c.lease()
	const now = `CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000`
	haRetryBusy(c.t, "the outsider's takeover", func() error {
		res, err := c.audit.writer(c.t).ExecContext(ctx, `
			UPDATE submission_manager_leases
			SET holder_id = 'outsider', lease_epoch = lease_epoch + 1,
			    acquired_at = `+now+`, renewed_at = `+now+`, expires_at = `+now+` + ?
			WHERE lease_name = ? AND holder_id = ? AND lease_epoch = ?`,
			d.Nanoseconds(), stolen.LeaseName, stolen.HolderID, stolen.Epoch)
		if err != nil {
			return fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			c.t.Fatalf("the lease changed hands before the takeover: %+v", c.lease())
		}
		return nil
	})
	outsider = c.lease()
	return stolen, outsider
}

// haRetryBusy runs op until it does not fail with core.ErrStoreUnavailable,
// and fails the test on any other error or after haWait.
func haRetryBusy(t *testing.T, what string, op func() error) {
	t.Helper()
	deadline := time.Now().Add(haWait)
	for {
		err := op()
		if err == nil {
			return
		}
		if !errors.Is(err, core.ErrStoreUnavailable) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: %v; retrying", what, err)
	}
}

// releaseOutsider gives the outsider's lease back.
func (c *haCluster) releaseOutsider(outsider core.Lease) {
	c.t.Helper()
	haRetryBusy(c.t, "releasing the outsider's lease", func() error {
		return c.admin.Leases().Release(context.Background(), outsider.Fence())
	})
}

// checkGatewayCallsRecorded asserts the fencing invariant at the gateway:
// every call an instance made for a reference was preceded by an attempt
// start that same instance recorded, so its calls never outnumber its
// attempt rows, and the simulator saw no call the instances did not make.
func (c *haCluster) checkGatewayCallsRecorded(instances ...*haInstance) {
	c.t.Helper()
	rows := c.audit.attempts(c.t)
	perHolder := map[string]map[string]int{}
	perIntent := map[string][]string{}
	for _, a := range rows {
		perIntent[a.IntentID] = append(perIntent[a.IntentID], fmt.Sprintf("#%d by %s@%d %q", a.Number, a.HolderID, a.Epoch, a.Error))
		if perHolder[a.HolderID] == nil {
			perHolder[a.HolderID] = map[string]int{}
		}
		perHolder[a.HolderID][a.IntentID]++
	}
	total := map[string]int{}
	for _, in := range instances {
		calls, _ := in.calls.snapshot()
		for ref, n := range calls {
			total[ref] += n
			if started := perHolder[in.holderID][ref]; n > started {
				c.t.Errorf("%s called the gateway %d times for %q but recorded %d attempt starts; attempts: %v", in.holderID, n, ref, started, perIntent[ref])
			}
		}
	}
	// A call cut short when its leader stopped may never reach the
	// simulator, so it can count fewer submissions, never more.
	for ref, st := range c.sim.Stats().References {
		if st.Submissions > total[ref] {
			c.t.Errorf("the simulator received %d submissions of %q, the instances made only %d calls", st.Submissions, ref, total[ref])
		}
	}
	c.audit.checkInvariants(c.t, c.sim.Stats())
}
