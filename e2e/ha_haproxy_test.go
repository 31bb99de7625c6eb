package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/app/executor"
)

// The timings of the multi-process test, passed to every serve process.
const (
	mpLeaseDuration   = 2 * time.Second
	mpRenewInterval   = 300 * time.Millisecond
	mpAcquireInterval = 300 * time.Millisecond
	// mpFailoverBound is the bound on electing a new leader.
	mpFailoverBound = mpLeaseDuration + mpAcquireInterval + time.Second
)

// TestHAMultiProcessBehindHAProxy runs three `serve` processes on one SQLite
// file behind a real HAProxy (docs/haproxy.cfg), with the gateway simulator
// as a fourth process, and submits load through HAProxy while it SIGKILLs
// the leader, then SIGSTOPs the next leader past its lease and SIGCONTs it.
// It shows, from the database and the simulator's /stats: a new leader
// within lease_duration + acquire_interval + 1 s both times, every intent
// terminal, nothing acknowledged lost, no gateway submission without a
// recorded attempt start, no attempt by the resumed stale leader, and no
// reference accepted twice.
func TestHAMultiProcessBehindHAProxy(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed, so the multi-process HA test cannot run; .ci/run installs it (apt-get install -y haproxy)")
	}
	if testing.Short() {
		t.Skip("-short: the multi-process HA test builds the binaries and runs a failover scenario of about 20 seconds")
	}
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
	dbPath := filepath.Join(dir, "ha.db")
	c := &mpCluster{t: t, dir: dir, bin: filepath.Join(dir, "submission-manager"), registry: registry, dbPath: dbPath,
		instances: map[string]*mpInstance{}}
	// The first instance migrates the new file; the others start together.
	c.start("sm-01")
	c.start("sm-02")
	c.start("sm-03")
	c.audit = openAuditDB(t, dbPath)

	front := haFreeAddr(t)
	proxy := haStartProcess(t, dir, "haproxy", haproxy, []string{"-db", "-f", filepath.Join(haModuleRoot(t), "docs", "haproxy.cfg")}, []string{
		"SM_LISTEN=" + front,
		"SM_INSTANCE_1=" + c.instances["sm-01"].addr,
		"SM_INSTANCE_2=" + c.instances["sm-02"].addr,
		"SM_INSTANCE_3=" + c.instances["sm-03"].addr,
	})
	haWaitHTTP(t, proxy, "http://"+front+"/readyz")

	first, firstEpoch, _ := c.waitLeader("", 1)
	load, err := startHALoad("http://"+front, 3, 25*time.Millisecond, []string{"sms.ha", "push.ha", "sms.deadline"})
	if err != nil {
		t.Fatal(err)
	}
	defer load.abort()
	haMust(t, load.waitAcked(150))

	// 1. SIGKILL the leader in the middle of its work.
	killedAt := time.Now()
	c.instances[first].proc.kill(t)
	second, secondEpoch, acquiredAt := c.waitLeader(first, firstEpoch+1)
	killFailover := acquiredAt.Sub(killedAt)
	if killFailover > mpFailoverBound {
		t.Errorf("after SIGKILL of %s, %s acquired the lease %s later, more than lease_duration + acquire_interval + 1s = %s",
			first, second, killFailover, mpFailoverBound)
	}
	haMust(t, load.waitAcked(150))

	// 2. SIGSTOP the new leader past its lease, then SIGCONT it.
	stale, staleEpoch := second, secondEpoch
	stoppedAt, third, thirdEpoch := c.pauseLeader(stale, staleEpoch)
	stopFailover := c.leaseAcquiredAt(thirdEpoch).Sub(stoppedAt)
	if stopFailover > mpFailoverBound {
		t.Errorf("after SIGSTOP of %s, %s acquired the lease %s later, more than %s", stale, third, stopFailover, mpFailoverBound)
	}
	// Past the stale leader's lease by a margin, with the new leader at work.
	time.Sleep(time.Until(stoppedAt.Add(mpLeaseDuration + 500*time.Millisecond)))
	haMust(t, load.waitAcked(50))
	staleRows := c.rowsOf(stale, staleEpoch)
	c.instances[stale].proc.signal(t, syscall.SIGCONT)
	haPoll(t, stale+" reporting follower after SIGCONT", func() bool {
		_, body, err := haGet("http://" + c.instances[stale].addr + "/readyz")
		mode, _ := haReadyzRole(body)
		return err == nil && mode == "follower"
	})
	haMust(t, load.waitAcked(100))
	load.stop()

	// Every acknowledged intent, and every stored one, ends.
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
	c.audit.checkInvariants(t, stats)
	c.checkStaleLeaderWroteNothing(stale, staleEpoch, stoppedAt, staleRows)
	if lost := haLogEvents(t, c.instances[stale].proc.logPath, "leader_lost"); len(lost) == 0 {
		t.Errorf("%s logged no leader_lost after it was resumed", stale)
	}
	if l := c.currentLease(); l.Epoch < thirdEpoch {
		t.Errorf("the lease went back to epoch %d after epoch %d", l.Epoch, thirdEpoch)
	}
	t.Logf("leaders: %s@%d, SIGKILL → %s@%d in %s, SIGSTOP → %s@%d in %s; %d intents acknowledged (%d client retries), %d gateway submissions, %d duplicates",
		first, firstEpoch, second, secondEpoch, killFailover.Round(time.Millisecond), third, thirdEpoch, stopFailover.Round(time.Millisecond),
		len(acked), load.retries.Load(), stats.Total, stats.Duplicates)
}

