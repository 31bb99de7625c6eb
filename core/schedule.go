package core

import (
	"container/heap"
	"time"
)

// ScheduleEntry is one intent waiting for its next attempt. DueAt keeps
// nanosecond precision and comes back in UTC.
type ScheduleEntry struct {
	IntentID string
	DueAt    time.Time
	Mode     Mode
}

// Schedule is the leader's due-time ordered set of pending intents, keyed by
// intentId: upserting an intent that is already present moves it instead of
// adding a second entry, so a refresh that sees a row twice never schedules
// two attempts. At equal due time realtime entries come before batch entries,
// then the earlier upserted. All operations are O(log n). A Schedule is not
// safe for concurrent use: one scheduler goroutine owns it.
type Schedule struct {
	h     scheduleHeap
	index map[string]*scheduleItem
	seq   uint64
}

// scheduleItem is kept small (no time.Time, no Mode string) because a leader
// may hold a million of them: the due time is Unix nanoseconds in UTC.
type scheduleItem struct {
	intentID string
	due      int64
	seq      uint64
	pos      int32
	realtime bool
}

func (it *scheduleItem) entry() ScheduleEntry {
	mode := ModeBatch
	if it.realtime {
		mode = ModeRealtime
	}
	return ScheduleEntry{IntentID: it.intentID, DueAt: time.Unix(0, it.due).UTC(), Mode: mode}
}

// NewSchedule returns an empty schedule.
func NewSchedule() *Schedule {
	return &Schedule{index: make(map[string]*scheduleItem)}
}

// Upsert adds the entry, or moves the intent's existing entry to the new due
// time and mode.
func (s *Schedule) Upsert(e ScheduleEntry) {
	due, realtime := e.DueAt.UnixNano(), e.Mode == ModeRealtime
	if it, ok := s.index[e.IntentID]; ok {
		if it.due == due && it.realtime == realtime {
			return
		}
		it.due, it.realtime = due, realtime
		heap.Fix(&s.h, int(it.pos))
		return
	}
	s.seq++
	it := &scheduleItem{intentID: e.IntentID, due: due, realtime: realtime, seq: s.seq}
	s.index[e.IntentID] = it
	heap.Push(&s.h, it)
}

// Remove drops the intent's entry and reports whether there was one.
func (s *Schedule) Remove(intentID string) bool {
	it, ok := s.index[intentID]
	if !ok {
		return false
	}
	heap.Remove(&s.h, int(it.pos))
	delete(s.index, intentID)
	return true
}

// Contains reports whether the intent has an entry.
func (s *Schedule) Contains(intentID string) bool {
	_, ok := s.index[intentID]
	return ok
}

// Peek returns the first entry in schedule order without removing it.
func (s *Schedule) Peek() (ScheduleEntry, bool) {
	if len(s.h) == 0 {
		return ScheduleEntry{}, false
	}
	return s.h[0].entry(), true
}

// PopDue removes and returns the first entry if it is due at now.
func (s *Schedule) PopDue(now time.Time) (ScheduleEntry, bool) {
	if len(s.h) == 0 || s.h[0].due > now.UnixNano() {
		return ScheduleEntry{}, false
	}
	it := heap.Pop(&s.h).(*scheduleItem)
	delete(s.index, it.intentID)
	return it.entry(), true
}

// AppendDue appends to dst the intentIds of the first n entries due at now,
// in schedule order, without removing them: the leader reads those intents
// ahead of their attempts. It walks only the top of the heap, in
// O(n log n), whatever the schedule's size.
func (s *Schedule) AppendDue(dst []string, now time.Time, n int) []string {
	limit := now.UnixNano()
	// frontier holds heap positions whose parents were taken: the next
	// entry in schedule order is always the least of them.
	frontier := positionHeap{h: s.h}
	if len(s.h) > 0 {
		frontier.pos = append(frontier.pos, 0)
	}
	for taken := 0; taken < n && len(frontier.pos) > 0; taken++ {
		i := heap.Pop(&frontier).(int)
		if s.h[i].due > limit {
			break
		}
		dst = append(dst, s.h[i].intentID)
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(s.h) {
				heap.Push(&frontier, c)
			}
		}
	}
	return dst
}

// positionHeap orders positions of a scheduleHeap by their entries.
type positionHeap struct {
	h   scheduleHeap
	pos []int
}

func (p *positionHeap) Len() int           { return len(p.pos) }
func (p *positionHeap) Less(i, j int) bool { return p.h.Less(p.pos[i], p.pos[j]) }
func (p *positionHeap) Swap(i, j int)      { p.pos[i], p.pos[j] = p.pos[j], p.pos[i] }
func (p *positionHeap) Push(x any)         { p.pos = append(p.pos, x.(int)) }
func (p *positionHeap) Pop() any {
	x := p.pos[len(p.pos)-1]
	p.pos = p.pos[:len(p.pos)-1]
	return x
}

// Len returns the number of scheduled intents.
func (s *Schedule) Len() int { return len(s.h) }

// scheduleHeap implements heap.Interface over items, keeping each item's
// position current so Fix and Remove work by index.
type scheduleHeap []*scheduleItem

func (h scheduleHeap) Len() int { return len(h) }

func (h scheduleHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.due != b.due {
		return a.due < b.due
	}
	if a.realtime != b.realtime {
		return a.realtime
	}
	return a.seq < b.seq
}

func (h scheduleHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos = int32(i)
	h[j].pos = int32(j)
}

func (h *scheduleHeap) Push(x any) {
	it := x.(*scheduleItem)
	it.pos = int32(len(*h))
	*h = append(*h, it)
}

func (h *scheduleHeap) Pop() any {
	old := *h
	n := len(old)
	it := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	it.pos = -1
	return it
}
