package sqlserver

import (
	"errors"
	"maps"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// TestVerdictsOf reads a fenced batch's answer, the positions it applied
// and those whose intent is missing, into one verdict per position of the
// batch; positions of a batch need not start at 0 or be contiguous, as
// writeBatch leaves out the items its rules refused.
func TestVerdictsOf(t *testing.T) {
	ords := []int{0, 2, 3, 7, 10}
	for _, c := range []struct {
		name             string
		applied, missing string
		want             map[int]int
	}{
		{"all applied", ",0,2,3,7,10,", "", map[int]int{0: 0, 2: 0, 3: 0, 7: 0, 10: 0}},
		{"none applied (NULL lists)", "", "", map[int]int{0: 1, 2: 1, 3: 1, 7: 1, 10: 1}},
		{"each kind", ",0,10,", ",7,", map[int]int{0: 0, 2: 1, 3: 1, 7: 2, 10: 0}},
		{"all missing", "", ",0,2,3,7,10,", map[int]int{0: 2, 2: 2, 3: 2, 7: 2, 10: 2}},
	} {
		got, err := verdictsOf(ords, c.applied, c.missing)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("%s: verdictsOf(%q, %q) = %v, %v; want %v", c.name, c.applied, c.missing, got, err, c.want)
		}
	}
	for _, bad := range [][2]string{{",1,", ""}, {"", ",11,"}, {",0,x,", ""}, {",-1,", ""}} {
		if got, err := verdictsOf(ords, bad[0], bad[1]); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Errorf("verdictsOf(%q, %q) = %v, %v; want an error: the batch holds no such position", bad[0], bad[1], got, err)
		}
	}
}
