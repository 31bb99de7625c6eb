package console

import (
	"net/http"
	"strconv"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// historyWindows are the windows the history page offers, by the name its
// address carries.
var historyWindows = []struct {
	Name, Label string
	Window      ports.HistoryWindow
}{
	{"hour", "Last hour", ports.LastHour},
	{"day", "Last day", ports.LastDay},
}

// historyLines are the counts drawn on every history chart, in legend
// order, with their colours. Attempt errors are dashed: they count
// attempts, the others intents.
var historyLines = []struct {
	name, color, dash string
	value             func(ports.HistoryCounts) int64
}{
	{"submitted", "#0969da", "", func(c ports.HistoryCounts) int64 { return c.Submitted }},
	{"accepted", "#1a7f37", "", func(c ports.HistoryCounts) int64 { return c.Accepted }},
	{"rejected", "#cf222e", "", func(c ports.HistoryCounts) int64 { return c.Rejected }},
	{"exhausted", "#9a6700", "", func(c ports.HistoryCounts) int64 { return c.Exhausted }},
	{"attempt errors", "#8250df", "5 3", func(c ports.HistoryCounts) int64 { return c.AttemptErrors }},
}

type historyData struct {
	Available bool
	Window    string
	Windows   []historyLink
	// Bucket and Unit describe the y axis: counts per bucket.
	Bucket   string
	Unit     string
	From, To time.Time
	Legend   []chartLine
	Total    lineChart
	Gateways []lineChart
	Targets  []lineChart
}

type historyLink struct {
	Name, Label string
	Current     bool
}

// history shows the counts of the chosen window from the store, by target
// and by gateway, as charts with axes.
func (c *Console) history(w http.ResponseWriter, r *http.Request, ss session) {
	d := historyData{Available: c.cfg.History != nil, Window: "hour"}
	chosen := historyWindows[0]
	for _, hw := range historyWindows {
		if hw.Name == r.URL.Query().Get("window") {
			chosen, d.Window = hw, hw.Name
		}
	}
	for _, hw := range historyWindows {
		d.Windows = append(d.Windows, historyLink{Name: hw.Name, Label: hw.Label, Current: hw.Name == d.Window})
	}
	if !d.Available {
		c.render(w, r, http.StatusOK, "history", page{Title: "History", Session: ss, Data: d})
		return
	}
	v, err := c.cfg.History.History(r.Context(), chosen.Window)
	if err != nil {
		c.failure(w, r, ss, "reading the history", err)
		return
	}
	d.Bucket = bucketWords(chosen.Window.Bucket)
	d.Unit = "per " + d.Bucket
	if len(v.Starts) > 0 {
		d.From, d.To = v.Starts[0], v.Starts[len(v.Starts)-1].Add(chosen.Window.Bucket)
	}
	chart := func(id, title string, s ports.HistorySeries) lineChart {
		series := make([]chartSeries, len(historyLines))
		for i, l := range historyLines {
			series[i] = chartSeries{Name: l.name, Color: l.color, Dash: l.dash, Values: make([]int64, len(s.Counts))}
			for j, counts := range s.Counts {
				series[i].Values[j] = l.value(counts)
			}
		}
		return newLineChart(id, title, d.Unit, v.Starts, chosen.Window.Bucket, series)
	}
	d.Total = chart("history-total", "All targets", v.Total)
	d.Legend = d.Total.Lines
	for i, s := range v.Gateways {
		d.Gateways = append(d.Gateways, chart("history-gateway-"+strconv.Itoa(i), s.Name, s))
	}
	for i, s := range v.Targets {
		d.Targets = append(d.Targets, chart("history-target-"+strconv.Itoa(i), s.Name, s))
	}
	c.render(w, r, http.StatusOK, "history", page{Title: "History", Session: ss, Data: d})
}

// bucketWords names a bucket width as the y axis's unit says it: "minute",
// "15 minutes", "hour".
func bucketWords(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d%u.unit == 0 {
			if n := int64(d / u.unit); n != 1 {
				return strconv.FormatInt(n, 10) + " " + u.name + "s"
			}
			return u.name
		}
	}
	return d.String()
}
