package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// What the SQL Server failover test shows when a takeover comes late: what
// the database server was doing, sampled from the kill until a follower
// led, and what each surviving instance said about the lease meanwhile. A
// late takeover in CI otherwise left only the last lines of each log,
// which said nothing of why the followers' acquires had not yet succeeded.

// serverActivityEvery is how often the watch samples the server's sessions.
const serverActivityEvery = 50 * time.Millisecond

// serverActivitySQL lists the server's sessions that are doing something,
// with what each waits on and when its statement and transaction began:
// PostgreSQL's pg_stat_activity, which Babelfish serves to T-SQL (its
// timestamps arrive as text). SQL Server has no such view; there the watch
// records why it could not sample and stops.
const serverActivitySQL = `SELECT CAST(pid AS int), CAST(COALESCE(state, '') AS varchar(40)),
       CAST(COALESCE(wait_event_type, '') AS varchar(40)), CAST(COALESCE(wait_event, '') AS varchar(40)),
       CAST(query_start AS varchar(40)), CAST(COALESCE(CAST(xact_start AS varchar(40)), '') AS varchar(40)),
       CAST(LEFT(COALESCE(query, ''), 90) AS varchar(90)), SYSDATETIMEOFFSET()
FROM pg_catalog.pg_stat_activity
WHERE pid <> @@SPID AND state <> 'idle' AND backend_type = 'client backend'`

// pgTimestamp is the layout of PostgreSQL's timestamptz as text.
const pgTimestamp = "2006-01-02 15:04:05.999999-07"

// serverWatch samples the server's sessions on a connection of its own
// until stop.
type serverWatch struct {
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []string
}

// watchServer starts sampling dsn's server every serverActivityEvery.
func watchServer(t *testing.T, dsn string) *serverWatch {
	t.Helper()
	db, err := sql.Open("sqlserver", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	w := &serverWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer db.Close()
		tick := time.NewTicker(serverActivityEvery)
		defer tick.Stop()
		for {
			lines, err := sampleServer(db)
			w.mu.Lock()
			stamp := time.Now().UTC().Format("15:04:05.000")
			for _, l := range lines {
				w.samples = append(w.samples, stamp+" "+l)
			}
			if err != nil {
				w.samples = append(w.samples, stamp+" sampling stopped: "+err.Error())
			}
			w.mu.Unlock()
			if err != nil {
				return
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.stop)
	return w
}

// sampleServer runs one sample: a line per busy session.
func sampleServer(db *sql.DB) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := db.QueryContext(ctx, serverActivitySQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var (
			session                          int64
			state, waitType, wait, text      string
			statementStart, transactionStart string
			now                              time.Time
		)
		if err := rows.Scan(&session, &state, &waitType, &wait, &statementStart, &transactionStart, &text, &now); err != nil {
			return lines, err
		}
		lines = append(lines, fmt.Sprintf("session %d %s wait=%s/%s statement %s, transaction %s: %s",
			session, state, waitType, wait, since(statementStart, now), since(transactionStart, now),
			strings.Join(strings.Fields(text), " ")))
	}
	return lines, rows.Err()
}

// since is how long before now a pg_stat_activity timestamp was, or "-".
func since(pgTime string, now time.Time) string {
	at, err := time.Parse(pgTimestamp, pgTime)
	if err != nil {
		return "-"
	}
	return now.Sub(at).Round(time.Millisecond).String()
}

// stop ends the sampling and waits for it.
func (w *serverWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
}

// report is the samples, one line each.
func (w *serverWatch) report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.samples) == 0 {
		return "(no session was busy in any sample)"
	}
	return strings.Join(w.samples, "\n")
}

// leaseTimeline is what the process logging to path said about the lease,
// and every warning or error, between from and to: one line per event with
// its time and the fields that matter to a takeover.
func leaseTimeline(path string, from, to time.Time) string {
	records, err := haLogRecords(path)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, rec := range records {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(rec["time"]))
		msg := fmt.Sprint(rec["msg"])
		if at.Before(from) || at.After(to) ||
			(!strings.HasPrefix(msg, "leader_") && rec["level"] != "WARN" && rec["level"] != "ERROR") {
			continue
		}
		fmt.Fprintf(&b, "%s %s %s", at.UTC().Format("15:04:05.000"), rec["level"], msg)
		for _, k := range []string{"leader_holder_id", "lease_epoch", "expires_at", "retry_in", "took", "reason", "error", "sql_error", "err"} {
			v, ok := rec[k]
			if !ok {
				continue
			}
			if ns, isNumber := v.(float64); isNumber && (k == "retry_in" || k == "took") {
				v = time.Duration(ns).Round(100 * time.Microsecond) // slog writes durations as nanoseconds
			}
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
