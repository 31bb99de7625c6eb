package command

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sqlserver"
)

// Dialect names the database a --database value selects.
type Dialect string

// The supported databases.
const (
	DialectSQLite    Dialect = "sqlite"
	DialectSQLServer Dialect = "sqlserver"
)

// Database is a parsed --database value.
type Database struct {
	Dialect Dialect
	// Path is the SQLite file.
	Path string
	// Synchronous is the SQLite durability setting, from
	// "sqlite:PATH?synchronous=normal"; empty means the store's default
	// (FULL).
	Synchronous sqlite.Synchronous
	// DSN is the SQL Server URL as given, less the options read here.
	DSN string
	// PoolMaxConns is the SQL Server query pool's size, from
	// "sqlserver://...&pool_max_conns=N" (pgx's name for it); zero means
	// the adapter's default. go-mssqldb never sees the option.
	PoolMaxConns int
}

// maxPoolConns bounds pool_max_conns: far above what one instance needs,
// low enough that a typo cannot open thousands of sessions.
const maxPoolConns = 1000

// ParseDatabase reads "sqlite:PATH" (the embedded default) or a
// "sqlserver://" URL (production). Anything else is refused with the forms
// that are accepted, so a typo never silently opens a different database.
func ParseDatabase(s string) (Database, error) {
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(s, "sqlite:"), "//")
		path, query, _ := strings.Cut(path, "?")
		if path == "" {
			return Database{}, errors.New(`"sqlite:" needs a file path, as in sqlite:data/submission-manager.db`)
		}
		db := Database{Dialect: DialectSQLite, Path: path}
		params, err := url.ParseQuery(query)
		if err != nil {
			return Database{}, fmt.Errorf("sqlite options after '?': %v", err)
		}
		for key, values := range params {
			if key != "synchronous" {
				return Database{}, fmt.Errorf("unknown sqlite option %q (known: synchronous=full|normal)", key)
			}
			switch v := strings.ToUpper(values[len(values)-1]); sqlite.Synchronous(v) {
			case sqlite.SynchronousFull, sqlite.SynchronousNormal:
				db.Synchronous = sqlite.Synchronous(v)
			default:
				return Database{}, fmt.Errorf("sqlite option synchronous=%s: want full or normal", values[len(values)-1])
			}
		}
		return db, nil
	case strings.HasPrefix(s, "sqlserver://"):
		u, err := url.Parse(s)
		if err != nil {
			// The parser's message can quote part of the password.
			return Database{}, errors.New("not a valid sqlserver:// URL (check the host, port and the escaping of the password)")
		}
		if u.Host == "" {
			return Database{}, errors.New("the sqlserver:// URL names no host")
		}
		db := Database{Dialect: DialectSQLServer, DSN: s}
		params := u.Query()
		if values, ok := params["pool_max_conns"]; ok {
			v := values[len(values)-1]
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxPoolConns {
				return Database{}, fmt.Errorf("sqlserver option pool_max_conns=%s: want a whole number from 1 to %d", v, maxPoolConns)
			}
			params.Del("pool_max_conns")
			u.RawQuery = params.Encode()
			db.DSN, db.PoolMaxConns = u.String(), n
		}
		return db, nil
	default:
		return Database{}, errors.New("want sqlite:PATH or sqlserver://user:password@host?database=name")
	}
}

// String shows the database without its secrets, for logs and errors.
func (d Database) String() string {
	if d.Dialect == DialectSQLite {
		if d.Synchronous != "" {
			return "sqlite:" + d.Path + "?synchronous=" + strings.ToLower(string(d.Synchronous))
		}
		return "sqlite:" + d.Path
	}
	// The user-info password is not the only place a URL DSN can carry
	// one: go-mssqldb also reads ?password= and ?pwd=.
	dsn := sqlserver.RedactDSN(d.DSN)
	if d.PoolMaxConns > 0 {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + "pool_max_conns=" + strconv.Itoa(d.PoolMaxConns)
	}
	return dsn
}
