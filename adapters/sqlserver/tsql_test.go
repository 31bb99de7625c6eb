package sqlserver

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tsqlast "github.com/sqlc-dev/teesql/ast"
	tsql "github.com/sqlc-dev/teesql/parser"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/db/migrations"
	"github.com/submissionmanager/submission-manager/ports"
)

// No SQL Server runs here, so these tests are the check that the T-SQL the
// adapter sends is T-SQL: every migration and every generated query is
// parsed by teesql, as SQL Server would receive it.

// generatedQueries returns the query constants of the generated sqlserverdb
// package, by constant name: the text that actually runs, not its source.
func generatedQueries(t *testing.T) map[string]string {
	t.Helper()
	dir := filepath.Join("internal", "sqlserverdb")
	files, err := filepath.Glob(filepath.Join(dir, "*.sql.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated query files in %s (err %v)", dir, err)
	}
	queries := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					text, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					queries[name.Name] = text
				}
			}
		}
	}
	if len(queries) < 10 {
		t.Fatalf("found only %d generated queries; is the generated package complete?", len(queries))
	}
	return queries
}

// toDriverText does to query text what go-mssqldb's query-text processing
// connector does before sending it: $N becomes @pN outside string literals,
// quoted identifiers and comments. It also reports what that rewrite would
// treat as a placeholder by accident (? and :name or $name), which a query
// of ours must never contain.
func toDriverText(q string) (string, error) {
	var out strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '[':
			end := map[byte]byte{'\'': '\'', '"': '"', '[': ']'}[c]
			j := strings.IndexByte(q[i+1:], end)
			if j < 0 {
				return "", fmt.Errorf("unterminated %c at offset %d", c, i)
			}
			out.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			out.WriteString(q[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i:], "*/")
			if j < 0 {
				return "", fmt.Errorf("unterminated comment at offset %d", i)
			}
			out.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '?':
			return "", fmt.Errorf("? at offset %d would be rewritten as a placeholder", i)
		case (c == '$' || c == ':') && i+1 < len(q) && isDigit(q[i+1]):
			if c == ':' {
				return "", fmt.Errorf(":N at offset %d would be rewritten as a placeholder", i)
			}
			j := i + 1
			for j < len(q) && isDigit(q[j]) {
				j++
			}
			out.WriteString("@p" + q[i+1:j])
			i = j - 1
		case (c == '$' || c == ':') && i+1 < len(q) && isLetter(q[i+1]):
			return "", fmt.Errorf("%c followed by a name at offset %d would be rewritten as a named parameter", c, i)
		default:
			out.WriteByte(c)
		}
	}
	return out.String(), nil
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// parseTSQL parses a script with teesql and returns its statements.
func parseTSQL(t *testing.T, name, text string) []tsqlast.Statement {
	t.Helper()
	script, err := tsql.Parse(context.Background(), strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s is not valid T-SQL: %v\n%s", name, err, text)
	}
	var stmts []tsqlast.Statement
	for _, b := range script.Batches {
		stmts = append(stmts, b.Statements...)
	}
	return stmts
}

func statementTypes(stmts []tsqlast.Statement) []string {
	names := make([]string, len(stmts))
	for i, s := range stmts {
		names[i] = reflect.TypeOf(s).Elem().Name()
	}
	return names
}

