//go:build !race

package sqlite

// raceEnabled reports a -race build, under which SQLite (C translated to Go)
// runs many times slower.
const raceEnabled = false
