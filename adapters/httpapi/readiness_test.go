package httpapi

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// leadership reports a fixed role, standing in for the elector whose
// behaviour is tested in app/leader; here only the formatting is at stake.
type leadership struct {
	lease  core.Lease
	leader bool
}

func (l leadership) Leadership() (core.Lease, bool) { return l.lease, l.leader }

func TestReadinessLines(t *testing.T) {
	expires := time.Date(2026, 2, 2, 12, 0, 10, 500, time.FixedZone("CET", 3600))
	cases := []struct {
		name string
		r    leadership
		want string
	}{
		{"leader", leadership{core.Lease{HolderID: "sm-01", Epoch: 3, ExpiresAt: expires}, true},
			"mode=leader holder_id=sm-01 lease_epoch=3 lease_expires_at=2026-02-02T11:00:10Z"},
		{"follower that saw a leader", leadership{core.Lease{HolderID: "sm-01", Epoch: 3, ExpiresAt: expires}, false},
			"mode=follower holder_id=sm-02 leader_holder_id=sm-01 lease_expires_at=2026-02-02T11:00:10Z"},
		{"follower that saw none", leadership{}, "mode=follower holder_id=sm-02"},
		{"former leader", leadership{core.Lease{HolderID: "sm-02", Epoch: 3, ExpiresAt: expires}, false},
			"mode=follower holder_id=sm-02"},
	}
	for _, tc := range cases {
		if got := readiness("sm-02", tc.r, false); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := readiness("sm-02", nil, false); got != "mode=follower holder_id=sm-02" {
		t.Errorf("without a reporter: got %q", got)
	}
	if got := readiness("sm-03", nil, true); got != "mode=follower holder_id=sm-03 api_only=true" {
		t.Errorf("API-only instance: got %q", got)
	}
}

// readRepoFile reads a file by its path from the repository root.
func readRepoFile(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	return string(b), err
}