// writeMPRegistry writes the multi-process test's targets: two that give up
// after a few attempts and one with a short deadline, so that an intent the
// gateway accepted but whose answer a killed leader never recorded (its
// repeats get duplicate_reference, not terminal) ends soon.
func writeMPRegistry(t *testing.T, path, smsURL, pushURL string) {
	t.Helper()
	sms := []string{"invalid_request", "invalid_recipient", "invalid_message"}
	targets := []map[string]any{
		{"submissionTarget": "sms.ha", "gatewayType": "sms", "gatewayUrl": smsURL, "mode": "realtime",
			"policy": "max_attempts", "maxAttempts": 6, "terminalOutcomes": sms},
		{"submissionTarget": "push.ha", "gatewayType": "push", "gatewayUrl": pushURL, "mode": "batch",
			"policy": "max_attempts", "maxAttempts": 6, "terminalOutcomes": []string{"invalid_request", "unregistered_token"}},
		{"submissionTarget": "sms.deadline", "gatewayType": "sms", "gatewayUrl": smsURL, "mode": "realtime",
			"policy": "deadline", "maxAcceptanceSeconds": 8, "terminalOutcomes": sms},
	}
	data, err := json.MarshalIndent(map[string]any{"targets": targets}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mpCluster is the serve processes of the multi-process test.
type mpCluster struct {
	t         *testing.T
	dir, bin  string
	registry  string
	dbPath    string
	instances map[string]*mpInstance
	audit     *auditDB
}

type mpInstance struct {
	addr string
	proc *haProcess
}

// start runs `submission-manager serve` as holder name and waits until it
// answers /healthz.
func (c *mpCluster) start(name string) {
	t := c.t
	t.Helper()
	p := haStartProcess(t, c.dir, name, c.bin, []string{"serve",
		"--database", "sqlite:" + c.dbPath,
		"--registry", c.registry,
		"--listen", haAnyPort,
		"--holder-id", name,
		"--lease-duration", mpLeaseDuration.String(),
		"--renew-interval", mpRenewInterval.String(),
		"--acquire-interval", mpAcquireInterval.String(),
		"--schedule-refresh-interval", "200ms",
		"--retry-delay", "100ms",
		"--gateway-timeout", "2s",
		"--shutdown-timeout", "5s",
		"--log-format", "json",
	}, nil)
	addr := haServeAddr(t, p)
	c.instances[name] = &mpInstance{addr: addr, proc: p}
	haWaitHTTP(t, p, "http://"+addr+"/healthz")
}

// currentLease reads the lease row.
func (c *mpCluster) currentLease() (l struct {
	Holder    string
	Epoch     int64
	Acquired  time.Time
	ExpiresAt time.Time
}) {
	c.t.Helper()
	var acquired, expires int64
	err := c.audit.db.QueryRowContext(context.Background(),
		`SELECT holder_id, lease_epoch, acquired_at, expires_at FROM submission_manager_leases`).Scan(&l.Holder, &l.Epoch, &acquired, &expires)
	if err != nil && err != sql.ErrNoRows {
		c.t.Fatalf("reading the lease: %v", err)
	}
	l.Acquired, l.ExpiresAt = time.Unix(0, acquired), time.Unix(0, expires)
	return l
}

// leaseAcquiredAt returns when (database time) the lease reached epoch, as
// long as it is still at that epoch.
func (c *mpCluster) leaseAcquiredAt(epoch int64) time.Time {
	c.t.Helper()
	l := c.currentLease()
	if l.Epoch != epoch {
		c.t.Fatalf("the lease moved on to epoch %d (%s) before it could be read at epoch %d", l.Epoch, l.Holder, epoch)
	}
	return l.Acquired
}

// waitLeader waits for a leader other than notHolder at minEpoch or later,
// confirmed by its own /readyz, and returns it with its epoch and the
// database time it acquired the lease.
func (c *mpCluster) waitLeader(notHolder string, minEpoch int64) (string, int64, time.Time) {
	c.t.Helper()
	var (
		holder   string
		epoch    int64
		acquired time.Time
	)
	haPoll(c.t, fmt.Sprintf("a leader other than %q at epoch %d or later", notHolder, minEpoch), func() bool {
		l := c.currentLease()
		in, ok := c.instances[l.Holder]
		if !ok || l.Holder == notHolder || l.Epoch < minEpoch || !in.proc.alive() {
			return false
		}
		_, body, err := haGet("http://" + in.addr + "/readyz")
		mode, e := haReadyzRole(body)
		if err != nil || mode != "leader" || e != l.Epoch {
			return false
		}
		holder, epoch, acquired = l.Holder, l.Epoch, l.Acquired
		return true
	})
	return holder, epoch, acquired
}

// pauseLeader SIGSTOPs the leader and waits for a successor. A process
// stopped inside a write transaction keeps SQLite's write lock, and then
// nobody can take over until it resumes (a property of the embedded
// database: one file, one writer). Such a pause is undone at once, before
// the lease is at risk, and tried again. It returns the stop time and the
// successor.
func (c *mpCluster) pauseLeader(name string, epoch int64) (time.Time, string, int64) {
	t := c.t
	t.Helper()
	const tries = 10
	for try := 1; try <= tries; try++ {
		// A leader catching up on a backlog (as after the failover before)
		// writes back to back and is nearly always inside a transaction.
		c.waitBacklogBelow(50)
		// The stop is complete, every thread stopped, only when signal
		// returns: an attempt reserved while the signal was on its way
		// was reserved by a running leader.
		c.instances[name].proc.signal(t, syscall.SIGSTOP)
		stoppedAt := time.Now()
		if c.writeLocked() {
			t.Logf("try %d: %s was stopped inside a write transaction and holds SQLite's write lock; resuming it at once", try, name)
			c.instances[name].proc.signal(t, syscall.SIGCONT)
			// Resumed, it ends the transaction it was stopped in: wait
			// until the write lock comes free, so the next try does not
			// stop it inside that same transaction again.
			if !c.takeWriteLock(haWait) {
				t.Fatalf("SQLite's write lock still held %s after %s was resumed", haWait, name)
			}
			name, epoch, _ = c.waitLeader("", epoch)
			continue
		}
		deadline := stoppedAt.Add(mpFailoverBound + 2*time.Second)
		for time.Now().Before(deadline) {
			if l := c.currentLease(); l.Holder != name && l.Epoch > epoch {
				next, nextEpoch, _ := c.waitLeader(name, epoch+1)
				return stoppedAt, next, nextEpoch
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no new leader within %s of SIGSTOP of %s", mpFailoverBound+2*time.Second, name)
	}
	t.Fatalf("%s was inside a write transaction at each of %d SIGSTOPs", name, tries)
	return time.Time{}, "", 0
}

// waitBacklogBelow waits until fewer than n intents are pending.
func (c *mpCluster) waitBacklogBelow(n int) {
	c.t.Helper()
	haPoll(c.t, fmt.Sprintf("fewer than %d pending intents", n), func() bool {
		var pending int
		err := c.audit.db.QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM submission_intents WHERE status = 'pending'`).Scan(&pending)
		if err != nil {
			c.t.Fatalf("counting pending intents: %v", err)
		}
		return pending < n
	})
}

// writeLocked reports whether some connection holds the database's write
// lock for 300 ms on end: a paused process in a write transaction, since
// running instances commit within milliseconds.
func (c *mpCluster) writeLocked() bool {
	return !c.takeWriteLock(300 * time.Millisecond)
}

// takeWriteLock reports whether a write transaction can start within wait,
// and rolls it back at once. SQLite's busy timeout does the waiting: BEGIN
// IMMEDIATE goes ahead as soon as the lock is free.
func (c *mpCluster) takeWriteLock(wait time.Duration) bool {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(wait.Milliseconds(), 10))
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", c.dbPath+"?"+q.Encode())
	if err != nil {
		c.t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return false
	}
	_ = tx.Rollback()
	return true
}

// rowsOf returns the attempts holder made at epoch, keyed by intent and
// number.
func (c *mpCluster) rowsOf(holder string, epoch int64) map[string]auditAttempt {
	out := map[string]auditAttempt{}
	for _, a := range c.audit.attempts(c.t) {
		if a.HolderID == holder && a.Epoch == epoch {
			out[a.IntentID+"#"+strconv.Itoa(a.Number)] = a
		}
	}
	return out
}

// checkStaleLeaderWroteNothing compares the stale leader's attempts before
// it was resumed with the final ones: it started none after its pause, and
// every attempt it had left open was closed by a successor as outcome
// unknown, never by the stale leader's late result.
func (c *mpCluster) checkStaleLeaderWroteNothing(stale string, epoch int64, stoppedAt time.Time, before map[string]auditAttempt) {
	t := c.t
	t.Helper()
	after := c.rowsOf(stale, epoch)
	// Attempts a successor found open: it closes each as outcome unknown,
	// or, through the gateway's lookup, with the outcome the gateway gave
	// or as never received; it logs attempt_outcome_unknown first.
	foundOpen := map[string]bool{}
	for name, in := range c.instances {
		if name == stale {
			continue
		}
		for _, ev := range haLogEvents(t, in.proc.logPath, "attempt_outcome_unknown") {
			id, _ := ev["intent_id"].(string)
			n, _ := ev["attempt"].(float64)
			foundOpen[id+"#"+strconv.Itoa(int(n))] = true
		}
	}
	for key, a := range after {
		if _, ok := before[key]; !ok {
			t.Errorf("the resumed stale leader %s@%d started attempt %s at %s", stale, epoch, key, a.StartedAt)
		}
		if a.StartedAt.After(stoppedAt) {
			t.Errorf("attempt %s of %s@%d started at %s, after the leader was stopped at %s", key, stale, epoch, a.StartedAt, stoppedAt)
		}
		if b := before[key]; b.FinishedAt.IsZero() && !a.FinishedAt.IsZero() && a.Error != executor.OutcomeUnknownError && !foundOpen[key] {
			t.Errorf("attempt %s left open by the stale leader ended with %q/%q, not closed by a successor that found it open",
				key, a.OutcomeStatus, a.Error)
		}
	}
	t.Logf("the stale leader %s@%d had %d attempts when resumed, %d at the end", stale, epoch, len(before), len(after))
}

// mpStats reads both simulated gateways' /stats and merges them.
func mpStats(t *testing.T, urls ...string) gatewaysim.Stats {
	t.Helper()
	all := gatewaysim.Stats{References: map[string]gatewaysim.ReferenceStats{}}
	for _, u := range urls {
		code, body, err := haGet(u + "/stats")
		if err != nil || code != 200 {
			t.Fatalf("GET %s/stats: %d %v", u, code, err)
		}
		var s struct {
			Total, Accepted, Rejected, Duplicates, Faults int64
			References                                    map[string]struct {
				Submissions, Accepted, Rejected, Duplicates, Faults int
			}
		}
		if err := json.Unmarshal([]byte(body), &s); err != nil {
			t.Fatalf("decoding %s/stats: %v", u, err)
		}
		all.Total += s.Total
		all.Accepted += s.Accepted
		all.Rejected += s.Rejected
		all.Duplicates += s.Duplicates
		all.Faults += s.Faults
		for ref, r := range s.References {
			prev := all.References[ref]
			all.References[ref] = gatewaysim.ReferenceStats{
				Submissions: prev.Submissions + r.Submissions, Accepted: prev.Accepted + r.Accepted,
				Rejected: prev.Rejected + r.Rejected, Duplicates: prev.Duplicates + r.Duplicates, Faults: prev.Faults + r.Faults,
			}
		}
	}
	return all
}

func haMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
