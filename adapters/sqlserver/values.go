package sqlserver

import (
	"database/sql"
	"fmt"
	"strings"

	mssql "github.com/microsoft/go-mssqldb"
)

// The intentIds of a read of resubmission links travel to the server as
// the parameters of a VALUES table, one row per id, and so do a batch
// insert's payloads (batch.go): parameters arrive exactly on both servers.
// The executor's batches, the rest of a batch insert and the intentIds of
// the hot reads of many intents (idlist.go) travel as JSON instead
// (jsontext.go), whose strings must be spelled for Babelfish's OPENJSON
// and which cannot carry bytes there (it neither decodes base64 nor
// converts hex). SQL Server's other set transport, table-valued
// parameters, Babelfish mangles once the parameter spans several TDS
// packets.
//
// Every cell is CAST to its column's type, so the VALUES table has exactly
// the types of the columns it feeds (no type precedence between rows, and
// a varbinary never meets an nvarchar), and so padding rows of NULL
// parameters change nothing: a set is padded to the next size of a short
// ladder, which keeps the number of distinct statement texts, and so of
// compiled plans on SQL Server, small whatever sizes the sets have.

// maxParams bounds the parameters of one request: SQL Server accepts 2,100,
// and sp_executesql's statement and parameter list count against them.
const maxParams = 2000

// valuesColumn is one column of a VALUES table: its name and the T-SQL
// type its parameters are cast to.
type valuesColumn struct {
	name, sqlType string
}

// valuesTable returns `(VALUES (...), ...) AS alias (columns)` for rows rows
// of cols. Row r's column c is parameter r*width+c+1: width is the number
// of parameters per row of the request, at least len(cols), so a request
// can list some of each row's parameters (a row's intentId only, say).
func valuesTable(alias string, cols []valuesColumn, rows, width int) string {
	var b strings.Builder
	b.WriteString("(VALUES ")
	for r := range rows {
		if r > 0 {
			b.WriteString(",\n    ")
		}
		b.WriteByte('(')
		for c, col := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "CAST($%d AS %s)", r*width+c+1, col.sqlType)
		}
		b.WriteByte(')')
	}
	b.WriteString(") AS ")
	b.WriteString(alias)
	b.WriteString(" (")
	for c, col := range cols {
		if c > 0 {
			b.WriteString(", ")
		}
		b.WriteString(col.name)
	}
	b.WriteByte(')')
	return b.String()
}

// rowsPerRequest is how many rows of width parameters one request carries.
func rowsPerRequest(width int) int { return maxParams / width }

// paddedRows is the row count a statement for n rows (1 <= n <=
// rowsPerRequest(width)) is written for: the next power of two, or the
// most a request carries.
func paddedRows(n, width int) int {
	most := rowsPerRequest(width)
	size := 1
	for size < n {
		size *= 2
	}
	return min(size, most)
}

// chunks splits n elements into consecutive ranges [start, end) of at
// most size elements.
func chunks(n, size int) [][2]int {
	var out [][2]int
	for start := 0; start < n; start += size {
		out = append(out, [2]int{start, min(n, start+size)})
	}
	return out
}

// setString is a string parameter of a set. go-mssqldb declares a plain Go
// string as nvarchar(its length), and SQL Server caches a plan per distinct
// parameter declaration: a set of strings of varying lengths would compile
// a new plan nearly every time. Declared nvarchar(max), the declaration of
// a set statement depends only on its shape (a batch's payloads, sent as
// varbinary(their length), still vary).
func setString(s string) mssql.NVarCharMax { return mssql.NVarCharMax(s) }

// padParams appends NULL parameters to args until it holds rows rows of
// width parameters. They are typed NULLs (nvarchar, which every cell's CAST
// takes): go-mssqldb sends an untyped nil as TDS type 0x1F, which Babelfish
// refuses.
func padParams(args []any, rows, width int) []any {
	for len(args) < rows*width {
		args = append(args, sql.NullString{})
	}
	return args
}