// forbidden lists constructs our queries must not contain: T-SQL that the
// sqlc parser rejects or that has a known concurrency or precision trap,
// and PostgreSQL that SQL Server does not run.
var forbidden = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)\bMERGE\b`), "MERGE has a history of concurrency defects; insert and handle 2627"},
	{regexp.MustCompile(`(?i)\bTOP\b`), "use OFFSET 0 ROWS FETCH NEXT n ROWS ONLY"},
	{regexp.MustCompile(`(?i)\bOUTPUT\b`), "sqlc cannot parse OUTPUT"},
	{regexp.MustCompile(`(?i)\bWITH\s*\(`), "table hints: sqlc cannot parse them"},
	{regexp.MustCompile(`(?i)\b(NOLOCK|UPDLOCK|HOLDLOCK|ROWLOCK|READPAST)\b`), "table hints: sqlc cannot parse them"},
	{regexp.MustCompile(`\[`), "bracketed identifiers: sqlc cannot parse them"},
	{regexp.MustCompile(`::`), "PostgreSQL cast syntax"},
	{regexp.MustCompile(`(?i)\b(LIMIT|RETURNING|ILIKE|NOW\s*\(|TRUE|FALSE)\b`), "PostgreSQL, not T-SQL"},
	{regexp.MustCompile(`(?i)\b(GETDATE|GETUTCDATE|CURRENT_TIMESTAMP|SYSDATETIME)\b`), "database time is SYSUTCDATETIME() (UTC, datetime2 precision)"},
	{regexp.MustCompile(`\|\|`), "PostgreSQL string concatenation"},
}

// Columns by SQL type, for the parameter-casting rules.
const (
	datetime2Columns = `created_at|next_due_at|last_modified_at|started_at|finished_at|acquired_at|renewed_at|expires_at|paused_at`
	varcharColumns   = `status|mode|gateway_type|lease_name|holder_id|outcome_status|final_outcome_status|exhausted_reason|selector_kind`
)

// uncastParam finds a column compared directly with a placeholder, on
// either side of the operator.
func uncastParam(columns string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(` + columns + `)\s*(=|<>|<=|>=|<|>)\s*\$\d+|\$\d+\s*(=|<>|<=|>=|<|>)\s*(` + columns + `)\b`)
}

// TestGeneratedQueriesAreTSQL parses every generated query, as the driver
// will send it, and checks the dialect rules docs/sqlserver.md states.
func TestGeneratedQueriesAreTSQL(t *testing.T) {
	queries := generatedQueries(t)
	names := make([]string, 0, len(queries))
	for name := range queries {
		names = append(names, name)
	}
	sort.Strings(names)
	datetimeRule, varcharRule := uncastParam(datetime2Columns), uncastParam(varcharColumns)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			query := queries[name]
			for _, f := range forbidden {
				if loc := f.re.FindStringIndex(query); loc != nil {
					t.Errorf("uses %q: %s", query[loc[0]:loc[1]], f.why)
				}
			}
			// Only predicates matter: an assignment (SET col = $N, VALUES)
			// converts the parameter to the column, never the reverse.
			predicates := query
			if i := regexp.MustCompile(`(?i)\bWHERE\b`).FindStringIndex(query); i != nil {
				predicates = query[i[0]:]
			} else {
				predicates = ""
			}
			if m := datetimeRule.FindString(predicates); m != "" {
				t.Errorf("%q compares a datetime2 column with an uncast parameter: go-mssqldb sends time.Time as datetimeoffset, which converts the column; CAST the parameter AS datetime2(7)", m)
			}
			if m := varcharRule.FindString(predicates); m != "" {
				t.Errorf("%q compares a varchar column with an uncast parameter: Go strings are nvarchar, which converts the column; CAST the parameter to the column's type", m)
			}
			driverText, err := toDriverText(query)
			if err != nil {
				t.Fatalf("placeholder rewrite: %v\n%s", err, query)
			}
			if strings.Contains(driverText, "$") {
				t.Errorf("a $ survived the placeholder rewrite:\n%s", driverText)
			}
			stmts := parseTSQL(t, name, driverText)
			// teesql is lenient: garbage can parse as EXECUTE statements.
			// Each query must be exactly one statement of its own kind.
			if len(stmts) != 1 {
				t.Fatalf("parsed as %d statements %v, want 1:\n%s", len(stmts), statementTypes(stmts), driverText)
			}
			want := map[string]string{"SELECT": "SelectStatement", "INSERT": "InsertStatement", "UPDATE": "UpdateStatement", "DELETE": "DeleteStatement"}[firstKeyword(query)]
			if got := statementTypes(stmts)[0]; got != want {
				t.Errorf("parsed as %s, want %s:\n%s", got, want, driverText)
			}
		})
	}
}

// firstKeyword returns the first word of the query after its comments.
func firstKeyword(query string) string {
	for _, line := range strings.Split(query, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		return strings.ToUpper(strings.Fields(line)[0])
	}
	return ""
}

