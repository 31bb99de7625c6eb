package console

import (
	"net/http"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

type instancesData struct {
	Available  bool
	HolderID   string
	Instances  []instanceRow
	Lease      core.Lease
	LeaseFound bool
	Leaders    int
	Stale      int
}

// instanceRow is one instance in the console's words.
type instanceRow struct {
	ports.InstanceStatus
	// This says the row is the instance serving the page.
	This bool
	// SeenAgo, Interval and StaleAfter rounded for reading.
	SeenAgo, Interval, StaleAfter string
}

// instances lists the instances that share the database: who leads, who
// is stale, and what each runs.
func (c *Console) instances(w http.ResponseWriter, r *http.Request, ss session) {
	d := instancesData{Available: c.cfg.Instances != nil, HolderID: c.cfg.HolderID}
	if d.Available {
		o, err := c.cfg.Instances.Instances(r.Context())
		if err != nil {
			c.failure(w, r, ss, "listing the instances", err)
			return
		}
		d.Lease, d.LeaseFound = o.Lease, o.LeaseFound
		for _, s := range o.Instances {
			d.Instances = append(d.Instances, instanceRow{InstanceStatus: s, This: s.HolderID == c.cfg.HolderID,
				SeenAgo: roundAge(s.SeenAgo), Interval: roundAge(s.Interval), StaleAfter: roundAge(s.StaleAfter)})
			if s.HoldsLease {
				d.Leaders++
			}
			if s.Stale {
				d.Stale++
			}
		}
	}
	c.render(w, r, http.StatusOK, "instances", page{Title: "Instances", Session: ss, Data: d})
}

// roundAge rounds a duration to what a person reads: tenths of a second
// below a minute, whole seconds above.
func roundAge(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
