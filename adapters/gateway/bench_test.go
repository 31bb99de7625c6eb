package gateway_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
)

// BenchmarkSubmit measures client and simulator together on loopback: the
// gateway round trip an attempt costs, with no gateway latency, and with the
// 5 ms latency load tests use (where throughput comes from concurrency, so
// it runs 64 submissions in flight per CPU, within the connection bound).
func BenchmarkSubmit(b *testing.B) {
	for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
		b.Run("latency="+latency.String(), func(b *testing.B) {
			sim, err := gatewaysim.Start(gatewaysim.Config{Latency: latency})
			if err != nil {
				b.Fatal(err)
			}
			defer sim.Close()
			c, err := gateway.New(core.GatewaySMS, gateway.Config{MaxConnsPerHost: 256})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if latency > 0 {
				b.SetParallelism(64)
			}
			var seq atomic.Int64
			p := params(core.GatewaySMS, sim.URL(core.GatewaySMS), "", `{"to":"+15551234567","text":"benchmark"}`)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				p := p
				for pb.Next() {
					p.Reference = "bench-" + strconv.FormatInt(seq.Add(1), 10)
					if o, err := c.Submit(b.Context(), p); err != nil || o.Status != core.OutcomeAccepted {
						b.Errorf("Submit = %+v, %v", o, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "submissions/s")
		})
	}
}
