package sqlserver

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
	"github.com/microsoft/go-mssqldb/msdsn"
)

// Config is what cmd hands the adapter. Only DSN is required; the rest have
// defaults that suit a handful of instances sharing one server.
type Config struct {
	// DSN is a go-mssqldb connection string, in URL form
	// ("sqlserver://user:pass@host:1433?database=submissions") or ADO form
	// ("server=host;user id=...;database=submissions"). It must name a
	// database: the schema must never land in master by accident.
	DSN string
	// MaxOpenConns bounds the query pool (default: the engine's, 10 on
	// SQL Server and 6 on Babelfish, engine.queryConns). Each connection is
	// warmed before the instance serves, at a compile of the intake's
	// procedures on Babelfish (docs/sqlserver.md, "Connections").
	MaxOpenConns int
	// MaxIdleConns bounds idle connections kept for reuse (default
	// MaxOpenConns: a connection given back under steady load is kept for
	// the next request instead of being closed and opened again, which
	// costs a login, a TLS handshake where configured, and on Babelfish
	// the compile of each procedure at its first call on the new
	// connection, about 0.7 s of the server's CPU for the intake's).
	MaxIdleConns int
	// ConnMaxLifetime recycles connections so a failover or a load
	// balancer's idle timeout never leaves dead ones in the pool (default 30m).
	ConnMaxLifetime time.Duration
	// MigrationLockTimeout bounds how long Migrate waits for another
	// instance's migration to finish (default 5m).
	MigrationLockTimeout time.Duration
	// LeaseLockTimeout bounds how long a fenced write or a takeover waits
	// for the lease lock (fence.go); past it the write fails as the store
	// being unavailable (default 10s). Fenced writes wait only while a
	// takeover drains them, which lasts one fenced transaction.
	LeaseLockTimeout time.Duration
	// Logger receives migration and lease diagnostics (default slog.Default()).
	Logger *slog.Logger

	// wrapConnector, when set, wraps the connector of each pool (named by
	// the pool constants below) before the pool is opened: the tests count
	// the requests and logins each pool sends through it. Production
	// leaves it nil and talks to the driver directly, at no cost.
	wrapConnector func(pool string, c driver.Connector) driver.Connector
}

// The adapter's connection pools, as wrapConnector names them.
const (
	poolQueries = "queries"
	poolLeases  = "leases"
	// poolExecutor is the executor's reads of due intents and its fenced
	// batches (exec_pool.go).
	poolExecutor = "executor"
	poolPlain    = "plain"
	// poolLeasePin is the one session that pins the lease locks.
	poolLeasePin = "lease-pin"
)

// connector returns c as the pool named pool opens it.
func (cfg Config) connector(pool string, c driver.Connector) driver.Connector {
	if cfg.wrapConnector == nil {
		return c
	}
	return cfg.wrapConnector(pool, c)
}

// Defaults applied by Open for unset fields.
const (
	defaultConnMaxLifetime      = 30 * time.Minute
	defaultMigrationLockTimeout = 5 * time.Minute
	defaultLeaseLockTimeout     = 10 * time.Second
	defaultAppName              = "submission-manager"
)

// withDefaults returns cfg with every unset field filled in but the pool's
// size, which depends on the engine (sizedFor).
func (cfg Config) withDefaults() Config {
	if cfg.ConnMaxLifetime <= 0 {
		cfg.ConnMaxLifetime = defaultConnMaxLifetime
	}
	if cfg.MigrationLockTimeout <= 0 {
		cfg.MigrationLockTimeout = defaultMigrationLockTimeout
	}
	if cfg.LeaseLockTimeout <= 0 {
		cfg.LeaseLockTimeout = defaultLeaseLockTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// sizedFor returns cfg with the query pool sized: the engine's size unless
// cfg sets one, and as many idle connections as it may open unless cfg
// keeps fewer.
func (cfg Config) sizedFor(eng engine) Config {
	if cfg.MaxOpenConns <= 0 {
		cfg.MaxOpenConns = eng.queryConns
	}
	if cfg.MaxIdleConns <= 0 || cfg.MaxIdleConns > cfg.MaxOpenConns {
		cfg.MaxIdleConns = cfg.MaxOpenConns
	}
	return cfg
}

// connectors holds the two ways this adapter talks to one database.
type connectors struct {
	// queries rewrites sqlc's $N placeholders to @pN before sending; with
	// the plain driver "$1" would be a T-SQL money literal and the query
	// would silently run with wrong values.
	queries *mssql.Connector
	// plain sends query text untouched, as goose's own @p1 queries and the
	// migration lock need.
	plain *mssql.Connector
}

// newConnectors parses the DSN once and builds both connectors from it, so
// the migration handle and the query handle can never point at different
// servers or databases.
func newConnectors(dsn string) (connectors, msdsn.Config, error) {
	if dsn == "" {
		return connectors{}, msdsn.Config{}, errors.New("sqlserver: DSN is empty")
	}
	params, err := msdsn.Parse(dsn)
	if err != nil {
		return connectors{}, msdsn.Config{}, fmt.Errorf("sqlserver: parse DSN: %w", err)
	}
	if params.Database == "" {
		return connectors{}, msdsn.Config{}, errors.New(`sqlserver: DSN names no database (add "database=<name>")`)
	}
	if _, set := params.Parameters[msdsn.AppName]; !set {
		// Otherwise the driver's "go-mssqldb" would name the sessions.
		params.AppName = defaultAppName
	}
	return connectors{
		queries: mssql.NewConnectorWithProcessQueryText(params),
		plain:   mssql.NewConnectorConfig(params),
	}, params, nil
}
