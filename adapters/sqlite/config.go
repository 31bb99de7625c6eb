package sqlite

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Synchronous is SQLite's PRAGMA synchronous setting for the writer.
type Synchronous string

// The synchronous settings the store accepts.
const (
	// SynchronousFull syncs the WAL on every commit: a committed intent
	// survives a process crash, an OS crash and a power loss. It is the
	// default because an acknowledged intent must never be lost.
	SynchronousFull Synchronous = "FULL"
	// SynchronousNormal syncs only at WAL checkpoints. In WAL mode the
	// database stays consistent and a process crash loses nothing, but an OS
	// crash or power loss can roll back the last transactions committed
	// since the previous checkpoint, intents already acknowledged to clients
	// among them. Choose it only where the disk or the host protects against
	// that (for example a battery-backed write cache).
	SynchronousNormal Synchronous = "NORMAL"
)

// Config says where the database file is and how to run it. The zero value
// of every field but Path picks a safe default.
type Config struct {
	// Path is the database file; it is created when missing unless
	// MustExist is set. It must not contain '?', which would start the
	// driver's parameter list.
	Path string
	// MustExist makes Open fail when there is no file at Path instead of
	// creating one: commands that only read (or change) an existing
	// database never create one from a mistyped path.
	MustExist bool
	// Synchronous defaults to SynchronousFull.
	Synchronous Synchronous
	// BusyTimeout bounds how long a connection waits for another process's
	// lock before failing with core.ErrStoreUnavailable. Default 5s.
	BusyTimeout time.Duration
	// ReadConns is the size of the read-only connection pool. Default 4.
	ReadConns int
	// MaxBatch caps how many write operations share one transaction.
	// Default 256.
	MaxBatch int
	// MigrationLockTimeout bounds how long Migrate waits for another
	// process migrating the same file. Default 5 minutes.
	MigrationLockTimeout time.Duration
	// Logger receives the store's logs. Default slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() (Config, error) {
	if c.Path == "" {
		return c, fmt.Errorf("sqlite: Config.Path is required")
	}
	if strings.ContainsRune(c.Path, '?') {
		return c, fmt.Errorf("sqlite: Config.Path %q must not contain '?'", c.Path)
	}
	switch c.Synchronous {
	case "":
		c.Synchronous = SynchronousFull
	case SynchronousFull, SynchronousNormal:
	default:
		return c, fmt.Errorf("sqlite: Config.Synchronous %q is neither %s nor %s",
			c.Synchronous, SynchronousFull, SynchronousNormal)
	}
	if c.BusyTimeout <= 0 {
		c.BusyTimeout = 5 * time.Second
	}
	if c.ReadConns <= 0 {
		c.ReadConns = 4
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 256
	}
	if c.MigrationLockTimeout <= 0 {
		c.MigrationLockTimeout = 5 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// writerDSN configures the one writer connection: WAL, the durability
// setting, and BEGIN IMMEDIATE so a write transaction takes the write lock
// up front instead of failing to upgrade a read lock later. Statement
// journals stay in memory (driverName's connect hook).
func (c Config) writerDSN() string {
	q := c.commonParams()
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", string(c.Synchronous))
	q.Set("_txlock", "immediate")
	return c.Path + "?" + q.Encode()
}

// readerDSN configures the read pool; query_only makes an accidental write
// through it an error.
func (c Config) readerDSN() string {
	q := c.commonParams()
	q.Set("_query_only", "1")
	return c.Path + "?" + q.Encode()
}

func (c Config) commonParams() url.Values {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(c.BusyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	return q
}
