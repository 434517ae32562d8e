package wire

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ExecValuePrefix marks a value in the base64 form of EncodeValue.
const ExecValuePrefix = "pipectl-b64:"

// EncodeValue returns the text a value travels as through a workflow
// engine and Kubernetes: the value itself when that is safe, otherwise
// ExecValuePrefix followed by the value in standard base64. A value is sent
// encoded when it contains "{{" (Argo would evaluate it), "$" (Kubernetes
// expands $(VAR) in args and env), is not valid UTF-8, or begins with
// ExecValuePrefix itself. Every value has exactly one encoding.
func EncodeValue(v string) string {
	if strings.Contains(v, "{{") || strings.Contains(v, "$") || !utf8.ValidString(v) || strings.HasPrefix(v, ExecValuePrefix) {
		return ExecValuePrefix + base64.StdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// DecodeValue reverses EncodeValue. A value given by hand (say with `argo
// submit -p`) may be plain text, or encoded when it needs to be.
func DecodeValue(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, ExecValuePrefix)
	if !ok {
		return s, nil
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return "", fmt.Errorf("value %q starts with %s but is not base64: %v", s, ExecValuePrefix, err)
	}
	return string(b), nil
}
