package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

// submittedTotal reads the history page's count of submissions in the
// last hour, over every target.
var submittedTotal = regexp.MustCompile(`(?s)id="history-total".*?data-series="submitted" data-total="(\d+)"`)

// TestFleetOnEveryStore runs two instances on one database of each store
// (a leader and a follower): both list both instances, the leader holding
// the lease; the follower's history counts what the leader executed, read
// from the database; and a graceful stop takes the leader off the list
// while the follower takes over.
func TestFleetOnEveryStore(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			leader, follower := startPair(t, s, func(*command.ServeConfig) {})
			for i := range 3 {
				mustCreate(t, leader.api, fmt.Sprintf("fleet-%d", i), "sms.realtime", `{"to":"+15550100","text":"hi"}`)
			}
			for i := range 3 {
				waitTerminal(t, leader.api, fmt.Sprintf("fleet-%d", i))
			}
			for _, c := range []*client.ClientWithResponses{leader.api, follower.api} {
				waitInstances(t, c, func(l client.InstanceList) bool {
					return len(l.Instances) == 2 && l.Instances[0].HolderId == "leader" && l.Instances[0].HoldsLease &&
						l.Instances[0].Role == client.Leader && l.Instances[1].HolderId == "second" &&
						!l.Instances[1].HoldsLease && l.Instances[1].Role == client.Follower &&
						!l.Instances[0].Stale && !l.Instances[1].Stale && l.Lease != nil && l.Lease.HolderId == "leader"
				})
			}
			res, err := http.Get(follower.srv.URL() + "/ui/history")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if m := submittedTotal.FindSubmatch(page); m == nil || string(m[1]) != "3" {
				t.Fatalf("the follower's history does not count the 3 submissions (%d): %q", res.StatusCode, m)
			}
			stopService(t, leader.srv)
			waitInstances(t, follower.api, func(l client.InstanceList) bool {
				return len(l.Instances) == 1 && l.Instances[0].HolderId == "second" && l.Instances[0].HoldsLease &&
					l.Instances[0].Role == client.Leader
			})
		})
	}
}
