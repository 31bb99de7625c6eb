package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSoak is the bounded chaos soak (`make soak`, not part of make test):
// three `serve` processes on one SQLite file behind HAProxy
// (docs/haproxy.cfg), the gateway simulator as a process (lookup on), and a
// steady submission load through HAProxy, while a chaos loop picks, every
// few seconds, one of: SIGKILL the leader (restarted on its address a
// little later), SIGSTOP the leader past its lease and SIGCONT it, or a
// gateway fault mode for a few seconds. At the end it checks that nothing
// acknowledged was lost, no reference was accepted twice, no attempt was
// made by a stale epoch, and every intent is terminal or pending with a due
// time. SUBMISSION_SOAK sets the chaos duration (e.g. 3m); without it the
// test skips. SUBMISSION_SOAK_REPORT names a file for the figures
// (markdown), which scripts/soak.sh puts into docs/benchmarks.md.
func TestSoak(t *testing.T) {
	spec := os.Getenv("SUBMISSION_SOAK")
	if spec == "" {
		t.Skip("the chaos soak runs only with SUBMISSION_SOAK set to a duration (make soak)")
	}
	duration, err := time.ParseDuration(spec)
	if err != nil || duration <= 0 {
		t.Fatalf("SUBMISSION_SOAK=%q is not a positive duration", spec)
	}
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy is not installed; .ci/run installs it (apt-get install -y haproxy)")
	}
	started := time.Now()
	dir := t.TempDir()
	haBuild(t, dir, "./cmd/submission-manager", "./cmd/gateway-sim")

	smsAddr, pushAddr := haFreeAddr(t), haFreeAddr(t)
	sim := haStartProcess(t, dir, "gateway-sim", filepath.Join(dir, "gateway-sim"), []string{
		"--sms-listen", smsAddr, "--push-listen", pushAddr,
		"--latency", "10ms", "--latency-jitter", "40ms", "--accept-ratio", "0.8",
		"--log-format", "json",
	}, nil)
	haWaitHTTP(t, sim, "http://"+smsAddr+"/stats")
	haWaitHTTP(t, sim, "http://"+pushAddr+"/stats")
	gateways := []string{"http://" + smsAddr, "http://" + pushAddr}

	registry := filepath.Join(dir, "targets.json")
	writeMPRegistry(t, registry, gateways[0], gateways[1])
	dbPath := filepath.Join(dir, "soak.db")
	s := &soak{mpCluster: mpCluster{t: t, dir: dir, bin: filepath.Join(dir, "submission-manager"), registry: registry,
		dbPath: dbPath, instances: map[string]*mpInstance{}}, addrs: map[string]string{}, gateways: gateways}
	for _, slot := range []string{"sm-1", "sm-2", "sm-3"} {
		s.addrs[slot] = haFreeAddr(t)
		s.startSlot(slot)
	}
	s.audit = openAuditDB(t, dbPath)
	front := haFreeAddr(t)
	proxy := haStartProcess(t, dir, "haproxy", haproxy, []string{"-db", "-f", filepath.Join(haModuleRoot(t), "docs", "haproxy.cfg")}, []string{
		"SM_LISTEN=" + front,
		"SM_INSTANCE_1=" + s.addrs["sm-1"], "SM_INSTANCE_2=" + s.addrs["sm-2"], "SM_INSTANCE_3=" + s.addrs["sm-3"],
	})
	haWaitHTTP(t, proxy, "http://"+front+"/readyz")
	leader, epoch, _ := s.waitLeader("", 1)

	// A steady rate: 4 workers, each one submission every 40 ms (about
	// 100/s offered), retrying a refused or lost request as a client would.
	load, err := startHALoad("http://"+front, 4, 40*time.Millisecond, []string{"sms.ha", "push.ha", "sms.deadline"})
	if err != nil {
		t.Fatal(err)
	}
	defer load.abort()
	haMust(t, load.waitAcked(100))

	chaosStart := time.Now()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	end := time.Now().Add(duration)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(3000+rng.IntN(4000)) * time.Millisecond)
		switch rng.IntN(3) {
		case 0:
			leader, epoch = s.killLeader(leader, epoch)
		case 1:
			leader, epoch = s.stopLeader(leader, epoch)
		default:
			s.gatewayFault(rng)
		}
		haMust(t, load.waitAcked(20))
	}
	load.stop()
	chaosEnd := time.Now()

	// Let the cluster finish what it can, then check.
	acked := load.acknowledged()
	s.settle(acked)
	stats := mpStats(t, gateways...)
	s.audit.checkInvariants(t, stats)
	report := s.finalCheck(acked)
	// An exhausted intent the gateway accepted either lost that answer and
	// no lookup settled it, or had its last attempt accepted only after the
	// deadline, which the contract does not count.
	intents := s.audit.intents(t)
	late := map[string]bool{}
	for _, a := range s.audit.attempts(t) {
		if a.Number == intents[a.IntentID].AttemptCount && a.OutcomeStatus == "accepted" {
			late[a.IntentID] = true
		}
	}
	lostAcceptances, lateAcceptances := 0, 0
	for id, in := range intents {
		switch {
		case in.Status != "exhausted" || stats.References[id].Accepted == 0:
		case late[id]:
			lateAcceptances++
		default:
			lostAcceptances++
		}
	}
	if len(load.problems) > 0 {
		t.Errorf("%d submissions refused for good, e.g. %s", len(load.problems), load.problems[0])
	}
	lines := []string{
		fmt.Sprintf("| chaos | %s of chaos (%s in all), %d SIGKILLs of the leader, %d SIGSTOPs past the lease, %d gateway fault windows (%s) |",
			chaosEnd.Sub(chaosStart).Round(time.Second), time.Since(started).Round(time.Second), s.kills, s.stops, s.faults, strings.Join(s.faultModes, ", ")),
		fmt.Sprintf("| leadership | final epoch %d; %s |", epoch, s.failovers()),
		fmt.Sprintf("| load | %d intents acknowledged through HAProxy (about %.0f/s), %d client retries, %d refused for good |",
			len(acked), float64(len(acked))/duration.Seconds(), load.retries.Load(), len(load.problems)),
		fmt.Sprintf("| outcome | %s |", report),
		fmt.Sprintf("| gateway | %d submissions, %d acceptances, %d duplicates, %d faults; no reference accepted twice. Exhausted intents the gateway had accepted: %d with an answer lost that no lookup settled; %d accepted only after their deadline (an attempt started just before it, after breaker deferrals; the contract does not count a late acceptance) |",
			stats.Total, stats.Accepted, stats.Duplicates, stats.Faults, lostAcceptances, lateAcceptances),
		fmt.Sprintf("| checks | %s |", map[bool]string{true: "all passed: nothing acknowledged lost, no reference accepted twice, no attempt by a stale epoch, every intent terminal or pending with a due time", false: "FAILED (see the test output)"}[!t.Failed()]),
	}
	t.Log("\n" + strings.Join(lines, "\n"))
	if path := os.Getenv("SUBMISSION_SOAK_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// soak is the multi-process cluster with fixed slots (HAProxy's server
// addresses), whose processes are replaced when killed.
type soak struct {
	mpCluster
	addrs      map[string]string // slot -> address
	generation map[string]int
	gateways   []string

	kills, stops, faults int
	faultModes           []string
	failoverTimes        []time.Duration
}

// startSlot starts a serve process on the slot's address, named after the
// slot and its generation (its holder id and log file).
func (s *soak) startSlot(slot string) string {
	if s.generation == nil {
		s.generation = map[string]int{}
	}
	s.generation[slot]++
	name := fmt.Sprintf("%s.%d", slot, s.generation[slot])
	addr := s.addrs[slot]
	p := haStartProcess(s.t, s.dir, name, s.bin, []string{"serve",
		"--database", "sqlite:" + s.dbPath, "--registry", s.registry, "--listen", addr,
		"--holder-id", name,
		"--lease-duration", mpLeaseDuration.String(), "--renew-interval", mpRenewInterval.String(),
		"--acquire-interval", mpAcquireInterval.String(), "--schedule-refresh-interval", "200ms",
		"--retry-delay", "200ms", "--gateway-timeout", "2s", "--shutdown-timeout", "5s", "--log-format", "json",
	}, nil)
	s.instances[name] = &mpInstance{addr: addr, proc: p}
	haWaitHTTP(s.t, p, "http://"+addr+"/healthz")
	return name
}

func slotOf(name string) string { return name[:strings.LastIndex(name, ".")] }

// killLeader SIGKILLs the leader, waits for a successor and restarts the
// killed slot.
func (s *soak) killLeader(leader string, epoch int64) (string, int64) {
	s.kills++
	killedAt := time.Now()
	s.instances[leader].proc.kill(s.t)
	next, nextEpoch, acquired := s.waitLeader(leader, epoch+1)
	s.failoverTimes = append(s.failoverTimes, acquired.Sub(killedAt))
	s.startSlot(slotOf(leader))
	return next, nextEpoch
}

// stopLeader SIGSTOPs the leader past its lease, then SIGCONTs it and waits
// until it reports follower.
func (s *soak) stopLeader(leader string, epoch int64) (string, int64) {
	s.stops++
	stoppedAt, next, nextEpoch := s.pauseLeader(leader, epoch)
	s.failoverTimes = append(s.failoverTimes, s.leaseAcquiredAt(nextEpoch).Sub(stoppedAt))
	time.Sleep(time.Until(stoppedAt.Add(mpLeaseDuration + 500*time.Millisecond)))
	stopped := leader
	for name, in := range s.instances {
		if in.proc.stopped {
			stopped = name
		}
	}
	s.instances[stopped].proc.signal(s.t, syscall.SIGCONT)
	haPoll(s.t, stopped+" reporting follower after SIGCONT", func() bool {
		_, body, err := haGet("http://" + s.instances[stopped].addr + "/readyz")
		mode, _ := haReadyzRole(body)
		return err == nil && mode == "follower"
	})
	return next, nextEpoch
}

// gatewayFault sets a fault mode on both simulated gateways for a few
// seconds, then the normal mode again.
func (s *soak) gatewayFault(rng *rand.Rand) {
	modes := []string{"http_503", "hang", "drop", "accept_then_drop", "not_json"}
	mode := modes[rng.IntN(len(modes))]
	s.faults++
	s.faultModes = append(s.faultModes, mode)
	setMode := func(m string) {
		for _, g := range s.gateways {
			res, err := http.Post(g+"/control/mode", "application/json", strings.NewReader(`{"mode":"`+m+`"}`))
			if err != nil || res.StatusCode != http.StatusNoContent {
				s.t.Fatalf("setting %s mode %s: %v %v", g, m, res, err)
			}
			res.Body.Close()
		}
	}
	setMode(mode)
	time.Sleep(time.Duration(2000+rng.IntN(2000)) * time.Millisecond)
	setMode("normal")
}

func (s *soak) failovers() string {
	if len(s.failoverTimes) == 0 {
		return "no failover"
	}
	lo, hi := s.failoverTimes[0], s.failoverTimes[0]
	for _, d := range s.failoverTimes {
		lo, hi = min(lo, d), max(hi, d)
	}
	return fmt.Sprintf("%d failovers, a new leader %s to %s after the kill or stop (bound: lease + acquire interval + 1 s = %s)",
		len(s.failoverTimes), lo.Round(time.Millisecond), hi.Round(time.Millisecond), mpFailoverBound)
}

// settle waits until every stored intent is terminal, or at most a minute:
// an intent may stay pending for good only with a due time (checked next).
func (s *soak) settle(acked []string) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var pending int
		if err := s.audit.db.QueryRowContext(context.Background(),
			`SELECT COUNT(*) FROM submission_intents WHERE status = 'pending'`).Scan(&pending); err != nil {
			s.t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// finalCheck: every acknowledged intent is stored, every intent is terminal
// or pending with a due time; it returns the status counts.
func (s *soak) finalCheck(acked []string) string {
	all := s.audit.intents(s.t)
	for _, id := range acked {
		if _, ok := all[id]; !ok {
			s.t.Errorf("acknowledged intent %q is not stored", id)
		}
	}
	var noDue int
	if err := s.audit.db.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM submission_intents WHERE status = 'pending' AND next_due_at IS NULL`).Scan(&noDue); err != nil {
		s.t.Fatal(err)
	}
	if noDue > 0 {
		s.t.Errorf("%d pending intents have no due time", noDue)
	}
	counts := map[string]int{}
	for _, in := range all {
		counts[string(in.Status)]++
	}
	var flagged, inDoubt, resolved int
	_ = s.audit.db.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM submission_intents WHERE possibly_accepted = 1`).Scan(&flagged)
	_ = s.audit.db.QueryRowContext(context.Background(),
		`SELECT COUNT(*) FROM submission_attempts WHERE error LIKE 'outcome unknown%'`).Scan(&inDoubt)
	for _, in := range s.instances {
		resolved += len(haLogEvents(s.t, in.proc.logPath, "in_doubt_resolved"))
	}
	return fmt.Sprintf("%d intents stored: %d accepted, %d rejected, %d exhausted, %d pending (each with a due time); %d attempts in doubt resolved by the gateway's lookup, %d left outcome unknown; %d intents flagged possiblyAccepted",
		len(all), counts["accepted"], counts["rejected"], counts["exhausted"], counts["pending"], resolved, inDoubt, flagged)
}
