package epic

import (
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/rush/finish"
)

// Finish finishes every feature of the epic into the current branch
// (finish.Feature), in the epic's order (by dependency level), stopping at
// the first that cannot finish: its error comes back with what was
// finished before it. A feature finished before is up to date, and passes.
func Finish(g *engine.Engine, name string, each func(*finish.Finished)) ([]*finish.Finished, error) {
	st, err := StatusOf(g, name)
	if err != nil {
		return nil, err
	}
	var out []*finish.Finished
	for _, level := range st.Levels {
		for _, f := range level {
			sub, err := forFeature(g, f, false)
			if err != nil {
				return out, err
			}
			res, err := finish.Feature(sub)
			if res != nil {
				out = append(out, res)
				if each != nil {
					each(res)
				}
			}
			if err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
