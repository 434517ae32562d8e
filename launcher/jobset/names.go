package jobset

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxNameLength is the length limit of a DNS-1035 label: pod, job and
// JobSet names, hostnames, label values.
const maxNameLength = 63

// hashLength is the number of hex digits of the hash that replaces the end
// of a name too long to keep whole.
const hashLength = 8

// JobSetName returns the name of the JobSet of a step of a run with nodes
// rank pods: "<run>-<step>", cut short and ended with a hash of the whole
// when the names JobSet derives from it would pass 63 characters. The
// longest of those is the pod name
// "<jobset>-<rjob>-<job index>-<pod index>-<5 random characters>".
func JobSetName(run, step string, nodes int) string {
	base := sanitize(run + "-" + step)
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		// A DNS-1035 label starts with a letter.
		base = "p-" + base
	}
	max := maxNameLength - len("-"+RankJobName+"-0-") - len(strconv.Itoa(max(nodes, 1)-1)) - len("-abcde")
	return shorten(base, max)
}

// MasterAddr is the DNS name of rank 0's pod (job index 0, completion
// index 0): "<jobset>-<rjob>-0-0.<jobset>", the JobSet's headless service
// being the pods' subdomain.
func MasterAddr(jobset string) string {
	return jobset + "-" + RankJobName + "-0-0." + jobset
}

// labelValue returns v, cut short and ended with a hash when longer than a
// label value may be.
func labelValue(v string) string {
	return shorten(v, maxNameLength)
}

// shorten returns s when it has at most max characters, else its first
// characters, '-' and a hash of s, max characters in all.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	head := strings.TrimRight(s[:max-hashLength-1], "-_.")
	return head + "-" + hex.EncodeToString(sum[:])[:hashLength]
}

// sanitize lowercases s and replaces every character a DNS label cannot
// hold with '-', trimming '-' at the ends.
func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}
