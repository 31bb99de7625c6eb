package console

import (
	"testing"
	"time"
)

func TestYScaleIsRound(t *testing.T) {
	for _, c := range []struct{ top, step, ceiling int64 }{
		{0, 1, 1}, {1, 1, 1}, {4, 1, 4}, {7, 2, 8}, {40, 10, 40}, {41, 10, 50}, {99, 20, 100}, {1234, 500, 1500},
	} {
		if step, ceiling := yScale(c.top); step != c.step || ceiling != c.ceiling {
			t.Errorf("yScale(%d) = %d, %d; want %d, %d", c.top, step, ceiling, c.step, c.ceiling)
		}
	}
}

func TestXTicksAtMostEight(t *testing.T) {
	for span, want := range map[time.Duration]time.Duration{
		time.Hour: 10 * time.Minute, 24 * time.Hour: 3 * time.Hour, 5 * time.Minute: time.Minute,
	} {
		if got := xTickEvery(span); got != want {
			t.Errorf("xTickEvery(%v) = %v, want %v", span, got, want)
		}
	}
}
