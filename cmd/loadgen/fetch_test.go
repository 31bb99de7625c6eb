package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// A read whose connection the service dropped is sent once more: the
// fake hangs up on the first request it gets, as a service that closed a
// kept-alive connection during a long drain does, and answers the rest.
func TestFetchAllReadsAgainOverADroppedConnection(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/v1/intents/")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(client.Intent{IntentId: id, Status: client.IntentStatusAccepted,
			CreatedAt: time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC), Attempts: []client.Attempt{}})
	}))
	t.Cleanup(srv.Close)
	c, err := client.NewClientWithResponses(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fetchAll(t.Context(), c, 1, []string{"i-1", "i-2"})
	if err != nil || len(got) != 2 || got["i-1"].IntentId != "i-1" {
		t.Fatalf("fetchAll: %v, %v; want both intents read", got, err)
	}
}
