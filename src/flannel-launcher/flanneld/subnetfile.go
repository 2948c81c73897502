package flanneld

import "os"

// SubnetFile tells whether flanneld has written its subnet file since it started. flanneld replaces the file
// by renaming a new one over it, so every write makes a new file: one that is not the file seen before the
// start was written by this flanneld, whatever its content or time stamp.
type SubnetFile struct {
	Path   string
	before os.FileInfo
}

// WatchSubnetFile notes the file at path as it is now; call it before flanneld starts.
func WatchSubnetFile(path string) SubnetFile {
	before, err := os.Stat(path)
	if err != nil {
		before = nil // absent (or unreadable): any file found later is new
	}
	return SubnetFile{Path: path, before: before}
}

// Written tells whether a file other than the one noted is at the path now.
func (s SubnetFile) Written() bool {
	now, err := os.Stat(s.Path)
	if err != nil {
		return false
	}
	return s.before == nil || !os.SameFile(s.before, now)
}
