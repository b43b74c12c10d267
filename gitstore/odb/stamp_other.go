//go:build !linux && !openbsd && !darwin && !freebsd && !netbsd

package odb

import "os"

// InodeStamp: no inode here; size and modification time alone.
func InodeStamp(os.FileInfo) string { return "" }
