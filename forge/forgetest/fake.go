// Package forgetest is an in-process stand-in for the part of GitHub's REST
// API that package forge calls: issues, milestones and pull requests, with
// GitHub's documented response shapes, status codes, Link-header pagination
// and rate-limit headers. A bare repository stands for the remote: a pull
// request's head is refs/pull/N/head there, and merging one makes a merge
// commit on its base branch.
package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Issue is an issue as the fake keeps it.
type Issue struct {
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	State     string   `json:"state"` // "open" or "closed"
	Labels    []string `json:"labels"`
	Milestone string   `json:"milestone"`
	// PullRequest marks an issue-list entry that is a pull request, as
	// GitHub lists them among the issues.
	PullRequest bool `json:"pull_request"`
}

// PR is a pull request as the fake keeps it.
type PR struct {
	Number      int
	Title, Body string
	Head, Base  string
	HeadSHA     string
	State       string
	Merged      bool
	MergeCommit string
}

// Server is the fake. Its fields may be changed between requests under Mu.
type Server struct {
	*httptest.Server
	Mu         sync.Mutex
	Owner      string
	Name       string
	Token      string // when set, requests must carry it
	Issues     map[int]*Issue
	Milestones []string // titles; milestone N is Milestones[N-1]
	PRs        map[int]*PR
	// Remote is the bare repository standing for the forge's git side.
	Remote string
	// PerPage caps a page whatever per_page asks, to exercise pagination.
	PerPage int
	// EndlessPages names a next page on every page of a listing, past its
	// last (the pages beyond are empty); RepeatPages names each page
	// itself as the next one. Both stand for a forge that is broken or
	// hostile: the client must end, not loop.
	EndlessPages bool
	RepeatPages  bool
	// RateLimited answers every request 403 with the limit spent, resetting
	// at RateReset.
	RateLimited bool
	RateReset   time.Time
	// FailGets answers that many GETs 502 before serving them.
	FailGets int
	// Requests lists "METHOD path?query" of every request, in order.
	Requests []string
	next     int
}

// New starts a fake of owner/name whose git side is the bare repository
// remote ("" for none).
func New(owner, name, remote string) *Server {
	s := &Server{Owner: owner, Name: name, Remote: remote, Issues: map[int]*Issue{}, PRs: map[int]*PR{},
		RateReset: time.Unix(1893456000, 0).UTC()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// API is the root URL to configure the client with.
func (s *Server) API() string { return s.URL + "/" }

// AddIssue adds an issue and returns its number.
func (s *Server) AddIssue(i Issue) int {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.next++
	if i.Number == 0 {
		i.Number = s.next
	} else if i.Number > s.next {
		s.next = i.Number
	}
	if i.State == "" {
		i.State = "open"
	}
	s.Issues[i.Number] = &i
	return i.Number
}

// SetIssueState opens or closes an issue, as a person would on the forge.
func (s *Server) SetIssueState(n int, state string) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	i, ok := s.Issues[n]
	if !ok {
		return fmt.Errorf("no issue #%d", n)
	}
	i.State = state
	return nil
}

// Merge merges pull request n as GitHub's merge button does: a merge
// commit of the base branch's tip and the PR's head, on the base branch
// of the remote.
func (s *Server) Merge(n int) (string, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.PRs[n]
	if !ok || p.State != "open" {
		return "", fmt.Errorf("no open pull request #%d", n)
	}
	s.followHead(p)
	base, err := s.git("rev-parse", "refs/heads/"+p.Base)
	if err != nil {
		return "", err
	}
	tree, err := s.git("merge-tree", "--write-tree", base, p.HeadSHA)
	if err != nil {
		return "", fmt.Errorf("pull request #%d does not merge cleanly: %v", n, err)
	}
	tree = strings.Fields(tree)[0]
	merge, err := s.git("commit-tree", tree, "-p", base, "-p", p.HeadSHA, "-m", fmt.Sprintf("Merge pull request #%d", n))
	if err != nil {
		return "", err
	}
	return merge, s.merged(p, merge, base)
}

// MergeWithout marks pull request n merged by a commit on the base branch
// that does not contain the PR's head: what a squash or a hand-made merge
// that dropped the work would leave.
func (s *Server) MergeWithout(n int) (string, error) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.PRs[n]
	if !ok || p.State != "open" {
		return "", fmt.Errorf("no open pull request #%d", n)
	}
	base, err := s.git("rev-parse", "refs/heads/"+p.Base)
	if err != nil {
		return "", err
	}
	tree, err := s.git("rev-parse", base+"^{tree}")
	if err != nil {
		return "", err
	}
	merge, err := s.git("commit-tree", tree, "-p", base, "-m", fmt.Sprintf("Merge pull request #%d (squashed away)", n))
	if err != nil {
		return "", err
	}
	return merge, s.merged(p, merge, base)
}

