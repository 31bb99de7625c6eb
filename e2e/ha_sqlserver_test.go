package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/microsoft/go-mssqldb" // the "sqlserver" database/sql driver the audit reads with

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/sqlservertest"
	"github.com/submissionmanager/submission-manager/core"
)

// The timings of the SQL Server failover test, passed to every serve
// process: the production shape (a renewal every sixth of the lease),
// short enough to keep the test near half a minute.
const (
	tsqlLeaseDuration   = 3 * time.Second
	tsqlRenewInterval   = 500 * time.Millisecond
	tsqlAcquireInterval = 250 * time.Millisecond
	// tsqlFailoverBound is the bound on a takeover after SIGKILL:
	// the lease runs out at most lease_duration after the leader's last
	// renewal, and a follower's acquire tick comes within the second after.
	tsqlFailoverBound = tsqlLeaseDuration + time.Second
)

// TestHASQLServerFailoverBehindHAProxy runs three `serve` processes on one
// SQL Server database (the server sqlservertest finds: Babelfish in CI)
// behind a real HAProxy (docs/haproxy.cfg), the gateway simulator as a
// fourth process, and load submitted through HAProxy while it SIGKILLs the
// leader. It shows, from the database and the simulator's /stats, with
// the figures in its log: a follower leading within lease_duration + 1 s
// of the kill, nothing acknowledged lost (every acknowledged intent stored
// and terminal), no reference accepted twice, no gateway submission
// without a recorded attempt start, and epochs in order; it logs the
// leases lost under load.
func TestHASQLServerFailoverBehindHAProxy(t *testing.T) {
	sqlservertest.AdminDSN(t) // skip (or fail under CI) before anything starts
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed, so the SQL Server failover test cannot run; .ci/run installs it (apt-get install -y haproxy)")
	}
	if testing.Short() {
		t.Skip("-short: the SQL Server failover test builds the binaries and runs a failover of about half a minute")
	}
	_, dsn := sqlservertest.Database(t)
	dir := t.TempDir()
	haBuild(t, dir, "./cmd/submission-manager", "./cmd/gateway-sim")

	smsAddr, pushAddr := haFreeAddr(t), haFreeAddr(t)
	sim := haStartProcess(t, dir, "gateway-sim", filepath.Join(dir, "gateway-sim"), []string{
		"--sms-listen", smsAddr, "--push-listen", pushAddr,
		"--latency", "10ms", "--latency-jitter", "30ms", "--accept-ratio", "0.8",
		"--log-format", "json",
	}, nil)
	haWaitHTTP(t, sim, "http://"+smsAddr+"/stats")
	haWaitHTTP(t, sim, "http://"+pushAddr+"/stats")
	registry := filepath.Join(dir, "targets.json")
	writeMPRegistry(t, registry, "http://"+smsAddr, "http://"+pushAddr)

	c := &tsqlCluster{t: t, dir: dir, bin: filepath.Join(dir, "submission-manager"), registry: registry, dsn: dsn,
		instances: map[string]*mpInstance{}, audit: openTSQLAudit(t, dsn)}
	// The first instance migrates the new database, as serve --migrate
	// does in a deployment; the others start on the migrated schema.
	c.start("sm-01", "--migrate")
	c.start("sm-02")
	c.start("sm-03")
	front := haFreeAddr(t)
	proxy := haStartProcess(t, dir, "haproxy", haproxy, []string{"-db", "-f", filepath.Join(haModuleRoot(t), "docs", "haproxy.cfg")}, []string{
		"SM_LISTEN=" + front,
		"SM_INSTANCE_1=" + c.instances["sm-01"].addr,
		"SM_INSTANCE_2=" + c.instances["sm-02"].addr,
		"SM_INSTANCE_3=" + c.instances["sm-03"].addr,
	})
	haWaitHTTP(t, proxy, "http://"+front+"/readyz")

	c.waitLeader("", 1)
	// A steady load the SQL Server path sustains on a shared two-core
	// machine: the test is about the takeover, not throughput.
	load, err := startHALoad("http://"+front, 2, 50*time.Millisecond, []string{"sms.ha", "push.ha", "sms.deadline"})
	if err != nil {
		t.Fatal(err)
	}
	defer load.abort()
	haMust(t, load.waitAcked(60))

	// The leader as the lease row has it at the kill, so that the figure
	// is the takeover the kill caused.
	first, firstEpoch := c.currentLeader()
	watch := watchServer(t, dsn)
	killedAt := time.Now()
	c.instances[first].proc.kill(t)
	second, secondEpoch, leadingAt := c.waitLeader(first, firstEpoch+1)
	watch.stop()
	failover := leadingAt.Sub(killedAt)
	acquired := c.audit.lease(t)
	if failover > tsqlFailoverBound {
		t.Errorf("after SIGKILL of %s at %s, %s led %s later, more than lease_duration + 1s = %s",
			first, killedAt.UTC().Format("15:04:05.000"), second, failover, tsqlFailoverBound)
		for name, in := range c.instances {
			t.Logf("--- %s on the lease from 1 s before the kill until %s led ---\n%s",
				name, second, leaseTimeline(in.proc.logPath, killedAt.Add(-time.Second), leadingAt))
		}
		t.Logf("--- the database server's busy sessions, every %s from the kill until %s led ---\n%s",
			serverActivityEvery, second, watch.report())
	}
	haMust(t, load.waitAcked(60))
	load.stop()

	acked := load.acknowledged()
	c.audit.waitTerminal(t, acked)
	all := c.audit.intents(t)
	stored := make([]string, 0, len(all))
	for id := range all {
		stored = append(stored, id)
	}
	c.audit.waitTerminal(t, stored)
	if len(load.problems) > 0 {
		t.Errorf("%d submissions refused for good, e.g. %s", len(load.problems), load.problems[0])
	}
	stats := mpStats(t, "http://"+smsAddr, "http://"+pushAddr)
	checkHAInvariants(t, c.audit.attempts(t), c.audit.intents(t), stats)
	// Leases lost under load (a leader_lost warning: the processes still
	// run, so none is a shutdown's) are data here, not a failure: on a
	// machine shared with other work a renewal can miss its lease, and
	// safety never depends on it (the fence and the checks above do).
	var lost []string
	for name, in := range c.instances {
		for _, ev := range haLogEvents(t, in.proc.logPath, "leader_lost") {
			lost = append(lost, fmt.Sprintf("%s@%v (%v: %v %v)", name, ev["lease_epoch"], ev["reason"], ev["error"], ev["sql_error"]))
		}
	}
	if l := c.audit.lease(t); l.Epoch < secondEpoch {
		t.Errorf("the lease went back from epoch %d to %d", secondEpoch, l.Epoch)
	}
	t.Logf("failover after SIGKILL of %s@%d: %s@%d leading %s after the kill (bound lease_duration + 1s = %s; its acquire committed at %s database time, %s after the kill by this host's clock); "+
		"%d intents acknowledged (%d client retries), %d stored, %d gateway submissions, %d duplicates; leases lost under load: %d %v",
		first, firstEpoch, second, secondEpoch, failover.Round(time.Millisecond), tsqlFailoverBound,
		acquired.Acquired.Format(time.RFC3339Nano), acquired.Acquired.Sub(killedAt).Round(time.Millisecond),
		len(acked), load.retries.Load(), len(all), stats.Total, stats.Duplicates, len(lost), lost)
}

