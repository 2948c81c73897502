package netconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// compare lists, field by field, how two JSON documents differ in meaning (key order and spacing do not
// count). A stored value that is not JSON differs as a whole.
func compare(existing, desired []byte) []string {
	var stored, wanted any
	if err := json.Unmarshal(existing, &stored); err != nil {
		return []string{fmt.Sprintf("the stored value is not JSON (%s): %q", err, existing)}
	}
	if err := json.Unmarshal(desired, &wanted); err != nil {
		return []string{fmt.Sprintf("the desired value is not JSON (%s): %q", err, desired)}
	}
	storedFields, wantedFields := map[string]any{}, map[string]any{}
	flatten("", stored, storedFields)
	flatten("", wanted, wantedFields)
	keys := slices.Sorted(maps.Keys(storedFields))
	for key := range wantedFields {
		if _, ok := storedFields[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	var differences []string
	for _, key := range keys {
		if !reflect.DeepEqual(storedFields[key], wantedFields[key]) {
			differences = append(differences, fmt.Sprintf("%s: stored %s, desired %s",
				key, show(storedFields, key), show(wantedFields, key)))
		}
	}
	return differences
}

// flatten maps each leaf of a JSON object to its dotted path ("Backend.VNI").
func flatten(prefix string, value any, into map[string]any) {
	object, ok := value.(map[string]any)
	if !ok || (len(object) == 0 && prefix != "") {
		into[prefix] = value
		return
	}
	for key, child := range object {
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		flatten(path, child, into)
	}
}

func show(fields map[string]any, key string) string {
	value, ok := fields[key]
	if !ok {
		return "absent"
	}
	encoded, _ := json.Marshal(value) // re-encoding a decoded JSON value cannot fail
	return string(encoded)
}
