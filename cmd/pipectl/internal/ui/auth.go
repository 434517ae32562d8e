package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// TokenCookie is the cookie that carries the access token once a browser
// opened the URL with ?token=.
const TokenCookie = "pipectl_ui_token"

// NewToken returns a random access token (32 hex digits).
// MinTokenLen is the shortest token pipectl ui takes for a listen address
// other machines can reach: a short one is guessed in a few requests.
const MinTokenLen = 16

func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Loopback reports whether the listen address host:port binds only to the
// loopback interface ("localhost", 127.0.0.0/8, ::1). An empty host binds
// to every interface.
func Loopback(listen string) (bool, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false, fmt.Errorf("--listen %q: expected host:port (e.g. 127.0.0.1:8421)", listen)
	}
	return loopbackHost(host), nil
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// guard wraps h with the checks every request passes: read-only methods,
// the access token (when there is one), the Host header of a loopback
// server (no DNS rebinding), and security headers.
func (s *server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			hd.Set("Allow", "GET, HEAD")
			http.Error(w, "pipectl ui is read-only", http.StatusMethodNotAllowed)
			return
		}
		if s.Token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(r.Host); err == nil {
				host = h
			}
			if !loopbackHost(host) {
				http.Error(w, "pipectl ui without a token answers only to localhost and loopback addresses", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && s.tokenOK(q) {
			// Keep the token in a cookie and take it out of the address bar.
			http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.authorized(r) {
			http.Error(w, "pipectl ui: access token required: open the URL pipectl ui printed (…?token=…), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *server) authorized(r *http.Request) bool {
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(b) {
		return true
	}
	c, err := r.Cookie(TokenCookie)
	return err == nil && s.tokenOK(c.Value)
}

func (s *server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.Token)) == 1
}
