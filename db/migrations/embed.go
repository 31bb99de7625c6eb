// Package migrations embeds the goose migrations of both dialects, so the
// binary carries its schema and `migrate` needs no files beside it.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed all:sqlite all:sqlserver
var files embed.FS

// SQLite returns the SQLite migrations (goose's root for that dialect).
func SQLite() fs.FS { return sub("sqlite") }

// SQLServer returns the SQL Server (T-SQL) migrations.
func SQLServer() fs.FS { return sub("sqlserver") }

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // dir is a constant embedded above; this cannot fail
	}
	return f
}
