package command

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/submissionmanager/submission-manager/app/history"
	"github.com/submissionmanager/submission-manager/app/instances"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// fleet is what every instance, leader or not, adds for operators: its
// heartbeat in the store, the list of instances, and the history read
// from the store.
type fleet struct {
	// beat runs the heartbeat until its context ends.
	beat      func(context.Context)
	directory *instances.Directory
	history   *history.Reader
}

// newFleet builds the fleet over the store's instances and history; every
// store keeps both (ports.InstanceStore, ports.HistoryStore).
func newFleet(db database, holderID string, apiOnly bool, leadership ports.LeadershipReporter,
	targets func() []core.Contract, clock ports.Clock, log *slog.Logger) (*fleet, error) {
	store := db.Store()
	beats, ok := store.(ports.InstanceStore)
	if !ok {
		return nil, fmt.Errorf("the %T store keeps no record of instances", store)
	}
	past, ok := store.(ports.HistoryStore)
	if !ok {
		return nil, fmt.Errorf("the %T store reads no history", store)
	}
	heartbeat, err := instances.NewHeartbeat(instances.HeartbeatConfig{
		Store: beats, Clock: clock, HolderID: holderID, Version: buildVersion(),
		APIOnly: apiOnly, Leadership: leadership, Logger: log,
	})
	beat := heartbeat.Run
	if errors.Is(err, ports.ErrInvalidBeat) {
		// A holder id the records cannot keep exactly (a hostname that is
		// not ASCII) is no reason to refuse to serve: the instance runs
		// unlisted, and says so.
		log.Warn("instance_heartbeat_disabled", "holder_id", holderID, "reason", err.Error())
		beat, err = func(context.Context) {}, nil
	}
	if err != nil {
		return nil, err
	}
	directory, err := instances.NewDirectory(beats, db.Leases())
	if err != nil {
		return nil, err
	}
	reader, err := history.New(history.Config{Store: past, Clock: clock, Targets: targets})
	if err != nil {
		return nil, err
	}
	return &fleet{beat: beat, directory: directory, history: reader}, nil
}

// runAll runs each of fns with ctx, each in a goroutine it owns, and
// returns once every one has returned: the owner of the instance's
// background readers stops them all with one cancel and one wait.
func runAll(ctx context.Context, fns ...func(context.Context)) {
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(func() { fn(ctx) })
	}
	wg.Wait()
}

// buildVersion is the build this binary was made from, as the Go
// toolchain stamped it: the module version when it was built as a
// dependency, else the VCS revision (marked when the tree had changes),
// else nothing.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return truncate(v, ports.MaxVersionLen)
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision == "" {
		return ""
	}
	revision = truncate(revision, 12)
	if modified == "true" {
		revision += "-dirty"
	}
	return revision
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
