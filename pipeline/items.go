package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxItems bounds the items of one loop: the iterations of a step.
const MaxItems = 10_000

// Items splits a JSON list into the texts of its items, each as written
// (an object keeps its keys' order, a number its digits).
func Items(list string) ([]string, error) {
	var raw []json.RawMessage
	dec := json.NewDecoder(strings.NewReader(list))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("expected a JSON list, got %s", quoteShort(list))
	}
	if dec.More() {
		return nil, fmt.Errorf("expected one JSON list, got %s", quoteShort(list))
	}
	if raw == nil {
		return nil, fmt.Errorf("expected a JSON list, got %s", quoteShort(list))
	}
	if len(raw) > MaxItems {
		return nil, fmt.Errorf("a loop has at most %d items, got %d", MaxItems, len(raw))
	}
	items := make([]string, len(raw))
	for i, r := range raw {
		items[i] = string(bytes.TrimSpace(r))
	}
	return items, nil
}

// ItemValue returns the value of an item (from Items) that {{item}} (field
// "") or {{item.FIELD}} (field "a" or "a.b") gives a program: a JSON
// string's text, or any other JSON value as written.
func ItemValue(item, field string) (string, error) {
	v := json.RawMessage(item)
	if field != "" {
		for _, name := range strings.Split(field, ".") {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(v, &obj); err != nil || obj == nil {
				return "", fmt.Errorf("{{item.%s}}: the item is not a JSON object with field %q: %s", field, name, quoteShort(item))
			}
			f, ok := obj[name]
			if !ok {
				return "", fmt.Errorf("{{item.%s}}: the item has no field %q: %s", field, name, quoteShort(item))
			}
			v = f
		}
	}
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return string(v), nil
}

// quoteShort quotes s for a message, cut to 80 bytes.
func quoteShort(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

// IterationName is the name of iteration i of a loop step: STEP[i].
func IterationName(step string, i int) string { return fmt.Sprintf("%s[%d]", step, i) }

// IterationRange names the n iterations of a loop step at once, as the
// live output shows them: STEP[0..n-1] (STEP[0] for one, STEP[] for none).
func IterationRange(step string, n int) string {
	switch n {
	case 0:
		return step + "[]"
	case 1:
		return step + "[0]"
	}
	return fmt.Sprintf("%s[0..%d]", step, n-1)
}

// SplitIteration splits an iteration name STEP[i] into the step and i; ok
// is false for any other name.
func SplitIteration(name string) (step string, i int, ok bool) {
	open := strings.LastIndexByte(name, '[')
	if open <= 0 || !strings.HasSuffix(name, "]") {
		return "", 0, false
	}
	digits := name[open+1 : len(name)-1]
	if digits == "" || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || digits[0] == '+' {
		return "", 0, false
	}
	return name[:open], i, true
}

// Product returns the items of a loop over every combination of lists
// (each from Items), the first list outermost: objects of names to the
// lists' items, as written ({"lr":0.1,"seed":1}). At most MaxItems.
func Product(names []string, lists [][]string) ([]string, error) {
	return NestedProduct(names, func(k int, _ string) ([]string, error) { return lists[k], nil })
}

// NestedProduct returns the items of a loop over every combination of
// lists, the first outermost, as Product does, where the items of list k
// may depend on the combination of the lists before it: list(k, outer)
// gives them, outer being the object of the earlier names to their current
// items ({"a":1} for k 1; {} for k 0). A list may differ from one outer
// combination to the next; an empty one gives no item for it. At most
// MaxItems items, and as many combinations of the lists before any list.
func NestedProduct(names []string, list func(k int, outer string) ([]string, error)) ([]string, error) {
	var items []string
	var b strings.Builder
	object := func(parts []string) string {
		b.Reset()
		b.WriteByte('{')
		for i, it := range parts {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(names[i])
			b.Write(key)
			b.WriteByte(':')
			b.WriteString(it)
		}
		b.WriteByte('}')
		return b.String()
	}
	// seen counts the combinations reached at each depth.
	seen := make([]int, len(names)+1)
	var walk func(parts []string) error
	walk = func(parts []string) error {
		k := len(parts)
		if seen[k]++; seen[k] > MaxItems {
			return fmt.Errorf("a loop has at most %d items: the product of the lists has more", MaxItems)
		}
		if k == len(names) {
			items = append(items, object(parts))
			return nil
		}
		l, err := list(k, object(parts))
		if err != nil {
			return err
		}
		for _, it := range l {
			if err := walk(append(parts, it)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(make([]string, 0, len(names))); err != nil {
		return nil, err
	}
	if items == nil {
		items = []string{}
	}
	return items, nil
}

// ProductItems returns the items of a loop over the product of lists, as
// NestedProduct does: list k's items are given (from Items) or, for a list
// of an earlier list's item, that item or its field, a JSON list (or a
// JSON string holding one, as {{item.FIELD}} gives it).
func ProductItems(lists []ProductList, given [][]string) ([]string, error) {
	names := make([]string, len(lists))
	for i, l := range lists {
		names[i] = l.Name
	}
	return NestedProduct(names, func(k int, outer string) ([]string, error) {
		l := lists[k]
		if !l.Item {
			return given[k], nil
		}
		text, err := ItemValue(outer, l.Field)
		if err != nil {
			return nil, &ProductError{l.Name, err}
		}
		items, err := Items(text)
		if err != nil {
			return nil, &ProductError{l.Name, fmt.Errorf("{{item.%s}} of %s: %v", l.Field, quoteShort(outer), err)}
		}
		return items, nil
	})
}
