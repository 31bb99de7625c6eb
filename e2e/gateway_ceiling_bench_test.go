package e2e

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// ceilingCallers is the comparison's concurrency: 64 executions at once.
const ceilingCallers = 64

// BenchmarkGatewayCallCeiling measures what the executor's call path alone
// carries: 64 goroutines calling one gateway through the real gateway
// client, as fast as the gateway answers, with no store, no scheduler and no
// HTTP intake. It is the ceiling of any execution figure at 64 calls in
// flight on this host (the bound 64 / latency ignores the cost of HTTP), so
// the River comparison can say how far below it an executor runs.
// SUBMISSION_BENCH_GATEWAY_URL names an sms gateway to call (make
// bench-river passes the simulator process it measures with); without it a
// simulator with 5 ms of latency starts in this process. Run it with:
// go test -run '^$' -bench GatewayCallCeiling -benchtime 40000x ./e2e/
func BenchmarkGatewayCallCeiling(b *testing.B) {
	url := os.Getenv("SUBMISSION_BENCH_GATEWAY_URL")
	if url == "" {
		sim, err := gatewaysim.Start(gatewaysim.Config{Latency: 5 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		defer sim.Close()
		url = sim.URL(core.GatewaySMS)
	}
	client, err := gateway.New(core.GatewaySMS, gateway.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	run := time.Now().UnixNano()
	var next, failed atomic.Int64
	var latency atomic.Int64
	payload := []byte(`{"to":"+15550100","text":"a message of ordinary length for the call path's ceiling"}`)
	b.ResetTimer()
	start := time.Now()
	done := make(chan struct{})
	for range ceilingCallers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t := time.Now()
				_, err := client.Submit(context.Background(), ports.SubmitParams{
					GatewayType: core.GatewaySMS, GatewayURL: url,
					Reference: fmt.Sprintf("ceiling-%d-%d", run, i), Payload: payload,
				})
				latency.Add(int64(time.Since(t)))
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	for range ceilingCallers {
		<-done
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d calls failed", n, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(latency.Load())/float64(b.N)/1e6, "mean-ms")
}
