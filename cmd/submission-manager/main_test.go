package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// These tests run the real binary as an operator would, to cover what only
// a process has: the exit code after SIGTERM and the zero-configuration
// start from a working directory.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "submission-manager-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "submission-manager")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic("building the binary: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects log lines from the reading goroutine for failure
// messages of the test goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(line + "\n")
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var urlInLog = regexp.MustCompile(`url=(http://\S+)`)

// startBinary runs `submission-manager serve` in dir with env and returns
// the process and its API URL, read from the start-up log line.
func startBinary(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	logs := &syncBuffer{}
	found := make(chan string, 1)
	go func() { // ends when the process closes stderr
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			logs.add(sc.Text())
			if m := urlInLog.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("the service exited before serving")
		}
		return cmd, url, logs
	case <-time.After(30 * time.Second):
		t.Fatal("the service did not log its URL within 30s")
	}
	return nil, "", nil
}

// TestZeroConfigurationServeAndSIGTERM starts the binary with no flags in a
// directory that holds only the example registry, as `make run` does (only
// the port is moved off 8000, through the environment, so the test never
// collides with a running service). It must create the embedded SQLite file,
// lead, serve, and exit 0 on SIGTERM.
func TestZeroConfigurationServeAndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "config"), 0o750); err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "config", "submission_targets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config", "submission_targets.json"), example, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, url, logs := startBinary(t, dir, []string{"SUBMISSION_LISTEN=127.0.0.1:0"})

	c, err := client.NewClientWithResponses(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready, err := c.ReadyzWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(ready.Body), "mode=leader ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the only instance did not lead within 30s: %q", ready.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	targets, err := c.ListTargetsWithResponse(ctx)
	if err != nil || targets.JSON200 == nil || len(targets.JSON200.Targets) != 4 {
		t.Fatalf("targets of the example registry: %v %s", err, targets.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "submission-manager.db")); err != nil {
		t.Fatalf("the default database file was not created: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v (want exit 0)\n%s", err, logs)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not exit within 60s of SIGTERM\n%s", logs)
	}
}

func TestBadFlagExitsWithUsage(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--max-in-flight", "0")
	out, err := cmd.CombinedOutput()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 2 {
		t.Fatalf("got %v, want exit 2\n%s", err, out)
	}
	if !strings.Contains(string(out), "--max-in-flight") {
		t.Fatalf("the message does not name the flag:\n%s", out)
	}
}
