package finalrelease

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

var (
	namedManifest = regexp.MustCompile(`releases/flannel-dns/flannel-dns-(\d+)\.yml`)
	cutFrom       = regexp.MustCompile("Final release (\\d+) was cut from commit `?([0-9a-fA-F]+)")
)

// NamedVersions returns the version of every final release manifest the README mentions, in order.
func NamedVersions(readme string) []int {
	var versions []int
	for _, match := range namedManifest.FindAllStringSubmatch(readme, -1) {
		if v, err := strconv.Atoi(match[1]); err == nil {
			versions = append(versions, v)
		}
	}
	return versions
}

// CheckNamesNewest fails unless the README names at least one final release manifest and every one it names
// is that of release newest.
func CheckNamesNewest(readme string, newest int) error {
	versions := NamedVersions(readme)
	if len(versions) == 0 {
		return bosherr.Errorf("%s names no releases/flannel-dns/flannel-dns-N.yml; it should name %s, the newest final release in %s",
			ReadmePath, ManifestPath(newest), IndexPath)
	}
	var stale []string
	for _, v := range versions {
		if v != newest && !slices.Contains(stale, ManifestPath(v)) {
			stale = append(stale, ManifestPath(v))
		}
	}
	if len(stale) > 0 {
		return bosherr.Errorf("%s names %s, but the newest final release in %s is %d (%s)",
			ReadmePath, strings.Join(stale, " and "), IndexPath, newest, ManifestPath(newest))
	}
	return nil
}

// CheckCutFrom passes when final release version has main's fingerprints (diffs is empty), or when a paragraph
// of the README says "Final release N was cut from commit <hash>", with the commit its manifest records, and
// names (in backticks) every job and package of diffs.
func CheckCutFrom(readme string, version int, commit string, diffs []Difference) error {
	if len(diffs) == 0 {
		return nil
	}
	var incomplete, wrongCommit error
	for _, paragraph := range paragraphs(readme) {
		for _, match := range cutFrom.FindAllStringSubmatch(paragraph, -1) {
			if match[1] != strconv.Itoa(version) {
				continue
			}
			if !sameCommit(match[2], commit) {
				wrongCommit = bosherr.Errorf("%s says final release %d was cut from commit %s, but %s records commit_hash %s (a prefix either way, at least 7 hex digits, is needed)",
					ReadmePath, version, match[2], ManifestPath(version), commit)
				continue
			}
			missing := unnamed(paragraph, diffs)
			if len(missing) == 0 {
				return nil
			}
			incomplete = bosherr.Errorf("%s: the paragraph saying final release %d was cut from commit %s does not name %s, whose fingerprint differs from main's",
				ReadmePath, version, match[2], join(missing))
		}
	}
	if incomplete != nil {
		return incomplete
	}
	if wrongCommit != nil {
		return wrongCommit
	}
	return bosherr.Errorf("final release %d (%s) differs from main in %s, and %s has no paragraph saying \"Final release %d was cut from commit %s\" that names them",
		version, ManifestPath(version), join(diffs), ReadmePath, version, commit)
}

// paragraphs splits Markdown text at blank lines and joins each paragraph's lines with single spaces, so that a
// sentence wrapped over two lines still reads as one.
func paragraphs(text string) []string {
	var result, lines []string
	for _, line := range append(strings.Split(text, "\n"), "") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
			continue
		}
		if len(lines) > 0 {
			result = append(result, strings.Join(strings.Fields(strings.Join(lines, " ")), " "))
			lines = nil
		}
	}
	return result
}

func sameCommit(named, recorded string) bool {
	named, recorded = strings.ToLower(named), strings.ToLower(recorded)
	if len(named) < 7 || len(recorded) < 7 {
		return false
	}
	return strings.HasPrefix(named, recorded) || strings.HasPrefix(recorded, named)
}

func unnamed(paragraph string, diffs []Difference) []Difference {
	var missing []Difference
	for _, d := range diffs {
		if !strings.Contains(paragraph, "`"+d.Name+"`") {
			missing = append(missing, d)
		}
	}
	return missing
}

func join(diffs []Difference) string {
	names := make([]string, len(diffs))
	for i, d := range diffs {
		names[i] = d.String()
	}
	return strings.Join(names, ", ")
}