// TestMigrationsAreTSQL parses the Up and Down sections of every embedded
// SQL Server migration.
func TestMigrationsAreTSQL(t *testing.T) {
	files, err := fs.Glob(migrations.SQLServer(), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no SQL Server migrations embedded (err %v)", err)
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			text, err := fs.ReadFile(migrations.SQLServer(), name)
			if err != nil {
				t.Fatal(err)
			}
			up, down, err := gooseSections(string(text))
			if err != nil {
				t.Fatal(err)
			}
			for section, sql := range map[string]string{"Up": up, "Down": down} {
				stmts := parseTSQL(t, name+" "+section, sql)
				if strings.Contains(sql, "[") && !routinesOnly(stmts) {
					t.Errorf("%s section uses bracketed identifiers, which sqlc's parser rejects", section)
				}
				if len(stmts) == 0 {
					t.Errorf("%s section has no statements", section)
				}
				for _, stmt := range stmts {
					if typ := migrationStatement(stmt); typ != "" {
						t.Errorf("%s section parsed a %s; a migration here holds DDL, data UPDATEs and IFs around DDL only (is something misspelled?)", section, typ)
					}
				}
			}
		})
	}
}

// migrationStatement returns "" for a statement a migration may hold (DDL,
// an UPDATE that carries data over, an IF whose branches are DDL, as in a
// migration guarded by SERVERPROPERTY('Babelfish')), else its type.
func migrationStatement(stmt tsqlast.Statement) string {
	if stmt == nil {
		return ""
	}
	typ := reflect.TypeOf(stmt).Elem().Name()
	switch s := stmt.(type) {
	case *tsqlast.UpdateStatement:
		return ""
	case *tsqlast.IfStatement:
		if bad := migrationStatement(s.ThenStatement); bad != "" {
			return "IF around a " + bad
		}
		if bad := migrationStatement(s.ElseStatement); bad != "" {
			return "IF around a " + bad
		}
		return ""
	}
	if strings.HasPrefix(typ, "Create") || strings.HasPrefix(typ, "Drop") || strings.HasPrefix(typ, "Alter") {
		return ""
	}
	return typ
}

// gooseSections splits a goose SQL migration into its Up and Down parts.
func gooseSections(text string) (up, down string, err error) {
	_, rest, ok := strings.Cut(text, "-- +goose Up")
	if !ok {
		return "", "", fmt.Errorf("no -- +goose Up annotation")
	}
	up, down, ok = strings.Cut(rest, "-- +goose Down")
	if !ok {
		return "", "", fmt.Errorf("no -- +goose Down annotation")
	}
	if strings.Contains(text, "NO TRANSACTION") {
		return "", "", fmt.Errorf("annotation this check does not handle yet; extend gooseSections")
	}
	// A statement goose sends whole (a procedure or function, which T-SQL
	// wants first in its batch) is a batch of its own.
	batches := strings.NewReplacer("-- +goose StatementBegin", "GO", "-- +goose StatementEnd", "GO")
	return batches.Replace(up), batches.Replace(down), nil
}

// routinesOnly reports whether stmts create or drop only procedures and
// functions: a migration of them adds no column sqlc must know.
func routinesOnly(stmts []tsqlast.Statement) bool {
	for _, stmt := range stmts {
		typ := reflect.TypeOf(stmt).Elem().Name()
		if !strings.Contains(typ, "Procedure") && !strings.Contains(typ, "Function") {
			return false
		}
	}
	return len(stmts) > 0
}

