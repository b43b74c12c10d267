package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestFastTaskJSON holds the hand-written task encoder to encoding/json:
// every document it writes must be byte-identical to writeJSON's.
func TestFastTaskJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "plain", "quote\" back\\slash", "tab\tnew\nline\r", "ctl\x01\x1f", "<html> & 'x'",
		"ünïcødé ✓", "bad \xff utf8", "sep \u2028 \u2029", "emoji 🚀"}
	pick := func() string { return strs[rng.IntN(len(strs))] }
	list := func() []string {
		var out []string
		for i := rng.IntN(3); i > 0; i-- {
			out = append(out, pick())
		}
		if out == nil {
			return []string{}
		}
		return out
	}
	var tasks []taskJSON
	for i := 0; i < 300; i++ {
		tj := taskJSON{ID: fmt.Sprintf("T%d", i), Title: pick(), Level: rng.IntN(5), Status: "pending", Worker: pick(),
			Attempts: rng.IntN(4), Commit: pick(), Base: pick(), Dependencies: list(), SoftDependencies: list(),
			ImpliedDependencies: list(), Files: filesJSON{list(), list(), list()}, Risk: pick(), Approved: pick(),
			Reason: pick(), Verification: verificationOut{pick(), rng.IntN(3) * 30}}
		if rng.IntN(2) == 0 {
			nb := time.Date(2026, 1, 2, 3, 4, 5, rng.IntN(2)*123456789, time.UTC)
			tj.NotBefore = &nb
		}
		usage := func() *usageJSON {
			if rng.IntN(2) == 0 {
				return nil
			}
			return &usageJSON{CostUSD: float64(rng.IntN(1000)) / 7, InputTokens: rng.Int64N(1e6), OutputTokens: rng.Int64N(1e5),
				Turns: rng.IntN(30), SessionID: pick()}
		}
		tj.Usage = usage()
		if rng.IntN(2) == 0 {
			for j := rng.IntN(4); j >= 0; j-- {
				tj.History = append(tj.History, eventJSON{Clock: uint64(j), At: time.Unix(int64(j)*1000, 0).UTC(),
					Op: pick(), From: pick(), To: pick(), Worker: pick(), Commit: pick(), Reason: pick(), Usage: usage()})
			}
		}
		tasks = append(tasks, tj)
	}
	for _, n := range []int{0, 1, len(tasks)} {
		doc := exportJSON{Format: 1, Feature: "f", Levels: [][]string{{"a"}}, Tasks: tasks[:n], Locks: []lockJSON{}, Workers: []workerJSON{}}
		var want, got bytes.Buffer
		if err := writeJSON(&want, doc); err != nil {
			t.Fatal(err)
		}
		if err := doc.write(&got); err != nil {
			t.Fatal(err)
		}
		st := statusJSON{Feature: "f", Progress: progressJSON{1, 2, 50}, Counts: map[string]int{"done": 1}, Tasks: tasks[:n],
			Levels: []levelJSON{}, Workers: []workerJSON{}, Locks: []lockJSON{}}
		if n > 0 {
			st.Spent = &usageJSON{CostUSD: 1.25, InputTokens: 1000, OutputTokens: 20, Turns: 3}
		}
		if err := writeJSON(&want, st); err != nil {
			t.Fatal(err)
		}
		if err := st.write(&got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			w, g := want.String(), got.String()
			i := 0
			for i < len(w) && i < len(g) && w[i] == g[i] {
				i++
			}
			t.Fatalf("%d tasks: documents differ at byte %d:\nwant …%q\ngot  …%q", n, i, w[max(0, i-80):min(len(w), i+80)], g[max(0, i-80):min(len(g), i+80)])
		}
	}
}