// tsqlCluster is the serve processes of the SQL Server failover test.
type tsqlCluster struct {
	t         *testing.T
	dir, bin  string
	registry  string
	dsn       string
	instances map[string]*mpInstance
	audit     *tsqlAudit
}

// start runs `submission-manager serve` as holder name on the database and
// waits until it answers /healthz.
func (c *tsqlCluster) start(name string, extra ...string) {
	t := c.t
	t.Helper()
	args := append([]string{"serve",
		"--database", c.dsn,
		"--registry", c.registry,
		"--listen", haAnyPort,
		"--holder-id", name,
		"--lease-duration", tsqlLeaseDuration.String(),
		"--renew-interval", tsqlRenewInterval.String(),
		"--acquire-interval", tsqlAcquireInterval.String(),
		"--schedule-refresh-interval", "200ms",
		"--retry-delay", "100ms",
		"--gateway-timeout", "2s",
		"--shutdown-timeout", "5s",
		"--log-format", "json",
		// Debug shows each follower's acquires, for a late takeover's report.
		"--log-level", "debug",
	}, extra...)
	p := haStartProcess(t, c.dir, name, c.bin, args, nil)
	addr := haServeAddr(t, p)
	c.instances[name] = &mpInstance{addr: addr, proc: p}
	haWaitHTTP(t, p, "http://"+addr+"/healthz")
}

