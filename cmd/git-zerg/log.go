package main

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/urfave/cli/v2"
)

type logOptions struct {
	patch bool
	limit int
}

func logCmd(e *env) *cli.Command {
	var o logOptions
	return &cli.Command{
		Name:  "log",
		Usage: "every state transition of the feature, newest first",
		Description: "Each transition is a commit on refs/zerg/features/<feature>; -p shows it as a\n" +
			"diff of the task's stored state.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "patch", Aliases: []string{"p"}, Usage: "show each transition as a diff", Destination: &o.patch},
			&cli.IntFlag{Name: "n", Usage: "show at most `N` transitions", Destination: &o.limit},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runLog(e, &o)
		},
	}
}

type logJSON struct {
	Commit  string `json:"commit"`
	At      string `json:"at"`
	Subject string `json:"subject"`
	Op      string `json:"op"`
	Task    string `json:"task,omitempty"`
	Worker  string `json:"worker,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Clock   uint64 `json:"clock"`
	Diff    string `json:"diff,omitempty"`
}

func runLog(e *env, o *logOptions) error {
	if o.limit < 0 {
		return usageErr("-n must not be negative")
	}
	feature, err := e.resolveFeature()
	if err != nil {
		return err
	}
	s, err := e.Store()
	if err != nil {
		return err
	}
	entries, err := s.Log(feature, o.limit)
	if err != nil {
		return err
	}
	out := []logJSON{}
	for _, en := range entries {
		m := en.Message
		lj := logJSON{Commit: en.Hash.String(), At: en.When.UTC().Format("2006-01-02T15:04:05Z"), Subject: m.Subject,
			Op: m.Op, Task: m.Task, Worker: m.Worker, From: m.From, To: m.To, Reason: m.Reason, Clock: m.Clock}
		if o.patch && m.Task != "" {
			before, err := s.TaskAt(en.Parent, m.Task)
			if err != nil {
				return err
			}
			after, err := s.TaskAt(en.Hash, m.Task)
			if err != nil {
				return err
			}
			lj.Diff = lineDiff(string(before), string(after))
		}
		out = append(out, lj)
	}
	if e.json {
		return writeJSON(e.stdout, out)
	}
	for _, lj := range out {
		fmt.Fprintf(e.stdout, "%s %s %s\n", lj.Commit[:12], lj.At, lj.Subject)
		if lj.Reason != "" {
			fmt.Fprintf(e.stdout, "    reason: %s\n", lj.Reason)
		}
		if lj.Diff != "" {
			fmt.Fprint(e.stdout, indent(lj.Diff, "    "))
		}
	}
	return nil
}

// lineDiff renders a line diff of two stored states: changed lines with
// -/+ and one line of context around them.
func lineDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var all []line
	for _, d := range diffs {
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				all = append(all, line{d.Type, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	near := func(i int) bool {
		for j := i - 1; j <= i+1; j++ {
			if j >= 0 && j < len(all) && all[j].op != diffmatchpatch.DiffEqual {
				return true
			}
		}
		return false
	}
	var b2 strings.Builder
	skipped := false
	for i, l := range all {
		if !near(i) {
			skipped = true
			continue
		}
		if skipped {
			b2.WriteString("  ...\n")
			skipped = false
		}
		switch l.op {
		case diffmatchpatch.DiffInsert:
			b2.WriteString("+ ")
		case diffmatchpatch.DiffDelete:
			b2.WriteString("- ")
		default:
			b2.WriteString("  ")
		}
		b2.WriteString(l.text)
		b2.WriteString("\n")
	}
	return b2.String()
}

func indent(s, pre string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}
