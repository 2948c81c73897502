package check

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// What the report shows comes from etcd (the stored config, member names and versions), DNS and certificates,
// and reaches an operator's root terminal: a control sequence in it would be acted on, and a newline could forge
// a line of the report.

// escape writes every rune of s that a terminal might act on, or that is not printable, as a Go escape (\x1b,
// \n, \u009b, \u202e); a byte that is not UTF-8 as \xNN. Everything else, quotes and non-ASCII letters too,
// stays as it is. strconv.Quote would escape every quote of the stored JSON and wrap each value in quotes.
func escape(s string) string {
	if isPrintable(s) {
		return s
	}
	var out bytes.Buffer
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&out, `\x%02x`, s[0])
		case strconv.IsPrint(r):
			out.WriteString(s[:size])
		default:
			quoted := strconv.QuoteRune(r)
			out.WriteString(quoted[1 : len(quoted)-1])
		}
		s = s[size:]
	}
	return out.String()
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

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
