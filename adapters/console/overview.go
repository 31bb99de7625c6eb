package console

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// statuses are the overview's columns, in lifecycle order.
var statuses = []core.IntentStatus{core.StatusPending, core.StatusAccepted, core.StatusRejected, core.StatusExhausted}

type targetCounts struct {
	Target   string
	Counts   []int64 // in the order of statuses
	Total    int64
	InRegist bool
}

type overviewData struct {
	Statuses []core.IntentStatus
	Targets  []targetCounts
	Totals   []int64
	Total    int64

	Charts   []chart
	Activity *ActivitySnapshot

	Role       string
	HolderID   string
	Lease      core.Lease
	LeaseKnown bool

	GatewaysAvailable bool
	Gateways          []GatewayState
	GatewayError      string
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, ss session) {
	counts, err := c.cfg.Operator.CountIntents(r.Context())
	if err != nil {
		c.failure(w, r, ss, "counting intents", err)
		return
	}
	d := overviewData{Statuses: statuses, Totals: make([]int64, len(statuses)), HolderID: c.cfg.HolderID}
	d.Targets = countTable(c.cfg.Service.Targets(), counts)
	for _, t := range d.Targets {
		for i, n := range t.Counts {
			d.Totals[i] += n
		}
		d.Total += t.Total
	}
	if c.cfg.Activity != nil {
		snap := c.cfg.Activity.Snapshot()
		d.Activity = &snap
		d.Charts = []chart{
			newChart("Intake", "intents created on this instance per second", snap.Intake),
			newChart("Attempts", "attempts finished by this instance per second (while it leads)", snap.Attempts),
			newChart("Completions", "intents ended by this instance per second (while it leads)", snap.Completions),
		}
	}
	d.Role = "follower"
	if c.cfg.Leadership != nil {
		lease, leader := c.cfg.Leadership.Leadership()
		d.Lease, d.LeaseKnown = lease, lease.HolderID != ""
		if leader {
			d.Role = "leader"
		}
	}
	if c.cfg.APIOnly {
		d.Role = "API only (never leads)"
	}
	if c.cfg.Gateways != nil {
		d.GatewaysAvailable = true
		o, err := c.cfg.Gateways.Gateways(r.Context())
		if err != nil {
			d.GatewayError = err.Error()
		}
		d.Gateways = gatewayStates(o)
	}
	c.render(w, r, http.StatusOK, "overview", page{Title: "Overview", Session: ss, Data: d})
}

// countTable makes one row per target of the registry and per target that
// has intents but left the registry, ordered by target.
func countTable(contracts []core.Contract, counts []ports.IntentCount) []targetCounts {
	rows := make(map[string]*targetCounts)
	row := func(target string) *targetCounts {
		if rows[target] == nil {
			rows[target] = &targetCounts{Target: target, Counts: make([]int64, len(statuses))}
		}
		return rows[target]
	}
	for _, c := range contracts {
		row(c.SubmissionTarget).InRegist = true
	}
	for _, n := range counts {
		t := row(n.SubmissionTarget)
		if i := slices.Index(statuses, n.Status); i >= 0 {
			t.Counts[i] += n.Count
			t.Total += n.Count
		}
	}
	out := make([]targetCounts, 0, len(rows))
	for _, t := range rows {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b targetCounts) int { return strings.Compare(a.Target, b.Target) })
	return out
}

// chart is one series drawn as an SVG polyline, computed here so the
// template only places numbers.
type chart struct {
	Title, Help   string
	Width, Height int
	Points        string
	Max           int64
	Total         int64
	// LastMinute is the mean rate over the last 60 seconds.
	LastMinute string
	Seconds    int
}

func newChart(title, help string, series []int64) chart {
	ch := chart{Title: title, Help: help, Width: 600, Height: 120, Seconds: len(series)}
	for _, v := range series {
		ch.Max = max(ch.Max, v)
		ch.Total += v
	}
	var minute int64
	for _, v := range series[max(0, len(series)-60):] {
		minute += v
	}
	ch.LastMinute = fmt.Sprintf("%.1f", float64(minute)/60)
	top := max(ch.Max, 1)
	var b strings.Builder
	for i, v := range series {
		x := float64(i) * float64(ch.Width) / float64(max(len(series)-1, 1))
		y := float64(ch.Height) - float64(v)*float64(ch.Height-4)/float64(top)
		fmt.Fprintf(&b, "%.1f,%.1f ", x, y)
	}
	ch.Points = strings.TrimSpace(b.String())
	return ch
}