// TestHandWrittenSQLIsTSQL parses the statements written outside sqlc: the
// migration lock (plain connection, named parameters), the test hook that
// shares a change timestamp, the calls of stored procedures, and the batch
// insert statement whose VALUES table varies in size (processing
// connector, $N), at its smallest and largest.
func TestHandWrittenSQLIsTSQL(t *testing.T) {
	mostRows := rowsPerRequest(1)
	want := map[string][]string{
		"getAppLockSQL":         {"DeclareVariableStatement", "ExecuteStatement", "SelectStatement"},
		"releaseAppLockSQL":     {"ExecuteStatement"},
		"shareLastModifiedSQL":  {"UpdateStatement"},
		"createIntentSQL":       {"ExecuteStatement"},
		"getIntentSQL":          {"ExecuteStatement"},
		"insertIntentsSQL(1)":   {"InsertStatement", "SelectStatement", "SelectStatement"},
		"insertIntentsSQL(n)":   {"InsertStatement", "SelectStatement", "SelectStatement"},
		"insertIntentsProcSQL":  {"ExecuteStatement"},
		"getIntentsSQL":         {"ExecuteStatement"},
		"attemptsOfIDsSQL":      {"ExecuteStatement"},
		"resubmissionLinks":     {"ExecuteStatement"},
		"engineSQL":             {"SelectStatement"},
		"sharedLeaseLockSQL":    {"DeclareVariableStatement", "ExecuteStatement", "SelectStatement"},
		"takeoverLeaseLockSQL":  {"DeclareVariableStatement", "ExecuteStatement", "SelectStatement"},
		"pinLeaseLockSQL":       {"DeclareVariableStatement", "ExecuteStatement", "SelectStatement"},
		"renewLeaseSQL":         {"UpdateStatement"},
		"acquireLeaseSQL":       {"ExecuteStatement"},
		"startAttempts":         {"ExecuteStatement"},
		"finishAttempts":        {"ExecuteStatement"},
		"warmOpenAttemptSQL":    {"UpdateStatement", "InsertStatement"},
		"listIntentsSQL(first)": {"SelectStatement"},
		"listIntentsSQL(next)":  {"SelectStatement"},
		"listIntentsSQL(prev)":  {"SelectStatement"},
		"updateStatisticsSQL":   {"ExecuteStatement"},
		"statisticsNeedSQL":     {"SelectStatement"},
	}
	for name, sql := range map[string]string{
		"getAppLockSQL":         getAppLockSQL,
		"releaseAppLockSQL":     releaseAppLockSQL,
		"shareLastModifiedSQL":  shareLastModifiedSQL,
		"createIntentSQL":       createIntentSQL,
		"getIntentSQL":          getIntentSQL,
		"insertIntentsSQL(1)":   insertIntentsSQL(1),
		"insertIntentsSQL(n)":   insertIntentsSQL(mostRows),
		"insertIntentsProcSQL":  insertIntentsProcSQL,
		"getIntentsSQL":         getIntentsSQL,
		"attemptsOfIDsSQL":      attemptsOfIDsSQL,
		"resubmissionLinks":     resubmissionLinksSQL,
		"engineSQL":             engineSQL,
		"sharedLeaseLockSQL":    sharedLeaseLockSQL,
		"takeoverLeaseLockSQL":  takeoverLeaseLockSQL,
		"pinLeaseLockSQL":       pinLeaseLockSQL,
		"renewLeaseSQL":         renewLeaseSQL,
		"acquireLeaseSQL":       acquireLeaseSQL,
		"startAttempts":         startAttempts.text,
		"finishAttempts":        finishAttempts.text,
		"warmOpenAttemptSQL":    warmOpenAttemptSQL,
		"listIntentsSQL(first)": listingShape(nil, nil),
		"listIntentsSQL(next)":  listingShape(&ports.IntentPosition{IntentID: "x"}, nil),
		"listIntentsSQL(prev)":  listingShape(nil, &ports.IntentPosition{IntentID: "x"}),
		"updateStatisticsSQL":   updateStatisticsSQL,
		"statisticsNeedSQL":     statisticsNeedSQL,
	} {
		text, err := toDriverText(sql)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := statementTypes(parseTSQL(t, name, text)); !reflect.DeepEqual(got, want[name]) {
			t.Errorf("%s parsed as %v, want %v", name, got, want[name])
		}
	}
	for _, sql := range []string{getAppLockSQL, releaseAppLockSQL} {
		if !strings.Contains(sql, "@LockOwner = 'Session'") {
			t.Errorf("the migration lock must be session-owned (goose runs several transactions under it):\n%s", sql)
		}
	}
}

