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
	g.Events = report.EpicEvents(p)
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
