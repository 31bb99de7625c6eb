package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var scheduleT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func due(d time.Duration) time.Time { return scheduleT0.Add(d) }

// drain pops every entry due at now and returns their intentIds in order.
func drain(s *Schedule, now time.Time) []string {
	var ids []string
	for {
		e, ok := s.PopDue(now)
		if !ok {
			return ids
		}
		ids = append(ids, e.IntentID)
	}
}

func TestScheduleUpsertNeverAddsASecondEntry(t *testing.T) {
	s := NewSchedule()
	e := ScheduleEntry{IntentID: "a", DueAt: due(time.Second), Mode: ModeRealtime}
	s.Upsert(e)
	s.Upsert(e)
	s.Upsert(ScheduleEntry{IntentID: "a", DueAt: due(2 * time.Second), Mode: ModeBatch})
	if s.Len() != 1 {
		t.Fatalf("Len() = %d after three upserts of one intent, want 1", s.Len())
	}
	if got := drain(s, due(time.Hour)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("popped %v, want [a] once", got)
	}
	if s.Len() != 0 || s.Contains("a") {
		t.Errorf("schedule not empty after popping its only intent: Len %d", s.Len())
	}
}

func TestScheduleUpsertMovesTheEntry(t *testing.T) {
	s := NewSchedule()
	s.Upsert(ScheduleEntry{IntentID: "a", DueAt: due(10 * time.Second), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "b", DueAt: due(20 * time.Second), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "c", DueAt: due(30 * time.Second), Mode: ModeBatch})

	s.Upsert(ScheduleEntry{IntentID: "a", DueAt: due(40 * time.Second), Mode: ModeBatch})   // later
	s.Upsert(ScheduleEntry{IntentID: "c", DueAt: due(5 * time.Second), Mode: ModeRealtime}) // earlier
	if e, _ := s.Peek(); e.IntentID != "c" || !e.DueAt.Equal(due(5*time.Second)) || e.Mode != ModeRealtime {
		t.Errorf("Peek() = %+v, want c moved to +5s realtime", e)
	}
	if got := drain(s, due(time.Hour)); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("order after moves = %v, want [c b a]", got)
	}
}

