package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// crashChildEnv makes the test binary the writer process that
// TestAcknowledgedWritesSurviveKill kills.
const crashChildEnv = "SQLITE_CRASH_CHILD_DB"

// TestAcknowledgedWritesSurviveKill runs concurrent creates in a child
// process, kills it with SIGKILL in the middle of its batches, and checks
// that every intent it acknowledged is in the reopened database, intact.
// (A power loss is the same with synchronous=FULL, but cannot be staged
// here.)
func TestAcknowledgedWritesSurviveKill(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		runCrashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcknowledgedWritesSurviveKill$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	lines := bufio.NewScanner(out)
	deadline := time.Now().Add(time.Minute)
	for len(acked) < 3000 && lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			acked = append(acked, id)
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() { // acknowledgements already written before the kill
		if id, ok := strings.CutPrefix(lines.Text(), "acked "); ok {
			acked = append(acked, id)
		}
	}
	_ = cmd.Wait()
	if len(acked) < 3000 {
		t.Fatalf("the child acknowledged only %d intents before the deadline", len(acked))
	}

	db := openAt(t, path)
	var check string
	if err := db.readDB.QueryRowContext(context.Background(), "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after kill: %q, %v", check, err)
	}
	store := db.Store()
	for _, id := range acked {
		in, err := store.GetIntent(context.Background(), id)
		if err != nil {
			t.Fatalf("acknowledged intent %s after the kill: %v", id, err)
		}
		if string(in.Payload) != `{"id":"`+id+`"}` {
			t.Fatalf("intent %s payload %s", id, in.Payload)
		}
	}
	t.Logf("%d acknowledged intents all survived SIGKILL", len(acked))
}

// runCrashChild creates intents from 16 goroutines until it is killed,
// printing each one after CreateIntent returned.
func runCrashChild(path string) {
	db, err := Open(context.Background(), Config{Path: path, Logger: discardLogger()})
	if err == nil {
		err = db.Migrate(context.Background(), MigrateUp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%02d-%07d", w, i)
				in := core.NewIntent(id, testContract(), []byte(`{"id":"`+id+`"}`), time.Now())
				if _, err := db.Store().CreateIntent(context.Background(), in); err != nil {
					fmt.Fprintln(os.Stderr, "crash child:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "acked %s\n", id)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
