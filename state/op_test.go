package state

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

type opRow struct {
	moves     [][2]Status // every legal from → to, as README "Task states" lists them
	namesTask bool
	work      bool // its events to verified or done carry the work
	attempts  Attempts
	progress  bool
}

// opTable is every op git-zerg writes. An op missing here fails
// TestEveryOpClassified.
var opTable = map[Op]opRow{
	OpPlan:        {moves: [][2]Status{{"", Pending}}, progress: true},
	OpClaim:       {moves: [][2]Status{{Pending, Claimed}}, namesTask: true, attempts: Counted, progress: true},
	OpDone:        {moves: [][2]Status{{Claimed, Verified}, {Claimed, Done}, {Claimed, Failed}}, namesTask: true, work: true, progress: true},
	OpMerge:       {moves: [][2]Status{{Verified, Done}, {Verified, Blocked}}, namesTask: true, work: true, progress: true},
	OpRelease:     {moves: [][2]Status{{Claimed, Pending}}, namesTask: true, attempts: GivenBack, progress: true},
	OpInterrupt:   {moves: [][2]Status{{Claimed, Pending}}, namesTask: true, attempts: GivenBack, progress: true},
	OpExpire:      {moves: [][2]Status{{Claimed, Pending}, {Claimed, Failed}}, progress: true},
	OpFail:        {moves: [][2]Status{{Claimed, Failed}}, namesTask: true, progress: true},
	OpBackoff:     {moves: [][2]Status{{Failed, Pending}}, progress: true},
	OpBlock:       {moves: [][2]Status{{Failed, Blocked}}, progress: true},
	OpRetry:       {moves: [][2]Status{{Blocked, Pending}, {Failed, Pending}}, namesTask: true, attempts: ResetCount, progress: true},
	OpApprove:     {moves: [][2]Status{{Pending, Pending}, {Failed, Failed}, {Blocked, Blocked}}, namesTask: true},
	OpUpdate:      {moves: [][2]Status{{Pending, Pending}, {Failed, Pending}, {Blocked, Pending}, {Verified, Pending}, {Done, Pending}}, attempts: ResetCount, progress: true},
	OpConflict:    {moves: [][2]Status{{Pending, Pending}, {Claimed, Claimed}, {Verified, Verified}, {Done, Done}, {Failed, Failed}, {Blocked, Blocked}}, progress: true},
	OpShip:        {moves: [][2]Status{{Verified, Verified}}, namesTask: true, progress: true},
	OpLand:        {moves: [][2]Status{{Verified, Done}}, namesTask: true, progress: true},
	OpReject:      {moves: [][2]Status{{Verified, Blocked}}, namesTask: true, progress: true},
	OpReopen:      {moves: [][2]Status{{Done, Blocked}}, namesTask: true, progress: true},
	OpClose:       {moves: [][2]Status{{Pending, Blocked}, {Failed, Blocked}, {Verified, Blocked}}, namesTask: true, progress: true},
	OpHeartbeat:   {},
	OpLock:        {},
	OpUnlock:      {},
	OpSync:        {progress: true},
	OpDelete:      {progress: true},
	OpEpicPlan:    {progress: true},
	OpEpicBump:    {progress: true},
	OpEpicApprove: {progress: true},
}

func TestOpTable(t *testing.T) {
	from := append([]Status{""}, Statuses...)
	for op, want := range opTable {
		if !op.Known() {
			t.Errorf("%s is not known", op)
		}
		// Every pair of statuses, legal exactly when the row lists it.
		for _, f := range from {
			starts := false
			for _, to := range Statuses {
				legal := slices.Contains(want.moves, [2]Status{f, to})
				starts = starts || legal
				if got := op.Legal(f, to); got != legal {
					t.Errorf("%s.Legal(%q, %s) = %v, want %v", op, f, to, got, legal)
				}
				if got, w := op.CarriesWork(to), want.work && (to == Verified || to == Done); got != w {
					t.Errorf("%s.CarriesWork(%s) = %v, want %v", op, to, got, w)
				}
			}
			if got := op.From(f); got != starts {
				t.Errorf("%s.From(%q) = %v, want %v", op, f, got, starts)
			}
		}
		if got := op.NamesTask(); got != want.namesTask {
			t.Errorf("%s.NamesTask() = %v, want %v", op, got, want.namesTask)
		}
		if got := op.Attempts(); got != want.attempts {
			t.Errorf("%s.Attempts() = %v, want %v", op, got, want.attempts)
		}
		if got := op.Progress(); got != want.progress {
			t.Errorf("%s.Progress() = %v, want %v", op, got, want.progress)
		}
	}
	// An op git-zerg does not write moves nothing and, being anything,
	// counts as progress.
	for _, op := range []Op{"nonsense", "push"} {
		if op.Known() || op.From(Pending) || op.Legal(Pending, Claimed) || op.NamesTask() || !op.Progress() {
			t.Errorf("unknown op %q has facts", op)
		}
	}
}

// TestEveryOpClassified fails when an Op constant is declared without a
// row in ops and in the test's opTable.
func TestEveryOpClassified(t *testing.T) {
	declared := declaredConsts(t, "op.go", "Op")
	if len(declared) == 0 {
		t.Fatal("no Op constants found in op.go")
	}
	for _, name := range declared {
		op := Op(name)
		if !op.Known() {
			t.Errorf("op %s has no row in ops", op)
		}
		if _, ok := opTable[op]; !ok {
			t.Errorf("op %s has no row in the test's opTable", op)
		}
	}
	if len(ops.Get()) != len(declared) || len(opTable) != len(declared) {
		t.Errorf("%d ops declared, %d in ops, %d in opTable", len(declared), len(ops.Get()), len(opTable))
	}
}

// declaredConsts reads the values of the constants of the named type from
// a source file of the package, so a new one is seen even when nothing
// else names it.
func declaredConsts(t *testing.T, file, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for _, val := range v.Values {
				s, err := strconv.Unquote(val.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
		}
	}
	return out
}
