package components

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

func TestExecComponentRoundTrip(t *testing.T) {
	c, err := Load("testdata/echo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ExecComponentOf(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := EncodeSpec(ec)
	if err != nil {
		t.Fatal(err)
	}
	var back ExecComponent
	if err := DecodeSpec(s, &back); err != nil {
		t.Fatal(err)
	}
	c2, err := back.Component()
	if err != nil {
		t.Fatal(err)
	}
	got, err := c2.ParamValues(map[string]string{"msg": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got["n"] != "2" || got["cfg"] != `{"a":[1,2]}` || got["msg"] != "hi" {
		t.Errorf("defaults lost on the wire: %v", got)
	}
	if _, ok := got["extra"]; ok {
		t.Errorf("optional input without a value got one: %v", got)
	}
	other, _ := EncodeSpec(map[string]any{"v": 2, "name": "x"})
	if err := DecodeSpec(other, &back); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a spec of another version: %v", err)
	}
}