// ClosePR closes pull request n without merging it.
func (s *Server) ClosePR(n int) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	p, ok := s.PRs[n]
	if !ok {
		return fmt.Errorf("no pull request #%d", n)
	}
	p.State = "closed"
	return nil
}

// followHead moves an open pull request's head to its branch's tip, as
// GitHub does on every push to the branch: what a merge merges is the
// branch as it is then, not as it was when ship opened the PR.
func (s *Server) followHead(p *PR) {
	if s.Remote == "" {
		return
	}
	if sha, err := s.git("rev-parse", "--verify", "-q", "refs/heads/"+p.Head); err == nil {
		p.HeadSHA = sha
		_, _ = s.git("update-ref", fmt.Sprintf("refs/pull/%d/head", p.Number), sha)
	}
}

func (s *Server) merged(p *PR, merge, base string) error {
	if _, err := s.git("update-ref", "refs/heads/"+p.Base, merge, base); err != nil {
		return err
	}
	p.State, p.Merged, p.MergeCommit = "closed", true, merge
	return nil
}

func (s *Server) git(args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", s.Remote}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// ---- HTTP ----

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Requests = append(s.Requests, r.Method+" "+r.URL.RequestURI())
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.RateReset.Unix(), 10))
	if s.RateLimited {
		h.Set("X-RateLimit-Remaining", "0")
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "API rate limit exceeded for 127.0.0.1.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"})
		return
	}
	h.Set("X-RateLimit-Remaining", "4999")
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials",
			"documentation_url": "https://docs.github.com/rest"})
		return
	}
	if r.Method == http.MethodGet && s.FailGets > 0 {
		s.FailGets--
		writeJSON(w, http.StatusBadGateway, map[string]any{"message": "Server Error"})
		return
	}
	prefix := "/repos/" + s.Owner + "/" + s.Name + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		notFound(w)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/")
	switch {
	case len(parts) == 1 && parts[0] == "issues" && r.Method == http.MethodGet:
		s.listIssues(w, r)
	case len(parts) == 2 && parts[0] == "issues":
		s.issue(w, r, parts[1])
	case len(parts) == 1 && parts[0] == "milestones" && r.Method == http.MethodGet:
		var out []map[string]any
		for i, t := range s.Milestones {
			out = append(out, map[string]any{"number": i + 1, "title": t, "state": "open"})
		}
		s.page(w, r, len(out), func(i int) any { return out[i] })
	case len(parts) == 1 && parts[0] == "pulls" && r.Method == http.MethodGet:
		s.listPRs(w, r)
	case len(parts) == 1 && parts[0] == "pulls" && r.Method == http.MethodPost:
		s.createPR(w, r)
	case len(parts) == 2 && parts[0] == "pulls":
		s.pr(w, r, parts[1])
	default:
		notFound(w)
	}
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found",
		"documentation_url": "https://docs.github.com/rest"})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// page writes items [from, to) of n as one page, with GitHub's Link header.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int, item func(i int) any) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	if s.PerPage > 0 && per > s.PerPage {
		per = s.PerPage
	}
	pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if pg <= 0 {
		pg = 1
	}
	last := max(1, (n+per-1)/per)
	from, to := min(n, (pg-1)*per), min(n, pg*per)
	link := func(p int, rel string) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		// As GitHub does, the links name the repository by its id.
		path := strings.Replace(r.URL.Path, "/repos/"+s.Owner+"/"+s.Name+"/", "/repositories/1/", 1)
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.URL, path, q.Encode(), rel)
	}
	var links []string
	switch {
	case s.RepeatPages:
		links = append(links, link(pg, "next"))
	case s.EndlessPages:
		links = append(links, link(pg+1, "next"))
	case pg < last:
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"), link(pg-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := make([]any, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, item(i))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) issueJSON(i *Issue) map[string]any {
	labels := []map[string]any{}
	for _, l := range i.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	out := map[string]any{
		"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State, "labels": labels,
		"url":      fmt.Sprintf("%s/repos/%s/%s/issues/%d", s.URL, s.Owner, s.Name, i.Number),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/issues/%d", s.Owner, s.Name, i.Number),
	}
	if i.Milestone != "" {
		for n, t := range s.Milestones {
			if t == i.Milestone {
				out["milestone"] = map[string]any{"number": n + 1, "title": t}
			}
		}
	}
	if i.PullRequest {
		out["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/repos/%s/%s/pulls/%d", s.URL, s.Owner, s.Name, i.Number)}
	}
	return out
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var out []*Issue
	for _, i := range s.Issues {
		if state != "all" && i.State != state {
			continue
		}
		if l := q.Get("labels"); l != "" && !contains(i.Labels, l) {
			continue
		}
		if m := q.Get("milestone"); m != "" {
			n, _ := strconv.Atoi(m)
			if n < 1 || n > len(s.Milestones) || s.Milestones[n-1] != i.Milestone {
				continue
			}
		}
		out = append(out, i)
	}
	// GitHub's default is newest first; the client asks for created asc.
	sort.Slice(out, func(a, b int) bool { return out[a].Number < out[b].Number })
	if q.Get("direction") != "asc" {
		sort.Slice(out, func(a, b int) bool { return out[a].Number > out[b].Number })
	}
	s.page(w, r, len(out), func(i int) any { return s.issueJSON(out[i]) })
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) issue(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	i, ok := s.Issues[n]
	if !ok {
		notFound(w)
		return
	}
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.issueJSON(i))
	case http.MethodPatch:
		var req struct {
			State *string `json:"state"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		if req.State != nil {
			i.State = *req.State
		}
		writeJSON(w, http.StatusOK, s.issueJSON(i))
	default:
		notFound(w)
	}
}

func (s *Server) prJSON(p *PR) map[string]any {
	out := map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State, "merged": p.Merged,
		"head":     map[string]any{"ref": p.Head, "sha": p.HeadSHA, "label": s.Owner + ":" + p.Head},
		"base":     map[string]any{"ref": p.Base, "label": s.Owner + ":" + p.Base},
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", s.Owner, s.Name, p.Number),
	}
	if p.MergeCommit != "" {
		out["merge_commit_sha"] = p.MergeCommit
	}
	return out
}

func (s *Server) listPRs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var out []*PR
	for _, p := range s.PRs {
		if st := q.Get("state"); st != "" && st != "all" && p.State != st {
			continue
		}
		if h := q.Get("head"); h != "" && h != s.Owner+":"+p.Head {
			continue
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Number > out[b].Number })
	s.page(w, r, len(out), func(i int) any { return s.prJSON(out[i]) })
}

func (s *Server) createPR(w http.ResponseWriter, r *http.Request) {
	var req struct{ Title, Head, Base, Body string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	invalid := func(msg string) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors": []map[string]any{{"resource": "PullRequest", "code": "custom", "message": msg}}})
	}
	sha := ""
	if s.Remote != "" {
		var err error
		if sha, err = s.git("rev-parse", "--verify", "-q", "refs/heads/"+req.Head); err != nil {
			invalid("head: no such branch " + req.Head + ": " + err.Error())
			return
		}
		if _, err := s.git("rev-parse", "--verify", "-q", "refs/heads/"+req.Base); err != nil {
			invalid("base: no such branch " + req.Base)
			return
		}
	}
	for _, p := range s.PRs {
		if p.State == "open" && p.Head == req.Head && p.Base == req.Base {
			invalid(fmt.Sprintf("A pull request already exists for %s:%s.", s.Owner, req.Head))
			return
		}
	}
	s.next++
	p := &PR{Number: s.next, Title: req.Title, Body: req.Body, Head: req.Head, Base: req.Base, HeadSHA: sha, State: "open"}
	s.PRs[p.Number] = p
	if s.Remote != "" {
		if _, err := s.git("update-ref", fmt.Sprintf("refs/pull/%d/head", p.Number), sha); err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"message": err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusCreated, s.prJSON(p))
}

func (s *Server) pr(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	p, ok := s.PRs[n]
	if !ok {
		notFound(w)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if p.State == "open" {
			s.followHead(p)
		}
		writeJSON(w, http.StatusOK, s.prJSON(p))
	case http.MethodPatch:
		var req struct{ Title, Body *string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
			return
		}
		if req.Title != nil {
			p.Title = *req.Title
		}
		if req.Body != nil {
			p.Body = *req.Body
		}
		s.followHead(p)
		writeJSON(w, http.StatusOK, s.prJSON(p))
	default:
		notFound(w)
	}
}
