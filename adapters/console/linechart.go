package console

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// lineChart is an SVG line chart with both axes, computed here so that the
// template only places numbers: a y axis of counts per bucket with round
// ticks and its unit, an x axis of UTC times with round ticks, and one
// polyline per series.
type lineChart struct {
	ID    string
	Title string
	// Unit names what one y value counts, e.g. "per minute".
	Unit string
	// Caption sums each series over the window.
	Caption       string
	Width, Height int
	// The plot area.
	Left, Right, Top, Bottom int
	YTicks, XTicks           []chartTick
	Lines                    []chartLine
}

// chartTick is one labelled tick: Pos is its y (YTicks) or x (XTicks).
type chartTick struct {
	Pos   float64
	Label string
}

// chartLine is one series: its points, its colour and how it is named in
// the legend.
type chartLine struct {
	Name, Color, Dash string
	Points            string
	Total             int64
}

// chartSeries is the input of one line.
type chartSeries struct {
	Name, Color, Dash string
	Values            []int64
}

// Geometry of every history chart: room on the left for counts, below for
// times.
const (
	chartWidth, chartHeight = 640, 220
	chartLeft, chartRight   = 52, 628
	chartTop, chartBottom   = 12, 186
)

// newLineChart lays out series of len(starts) values, one per bucket of
// width bucket starting at starts[i].
func newLineChart(id, title, unit string, starts []time.Time, bucket time.Duration, series []chartSeries) lineChart {
	ch := lineChart{ID: id, Title: title, Unit: unit, Width: chartWidth, Height: chartHeight,
		Left: chartLeft, Right: chartRight, Top: chartTop, Bottom: chartBottom}
	var top int64
	for _, s := range series {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	step, ceiling := yScale(top)
	y := func(v int64) float64 {
		return float64(ch.Bottom) - float64(v)*float64(ch.Bottom-ch.Top)/float64(ceiling)
	}
	for v := int64(0); v <= ceiling; v += step {
		ch.YTicks = append(ch.YTicks, chartTick{Pos: y(v), Label: strconv.FormatInt(v, 10)})
	}
	n := len(starts)
	x := func(i int) float64 {
		if n < 2 {
			return float64(ch.Left)
		}
		return float64(ch.Left) + float64(i)*float64(ch.Right-ch.Left)/float64(n-1)
	}
	every := xTickEvery(time.Duration(n) * bucket)
	for i, s := range starts {
		if s.Truncate(every).Equal(s) {
			ch.XTicks = append(ch.XTicks, chartTick{Pos: x(i), Label: s.UTC().Format("15:04")})
		}
	}
	var caption []string
	for _, s := range series {
		l := chartLine{Name: s.Name, Color: s.Color, Dash: s.Dash}
		var b strings.Builder
		for i, v := range s.Values {
			l.Total += v
			fmt.Fprintf(&b, "%.1f,%.1f ", x(i), y(v))
		}
		l.Points = strings.TrimSpace(b.String())
		ch.Lines = append(ch.Lines, l)
		caption = append(caption, fmt.Sprintf("%d %s", l.Total, s.Name))
	}
	ch.Caption = strings.Join(caption, " · ")
	return ch
}

// yScale returns a round tick step (1, 2 or 5 times a power of ten) and
// the axis's top, a multiple of it at or above top, with at most five
// steps; an empty chart still has an axis from 0 to 1.
func yScale(top int64) (step, ceiling int64) {
	if top <= 0 {
		return 1, 1
	}
	raw := float64(top) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step = int64(pow)
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = int64(m * pow)
			break
		}
	}
	step = max(step, 1)
	return step, (top + step - 1) / step * step
}

// xTickEvery is the round spacing that puts at most eight ticks on a span.
func xTickEvery(span time.Duration) time.Duration {
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
		if span/d <= 8 {
			return d
		}
	}
	return 24 * time.Hour
}
