package sqlserver

import (
	"database/sql"

	mssql "github.com/microsoft/go-mssqldb"
)

// A batch insert whose payloads are not all printable ASCII sends them as
// the parameters of a VALUES table, one row per payload (batch.go):
// parameters arrive exactly on both servers. Every other set travels as
// JSON (jsontext.go), whose strings must be spelled for Babelfish's
// OPENJSON and which cannot carry bytes there (it neither decodes base64
// nor converts hex). SQL Server's other set transport, table-valued
// parameters, Babelfish mangles once the parameter spans several TDS
// packets.
//
// A set of parameters is padded with NULLs to the next size of a short
// ladder, which keeps the number of distinct statement texts, and so of
// compiled plans on SQL Server, small whatever sizes the sets have.

// maxParams bounds the parameters of one request: SQL Server accepts 2,100,
// and sp_executesql's statement and parameter list count against them.
const maxParams = 2000

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
