package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consumerProgram is a client service's program in a module of its own,
// using the Go client as docs/api.md tells: it submits, waits for the
// final status, checks a conflict's problem type and lists.
const consumerProgram = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/submissionmanager/submission-manager/api/submission"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sm, err := submission.New(os.Args[1])
	if err != nil {
		panic(err)
	}
	in, created, err := sm.Submit(ctx, submission.Request{IntentId: "module-1", SubmissionTarget: "sms.realtime",
		Payload: json.RawMessage(` + "`" + `{"to":"+15550100","text":"hi"}` + "`" + `)})
	if err != nil {
		panic(err)
	}
	final, err := sm.WaitFinal(ctx, in.IntentId)
	if err != nil {
		panic(err)
	}
	_, _, err = sm.Submit(ctx, submission.Request{IntentId: "module-1", SubmissionTarget: "sms.realtime", Payload: json.RawMessage("{}")})
	var listed []string
	for in, err := range sm.List(ctx, submission.Filter{}) {
		if err != nil {
			panic(err)
		}
		listed = append(listed, in.IntentId)
	}
	out, _ := json.Marshal(map[string]any{"created": created, "status": final.Status,
		"conflict": submission.IsProblem(err, submission.TypeIdempotencyConflict), "listed": listed})
	fmt.Println(string(out))
}
`

// TestGoClientFromAnotherModule builds a throwaway module that depends on
// this repository the way docs/api.md says (a replace directive to a
// checkout, then go mod tidy), and runs it against the real service. The
// throwaway go.sum starts as a copy of this module's, so go mod tidy needs
// nothing beyond the module cache that building this repository filled.
func TestGoClientFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module (-short)")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "init", "example.com/orders")
	goCmd("mod", "edit", "-replace=github.com/submissionmanager/submission-manager="+repo)
	sums, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(consumerProgram), 0o600); err != nil {
		t.Fatal(err)
	}
	goCmd("mod", "tidy")
	goCmd("build", "-o", "orders", ".")

	svc, _ := startStandard(t)
	cmd := exec.CommandContext(context.Background(), filepath.Join(dir, "orders"), svc.srv.URL())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the consumer program: %v\n%s", err, out)
	}
	var got struct {
		Created  bool
		Status   string
		Conflict bool
		Listed   []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if !got.Created || got.Status != "accepted" || !got.Conflict || len(got.Listed) != 1 || got.Listed[0] != "module-1" {
		t.Fatalf("the consumer program printed %s", out)
	}
}
