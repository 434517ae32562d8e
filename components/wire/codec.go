package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Versions of the wire forms. A reader accepts only its own version: the
// compiler and the pods must run the same pipectl.
const (
	WiringVersion = 4
	LaunchVersion = 2
)

// Encode returns base64(JSON(v)): the form --component, --step and
// --distributed take. JSON object keys are sorted, so the same value always
// gives the same text.
func Encode(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Decode reverses Encode into v, strictly: unknown fields and a version
// other than version are errors.
func Decode(s string, version int, v any) error {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("not base64: %v", err)
	}
	var head struct {
		Version int `json:"v"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if head.Version != version {
		return fmt.Errorf("spec version %d, this pipectl reads version %d (use the same pipectl image as the compiler)", head.Version, version)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
