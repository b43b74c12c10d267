package main

import (
	"fmt"
	"strings"

	"github.com/git-zerg/git-zerg/engine"
)

func runEpicRush(e *env, o *rushOptions) error {
	if o.mode == engine.ModeTask {
		return usageErr("rush --epic: --mode task drives one feature; name it with -f instead")
	}
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	e.printHooksWarning(e.startHooksWarning(g.Store)())
	p := newProgress(e, "")
	// Several features run at once: every line says whose it is, and the
	// live line, which can only show one level, is left out.
	g.Events = func(ev engine.Event) {
		switch ev.Type {
		case engine.EvProgress:
			return
		case engine.EvTransition:
			ev.Task = ev.Feature + "/" + ev.Task
		case engine.EvLevelEnd:
			return
		case engine.EvLevelMerged:
			p.note("%s: level %d merged: staging at %s", ev.Feature, ev.Level, shortHash(ev.Text))
			return
		case engine.EvNote:
			if ev.Feature != "" {
				ev.Text = ev.Feature + ": " + ev.Text
			}
		}
		p.event(ev)
	}
	interrupts, stop := rushSignals(g, p)
	defer stop()
	res, err := g.RushEpic(o.epic, engine.EpicRushOptions{Workers: o.workers, Mode: o.mode, Resume: o.resume, Interrupt: interrupts})
	if res != nil {
		done := 0
		for _, f := range res.Features {
			switch {
			case f.Already:
				done++
				fmt.Fprintf(e.stdout, "feature %s: already complete\n", f.Feature)
			case f.Result != nil && f.Result.Complete:
				done++
				fmt.Fprintf(e.stdout, "feature %s complete: %s done, staging %s at %s\n", f.Feature, plural(f.Result.Tasks, "task"),
					f.Result.Staging, shortHash(f.Result.Tip))
			case f.Result != nil:
				fmt.Fprintf(e.stdout, "feature %s ended: %s\n", f.Feature, countsLine(f.Result.Counts))
			case f.Skipped != "":
				fmt.Fprintf(e.stdout, "feature %s not run: %s\n", f.Feature, f.Skipped)
			case f.Err != nil:
				fmt.Fprintf(e.stdout, "feature %s not run: %v\n", f.Feature, f.Err)
			}
		}
		if res.Complete {
			fmt.Fprintf(e.stdout, "rush of epic %s complete: %s done\n", res.Epic, plural(done, "feature"))
		} else {
			fmt.Fprintf(e.stdout, "rush of epic %s ended: %d/%d features done\n", res.Epic, done, len(res.Features))
		}
	}
	return err
}

func runEpicDag(e *env, name, format string) error {
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	st, err := g.StatusOfEpic(name)
	if err != nil {
		return err
	}
	w := e.stdout
	switch format {
	case "json":
		return writeJSON(w, epicStatusOut(st))
	case "mermaid":
		fmt.Fprintln(w, "flowchart TD")
		for i, names := range st.Levels {
			fmt.Fprintf(w, "  subgraph E%d[\"level %d\"]\n", i+1, i+1)
			for _, n := range names {
				f := st.Feature(n)
				fmt.Fprintf(w, "    %s[\"%s (%s, %d/%d)\"]\n", mermaidID(n), n, f.State, f.Done, f.Total)
			}
			fmt.Fprintln(w, "  end")
		}
		for _, f := range st.Features {
			for _, d := range f.Dependencies {
				fmt.Fprintf(w, "  %s --> %s\n", mermaidID(d), mermaidID(f.Name))
			}
			for _, d := range f.SoftDependencies {
				fmt.Fprintf(w, "  %s -.-> %s\n", mermaidID(d), mermaidID(f.Name))
			}
		}
	case "dot":
		fmt.Fprintf(w, "digraph %q {\n  rankdir=LR;\n", "epic "+name)
		for i, names := range st.Levels {
			fmt.Fprintf(w, "  subgraph \"cluster_%d\" {\n    label=\"level %d\";\n", i+1, i+1)
			for _, n := range names {
				f := st.Feature(n)
				fmt.Fprintf(w, "    %q [label=%q];\n", n, fmt.Sprintf("%s\n%s %d/%d", n, f.State, f.Done, f.Total))
			}
			fmt.Fprintln(w, "  }")
		}
		for _, f := range st.Features {
			for _, d := range f.Dependencies {
				fmt.Fprintf(w, "  %q -> %q;\n", d, f.Name)
			}
			for _, d := range f.SoftDependencies {
				fmt.Fprintf(w, "  %q -> %q [style=dashed];\n", d, f.Name)
			}
		}
		fmt.Fprintln(w, "}")
	default:
		fmt.Fprintf(w, "epic %s v%d\n", st.Epic.Name, st.Epic.Version)
		for i, names := range st.Levels {
			fmt.Fprintf(w, "level %d\n", i+1)
			for _, n := range names {
				f := st.Feature(n)
				deps := ""
				if len(f.Dependencies) > 0 {
					deps = " <- " + strings.Join(f.Dependencies, ", ")
				}
				if len(f.SoftDependencies) > 0 {
					deps += " (soft: " + strings.Join(f.SoftDependencies, ", ") + ")"
				}
				fmt.Fprintf(w, "  %-11s %s %d/%d%s\n", f.State, n, f.Done, f.Total, deps)
			}
		}
	}
	return nil
}
