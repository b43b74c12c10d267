package main

import (
	"github.com/git-zerg/git-zerg/epic"
	"github.com/git-zerg/git-zerg/report"
	"github.com/git-zerg/git-zerg/rush"
)

func runEpicRush(e *env, o *rushOptions) error {
	if o.mode == rush.ModeTask {
		return usageErr("rush --epic: --mode task drives one feature; name it with -f instead")
	}
	g, err := e.repoEngine()
	if err != nil {
		return err
	}
	e.mendHooks(g.Store)
	e.printHooksWarning(e.startHooksWarning(g.Store)())
	p := report.NewLive(e.stderr, e.errTTY)
	g.Events = report.EpicEvents(p)
	interrupts, stop := rushSignals(g, p)
	defer stop()
	res, err := epic.Rush(g, o.epic, epic.RushOptions{Workers: o.workers, Mode: o.mode, Resume: o.resume, Interrupt: interrupts})
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
	st, err := epic.StatusOf(g, name)
	if err != nil {
		return err
	}
	return report.WriteEpicDag(e.stdout, st, format)
}
