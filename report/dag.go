package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/git-zerg/git-zerg/printable"
	"github.com/git-zerg/git-zerg/state"
	"github.com/git-zerg/git-zerg/view"
)

// DagFormats are the formats of `dag --format`.
var DagFormats = []string{"text", "mermaid", "dot", "json"}

// Dag is the document of `dag --format json`.
type Dag struct {
	Feature string    `json:"feature"`
	Levels  []Level   `json:"levels"`
	Nodes   []DagNode `json:"nodes"`
	Edges   []DagEdge `json:"edges"`
}

// DagNode is a task of the graph.
type DagNode struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	Level  int          `json:"level"`
	Status state.Status `json:"status"`
}

// DagEdge points from a task to one it depends on; kind is "hard",
// "implied" (file ownership) or "soft".
type DagEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

func edges(tasks []*state.Task) []DagEdge {
	out := []DagEdge{}
	for _, t := range tasks {
		for _, d := range t.Spec.Dependencies {
			out = append(out, DagEdge{t.ID(), d, "hard"})
		}
		for _, d := range t.Implied {
			out = append(out, DagEdge{t.ID(), d, "implied"})
		}
		for _, d := range t.Spec.SoftDependencies {
			out = append(out, DagEdge{t.ID(), d, "soft"})
		}
	}
	return out
}

// WriteDag writes the task graph of sn in format, one of DagFormats.
func WriteDag(w io.Writer, sn *view.Snapshot, format string) error {
	tasks, err := sn.StateTasks()
	if err != nil {
		return err
	}
	byID := make(map[string]*state.Task, len(tasks))
	for _, t := range tasks {
		byID[t.ID()] = t
	}
	switch format {
	case "json":
		out := Dag{Feature: sn.Feature, Levels: levelsOf(sn), Nodes: []DagNode{}, Edges: edges(tasks)}
		for _, t := range tasks {
			out.Nodes = append(out.Nodes, DagNode{t.ID(), t.Spec.Title, t.Level, t.Status})
		}
		return WriteJSON(w, out)
	case "mermaid":
		fmt.Fprintln(w, "flowchart TD")
		for i, ids := range sn.Levels {
			fmt.Fprintf(w, "  subgraph L%d[\"level %d\"]\n", i+1, i+1)
			for _, id := range ids {
				t := byID[id]
				fmt.Fprintf(w, "    %s[\"%s: %s (%s)\"]\n", mermaidID(id), mermaidText(id), mermaidText(t.Spec.Title), mermaidText(string(t.Status)))
			}
			fmt.Fprintln(w, "  end")
		}
		for _, ed := range edges(tasks) {
			arrow := "-->"
			if ed.Kind != "hard" {
				arrow = "-.->"
			}
			fmt.Fprintf(w, "  %s %s %s\n", mermaidID(ed.To), arrow, mermaidID(ed.From))
		}
	case "dot":
		fmt.Fprintf(w, "digraph %q {\n  rankdir=LR;\n", sn.Feature)
		for i, ids := range sn.Levels {
			fmt.Fprintf(w, "  subgraph \"cluster_%d\" {\n    label=\"level %d\";\n", i+1, i+1)
			for _, id := range ids {
				t := byID[id]
				fmt.Fprintf(w, "    %q [label=%q];\n", id, fmt.Sprintf("%s\n%s\n%s", id, t.Spec.Title, t.Status))
			}
			fmt.Fprintln(w, "  }")
		}
		for _, ed := range edges(tasks) {
			style := ""
			if ed.Kind != "hard" {
				style = " [style=dashed]"
			}
			fmt.Fprintf(w, "  %q -> %q%s;\n", ed.To, ed.From, style)
		}
		fmt.Fprintln(w, "}")
	default:
		for i, ids := range sn.Levels {
			fmt.Fprintf(w, "level %d\n", i+1)
			for _, id := range ids {
				t := byID[id]
				deps := ""
				if d := t.Deps(); len(d) > 0 {
					deps = " <- " + strings.Join(d, ", ")
				}
				fmt.Fprintf(w, "  %-10s %s%s\n", printable.String(string(t.Status)), printable.String(id), printable.String(deps))
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

// mermaidText is s as the text of a mermaid label: a quote would end the
// label and let the rest be read as the chart's own syntax, and a tag
// would be markup where a renderer draws labels as HTML.
func mermaidText(s string) string {
	return printable.String(strings.NewReplacer(`"`, "'", "<", "#lt;", ">", "#gt;").Replace(s))
}
