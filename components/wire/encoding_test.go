package wire

import (
	"strings"
	"testing"
)

func TestEncodeValue(t *testing.T) {
	for _, v := range []string{"", "plain", "5", `{"a":[1,2]}`, "{{workflow.name}}", "$(HOME)", "cost $5", "\xff\xfe", ExecValuePrefix + "abc", "a}}b{", "new\nline"} {
		enc := EncodeValue(v)
		if strings.Contains(enc, "{{") || strings.Contains(enc, "$") {
			t.Errorf("EncodeValue(%q) = %q: still holds {{ or $", v, enc)
		}
		dec, err := DecodeValue(enc)
		if err != nil || dec != v {
			t.Errorf("DecodeValue(EncodeValue(%q)) = %q, %v", v, dec, err)
		}
	}
	if EncodeValue("plain") != "plain" {
		t.Error("a safe value is not left as it is")
	}
	if _, err := DecodeValue(ExecValuePrefix + "!!"); err == nil {
		t.Error("bad base64 accepted")
	}
}
