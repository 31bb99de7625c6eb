// Package pins keeps the project's chosen module versions in go.mod while the
// packages that use them are being written in parallel. It is deleted once
// every pinned module is imported by real code.
package pins

import (
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/microsoft/go-mssqldb"
	_ "github.com/oapi-codegen/nethttp-middleware"
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/pressly/goose/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/sqlc-dev/teesql/parser"
	_ "github.com/testcontainers/testcontainers-go/modules/mssql"
	_ "go.uber.org/goleak"
	_ "modernc.org/sqlite"
)
