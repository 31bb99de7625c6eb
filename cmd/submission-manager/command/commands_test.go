package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, envOf(env), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestTargetsValidateListsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"targets": [
		{"submissionTarget": "a", "gatewayType": "fax", "gatewayUrl": "http://x", "mode": "realtime",
		 "policy": "deadline", "terminalOutcomes": []},
		{"submissionTarget": "b", "gatewayType": "sms", "gatewayUrl": "http://x", "mode": "sometimes",
		 "policy": "one_shot", "terminalOutcomes": []}
	]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, nil, "targets", "validate", bad)
	if code == ExitOK {
		t.Fatalf("an invalid registry exited 0; stdout:\n%s", stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 3 {
		t.Fatalf("want at least three problems (gatewayType, maxAcceptanceSeconds, mode), got:\n%s", stdout)
	}
	for _, want := range []string{"$.targets[0].gatewayType", "$.targets[0].maxAcceptanceSeconds", "$.targets[1].mode"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no problem at %s in:\n%s", want, stdout)
		}
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, bad+": $.") {
			t.Errorf("line %q does not start with the file and a JSON path", line)
		}
	}
	if !strings.Contains(stderr, "problem") {
		t.Errorf("stderr does not summarise: %q", stderr)
	}

	code, stdout, _ = run(t, nil, "targets", "validate", filepath.Join("..", "..", "..", "config", "submission_targets.json"))
	if code != ExitOK || !strings.Contains(stdout, "4 targets, valid") {
		t.Fatalf("the example registry: exit %d, %q", code, stdout)
	}
	if code, _, _ := run(t, nil, "targets", "validate"); code != ExitUsage {
		t.Fatalf("targets validate without a file exited %d, want %d", code, ExitUsage)
	}
	if code, _, _ := run(t, nil, "targets", "validate", filepath.Join(dir, "missing.json")); code != ExitError {
		t.Fatalf("a missing file exited %d, want %d", code, ExitError)
	}
}

func TestTargetsHelpPrintsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"targets", "-h"}, {"targets", "--help"},
		{"targets", "validate", "-h"}, {"targets", "validate", "--help"}, {"targets", "validate", "-help"},
	} {
		code, stdout, stderr := run(t, nil, args...)
		if code != ExitOK || stdout != "" || !strings.Contains(stderr, "usage: submission-manager targets validate FILE") ||
			strings.Contains(stderr, "no such file") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want the usage and exit 0", args, code, stdout, stderr)
		}
	}
}

func TestMigrateUpStatusDownOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sm.db")
	db := "sqlite:" + path
	// Reading commands never create a database: a status or a down of a
	// mistyped path says there is none and leaves nothing behind.
	for _, action := range []string{"status", "down"} {
		code, stdout, stderr := run(t, nil, "migrate", action, "--database", db)
		if code != ExitError || !strings.Contains(stderr, "no database at "+path) {
			t.Fatalf("%s of a missing file: exit %d\n%s%s", action, code, stdout, stderr)
		}
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
			t.Fatalf("%s of a missing file created %v", action, entries)
		}
	}
	if code, stderr := migrateStatusIn(t, filepath.Join(t.TempDir(), "typo", "sm.db")); code != ExitError ||
		!strings.Contains(stderr, "no database") {
		t.Fatalf("status in a missing directory: exit %d, %s", code, stderr)
	}
	// The database may also come from the environment, the action after flags.
	env := map[string]string{"SUBMISSION_DATABASE": db}
	if code, stdout, stderr := run(t, env, "migrate", "up"); code != ExitOK || !strings.Contains(stdout, "done") {
		t.Fatalf("up: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ := run(t, env, "migrate", "status")
	if code != ExitOK || !strings.Contains(stdout, "applied") || strings.Contains(stdout, "pending") {
		t.Fatalf("status after up: exit %d\n%s", code, stdout)
	}
	if code, stdout, stderr := run(t, nil, "migrate", "--database", db, "down"); code != ExitOK {
		t.Fatalf("down: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, env, "migrate", "status")
	if code != ExitOK || !strings.Contains(stdout, "pending") {
		t.Fatalf("status after down: exit %d\n%s", code, stdout)
	}
}

// migrateStatusIn runs `migrate status` on path and checks that neither the
// file nor its directory came into being.
func migrateStatusIn(t *testing.T, path string) (int, string) {
	t.Helper()
	code, _, stderr := run(t, nil, "migrate", "status", "--database", "sqlite:"+path)
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("migrate status created %s", filepath.Dir(path))
	}
	return code, stderr
}

func TestMigrateRefusesBadInvocations(t *testing.T) {
	for _, args := range [][]string{
		{"migrate"},
		{"migrate", "sideways"},
		{"migrate", "up", "extra"},
		{"migrate", "up", "--database", "mysql://x"},
	} {
		if code, _, _ := run(t, nil, args...); code != ExitUsage && code != ExitError {
			t.Errorf("%q exited %d, want a failure", args, code)
		}
	}
	if code, _, stderr := run(t, nil, "migrate", "up", "--database", "mysql://x"); code == ExitOK || !strings.Contains(stderr, "--database") {
		t.Errorf("a bad --database: exit %d, stderr %q does not name the flag", code, stderr)
	}
}

func TestUnknownCommandAndHelp(t *testing.T) {
	if code, _, stderr := run(t, nil, "launch"); code != ExitUsage || !strings.Contains(stderr, "unknown command") {
		t.Fatalf("unknown command: exit %d, %q", code, stderr)
	}
	if code, _, stderr := run(t, nil); code != ExitUsage || !strings.Contains(stderr, "usage") {
		t.Fatalf("no command: exit %d, %q", code, stderr)
	}
	if code, stdout, _ := run(t, nil, "help"); code != ExitOK || !strings.Contains(stdout, "SUBMISSION_DATABASE") {
		t.Fatalf("help: exit %d, %q", code, stdout)
	}
}
