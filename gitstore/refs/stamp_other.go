//go:build !linux && !openbsd && !darwin && !freebsd && !netbsd

package refs

import "os"

// inodeStamp: no inode here; size and modification time alone.
func inodeStamp(os.FileInfo) string { return "" }
