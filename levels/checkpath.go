package levels

import "errors"

// CheckPath applies the graph's path rules to one path given elsewhere
// (a manual lock): relative, clean, slash-separated, never under .git/.
func CheckPath(p string) error {
	if msg := checkPath(p); msg != "" {
		return errors.New(msg)
	}
	return nil
}
