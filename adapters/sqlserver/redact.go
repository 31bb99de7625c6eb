package sqlserver

import (
	"net/url"
	"sort"
	"strings"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// redacted replaces every secret in a DSN shown to people.
const redacted = "xxxxx"

// RedactDSN returns dsn fit for logs and error messages: every value that
// go-mssqldb would read as a secret is replaced, in each form the driver
// accepts. A URL ("sqlserver://user:pass@host?password=...") keeps its shape
// with the user-info password and any secret query parameter replaced. An
// ADO ("server=h;user id=u;password=p") or ODBC ("odbc:...;pwd={p;w}")
// string is shown as the driver parsed it, key by key, so quoting and
// braces can never smuggle part of a password past the redaction; one the
// driver cannot split is not shown at all.
func RedactDSN(dsn string) string {
	if strings.HasPrefix(strings.ToLower(dsn), "sqlserver://") {
		return redactURL(dsn)
	}
	params, err := msdsn.Parse(dsn)
	if params.Parameters == nil || (err != nil && len(params.Parameters) == 0) {
		return "(a connection string that does not parse; not shown)"
	}
	keys := make([]string, 0, len(params.Parameters))
	for k := range params.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	if strings.HasPrefix(strings.ToLower(dsn), "odbc:") {
		b.WriteString("odbc:")
	}
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(';')
		}
		v := params.Parameters[k]
		if secretKey(k) {
			v = redacted
		}
		b.WriteString(k + "=" + v)
	}
	return b.String()
}

// redactURL hides the user-info password and secret query parameters of
// a URL DSN; an unparsable URL is not shown.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "sqlserver://(a URL that does not parse; not shown)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	q := u.Query()
	changed := false
	for k := range q {
		if secretKey(k) {
			q[k] = []string{redacted}
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// secretKey reports whether a connection string key carries a secret:
// the password and its ADO synonym pwd, "change password", and any key
// naming a secret, token or key password (Azure AD and certificate
// options), matched loosely so a new driver option is hidden by default.
func secretKey(key string) bool {
	k := strings.ToLower(strings.Join(strings.Fields(key), ""))
	for _, s := range []string{"password", "pwd", "secret", "token", "passphrase"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}
