package config

import (
	"slices"
	"strings"
)

// InvalidError lists every problem found in a config, one line each, naming the key.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	return "invalid config:\n" + strings.Join(e.Problems, "\n")
}

// withoutKeys drops the problems of keys that already have one, so a value that did not decode is not also
// reported as, say, missing.
func withoutKeys(problems, reported []string) []string {
	return slices.DeleteFunc(problems, func(problem string) bool {
		return slices.ContainsFunc(reported, func(r string) bool { return keyOf(r) == keyOf(problem) })
	})
}

func isSyntaxProblem(problems []string) bool {
	return len(problems) > 0 && keyOf(problems[0]) == "config"
}

func keyOf(problem string) string {
	key, _, _ := strings.Cut(problem, ":")
	return key
}
