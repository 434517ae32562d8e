package codepack

import (
	"bytes"
	"regexp"
	"sync"
)

// Credentials are the patterns (IgnoreFile syntax) of the files and folders
// a pack leaves out by default, wherever they are: credentials that must not
// leave the machine with the code (a pack is stored in the artifact store,
// often a shared bucket). A line "!PATTERN" in IgnoreFile ships a match
// anyway (for a folder, name the folder: "!.aws").
var Credentials = []string{
	".aws", ".ssh", ".gnupg", ".docker", ".kube", ".azure", ".config/gcloud",
	".netrc", "_netrc", ".git-credentials", ".pgpass", ".pypirc", ".npmrc",
	".env*",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
}

// sniffBytes is how much of each file a pack reads to tell whether it holds
// a credential (looksLikeCredential).
const sniffBytes = 64 << 10

// secretPatterns are what a file holding a credential shows in its first
// sniffBytes; each with a quick literal test before the expression.
var secretPatterns = []struct {
	what    string
	literal []string
	re      func() *regexp.Regexp
}{
	{"a private key", []string{"PRIVATE KEY"}, lazyRE(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`)},
	{"an AWS secret access key", []string{"aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"},
		lazyRE(`(?i)aws_secret_access_key["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}`)},
	{"a registry login (an auths entry)", []string{`"auths"`}, lazyRE(`"auth"\s*:\s*"[A-Za-z0-9+/=]{8,}"`)},
	{"a GitHub token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		lazyRE(`\b(gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,})\b`)},
}

// lazyRE compiles the expression when first used, not when a program that
// links the package starts (the pod runtime unpacks code, it never packs).
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// looksLikeCredential says what credential head (the start of a file)
// holds, "" for none.
func looksLikeCredential(head []byte) string {
	for _, p := range secretPatterns {
		for _, l := range p.literal {
			if bytes.Contains(head, []byte(l)) {
				if p.re().Match(head) {
					return p.what
				}
				break
			}
		}
	}
	return ""
}