// waitLeader waits for a leader other than notHolder at minEpoch or later,
// confirmed by its own /readyz, and returns it with its epoch and when
// this test first saw it lead (polling every 10 ms).
func (c *tsqlCluster) waitLeader(notHolder string, minEpoch int64) (string, int64, time.Time) {
	c.t.Helper()
	var (
		holder string
		epoch  int64
		seen   time.Time
	)
	haPoll(c.t, fmt.Sprintf("a leader other than %q at epoch %d or later", notHolder, minEpoch), func() bool {
		for name, in := range c.instances {
			if name == notHolder || !in.proc.alive() {
				continue
			}
			_, body, err := haGet("http://" + in.addr + "/readyz")
			if mode, e := haReadyzRole(body); err == nil && mode == "leader" && e >= minEpoch {
				holder, epoch, seen = name, e, time.Now()
				return true
			}
		}
		return false
	})
	return holder, epoch, seen
}

// currentLeader returns the holder and epoch of the lease row once its
// holder confirms it leads at that epoch.
func (c *tsqlCluster) currentLeader() (string, int64) {
	c.t.Helper()
	for {
		holder, epoch, _ := c.waitLeader("", 1)
		if l := c.audit.lease(c.t); l.Holder == holder && l.Epoch == epoch {
			return holder, epoch
		}
	}
}

// tsqlAudit reads the SQL Server database behind the instances' backs.
type tsqlAudit struct {
	db *sql.DB
}

func openTSQLAudit(t *testing.T, dsn string) *tsqlAudit {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return &tsqlAudit{db: db}
}

// tsqlLease is the lease row.
type tsqlLease struct {
	Holder   string
	Epoch    int64
	Acquired time.Time
}

func (a *tsqlAudit) lease(t *testing.T) tsqlLease {
	t.Helper()
	var l tsqlLease
	err := a.db.QueryRowContext(context.Background(),
		`SELECT holder_id, lease_epoch, acquired_at FROM submission_manager_leases WHERE lease_name = @p1`,
		core.DefaultLeaseName).Scan(&l.Holder, &l.Epoch, &l.Acquired)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("reading the lease: %v", err)
	}
	return l
}

func (a *tsqlAudit) attempts(t *testing.T) []auditAttempt {
	t.Helper()
	rows, err := a.db.QueryContext(context.Background(), `
		SELECT intent_id, attempt_number, holder_id, lease_epoch, started_at, finished_at,
		       COALESCE(outcome_status, ''), COALESCE(error, '')
		FROM submission_attempts ORDER BY started_at, intent_id, attempt_number`)
	if err != nil {
		t.Fatalf("reading attempts: %v", err)
	}
	defer rows.Close()
	var out []auditAttempt
	for rows.Next() {
		var (
			r        auditAttempt
			finished sql.NullTime
		)
		if err := rows.Scan(&r.IntentID, &r.Number, &r.HolderID, &r.Epoch, &r.StartedAt, &finished, &r.OutcomeStatus, &r.Error); err != nil {
			t.Fatalf("reading attempts: %v", err)
		}
		r.FinishedAt = finished.Time
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading attempts: %v", err)
	}
	return out
}

func (a *tsqlAudit) intents(t *testing.T) map[string]auditIntent {
	t.Helper()
	rows, err := a.db.QueryContext(context.Background(),
		`SELECT intent_id, status, attempt_count, created_at FROM submission_intents`)
	if err != nil {
		t.Fatalf("reading intents: %v", err)
	}
	defer rows.Close()
	out := map[string]auditIntent{}
	for rows.Next() {
		var r auditIntent
		if err := rows.Scan(&r.IntentID, &r.Status, &r.AttemptCount, &r.CreatedAt); err != nil {
			t.Fatalf("reading intents: %v", err)
		}
		out[r.IntentID] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("reading intents: %v", err)
	}
	return out
}

// waitTerminal waits until every one of ids is stored and terminal.
func (a *tsqlAudit) waitTerminal(t *testing.T, ids []string) {
	t.Helper()
	var waiting []string
	haPoll(t, "every acknowledged intent stored and terminal", func() bool {
		all := a.intents(t)
		waiting = waiting[:0]
		for _, id := range ids {
			if in, ok := all[id]; !ok || !in.Status.Terminal() {
				waiting = append(waiting, id)
			}
		}
		if len(waiting) > 0 {
			time.Sleep(100 * time.Millisecond) // one read of the table per 100 ms
		}
		return len(waiting) == 0
	})
}
