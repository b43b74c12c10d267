package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/state"
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

// roundDur is a duration for people: to the second under a minute, else
// to the minute.
func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// ShortHash is a commit id cut to 12 characters.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
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
		parts = append(parts, Plural(u.Turns, "turn"))
	}
	return strings.Join(parts, ", ")
}

// Plural is "1 task", "2 tasks" (and "2 branches", "2 directories").
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "sh"):
		return fmt.Sprintf("%d %ses", n, noun)
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey"):
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
	return line + fmt.Sprintf("; %s busy %.0f%% of it", Plural(workers, "worker"), 100*busy)
}

// seconds is d to a tenth of a second under a minute, else to a second.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
