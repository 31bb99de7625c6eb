package command

import (
	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/app/executor"

	"bytes"
	"errors"
	"flag"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) LookupEnv {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

func TestServeDefaultsNeedNoConfiguration(t *testing.T) {
	cfg, err := parseServeConfig(nil, envOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, DefaultServeConfig()) {
		t.Fatalf("no flags and no env gave\n%+v\nwant the defaults\n%+v", cfg, DefaultServeConfig())
	}
	if cfg.Database != "sqlite:data/submission-manager.db" || cfg.Registry != "config/submission_targets.json" ||
		cfg.Listen != "127.0.0.1:8000" || cfg.Migrate || cfg.Pprof || len(cfg.APIKeys) != 0 ||
		cfg.MaxPayloadBytes != 256<<10 || cfg.RetryDelay != 5*time.Second || cfg.APIOnly ||
		cfg.MaxBodiesInFlight != 256 || cfg.PprofListen != "127.0.0.1:6060" || cfg.WriteTimeout != time.Minute {
		t.Fatalf("defaults drifted from the documented ones: %+v", cfg)
	}
}

func TestServeFlagsAndEnvironment(t *testing.T) {
	env := envOf(map[string]string{
		"SUBMISSION_DATABASE":                  "sqlite:/tmp/env.db",
		"SUBMISSION_RETRY_DELAY":               "50ms",
		"SUBMISSION_API_KEYS":                  "k1, k2,,",
		"SUBMISSION_MAX_IN_FLIGHT":             "7",
		"SUBMISSION_SCHEDULE_REFRESH_INTERVAL": "250ms",
		"SUBMISSION_LOG_FORMAT":                "json",
		"SUBMISSION_LOG_LEVEL":                 "debug",
		"SUBMISSION_PPROF":                     "true",
		"SUBMISSION_LISTEN":                    "127.0.0.1:9000",
		"SUBMISSION_API_ONLY":                  "true",
		"SUBMISSION_MAX_BODIES_IN_FLIGHT":      "9",
		"SUBMISSION_PPROF_LISTEN":              "127.0.0.1:7070",
	})
	cfg, err := parseServeConfig([]string{"--listen", "127.0.0.1:0", "--holder-id=sm-01", "--migrate",
		"--lease-duration", "3s", "--renew-interval", "1s", "--acquire-interval", "2s",
		"--max-payload-bytes", "1000", "--gateway-timeout", "750ms", "--registry", "reg.json", "--write-timeout", "45s"}, env, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultServeConfig()
	want.Database = "sqlite:/tmp/env.db"
	want.RetryDelay = 50 * time.Millisecond
	want.APIKeys = []string{"k1", "k2"}
	want.MaxInFlight = 7
	want.APIOnly = true
	want.ScheduleRefreshInterval = 250 * time.Millisecond
	want.LogFormat = "json"
	want.LogLevel = slog.LevelDebug
	want.Pprof = true
	want.Listen = "127.0.0.1:0" // the flag wins over SUBMISSION_LISTEN
	want.HolderID = "sm-01"
	want.Migrate = true
	want.LeaseDuration, want.RenewInterval, want.AcquireInterval = 3*time.Second, time.Second, 2*time.Second
	want.MaxPayloadBytes = 1000
	want.GatewayTimeout = 750 * time.Millisecond
	want.Registry = "reg.json"
	want.MaxBodiesInFlight = 9
	want.PprofListen = "127.0.0.1:7070"
	want.WriteTimeout = 45 * time.Second
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", cfg, want)
	}
}

// TestBadValuesNameTheFlag checks that every refusal tells the operator
// which flag (and, for the environment, which variable) to fix.
func TestBadValuesNameTheFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"bad env duration", nil, map[string]string{"SUBMISSION_RETRY_DELAY": "soon"},
			[]string{"SUBMISSION_RETRY_DELAY", "--retry-delay"}},
		{"bad env number", nil, map[string]string{"SUBMISSION_MAX_IN_FLIGHT": "many"},
			[]string{"SUBMISSION_MAX_IN_FLIGHT", "--max-in-flight"}},
		{"bad env log format", nil, map[string]string{"SUBMISSION_LOG_FORMAT": "xml"},
			[]string{"SUBMISSION_LOG_FORMAT", "--log-format", "text, json"}},
		{"bad env log level", nil, map[string]string{"SUBMISSION_LOG_LEVEL": "loud"},
			[]string{"SUBMISSION_LOG_LEVEL", "--log-level"}},
		{"renew not below lease", []string{"--lease-duration", "10s", "--renew-interval", "10s"}, nil,
			[]string{"--renew-interval", "--lease-duration"}},
		{"zero retry delay", []string{"--retry-delay", "0s"}, nil, []string{"--retry-delay"}},
		{"no in-flight", []string{"--max-in-flight", "0"}, nil, []string{"--max-in-flight"}},
		{"reserve ahead below -1", []string{"--reserve-ahead", "-2"}, nil, []string{"--reserve-ahead"}},
		{"no payload", []string{"--max-payload-bytes", "0"}, nil, []string{"--max-payload-bytes"}},
		{"no batch", []string{"--max-batch", "0"}, nil, []string{"--max-batch"}},
		{"huge batch", []string{"--max-batch", "10001"}, nil, []string{"--max-batch"}},
		{"unknown database", []string{"--database", "postgres://x"}, nil, []string{"--database", "sqlite:PATH"}},
		{"empty sqlite path", []string{"--database", "sqlite:"}, nil, []string{"--database"}},
		{"sqlserver without host", []string{"--database", "sqlserver://"}, nil, []string{"--database", "host"}},
		{"long holder id", []string{"--holder-id", strings.Repeat("h", 129)}, nil, []string{"--holder-id"}},
		{"argument", []string{"extra"}, nil, []string{"no arguments"}},
		{"api keys without a key", []string{"--api-keys", ","}, nil, []string{"--api-keys", "no key"}},
		{"api keys of blanks", []string{"--api-keys", " , ,"}, nil, []string{"--api-keys", "no key"}},
		{"empty env api keys", nil, map[string]string{"SUBMISSION_API_KEYS": ""}, []string{"--api-keys", "SUBMISSION_API_KEYS"}},
		{"no body slots", []string{"--max-bodies-in-flight", "0"}, nil, []string{"--max-bodies-in-flight"}},
		{"body bytes below a batch", []string{"--max-body-bytes-in-flight", "1000000"}, nil, []string{"--max-body-bytes-in-flight", "4636672"}},
		{"body bytes below a larger batch", []string{"--max-batch", "10000", "--max-payload-bytes", "16777216"}, nil, []string{"--max-body-bytes-in-flight", "--max-batch"}},
		{"zero write timeout", []string{"--write-timeout", "0s"}, nil, []string{"--write-timeout"}},
		{"pprof without address", []string{"--pprof", "--pprof-listen", ""}, nil, []string{"--pprof-listen"}},
		{"wait under a second", []string{"--max-wait", "500ms"}, nil, []string{"--max-wait"}},
		{"wait not below write timeout", []string{"--max-wait", "60s", "--write-timeout", "60s"}, nil, []string{"--max-wait", "--write-timeout"}},
		{"no waiters", []string{"--max-waiters", "0"}, nil, []string{"--max-waiters"}},
		{"zero not-before cap", []string{"--max-not-before", "0s"}, nil, []string{"--max-not-before"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseServeConfig(tc.args, envOf(tc.env), &bytes.Buffer{})
			var use *usageError
			if !errors.As(err, &use) {
				t.Fatalf("got %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestBadCommandLineFlagIsAUsageErrorPrintedByTheFlagPackage(t *testing.T) {
	var stderr bytes.Buffer
	_, err := parseServeConfig([]string{"--retry-delay", "soon"}, envOf(nil), &stderr)
	var silent *silentError
	if !errors.As(err, &silent) || silent.code != ExitUsage {
		t.Fatalf("got %v, want exit %d", err, ExitUsage)
	}
	if !strings.Contains(stderr.String(), "retry-delay") || !strings.Contains(stderr.String(), "SUBMISSION_RETRY_DELAY") {
		t.Fatalf("stderr does not name the flag and list the environment variables:\n%s", stderr.String())
	}
	_, err = parseServeConfig([]string{"-h"}, envOf(nil), &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h gave %v, want flag.ErrHelp", err)
	}
}

func TestEnvName(t *testing.T) {
	for flagName, want := range map[string]string{
		"database":                  "SUBMISSION_DATABASE",
		"schedule-refresh-interval": "SUBMISSION_SCHEDULE_REFRESH_INTERVAL",
		"api-keys":                  "SUBMISSION_API_KEYS",
	} {
		if got := EnvName(flagName); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", flagName, got, want)
		}
	}
}

func TestDatabaseStringHidesThePassword(t *testing.T) {
	db, err := ParseDatabase("sqlserver://sa:s3cret@db.internal:1433?database=submissions")
	if err != nil {
		t.Fatal(err)
	}
	if db.Dialect != DialectSQLServer || strings.Contains(db.String(), "s3cret") {
		t.Fatalf("got %v %q", db.Dialect, db.String())
	}
	for _, dsn := range []string{"sqlserver://db.internal?database=submissions&password=s3cret",
		"sqlserver://db.internal?database=submissions&PWD=s3cret", "sqlserver://sa:s3cret@db.internal?database=d&password=s3cret"} {
		db, err := ParseDatabase(dsn)
		if err != nil || strings.Contains(db.String(), "s3cret") || !strings.Contains(db.String(), "db.internal") {
			t.Fatalf("ParseDatabase(%q).String() = %q, %v", dsn, db.String(), err)
		}
	}
	if _, err := ParseDatabase("sqlserver://sa:s3cret@db internal"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("an unparsable URL's error must not repeat the password: %v", err)
	}
	lite, err := ParseDatabase("sqlite:data/x.db")
	if err != nil || lite.Dialect != DialectSQLite || lite.Path != "data/x.db" {
		t.Fatalf("sqlite: got %+v, %v", lite, err)
	}
}

// TestSQLServerPoolMaxConnsOption: pool_max_conns sizes the query pool, is
// taken out of the DSN go-mssqldb reads, shows in the database's string
// with the password still hidden, and a bad value is refused by name.
func TestSQLServerPoolMaxConnsOption(t *testing.T) {
	db, err := ParseDatabase("sqlserver://sa:s3cret@db.internal:1433?database=submissions&pool_max_conns=24")
	if err != nil {
		t.Fatal(err)
	}
	if db.PoolMaxConns != 24 || strings.Contains(db.DSN, "pool_max_conns") || !strings.Contains(db.DSN, "database=submissions") ||
		!strings.Contains(db.DSN, "sa:s3cret@db.internal:1433") {
		t.Fatalf("got pool %d and DSN %q; want 24 and the DSN without the option", db.PoolMaxConns, db.DSN)
	}
	if got := db.String(); !strings.Contains(got, "pool_max_conns=24") || strings.Contains(got, "s3cret") {
		t.Fatalf("String() = %q; want the option shown and the password hidden", got)
	}
	plain, err := ParseDatabase("sqlserver://sa:s3cret@db.internal:1433?database=submissions")
	if err != nil || plain.PoolMaxConns != 0 || strings.Contains(plain.String(), "pool_max_conns") {
		t.Fatalf("without the option: pool %d, %q, %v; want the adapter's default (0)", plain.PoolMaxConns, plain.String(), err)
	}
	for _, v := range []string{"0", "-3", "ten", "1001", ""} {
		_, err := ParseDatabase("sqlserver://sa:s3cret@db.internal?database=d&pool_max_conns=" + v)
		if err == nil || !strings.Contains(err.Error(), "pool_max_conns") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("pool_max_conns=%q: %v; want an error naming the option, without the password", v, err)
		}
	}
}

func TestSQLiteSynchronousOption(t *testing.T) {
	for in, want := range map[string]sqlite.Synchronous{
		"sqlite:data/x.db":                    "",
		"sqlite:data/x.db?synchronous=normal": sqlite.SynchronousNormal,
		"sqlite:data/x.db?synchronous=FULL":   sqlite.SynchronousFull,
	} {
		db, err := ParseDatabase(in)
		if err != nil || db.Path != "data/x.db" || db.Synchronous != want {
			t.Errorf("ParseDatabase(%q) = %+v, %v; want path data/x.db, synchronous %q", in, db, err, want)
		}
		if again, err := ParseDatabase(db.String()); err != nil || again != db {
			t.Errorf("%q does not round-trip through String: %+v, %v", in, again, err)
		}
	}
	for in, want := range map[string]string{
		"sqlite:data/x.db?synchronous=off": "want full or normal",
		"sqlite:data/x.db?journal=delete":  `unknown sqlite option "journal"`,
	} {
		if _, err := ParseDatabase(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDatabase(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

// TestReserveAheadReachesTheEngineInItsTerms pins the translation of
// --reserve-ahead: the flag's 0 (none) is the engine's NoReserveAhead, and
// the flag's default is the engine's zero (as many as MaxInFlight).
func TestReserveAheadReachesTheEngineInItsTerms(t *testing.T) {
	for flagValue, want := range map[string]int{"-1": 0, "0": executor.NoReserveAhead, "16": 16} {
		cfg, err := parseServeConfig([]string{"--reserve-ahead", flagValue}, envOf(nil), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.executorReserveAhead(); got != want {
			t.Errorf("--reserve-ahead %s gave the executor %d, want %d", flagValue, got, want)
		}
	}
}
