package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/git-zerg/git-zerg/forge/forgetest"
)

// forgefake drives an in-process fake of GitHub's REST API for a script:
//
//	forgefake start OWNER/NAME [REMOTE]   start it (REMOTE: the bare repository standing for the forge's git side); sets FORGE_API
//	forgefake issues FILE                 add the issues of a JSON array (forgetest.Issue)
//	forgefake issue-state N open|closed   reopen or close an issue, as a person on the forge would
//	forgefake closed-issues FROM TO       add the closed issues FROM to TO, titled "old"
//	forgefake merge N                     merge pull request N with a merge commit on its base; prints the commit
//	forgefake merge-without N             mark N merged by a commit on its base that lacks its head
//	forgefake close-pr N                  close pull request N unmerged
//	forgefake ratelimit on|off            answer every request 403, the rate limit spent
//	forgefake token T                     require the token T (401 otherwise)
//	forgefake pr N FIELD                  print FIELD (body, head, state) of pull request N
//	forgefake issue N                     print issue N's state
//	forgefake pages endless|repeat|normal  make listings name a next page forever, or each page itself, or behave
//	forgefake requests PREFIX             print how many requests began with PREFIX ("GET /repos/..."), and forget them all
//
// The server stops when the script ends.
func cmdForgefake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: forgefake start|issues|issue-state|merge|merge-without|close-pr|ratelimit|pr|issue|pages|requests ...")
	}
	h := ts.Value("forgefake").(*fakeHolder)
	if args[0] == "start" {
		if len(args) < 2 || len(args) > 3 || h.s != nil {
			ts.Fatalf("usage: forgefake start OWNER/NAME [REMOTE] (once)")
		}
		owner, name, _ := strings.Cut(args[1], "/")
		remote := ""
		if len(args) == 3 {
			remote = ts.MkAbs(args[2])
		}
		h.s = forgetest.New(owner, name, remote)
		ts.Setenv("FORGE_API", h.s.API())
		return
	}
	s := h.s
	if s == nil {
		ts.Fatalf("forgefake: not started")
	}
	num := func(i int) int {
		if len(args) <= i {
			ts.Fatalf("forgefake %s: missing number", args[0])
		}
		n, err := strconv.Atoi(args[i])
		ts.Check(err)
		return n
	}
	switch args[0] {
	case "issues":
		data, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		var is []forgetest.Issue
		ts.Check(json.Unmarshal(data, &is))
		for _, i := range is {
			if i.Milestone != "" && !contains(s.Milestones, i.Milestone) {
				s.Milestones = append(s.Milestones, i.Milestone)
			}
			s.AddIssue(i)
		}
	case "closed-issues":
		for n := num(1); n <= num(2); n++ {
			s.AddIssue(forgetest.Issue{Number: n, Title: "old", State: "closed"})
		}
	case "issue-state":
		ts.Check(s.SetIssueState(num(1), args[2]))
	case "merge":
		c, err := s.Merge(num(1))
		ts.Check(err)
		ts.Stdout().Write([]byte(c + "\n"))
	case "merge-without":
		c, err := s.MergeWithout(num(1))
		ts.Check(err)
		ts.Stdout().Write([]byte(c + "\n"))
	case "close-pr":
		ts.Check(s.ClosePR(num(1)))
	case "token":
		s.Mu.Lock()
		s.Token = args[1]
		s.Mu.Unlock()
	case "ratelimit":
		s.Mu.Lock()
		s.RateLimited = args[1] == "on"
		s.Mu.Unlock()
	case "pr":
		s.Mu.Lock()
		p, ok := s.PRs[num(1)]
		s.Mu.Unlock()
		if !ok {
			ts.Fatalf("no pull request %s", args[1])
		}
		switch args[2] {
		case "body":
			ts.Stdout().Write([]byte(p.Body + "\n"))
		case "head":
			ts.Stdout().Write([]byte(p.Head + "\n"))
		case "state":
			ts.Stdout().Write([]byte(p.State + "\n"))
		}
	case "issue":
		s.Mu.Lock()
		i, ok := s.Issues[num(1)]
		s.Mu.Unlock()
		if !ok {
			ts.Fatalf("no issue %s", args[1])
		}
		ts.Stdout().Write([]byte(i.State + "\n"))
	case "pages":
		s.Mu.Lock()
		s.EndlessPages, s.RepeatPages = args[1] == "endless", args[1] == "repeat"
		s.Mu.Unlock()
	case "requests":
		s.Mu.Lock()
		n := 0
		for _, r := range s.Requests {
			if strings.HasPrefix(r, args[1]) {
				n++
			}
		}
		s.Requests = nil
		s.Mu.Unlock()
		ts.Stdout().Write([]byte(strconv.Itoa(n) + "\n"))
	default:
		ts.Fatalf("forgefake: unknown %q", args[0])
	}
}

type fakeHolder struct{ s *forgetest.Server }

func (h *fakeHolder) close() {
	if h.s != nil {
		h.s.Close()
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
