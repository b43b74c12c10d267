package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/words"
)

// levelRange names levels compactly: "levels 1-4, 6", "level 2".
func levelRange(lv []int) string {
	var parts []string
	for i := 0; i < len(lv); {
		j := i
		for j+1 < len(lv) && lv[j+1] == lv[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(lv[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", lv[i], lv[j]))
		}
		i = j + 1
	}
	if len(lv) == 1 {
		return "level " + parts[0]
	}
	return "levels " + strings.Join(parts, ", ")
}

// usageLine is "$1.23, 45,600 tokens, 12 turns" for people.
func usageLine(u *state.Usage) string {
	var parts []string
	if u.CostUSD > 0 {
		parts = append(parts, state.USD(u.CostUSD))
	}
	if n := u.Tokens(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", n))
	}
	if u.Turns > 0 {
		parts = append(parts, words.Plural(u.Turns, "turn"))
	}
	return strings.Join(parts, ", ")
}

// flowLine is a rush's last line on where its time went: the wall time,
// the longest chain of dependencies by how long their runs took (which
// no number of workers shortens) and how busy the workers were.
func flowLine(wall, critical time.Duration, path []string, busy float64, workers int) string {
	chain := strings.Join(path, " → ")
	if len(path) > 6 {
		chain = fmt.Sprintf("%s → … (%d more) → %s", strings.Join(path[:3], " → "), len(path)-5, strings.Join(path[len(path)-2:], " → "))
	}
	line := fmt.Sprintf("wall time %s; critical path %s", seconds(wall), seconds(critical))
	if chain != "" {
		line += " (" + chain + ")"
	}
	return line + fmt.Sprintf("; %s busy %.0f%% of it", words.Plural(workers, "worker"), 100*busy)
}

// seconds is d to a tenth of a second under a minute, else to a second.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
