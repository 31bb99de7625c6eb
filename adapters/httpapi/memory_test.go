package httpapi_test

import (
	"bytes"
	"fmt"
	"github.com/submissionmanager/submission-manager/core"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
)

// concurrentBodies is how many maximum-size submissions the memory check
// holds in the server at once.
const concurrentBodies = 200

// bodyMemory is what the server held while concurrentBodies maximum-size
// submissions were all inside it, relative to their raw bytes.
type bodyMemory struct {
	raw       uint64  // bytes of the bodies in flight
	heapRatio float64 // heap in use (garbage included) over raw, before a GC
	liveRatio float64 // live heap over raw, after a GC
	osRatio   float64 // growth of memory mapped from the OS over raw
}

// measureBodyMemory sends concurrentBodies submissions whose payloads are at
// the default limit, holds every one inside the service until all have
// arrived, and reads the heap then. The client streams each body from one
// shared payload, so what grows is the server's.
func measureBodyMemory(t testing.TB) bodyMemory {
	t.Helper()
	svc := &storingService{gate: make(chan struct{}), entered: make(chan struct{})}
	url, _ := startStoring(t, httpapi.Config{MaxBodiesInFlight: concurrentBodies}, svc)
	payload := maxPayload()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: concurrentBodies, MaxIdleConnsPerHost: concurrentBodies}}
	defer client.CloseIdleConnections()

	runtime.GC()
	before := readMemory()
	var (
		wg  sync.WaitGroup
		raw uint64
	)
	errs := make(chan error, concurrentBodies)
	for i := range concurrentBodies {
		head := []byte(fmt.Sprintf(`{"intentId":"mem-%d","submissionTarget":"sms.realtime","payload":`, i))
		size := len(head) + len(payload) + 1
		raw += uint64(size)
		wg.Go(func() {
			body := io.MultiReader(bytes.NewReader(head), bytes.NewReader(payload), strings.NewReader("}"))
			req, _ := http.NewRequest(http.MethodPost, url+"/v1/intents", body)
			req.ContentLength = int64(size)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				errs <- fmt.Errorf("status %d", res.StatusCode)
			}
		})
	}
	for range concurrentBodies {
		<-svc.entered
	}
	held := readMemory()
	runtime.GC()
	live := readMemory()
	close(svc.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return bodyMemory{
		raw:       raw,
		heapRatio: float64(held.heap-before.heap) / float64(raw),
		liveRatio: float64(live.heap-before.heap) / float64(raw),
		osRatio:   float64(held.total-before.total) / float64(raw),
	}
}

// maxPayload is a payload just under the default limit made of many small
// values, the shape that costs most as a decoded tree.
func maxPayload() []byte {
	const item = `{"to":"+15551234567","n":1}`
	n := (core.DefaultMaxPayloadBytes - 2) / (len(item) + 1)
	return []byte("[" + strings.Repeat(item+",", n-1) + item + "]")
}

type memory struct{ heap, total uint64 }

func readMemory() memory {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return memory{heap: s[0].Value.Uint64(), total: s[1].Value.Uint64()}
}

// TestBodyMemoryIsBounded holds 200 maximum-size bodies in the server at
// once: what they pin must stay within three times their raw bytes (the
// validator's tree used to take about seventeen).
func TestBodyMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 50 MB of bodies")
	}
	m := measureBodyMemory(t)
	t.Logf("%d bodies, %.1f MiB raw: heap in use %.2fx, live %.2fx, from the OS %.2fx",
		concurrentBodies, float64(m.raw)/(1<<20), m.heapRatio, m.liveRatio, m.osRatio)
	if m.liveRatio > 3 {
		t.Fatalf("the bodies in flight pin %.2fx their raw size, want at most 3x", m.liveRatio)
	}
}

// BenchmarkBodyMemory reports the same figures as TestBodyMemoryIsBounded
// (per run of 200 concurrent maximum-size bodies) for docs/benchmarks.md.
// os/raw counts memory newly mapped from the OS, so only a single run
// (-benchtime 1x) shows it; later runs reuse what the first one mapped.
func BenchmarkBodyMemory(b *testing.B) {
	var m bodyMemory
	for b.Loop() {
		m = measureBodyMemory(b)
	}
	b.ReportMetric(m.heapRatio, "heap/raw")
	b.ReportMetric(m.liveRatio, "live/raw")
	b.ReportMetric(m.osRatio, "os/raw")
}
