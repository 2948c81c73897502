package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/termtext"
)

// decode fills target from data key by key, so that every unknown key and every value of the wrong type is
// reported with its full dotted name; encoding/json stops at the first problem and does not name the path.
func decode(data []byte, target any) []string {
	var syntax any
	if err := json.Unmarshal(data, &syntax); err != nil {
		return []string{"config: not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	return decodeObject("", data, reflect.ValueOf(target).Elem())
}

func decodeObject(path string, raw json.RawMessage, target reflect.Value) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return []string{fmt.Sprintf("%s: must be a JSON object, got %s", nameOr(path, "config"), excerpt(raw))}
	}
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		name := joinPath(path, key)
		field, ok := fieldByTag(target, key)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: unknown key", name))
		case field.Kind() == reflect.Struct:
			problems = append(problems, decodeObject(name, fields[key], field)...)
		default:
			if err := json.Unmarshal(fields[key], field.Addr().Interface()); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s", name, describe(err, field, fields[key])))
			}
		}
	}
	return problems
}

func fieldByTag(target reflect.Value, key string) (reflect.Value, bool) {
	for i := 0; i < target.NumField(); i++ {
		if strings.Split(target.Type().Field(i).Tag.Get("json"), ",")[0] == key {
			return target.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func describe(err error, field reflect.Value, raw json.RawMessage) string {
	if _, isTypeError := err.(*json.UnmarshalTypeError); !isTypeError {
		return err.Error()
	}
	kinds := map[reflect.Kind]string{reflect.String: "a string", reflect.Int: "a whole number", reflect.Bool: "true or false"}
	return fmt.Sprintf("must be %s, got %s", kinds[field.Kind()], excerpt(raw))
}

// excerpt is the start of a JSON value on one line: compacted, so that the newlines and tabs between its tokens
// go, cut at 40 characters, and escaped as termtext does (a string may hold U+0085 or U+2028 as they are).
func excerpt(raw json.RawMessage) string {
	var compact bytes.Buffer
	s := strings.TrimSpace(string(raw))
	if json.Compact(&compact, raw) == nil {
		s = compact.String()
	}
	if runes := []rune(s); len(runes) > 40 {
		s = string(runes[:40]) + "..."
	}
	return termtext.Escape(s)
}

// joinPath names a key for a problem; the key is escaped, as it may hold any character.
func joinPath(path, key string) string {
	if path == "" {
		return termtext.Escape(key)
	}
	return path + "." + termtext.Escape(key)
}

func nameOr(path, fallback string) string {
	if path == "" {
		return fallback
	}
	return path
}
