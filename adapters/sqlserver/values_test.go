package sqlserver

import (
	"database/sql"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestRequestsStayUnderTheParameterLimit checks every statement shape the
// set statements can take against SQL Server's 2,100 parameters per
// request (less sp_executesql's own two), and that padding keeps the
// number of shapes small.
func TestRequestsStayUnderTheParameterLimit(t *testing.T) {
	placeholder := regexp.MustCompile(`\$(\d+)`)
	highest := func(sql string) int {
		n := 0
		for _, m := range placeholder.FindAllStringSubmatch(sql, -1) {
			v, _ := strconv.Atoi(m[1])
			n = max(n, v)
		}
		return n
	}
	for name, c := range map[string]struct {
		width int
		sql   func(int) string
		// extra counts the parameters before the rows' (the JSON of a
		// batch insert).
		extra int
	}{
		"insertIntentsSQL": {1, insertIntentsSQL, 1},
	} {
		var shapes []int
		for n := 1; n <= rowsPerRequest(c.width); n++ {
			size := paddedRows(n, c.width)
			if size < n {
				t.Fatalf("%s: %d rows padded to %d", name, n, size)
			}
			if !slices.Contains(shapes, size) {
				shapes = append(shapes, size)
			}
		}
		if len(shapes) > 12 {
			t.Errorf("%s takes %d statement shapes: %v", name, len(shapes), shapes)
		}
		most := slices.Max(shapes)
		if got, want := highest(c.sql(most)), most*c.width+c.extra; got != want || got > 2098 {
			t.Errorf("%s of %d rows uses $%d, want $%d and at most $2098", name, most, got, want)
		}
	}
}

func TestChunks(t *testing.T) {
	got := chunks(5, 2)
	want := [][2]int{{0, 2}, {2, 4}, {4, 5}}
	if !slices.Equal(got, want) {
		t.Errorf("chunks(5, 2) = %v, want %v", got, want)
	}
	if got := chunks(0, 2); len(got) != 0 {
		t.Errorf("chunks(0, 2) = %v, want none", got)
	}
	if got := padParams([]any{"a"}, 2, 2); len(got) != 4 || got[0] != "a" || got[1] != (sql.NullString{}) || got[3] != (sql.NullString{}) {
		t.Errorf("padParams = %v", got)
	}
}
