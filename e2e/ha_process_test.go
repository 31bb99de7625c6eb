package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// haModuleRoot is the directory of go.mod above the test's working directory.
func haModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// haBuild builds the product's commands into dir, as a user would.
func haBuild(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)...)
	cmd.Dir = haModuleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", pkgs, err, out)
	}
}

// haProcess is a child process of the test with its output in a file.
type haProcess struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // valid once exited is closed
	stopped bool  // SIGSTOPped and not yet continued
}

// haStartProcess starts bin with args and env; the test's cleanup stops it
// (continuing it first if it is stopped) and prints the end of its output
// if the test failed.
func haStartProcess(t *testing.T, dir, name, bin string, args, env []string) *haProcess {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &haProcess{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.terminate(t)
		if t.Failed() {
			t.Logf("--- last lines of %s (%s) ---\n%s", name, logPath, haTail(logPath, 40))
		}
	})
	return p
}

// signal sends sig to the process and remembers whether it is stopped.
func (p *haProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("sending %s to %s: %v", sig, p.name, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.stopped = true
		p.awaitStopped(t)
	case syscall.SIGCONT:
		p.stopped = false
	}
}

// awaitStopped waits until every thread of the process is stopped. The
// signal is only sent when kill returns: a thread still running (or in a
// system call such as an fsync, which it finishes first) may yet take or
// keep SQLite's write lock, and a probe of the lock made meanwhile would
// say nothing about the stopped process.
func (p *haProcess) awaitStopped(t *testing.T) {
	t.Helper()
	tasks := fmt.Sprintf("/proc/%d/task", p.cmd.Process.Pid)
	deadline := time.Now().Add(5 * time.Second)
	for {
		all, err := allThreadsStopped(tasks)
		if err != nil {
			t.Fatalf("reading the state of %s: %v", p.name, err)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not stopped within 5s of SIGSTOP", p.name)
		}
		time.Sleep(time.Millisecond)
	}
}

// allThreadsStopped reports whether every thread listed under tasks
// (/proc/PID/task) is in the stopped state.
func allThreadsStopped(tasks string) (bool, error) {
	entries, err := os.ReadDir(tasks)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join(tasks, e.Name(), "stat"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // the thread ended meanwhile
			}
			return false, err
		}
		// The state follows the command name, which is in parentheses
		// and may hold spaces: "PID (comm) S ...".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) {
			return false, fmt.Errorf("unexpected %s: %q", e.Name(), stat)
		}
		if state := stat[i+2]; state != 'T' && state != 't' {
			return false, nil
		}
	}
	return true, nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *haProcess) kill(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not die within 10s of SIGKILL", p.name)
	}
}

// terminate stops the process gracefully (SIGTERM), or kills it if it does
// not exit within 15 seconds. It does nothing if the process is gone.
func (p *haProcess) terminate(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	if p.stopped {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not exit within 15s of SIGTERM; killing it", p.name)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// alive reports whether the process has not exited.
func (p *haProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// haTail returns the last n lines of a file.
func haTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// haLogEvents returns the JSON log records of a process whose msg is event.
func haLogEvents(t *testing.T, path, event string) []map[string]any {
	t.Helper()
	records, err := haLogRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, rec := range records {
		if rec["msg"] == event {
			out = append(out, rec)
		}
	}
	return out
}

// haLogRecords reads the JSON log at path, one record per line that holds
// one; other lines (a panic's, the Go runtime's) are skipped.
func haLogRecords(path string) ([]map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("{")) {
			continue
		}
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out, sc.Err()
}

// haGet returns the status and body of a GET, with a short timeout so a
// stopped process does not hang the caller.
func haGet(url string) (int, string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	res, err := c.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, string(body), err
}

// haWaitHTTP polls url until it answers 200.
func haWaitHTTP(t *testing.T, p *haProcess, url string) {
	t.Helper()
	deadline := time.Now().Add(haStartWait)
	for {
		code, _, err := haGet(url)
		if err == nil && code == http.StatusOK {
			return
		}
		if !p.alive() {
			t.Fatalf("%s exited (%v) before %s answered:\n%s", p.name, p.err, url, haTail(p.logPath, 30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s did not answer 200 within %s (last: %d %v)", p.name, url, haStartWait, code, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// haReadyzRole parses the role out of a /readyz body such as
// "mode=leader holder_id=sm-01 lease_epoch=3 lease_expires_at=...".
func haReadyzRole(body string) (mode string, epoch int64) {
	for field := range strings.FieldsSeq(body) {
		k, v, _ := strings.Cut(field, "=")
		switch k {
		case "mode":
			mode = v
		case "lease_epoch":
			epoch, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return mode, epoch
}