// listingShape is the listing with every filter set, continued from
// before or after when given.
func listingShape(before, after *ports.IntentPosition) string {
	sql, _ := listIntentsSQL(ports.ListIntentsParams{Status: core.StatusPending, SubmissionTarget: "t",
		PossiblyAccepted: true, AcceptedAfterDeadline: true, IntentIDPrefix: "otp-",
		CreatedFrom: time.Unix(1, 0), CreatedBefore: time.Unix(2, 0), LastResult: "timeout",
		Limit: 10, Before: before, After: after})
	return sql
}

// TestToDriverText checks the placeholder rewrite this file relies on.
func TestToDriverText(t *testing.T) {
	got, err := toDriverText("-- name: X :one\nSELECT '$1', \"$2\" FROM t WHERE a = $1 AND b = $12 /* $3 */")
	if err != nil {
		t.Fatal(err)
	}
	want := "-- name: X :one\nSELECT '$1', \"$2\" FROM t WHERE a = @p1 AND b = @p12 /* $3 */"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for _, bad := range []string{"SELECT ? FROM t", "SELECT :name FROM t", "SELECT $name FROM t", "SELECT 1 FROM t WHERE a = :1"} {
		if _, err := toDriverText(bad); err == nil {
			t.Errorf("toDriverText(%q) accepted text the driver would rewrite by accident", bad)
		}
	}
}

// TestQuerySourcesAreGenerated guards against editing a query file without
// regenerating: every "-- name:" in db/queries/sqlserver has a generated
// constant.
func TestQuerySourcesAreGenerated(t *testing.T) {
	queries := generatedQueries(t)
	generated := map[string]bool{}
	for _, text := range queries {
		generated[strings.Fields(strings.TrimPrefix(text, "-- name: "))[0]] = true
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "db", "queries", "sqlserver", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no query sources found (err %v)", err)
	}
	nameRe := regexp.MustCompile(`(?m)^-- name: (\w+)`)
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range nameRe.FindAllStringSubmatch(string(src), -1) {
			if !generated[m[1]] {
				t.Errorf("%s: query %s has no generated code; run make generate", path, m[1])
			}
		}
	}
}

// TestSQLCReadsEveryUnguardedMigration keeps sqlc's schema complete: sqlc.yaml
// lists the SQL Server migrations sqlc reads, so a new migration must be
// listed there, unless it is T-SQL control flow sqlc cannot parse, which is
// allowed only as IFs on SERVERPROPERTY('Babelfish') around DDL that changes
// no column (a key that SQL Server gets and Babelfish does not), or holds
// only procedures and functions (which add no column).
func TestSQLCReadsEveryUnguardedMigration(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("..", "..", "sqlc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*-\s*db/migrations/sqlserver/(\S+\.sql)\s*$`).FindAllStringSubmatch(string(config), -1) {
		listed[m[1]] = true
	}
	files, err := fs.Glob(migrations.SQLServer(), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no SQL Server migrations embedded (err %v)", err)
	}
	guarded := 0
	for _, name := range files {
		text, err := fs.ReadFile(migrations.SQLServer(), name)
		if err != nil {
			t.Fatal(err)
		}
		up, _, err := gooseSections(string(text))
		if err != nil {
			t.Fatal(err)
		}
		stmts := parseTSQL(t, name, up)
		allGuarded := len(stmts) > 0
		for _, stmt := range stmts {
			if _, ok := stmt.(*tsqlast.IfStatement); !ok {
				allGuarded = false
			}
		}
		allGuarded = allGuarded && strings.Count(up, "SERVERPROPERTY('Babelfish')") == len(stmts)
		switch {
		case routinesOnly(stmts) && listed[name]:
			t.Errorf("%s is listed in sqlc.yaml but holds only procedures and functions, which sqlc's parser rejects", name)
		case routinesOnly(stmts):
		case listed[name] && allGuarded:
			t.Errorf("%s is listed in sqlc.yaml but is T-SQL control flow sqlc cannot parse", name)
		case !listed[name] && !allGuarded:
			t.Errorf("%s is not listed in sqlc.yaml's sqlserver schema: sqlc would not see its columns", name)
		case allGuarded:
			guarded++
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("sqlc.yaml lists %s, which is not an embedded migration", name)
	}
	if guarded == 0 {
		t.Error("no Babelfish-guarded migration found; is the foreign key migration gone?")
	}
}
