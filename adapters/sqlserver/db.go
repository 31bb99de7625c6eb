package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pressly/goose/v3"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/db/migrations"
	"github.com/submissionmanager/submission-manager/ports"
)

// DB is one SQL Server database opened for the service: the query pool the
// store and lease use, and the plain handle goose migrates through.
type DB struct {
	queries *sql.DB
	plain   *sql.DB
	q       *sqlserverdb.Queries
	// leases and leaseQ are the lease operations' own small pool (see
	// leaseConns).
	leases *sql.DB
	leaseQ *sqlserverdb.Queries
	// rehearsed is when a follower last rehearsed the takeover ahead of
	// time (lease_prepare.go).
	rehearsed execWarmth
	// lanes are the executor's pools, one per kind of call it has under
	// way, and exec its pool for every other call; warmth is when a
	// follower last warmed the lanes (exec_pool.go).
	exec   *sql.DB
	lanes  [laneCount]*sql.DB
	warmth execWarmth
	// pin holds the lease locks' names on a session of its own
	// (lease_pin.go).
	pin      *leaseLockPin
	log      *slog.Logger
	cfg      Config
	database string
	migrator *goose.Provider
	// engine is SQL Server or Babelfish, detected at Open.
	engine engine
	// locks names the database's application locks, read at Open.
	locks lockNames
	// stats gathers the tables' statistics as they grow, where the engine
	// needs it (statistics.go).
	stats *statistics
}

// Open connects to the database named in cfg.DSN and checks that it
// answers. It does not migrate: serve migrates SQL Server only when asked.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg = cfg.withDefaults()
	conns, params, err := newConnectors(cfg.DSN)
	if err != nil {
		return nil, err
	}
	// A session is reset only when its last use may have left something
	// behind (keepsession.go): on Babelfish a reset costs every plan.
	// Sized once the engine is known (Config.sizedFor).
	queries := sql.OpenDB(cfg.connector(poolQueries, keepSession(conns.queries)))
	queries.SetConnMaxLifetime(cfg.ConnMaxLifetime)

	// goose holds one connection for the session lock and may open a
	// second one while it runs; only the rare runs of sp_updatestats
	// (statistics.go) use it besides.
	plain := sql.OpenDB(cfg.connector(poolPlain, conns.plain))
	plain.SetMaxOpenConns(2)
	plain.SetMaxIdleConns(0)
	plain.SetConnMaxLifetime(cfg.ConnMaxLifetime)

	if err := queries.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("sqlserver: ping %s: %w", params.Database, mapError(err)), queries.Close(), plain.Close())
	}
	eng, locks, err := detectEngine(ctx, queries)
	if err != nil {
		return nil, errors.Join(err, queries.Close(), plain.Close())
	}
	cfg = cfg.sizedFor(eng)
	queries.SetMaxOpenConns(cfg.MaxOpenConns)
	queries.SetMaxIdleConns(cfg.MaxIdleConns)
	db := &DB{
		queries:  queries,
		plain:    plain,
		q:        sqlserverdb.New(queries),
		leases:   openLeasePool(conns, cfg),
		exec:     openExecPool(conns, cfg),
		pin:      newLeaseLockPin(sql.OpenDB(cfg.connector(poolLeasePin, conns.queries)), cfg.LeaseLockTimeout, locks),
		log:      cfg.Logger.With("store", "sqlserver", "database", params.Database),
		cfg:      cfg,
		database: params.Database,
		engine:   eng,
		locks:    locks,
	}
	for l := range db.lanes {
		db.lanes[l] = openExecPool(conns, cfg)
	}
	db.leaseQ = sqlserverdb.New(db.leases)
	db.stats = newStatistics(db.exec, plain, eng, db.log)
	db.migrator, err = goose.NewProvider(goose.DialectMSSQL, plain, migrations.SQLServer(),
		goose.WithSessionLocker(newAppLock(locks.migration(), cfg.MigrationLockTimeout)),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(db.log),
	)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("sqlserver: load migrations: %w", err), db.Close())
	}
	if db.engine.babelfish {
		db.log.InfoContext(ctx, "the server is Babelfish for PostgreSQL: change reads run under READ COMMITTED")
	}
	return db, nil
}

// Babelfish reports whether the opened server is Babelfish for PostgreSQL
// rather than SQL Server; the adapter reads the change feed at another
// isolation level there (see docs/sqlserver.md).
func (db *DB) Babelfish() bool { return db.engine.babelfish }

// OwnsSchema reports false: a SQL Server database is shared by every
// instance and its schema belongs to a deployment step (migrate up, or
// serve --migrate), not to whichever instance starts first.
func (db *DB) OwnsSchema() bool { return false }

// Store returns the intent and attempt store over this database, on the
// query pool that requests use.
func (db *DB) Store() ports.Store { return db.storeOn(db.queries) }

// ExecutorStore is Store on the executor's fourth pool, for the leader's
// executor and its gateway protection (its reservations, results and reads
// of due intents run on their lanes from any store, exec_pool.go): its
// rebuild, its refresh of changes and its reads of single intents then
// never wait for a connection behind requests, nor behind WarmQueries,
// which holds every connection of the query pool while it warms them. A
// new leader whose schedule was read through the query pool rebuilt only
// after that warm-up, 7-11 s of a fresh Babelfish instance's start
// (docs/sqlserver.md, "Connections").
func (db *DB) ExecutorStore() ports.Store { return db.storeOn(db.exec) }

// storeOn is the store whose calls go through pool.
func (db *DB) storeOn(pool *sql.DB) *store {
	return &store{db: db, pool: pool, q: sqlserverdb.New(pool)}
}

// Leases returns the leadership lease over this database.
func (db *DB) Leases() ports.LeaseStore { return &leaseStore{db: db} }

// Close stops a statistics run under way, ends the lease locks' pins and
// closes the connection pools.
func (db *DB) Close() error {
	db.stats.close()
	errs := []error{db.pin.close(), db.queries.Close(), db.exec.Close(), db.plain.Close(), db.leases.Close()}
	for _, pool := range db.lanes {
		errs = append(errs, pool.Close())
	}
	return errors.Join(errs...)
}
