package executor

import "github.com/submissionmanager/submission-manager/core"

// parking holds due attempts waiting for room at their gateway (its max in
// flight, or a half-open probe), out of the schedule so they never block
// another gateway's work at the head of it. Owned by the scheduler.
type parking map[string][]core.ScheduleEntry

// parked takes a worker's result that asks to wait for room, and reports
// whether it did. If the room came before the result did, the entry goes
// back to the schedule at once, so nothing waits for an event that passed.
func (t *term) parked(r result) bool {
	if r.park == "" || r.next == nil || t.lost != nil {
		return false
	}
	if r.known != nil {
		t.remember(*r.known)
	}
	t.parking[r.park] = append(t.parking[r.park], *r.next)
	t.unpark(r.park)
	return true
}

// unpark moves as many parked entries of a gateway back into the schedule,
// due now, as the gateway has room for.
func (t *term) unpark(url string) {
	waiting := t.parking[url]
	if url == "" || len(waiting) == 0 {
		return
	}
	n := t.gates.Room(url, len(waiting))
	now := t.cfg.Clock.Now()
	for _, e := range waiting[:n] {
		if _, busy := t.inFlight[e.IntentID]; !busy {
			e.DueAt = now
			t.schedule.Upsert(e)
		}
	}
	if n == len(waiting) {
		delete(t.parking, url)
		return
	}
	t.parking[url] = waiting[n:]
}

// unparkAll retries every gateway's parked entries; the refresh calls it as
// a safety net.
func (t *term) unparkAll() {
	for url := range t.parking {
		t.unpark(url)
	}
}