func TestScheduleRemove(t *testing.T) {
	s := NewSchedule()
	for i := range 50 {
		s.Upsert(ScheduleEntry{IntentID: fmt.Sprint(i), DueAt: due(time.Duration(50-i) * time.Second), Mode: ModeBatch})
	}
	for _, id := range []string{"0", "49", "25", "7"} {
		if !s.Remove(id) {
			t.Errorf("Remove(%s) = false for a scheduled intent", id)
		}
		if s.Remove(id) {
			t.Errorf("second Remove(%s) = true", id)
		}
		if s.Contains(id) {
			t.Errorf("Contains(%s) after Remove", id)
		}
	}
	if s.Remove("never scheduled") {
		t.Error("Remove of an unknown intent = true")
	}
	if s.Len() != 46 {
		t.Errorf("Len() = %d, want 46", s.Len())
	}
	got := drain(s, due(time.Hour))
	var want []string
	for i := 48; i >= 1; i-- {
		if i != 25 && i != 7 {
			want = append(want, fmt.Sprint(i))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("order after removals = %v, want %v", got, want)
	}
}

func TestSchedulePopDueRespectsNow(t *testing.T) {
	s := NewSchedule()
	if _, ok := s.PopDue(due(time.Hour)); ok {
		t.Fatal("PopDue on an empty schedule returned an entry")
	}
	if _, ok := s.Peek(); ok {
		t.Fatal("Peek on an empty schedule returned an entry")
	}
	s.Upsert(ScheduleEntry{IntentID: "a", DueAt: due(10 * time.Second), Mode: ModeRealtime})
	if _, ok := s.PopDue(due(10*time.Second - time.Nanosecond)); ok {
		t.Error("PopDue 1ns before the due time returned the entry")
	}
	if e, ok := s.Peek(); !ok || e.IntentID != "a" || s.Len() != 1 {
		t.Errorf("Peek() = %+v, %v with Len %d; want a, still scheduled", e, ok, s.Len())
	}
	if e, ok := s.PopDue(due(10 * time.Second)); !ok || e.IntentID != "a" {
		t.Errorf("PopDue at exactly the due time = %+v, %v; want a", e, ok)
	}
}

func TestScheduleEntriesComeBackInUTCWithNanoseconds(t *testing.T) {
	s := NewSchedule()
	zone := time.FixedZone("UTC+5", 5*3600)
	in := time.Date(2026, 3, 1, 17, 0, 0, 123456789, zone)
	s.Upsert(ScheduleEntry{IntentID: "a", DueAt: in, Mode: ModeBatch})
	e, ok := s.PopDue(in)
	if !ok || !e.DueAt.Equal(in) || e.DueAt.Location() != time.UTC || e.DueAt.Nanosecond() != 123456789 || e.Mode != ModeBatch {
		t.Errorf("PopDue = %+v (%v), want %v in UTC, batch", e, e.DueAt.Location(), in.UTC())
	}
}

func TestScheduleRealtimeBeforeBatchAtEqualDueTime(t *testing.T) {
	s := NewSchedule()
	s.Upsert(ScheduleEntry{IntentID: "batch-1", DueAt: due(0), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "batch-2", DueAt: due(0), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "realtime-later", DueAt: due(time.Nanosecond), Mode: ModeRealtime})
	s.Upsert(ScheduleEntry{IntentID: "realtime-1", DueAt: due(0), Mode: ModeRealtime})
	s.Upsert(ScheduleEntry{IntentID: "realtime-2", DueAt: due(0), Mode: ModeRealtime})
	want := []string{"realtime-1", "realtime-2", "batch-1", "batch-2", "realtime-later"}
	if got := drain(s, due(time.Second)); !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestScheduleFIFOAmongEquals(t *testing.T) {
	s := NewSchedule()
	var want []string
	for i := range 100 {
		id := fmt.Sprintf("i%03d", i)
		want = append(want, id)
		s.Upsert(ScheduleEntry{IntentID: id, DueAt: due(0), Mode: ModeBatch})
	}
	if got := drain(s, due(0)); !slices.Equal(got, want) {
		t.Errorf("equal entries not first in, first out:\n got %v\nwant %v", got, want)
	}
}

// A moved entry keeps its place among equals (the time it was first
// scheduled), so an intent that waited longer is not overtaken by a newcomer.
// Once popped, a re-scheduled intent queues behind the entries already there.
func TestScheduleMovedEntryKeepsItsPlaceAmongEquals(t *testing.T) {
	s := NewSchedule()
	s.Upsert(ScheduleEntry{IntentID: "old", DueAt: due(time.Hour), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "new", DueAt: due(0), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "old", DueAt: due(0), Mode: ModeBatch})
	if got := drain(s, due(0)); !slices.Equal(got, []string{"old", "new"}) {
		t.Errorf("order = %v, want [old new]", got)
	}

	s.Upsert(ScheduleEntry{IntentID: "x", DueAt: due(0), Mode: ModeBatch})
	s.Upsert(ScheduleEntry{IntentID: "y", DueAt: due(0), Mode: ModeBatch})
	e, _ := s.PopDue(due(0))
	s.Upsert(e)
	if got := drain(s, due(0)); !slices.Equal(got, []string{"y", "x"}) {
		t.Errorf("order = %v, want [y x]: a popped and re-scheduled intent queues last", got)
	}
}

// modelEntry is the reference model's view of one scheduled intent.
type modelEntry struct {
	id       string
	due      time.Time
	realtime bool
	seq      int
}

// scheduleModel is the obvious implementation: a slice kept sorted by the
// schedule order, searched linearly.
type scheduleModel struct {
	entries []modelEntry
	seq     int
}

func (m *scheduleModel) find(id string) int {
	return slices.IndexFunc(m.entries, func(e modelEntry) bool { return e.id == id })
}

func (m *scheduleModel) upsert(e ScheduleEntry) {
	me := modelEntry{id: e.IntentID, due: e.DueAt, realtime: e.Mode == ModeRealtime}
	if i := m.find(e.IntentID); i >= 0 {
		me.seq = m.entries[i].seq
		m.entries = slices.Delete(m.entries, i, i+1)
	} else {
		m.seq++
		me.seq = m.seq
	}
	m.entries = append(m.entries, me)
	slices.SortFunc(m.entries, func(a, b modelEntry) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		if a.realtime != b.realtime {
			if a.realtime {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
}

func (m *scheduleModel) remove(id string) bool {
	i := m.find(id)
	if i < 0 {
		return false
	}
	m.entries = slices.Delete(m.entries, i, i+1)
	return true
}

func (m *scheduleModel) popDue(now time.Time) (string, bool) {
	if len(m.entries) == 0 || m.entries[0].due.After(now) {
		return "", false
	}
	id := m.entries[0].id
	m.entries = m.entries[1:]
	return id, true
}

func TestScheduleMatchesASortedSliceModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		s, m := NewSchedule(), &scheduleModel{}
		// Few ids and few distinct due times, so that moves and ties are common.
		for step := range 3000 {
			id := fmt.Sprintf("intent-%d", rng.IntN(40))
			at := due(time.Duration(rng.IntN(20)) * time.Second)
			switch op := rng.IntN(10); {
			case op < 5:
				mode := ModeBatch
				if rng.IntN(2) == 0 {
					mode = ModeRealtime
				}
				e := ScheduleEntry{IntentID: id, DueAt: at, Mode: mode}
				s.Upsert(e)
				m.upsert(e)
			case op < 7:
				if got, want := s.Remove(id), m.remove(id); got != want {
					t.Fatalf("seed %d step %d: Remove(%s) = %v, model %v", seed, step, id, got, want)
				}
			default:
				e, got := s.PopDue(at)
				wantID, want := m.popDue(at)
				if got != want || e.IntentID != wantID {
					t.Fatalf("seed %d step %d: PopDue(+%v) = %q,%v; model %q,%v", seed, step, at.Sub(scheduleT0), e.IntentID, got, wantID, want)
				}
			}
			if s.Len() != len(m.entries) || s.Contains(id) != (m.find(id) >= 0) {
				t.Fatalf("seed %d step %d: Len %d / Contains(%s) %v; model %d / %v", seed, step, s.Len(), id, s.Contains(id), len(m.entries), m.find(id) >= 0)
			}
			if e, ok := s.Peek(); ok != (len(m.entries) > 0) || ok && (e.IntentID != m.entries[0].id || !e.DueAt.Equal(m.entries[0].due)) {
				t.Fatalf("seed %d step %d: Peek = %+v,%v; model head %+v", seed, step, e, ok, m.entries)
			}
			n := rng.IntN(12)
			var wantDue []string
			for _, e := range m.entries {
				if len(wantDue) == n || e.due.After(at) {
					break
				}
				wantDue = append(wantDue, e.id)
			}
			if got := s.AppendDue(nil, at, n); !slices.Equal(got, wantDue) {
				t.Fatalf("seed %d step %d: AppendDue(+%v, %d) = %v, model %v", seed, step, at.Sub(scheduleT0), n, got, wantDue)
			}
		}
		var want []string
		for _, e := range m.entries {
			want = append(want, e.id)
		}
		if got := drain(s, due(time.Hour)); !slices.Equal(got, want) {
			t.Fatalf("seed %d: final drain = %v, model %v", seed, got, want)
		}
	}
}
