package proc

import (
	"fmt"
	"os"
	"strings"
)

// StartTime returns an identifier of when pid started (its start time in
// clock ticks since boot on Linux), "" when unknown.
func StartTime(pid int) string {
	if f := StatFields(pid); len(f) >= 20 {
		return f[19]
	}
	return ""
}

// StatFields returns the fields of /proc/<pid>/stat after the command name
// (f[0] is the state), nil when unknown.
func StatFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
