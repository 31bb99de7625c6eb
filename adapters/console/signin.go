package console

import (
	"net/http"

	"github.com/submissionmanager/submission-manager/core"
)

// signInPage shows the sign-in form. It starts an anonymous session so
// that the form, like every form, carries a CSRF token.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	now := c.cfg.Clock.Now()
	if ss, err := c.sessions.read(r, now); err == nil && (ss.Operator || c.open()) {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	ss := c.sessions.newSession(now, false)
	c.sessions.write(w, r, ss)
	p := page{Title: "Sign in", Session: ss}
	if !c.keys.Has(core.RoleOperator) {
		p.Error = "No operator key is configured (--operator-keys), so nobody can sign in to the console."
	}
	c.render(w, r, http.StatusOK, "signin", p)
}

// signIn checks the operator key from the form and, when it is one,
// replaces the anonymous session with an operator session (a new nonce, so
// a token seen before signing in is worthless after). The key is never
// logged, echoed or put in a URL.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	now := c.cfg.Clock.Now()
	pre, err := c.sessions.read(r, now)
	if err != nil {
		c.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Error: "The sign-in form has expired; try again."})
		return
	}
	if err := c.sessions.checkCSRF(pre, r.PostFormValue("csrf")); err != nil {
		c.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Error: err.Error(), Session: pre})
		return
	}
	if c.keys.Role(r.PostFormValue("key")) != core.RoleOperator {
		c.log.Info("console sign-in refused", "remote", r.RemoteAddr)
		c.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Error: "That is not an operator key.", Session: pre})
		return
	}
	c.sessions.write(w, r, c.sessions.newSession(now, true))
	c.log.Info("console sign-in", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// signOut ends the session.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, _ session) {
	c.sessions.clear(w, r)
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
