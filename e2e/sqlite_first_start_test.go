package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConcurrentFirstStartOnSQLite starts four instances of the built
// binary at once on a new SQLite file, as a supervisor starting a host's
// instances together does, in several rounds. Every instance must come up:
// the migrations are serialised by the file's migration lock, so the later
// migrators find nothing pending instead of failing with "table ... already
// exists". Then four `migrate up` processes at once on another new file
// must all succeed, and `migrate status` must list every migration applied.
func TestConcurrentFirstStartOnSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs processes")
	}
	const instances, rounds = 4, 2
	dir := t.TempDir()
	haBuild(t, dir, "./cmd/submission-manager")
	bin := filepath.Join(dir, "submission-manager")
	registry := filepath.Join(haModuleRoot(t), "config", "submission_targets.json")
	for round := range rounds {
		db := filepath.Join(t.TempDir(), "sm.db")
		procs := make([]*haProcess, instances)
		for i := range procs {
			name := fmt.Sprintf("round%d-sm%d", round, i)
			procs[i] = haStartProcess(t, dir, name, bin, []string{"serve",
				"--database", "sqlite:" + db, "--registry", registry, "--listen", haAnyPort,
				"--holder-id", name, "--shutdown-timeout", "1s"}, nil)
		}
		for _, p := range procs {
			haWaitHTTP(t, p, "http://"+haServeAddr(t, p)+"/readyz")
		}
		for _, p := range procs {
			p.terminate(t)
		}
	}

	db := "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	type result struct {
		out []byte
		err error
	}
	results := make(chan result, instances)
	for range instances {
		go func() {
			out, err := exec.Command(bin, "migrate", "up", "--database", db).CombinedOutput()
			results <- result{out, err}
		}()
	}
	for range instances {
		if r := <-results; r.err != nil {
			t.Errorf("a concurrent migrate up failed: %v\n%s", r.err, r.out)
		}
	}
	out, err := exec.Command(bin, "migrate", "status", "--database", db).CombinedOutput()
	if err != nil || strings.Contains(string(out), "pending") || !strings.Contains(string(out), "applied") {
		t.Fatalf("migrate status after concurrent ups: %v\n%s", err, out)
	}
}
