package sqlserver

import (
	"strings"
	"testing"
)

// TestRedactDSNHidesPasswordsInEveryForm covers the forms go-mssqldb
// accepts, with the quoting each allows.
func TestRedactDSNHidesPasswordsInEveryForm(t *testing.T) {
	cases := []struct{ dsn, secret, keep string }{
		{"sqlserver://sa:s3cret@db:1433?database=subs", "s3cret", "db:1433"},
		{"sqlserver://db:1433?database=subs&password=s3cret", "s3cret", "database=subs"},
		{"sqlserver://db?database=subs&PWD=s3cret", "s3cret", "database=subs"},
		{"sqlserver://sa:p%40ss%3Bw0rd@db?database=subs", "w0rd", "db"},
		{"SQLServer://sa:s3cret@db?database=subs", "s3cret", "db"},
		{"server=db;user id=sa;password=s3cret;database=subs", "s3cret", "user id=sa"},
		{"server=db;uid=sa;pwd=s3cret;database=subs", "s3cret", "database=subs"},
		{`server=db;user id=sa;password="s3c;ret""x";database=subs`, "ret", "database=subs"},
		{"server=db;user id=sa;Password = s3cret ;database=subs", "s3cret", "server=db"},
		{"odbc:server=db;user id=sa;password={s3c;ret}};x};database=subs", "ret", "odbc:"},
		{"odbc:server=db;uid=sa;pwd=s3cret;database=subs", "s3cret", "database=subs"},
		{"server=db;user id=sa;password=s3cret;database=subs;change password=n3wsecret", "n3wsecret", "server=db"},
		{"sqlserver://sa:s3cret@db internal", "s3cret", "sqlserver://"},
		{"odbc:server=db;password={s3cret", "s3cret", ""},
	}
	for _, tc := range cases {
		got := RedactDSN(tc.dsn)
		if strings.Contains(got, tc.secret) {
			t.Errorf("RedactDSN(%q) = %q shows the secret", tc.dsn, got)
		}
		if !strings.Contains(got, tc.keep) {
			t.Errorf("RedactDSN(%q) = %q lost %q, which helps find the server", tc.dsn, got, tc.keep)
		}
	}
}
