package command

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testIntentsListAndGet runs list and get against the service of
// TestIntentsCommands once it holds five intents: ok-1, dead-1, dead-2 and
// their two resubmissions.
func testIntentsListAndGet(t *testing.T, url string) {
	t.Helper()
	// The key and URL as flags, no environment.
	flags := []string{"--url", url, "--api-key", "client-key"}
	code, out, errOut := run(t, nil, append([]string{"intents", "list", "--limit", "2"}, flags...)...)
	m := regexp.MustCompile(`--cursor (\S+)`).FindStringSubmatch(errOut)
	if code != ExitOK || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 || !strings.Contains(errOut, "more intents match") || m == nil {
		t.Fatalf("list --limit 2 of 5: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, nil, append([]string{"intents", "list", "--json", "--cursor", m[1]}, flags...)...)
	var rest listed
	if code != ExitOK || json.Unmarshal([]byte(out), &rest) != nil || len(rest.Intents) != 3 || rest.NextCursor != nil || errOut != "" {
		t.Fatalf("list --cursor: %d\n%s%s", code, out, errOut)
	}
	var ids []string
	for _, in := range rest.Intents {
		ids = append(ids, in.IntentId)
	}
	code, out, _ = run(t, nil, append([]string{"intents", "list", "--json", "--limit", "2"}, flags...)...)
	var first listed
	if code != ExitOK || json.Unmarshal([]byte(out), &first) != nil || len(first.Intents) != 2 || first.NextCursor == nil || *first.NextCursor != m[1] {
		t.Fatalf("list --json --limit 2: %d\n%s", code, out)
	}
	for _, in := range first.Intents {
		ids = append(ids, in.IntentId)
	}
	slices.Sort(ids)
	if want := []string{"dead-1", "dead-1~r1", "dead-2", "dead-2~r1", "ok-1"}; !slices.Equal(ids, want) {
		t.Fatalf("two pages listed %v, want %v once each", ids, want)
	}

	testIntentsSearch(t, flags)

	code, out, errOut = run(t, nil, append([]string{"intents", "get", "ok-1"}, flags...)...)
	for _, want := range []string{"payload\n  {\n    \"token\": \"t\"\n  }", "contract", "push realtime, one_shot, terminal outcomes: none", "LEADER"} {
		if code != ExitOK || !strings.Contains(out, want) {
			t.Fatalf("get ok-1 does not show %q: %d\n%s%s", want, code, out, errOut)
		}
	}
	if !regexp.MustCompile(`(?m)^1 +\S+ +\d+ +\S+ +\S+ +yes +accepted$`).MatchString(out) {
		t.Fatalf("get ok-1 does not show its one attempt as sent and accepted:\n%s", out)
	}
	code, out, _ = run(t, nil, append([]string{"intents", "get", "ok-1", "--json"}, flags...)...)
	var in struct {
		Payload  map[string]string
		Contract struct{ Policy string }
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &in) != nil || in.Payload["token"] != "t" || in.Contract.Policy != "one_shot" {
		t.Fatalf("get --json: %d\n%s", code, out)
	}

	code, _, errOut = run(t, nil, "intents", "list", "--url", url)
	if code != ExitError || !strings.Contains(errOut, "401") || !strings.Contains(errOut, "--api-key") || !strings.Contains(errOut, APIKeyEnv) {
		t.Fatalf("list without a key: %d %s", code, errOut)
	}
}

// testIntentsSearch runs list's search flags over the five intents: dead-1
// and dead-2 were rejected with provider_failure, ok-1 accepted.
func testIntentsSearch(t *testing.T, flags []string) {
	t.Helper()
	for _, tc := range []struct {
		search []string
		want   []string
	}{
		{[]string{"--id-prefix", "dead-1"}, []string{"dead-1", "dead-1~r1"}},
		{[]string{"--id-prefix", "DEAD"}, nil},
		{[]string{"--last-result", "PROVIDER_failure"}, []string{"dead-1", "dead-2"}},
		{[]string{"--last-result", "provider_failure", "--id-prefix", "dead-2"}, []string{"dead-2"}},
		{[]string{"--created-from", "1h", "--id-prefix", "ok"}, []string{"ok-1"}},
		{[]string{"--created-before", "2000-01-01T00:00:00Z"}, nil},
		{[]string{"--created-from", "2000-01-01T00:00:00Z", "--created-before", "2100-01-01T00:00:00+02:00", "--status", "accepted", "--id-prefix", "ok"}, []string{"ok-1"}},
	} {
		code, out, errOut := run(t, nil, append(append([]string{"intents", "list", "--json"}, tc.search...), flags...)...)
		var page listed
		if code != ExitOK || json.Unmarshal([]byte(out), &page) != nil {
			t.Fatalf("list %q: %d\n%s%s", tc.search, code, out, errOut)
		}
		var ids []string
		for _, in := range page.Intents {
			ids = append(ids, in.IntentId)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, tc.want) {
			t.Errorf("list %q found %q, want %q", tc.search, ids, tc.want)
		}
	}
}

// TestClientCommandsNameWhatIsWrong checks the messages of the client
// commands for input they refuse and a service they cannot reach: each
// names the flag (and variable) to fix.
func TestClientCommandsNameWhatIsWrong(t *testing.T) {
	nowhere := map[string]string{"SUBMISSION_URL": "http://127.0.0.1:1"}
	for _, args := range [][]string{{"intents", "list"}, {"intents", "get", "x"}, {"gateways", "list"}} {
		code, _, errOut := run(t, nowhere, args...)
		if code != ExitError || !strings.Contains(errOut, "cannot reach SubmissionManager at http://127.0.0.1:1") ||
			!strings.Contains(errOut, "--url") || !strings.Contains(errOut, "SUBMISSION_URL") {
			t.Errorf("%q with nothing at the URL: %d %q", args, code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"intents", "list", "--status", "done"}, []string{`invalid value "done" for --status`, "must be one of pending"}},
		{[]string{"intents", "list", "--limit", "0"}, []string{"--limit must be at least 1"}},
		{[]string{"intents", "list", "--limit", "many"}, []string{`invalid value "many" for --limit`}},
		{[]string{"intents", "list", "--created-from", "yesterday"}, []string{`invalid value "yesterday" for --created-from`, "RFC 3339"}},
		{[]string{"intents", "list", "--created-from", "1h", "--created-before", "2h"}, []string{"--created-before", "must be later than --created-from"}},
		{[]string{"intents", "list", "--url", "127.0.0.1:8000"}, []string{"--url", "SUBMISSION_URL", "http://"}},
		{[]string{"intents", "get", "x", "--wait"}, []string{"flag provided but not defined: --wait"}},
		{[]string{"intents", "resubmit", "--status", "pending"}, []string{"--status", "must be one of accepted"}},
		{[]string{"intents", "resubmit", "--max", "0", "x"}, []string{"--max must be at least 1"}},
		{[]string{"gateways", "list", "--url", "ftp://x"}, []string{"--url"}},
		{[]string{"intents", "purge"}, []string{`unknown intents subcommand "purge"`}},
	} {
		code, _, errOut := run(t, nil, tc.args...)
		for _, want := range tc.want {
			if code != ExitUsage || !strings.Contains(errOut, want) {
				t.Errorf("%q: exit %d, stderr does not say %q:\n%s", tc.args, code, want, errOut)
			}
		}
	}
}

// TestClientCommandsShareOneFlagStyle checks each subcommand's help: its
// own flags only, the connection flags with their environment variable,
// and the command-line-only flags without one.
func TestClientCommandsShareOneFlagStyle(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		want, absent []string
	}{
		{[]string{"intents", "list", "-h"}, []string{"--status", "--cursor", "--limit (default 50)", "--id-prefix", "--created-from", "--created-before", "--last-result"}, []string{"--new-id", "--yes", "SUBMISSION_STATUS"}},
		{[]string{"intents", "get", "--help"}, nil, []string{"--status", "--limit"}},
		{[]string{"intents", "resubmit", "-h"}, []string{"--new-id", "--yes\n", "--max (default 100)"}, []string{"SUBMISSION_YES", "--cursor"}},
		{[]string{"gateways", "list", "-h"}, nil, []string{"--status"}},
		{[]string{"gateways", "pause", "-h"}, nil, []string{"--status"}},
	} {
		code, stdout, stderr := run(t, nil, tc.args...)
		want := append([]string{"usage: submission-manager " + tc.args[0] + " " + tc.args[1],
			"--url, SUBMISSION_URL (default http://127.0.0.1:8000)", "--api-key, SUBMISSION_API_KEY\n", "--json\n"}, tc.want...)
		for _, w := range want {
			if code != ExitOK || stdout != "" || !strings.Contains(stderr, w) {
				t.Errorf("%q: exit %d, help lacks %q:\n%s", tc.args, code, w, stderr)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(stderr, a) {
				t.Errorf("%q: help shows %q:\n%s", tc.args, a, stderr)
			}
		}
	}
	for _, args := range [][]string{{"intents", "-h"}, {"gateways", "--help"}} {
		if code, _, stderr := run(t, nil, args...); code != ExitOK || !strings.Contains(stderr, "--api-key (SUBMISSION_API_KEY") {
			t.Errorf("%q: exit %d\n%s", args, code, stderr)
		}
	}
}
