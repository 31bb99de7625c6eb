package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "--help", "-help"} {
		var stdout, stderr bytes.Buffer
		code := realMain(t.Context(), []string{arg}, &stdout, &stderr)
		if code != 0 || !strings.Contains(stderr.String(), "usage: loadgen [flags]") ||
			!strings.Contains(stderr.String(), "-count") || strings.Contains(stderr.String(), "help requested") {
			t.Errorf("loadgen %s: exit %d, stderr %q; want the usage and exit 0", arg, code, stderr.String())
		}
	}
}

func TestBadFlagExitsTwo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := realMain(t.Context(), []string{"--count=0"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--count") {
		t.Errorf("loadgen --count=0: exit %d, stderr %q; want exit 2 naming --count", code, stderr.String())
	}
}
