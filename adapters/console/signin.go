package console

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// signInPage shows the sign-in form. It starts an anonymous session so
// that the form, like every form, carries a CSRF token.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	now := c.cfg.Clock.Now()
	ss, err := c.sessions.read(r, now)
	switch {
	case err == nil && (ss.Operator || c.open()):
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	case err != nil && !refused(err):
		c.failure(w, r, session{}, "checking the session", err)
		return
	}
	if ss, err = c.sessions.anonymous(r.Context(), now); err != nil {
		c.failure(w, r, session{}, "starting a session", err)
		return
	}
	c.sessions.write(w, r, ss, now)
	p := page{Title: "Sign in", Session: ss}
	if !c.keys.Has(core.RoleOperator) {
		p.Error = "No operator key is configured (--operator-keys), so nobody can sign in to the console."
	}
	c.render(w, r, http.StatusOK, "signin", p)
}

// signIn checks the operator key from the form and, when it is one,
// replaces the anonymous session with an operator session kept in the
// store (a new nonce, so a token seen before signing in is worthless
// after). A client address that presented too many unknown keys is refused
// before its key is looked at. The key is never logged, echoed or put in a
// URL.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	now := c.cfg.Clock.Now()
	pre, err := c.sessions.read(r, now)
	if err != nil && !refused(err) {
		c.failure(w, r, session{}, "checking the session", err)
		return
	}
	if err != nil {
		c.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Error: "The sign-in form has expired; try again."})
		return
	}
	if err := pre.checkCSRF(r.PostFormValue("csrf")); err != nil {
		c.render(w, r, http.StatusForbidden, "signin", page{Title: "Sign in", Error: err.Error(), Session: pre})
		return
	}
	client := ports.AuthClient{Surface: ports.SurfaceConsole, Peer: r.RemoteAddr, ForwardedFor: r.Header.Values("X-Forwarded-For")}
	if wait := c.throttle.Admit(client); wait > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		c.render(w, r, http.StatusTooManyRequests, "signin", page{Title: "Sign in", Session: pre,
			Error: fmt.Sprintf("Too many unknown keys came from your address; try again in %s.", wait.Round(time.Second))})
		return
	}
	key := r.PostFormValue("key")
	if role := c.keys.Role(key); role != core.RoleOperator {
		if role == core.RoleNone && key != "" {
			c.throttle.Failed(client)
		}
		c.log.Info("console sign-in refused", "remote", r.RemoteAddr)
		c.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Error: "That is not an operator key.", Session: pre})
		return
	}
	ss, err := c.sessions.start(r.Context(), now)
	if err != nil {
		c.failure(w, r, pre, "starting the session", err)
		return
	}
	c.sessions.write(w, r, ss, now)
	c.log.Info("console sign-in", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// signOut ends the session in the store, so its cookie is refused on every
// instance from now on, and clears the cookie.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, ss session) {
	if err := c.sessions.end(r.Context(), ss); err != nil {
		c.failure(w, r, ss, "ending the session", err)
		return
	}
	c.sessions.clear(w, r)
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
