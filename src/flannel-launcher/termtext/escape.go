// Package termtext makes text from files and servers that others can write safe to print on an operator's
// terminal: a control sequence in it would be acted on, and a newline could forge a line of the output.
package termtext

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Escape writes every rune of s that a terminal might act on, or that is not printable, as a Go escape (\x1b,
// \n, \u009b, \u202e); a byte that is not UTF-8 as \xNN. Everything else, quotes and non-ASCII letters too,
// stays as it is. strconv.Quote would escape every quote of the stored JSON and wrap each value in quotes.
func Escape(s string) string {
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
