package main

import (
	"github.com/git-zerg/git-zerg/engine"
	"github.com/git-zerg/git-zerg/report"
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
	p := report.NewLive(e.stderr, e.errTTY)
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
			p.Note("%s: level %d merged: staging at %s", ev.Feature, ev.Level, report.ShortHash(ev.Text))
			return
		case engine.EvNote:
			if ev.Feature != "" {
				ev.Text = ev.Feature + ": " + ev.Text
			}
		}
		p.Event(ev)
	}
	interrupts, stop := rushSignals(g, p)
	defer stop()
	res, err := g.RushEpic(o.epic, engine.EpicRushOptions{Workers: o.workers, Mode: o.mode, Resume: o.resume, Interrupt: interrupts})
	if res != nil {
		report.EpicRushText(e.stdout, res)
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
	return report.WriteEpicDag(e.stdout, st, format)
}
