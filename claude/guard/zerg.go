package guard

import (
	"strings"
)

// zerg checks a git zerg command line.
func (st *guardState) zerg(args []string, worker bool, dirs []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		a := args[i]
		i++
		switch a {
		case "-C", "--C", "-f", "--feature", "-feature":
			if a == "-C" || a == "--C" {
				if i < len(args) {
					dirs = append(dirs, args[i])
				}
			}
			i++
		}
	}
	if i >= len(args) || args[i] != "unlock" {
		return ""
	}
	force := false
	for _, a := range args[i+1:] {
		if a == "--" {
			break
		}
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "force" && (!ok || value != "false" && value != "0") {
			force = true
		}
	}
	if !force {
		return ""
	}
	for _, d := range dirs {
		if st.inWorkerDir(d) {
			worker = true
		}
	}
	if worker {
		return reasonWorkerUnlock
	}
	return ""
}
