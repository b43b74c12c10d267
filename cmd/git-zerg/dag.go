package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
)

type dagOptions struct{ format, epic string }

func dagCmd(e *env) *cli.Command {
	var o dagOptions
	return &cli.Command{
		Name:  "dag",
		Usage: "the task graph by level, with states",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, mermaid, dot or json", Destination: &o.format},
			&cli.StringFlag{Name: "epic", Usage: "the features of epic `NAME` instead of a feature's tasks", Destination: &o.epic},
		},
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			return runDag(e, &o)
		},
	}
}

type dagJSON struct {
	Feature string      `json:"feature"`
	Levels  []levelJSON `json:"levels"`
	Nodes   []dagNode   `json:"nodes"`
	Edges   []dagEdge   `json:"edges"`
}

type dagNode struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	Level  int          `json:"level"`
	Status state.Status `json:"status"`
}

// dagEdge points from a task to one it depends on; kind is "hard",
// "implied" (file ownership) or "soft".
type dagEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

func (sn *snapshot) edges() []dagEdge {
	var out []dagEdge
	for _, t := range sn.tasks {
		for _, d := range t.Spec.Dependencies {
			out = append(out, dagEdge{t.ID(), d, "hard"})
		}
		for _, d := range t.Implied {
			out = append(out, dagEdge{t.ID(), d, "implied"})
		}
		for _, d := range t.Spec.SoftDependencies {
			out = append(out, dagEdge{t.ID(), d, "soft"})
		}
	}
	return out
}

func runDag(e *env, o *dagOptions) error {
	format := o.format
	if e.json {
		format = "json"
	}
	switch format {
	case "text", "mermaid", "dot", "json":
	default:
		return usageErr("dag: unknown format %q (text, mermaid, dot or json)", format)
	}
	if o.epic != "" {
		return runEpicDag(e, o.epic, format)
	}
	sn, err := e.snapshot()
	if err != nil {
		return err
	}
	w := e.stdout
	switch format {
	case "json":
		out := dagJSON{Feature: sn.feature, Levels: sn.levels(), Nodes: []dagNode{}, Edges: sn.edges()}
		if out.Edges == nil {
			out.Edges = []dagEdge{}
		}
		for _, t := range sn.tasks {
			out.Nodes = append(out.Nodes, dagNode{t.ID(), t.Spec.Title, t.Level, t.Status})
		}
		return writeJSON(w, out)
	case "mermaid":
		fmt.Fprintln(w, "flowchart TD")
		for i, ids := range sn.meta.Levels {
			fmt.Fprintf(w, "  subgraph L%d[\"level %d\"]\n", i+1, i+1)
			for _, id := range ids {
				t := sn.byID[id]
				fmt.Fprintf(w, "    %s[\"%s: %s (%s)\"]\n", mermaidID(id), id, mermaidText(t.Spec.Title), t.Status)
			}
			fmt.Fprintln(w, "  end")
		}
		for _, ed := range sn.edges() {
			arrow := "-->"
			if ed.Kind != "hard" {
				arrow = "-.->"
			}
			fmt.Fprintf(w, "  %s %s %s\n", mermaidID(ed.To), arrow, mermaidID(ed.From))
		}
	case "dot":
		fmt.Fprintf(w, "digraph %q {\n  rankdir=LR;\n", sn.feature)
		for i, ids := range sn.meta.Levels {
			fmt.Fprintf(w, "  subgraph \"cluster_%d\" {\n    label=\"level %d\";\n", i+1, i+1)
			for _, id := range ids {
				t := sn.byID[id]
				fmt.Fprintf(w, "    %q [label=%q];\n", id, fmt.Sprintf("%s\n%s\n%s", id, t.Spec.Title, t.Status))
			}
			fmt.Fprintln(w, "  }")
		}
		for _, ed := range sn.edges() {
			style := ""
			if ed.Kind != "hard" {
				style = " [style=dashed]"
			}
			fmt.Fprintf(w, "  %q -> %q%s;\n", ed.To, ed.From, style)
		}
		fmt.Fprintln(w, "}")
	default:
		for i, ids := range sn.meta.Levels {
			fmt.Fprintf(w, "level %d\n", i+1)
			for _, id := range ids {
				t := sn.byID[id]
				deps := ""
				if d := t.Deps(); len(d) > 0 {
					deps = " <- " + strings.Join(d, ", ")
				}
				fmt.Fprintf(w, "  %-10s %s%s\n", t.Status, id, deps)
			}
		}
	}
	return nil
}

// mermaidID makes an id safe as a mermaid node name ('.' and '-' are not),
// keeping distinct ids distinct: T-2, T.2 and T_2 are three nodes.
func mermaidID(id string) string {
	return "t_" + strings.NewReplacer("_", "__", ".", "_d", "-", "_h").Replace(id)
}

func mermaidText(s string) string { return printable.String(strings.ReplaceAll(s, `"`, "'")) }
