package check

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// What the report shows comes from etcd (the stored config, member names and versions), DNS and certificates,
// and reaches an operator's root terminal: the table escapes every value with termtext.Escape, the JSON below.

// escapeJSON writes as \uXXXX what encoding/json leaves raw in strings and a terminal might act on: DEL, the C1
// controls and other runes that are not printable. Outside strings, JSON is printable ASCII and whitespace, so
// only string contents change, and the document decodes to the same values.
func escapeJSON(data []byte) []byte {
	var out bytes.Buffer
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r >= 0x7f && !strconv.IsPrint(r) || r == utf8.RuneError && size == 1 {
			writeUnicodeEscape(&out, r)
		} else {
			out.Write(data[:size])
		}
		data = data[size:]
	}
	return out.Bytes()
}

func writeUnicodeEscape(out *bytes.Buffer, r rune) {
	if r > 0xffff {
		high, low := utf16.EncodeRune(r)
		fmt.Fprintf(out, `\u%04x\u%04x`, high, low)
		return
	}
	fmt.Fprintf(out, `\u%04x`, r)
}
