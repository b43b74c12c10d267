//go:build linux || openbsd

package refs

import (
	"fmt"
	"os"
	"syscall"
)

// inodeStamp is what tells a file replaced in place of another with the
// same size and modification time: its inode and change time.
func inodeStamp(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprint(" ", st.Ino, " ", st.Ctim.Nano())
	}
	return ""
}
