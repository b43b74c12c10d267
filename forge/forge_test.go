package forge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/forge/forgetest"
)

func TestRepoFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/acme/widgets.git":            "acme/widgets",
		"https://github.com/acme/widgets":                "acme/widgets",
		"https://user@github.example.com/acme/widgets/":  "acme/widgets",
		"git@github.com:acme/widgets.git":                "acme/widgets",
		"ssh://git@github.com/acme/widgets.git":          "acme/widgets",
		"ssh://git@github.example.com:2222/acme/widgets": "acme/widgets",
	} {
		r, err := forge.RepoFromURL(in)
		if err != nil || r.String() != want {
			t.Errorf("RepoFromURL(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	for _, in := range []string{"/srv/git/widgets.git", "../remote", "https://github.com/acme", "git@github.com:widgets"} {
		if r, err := forge.RepoFromURL(in); err == nil {
			t.Errorf("RepoFromURL(%q) = %v, want an error", in, r)
		}
	}
}

func client(t *testing.T, s *forgetest.Server, token string) (*forge.Client, *[]time.Duration) {
	t.Helper()
	var slept []time.Duration
	c, err := forge.New(forge.Options{Repo: forge.Repo{Owner: "acme", Name: "widgets"}, API: s.API(), Token: token,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c, &slept
}

func TestOpenIssuesPaginates(t *testing.T) {
	s := forgetest.New("acme", "widgets", "")
	defer s.Close()
	s.PerPage = 2
	s.Milestones = []string{"v1", "v2"}
	for i := 1; i <= 7; i++ {
		iss := forgetest.Issue{Title: "issue", Labels: []string{"zerg"}, Milestone: "v1"}
		switch i {
		case 3:
			iss.State = "closed"
		case 4:
			iss.PullRequest = true
		case 5:
			iss.Labels = nil
		case 6:
			iss.Milestone = "v2"
		}
		s.AddIssue(iss)
	}
	c, _ := client(t, s, "")
	got, err := c.OpenIssues(context.Background(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if n := numbers(got); n != "1 2 5 6 7" {
		t.Errorf("open issues %s, want 1 2 5 6 7 (closed ones and pull requests left out)", n)
	}
	got, err = c.OpenIssues(context.Background(), "zerg", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if n := numbers(got); n != "1 2 7" {
		t.Errorf("label zerg, milestone v1: %s, want 1 2 7", n)
	}
	pages := 0
	for _, r := range s.Requests {
		if strings.HasPrefix(r, "GET /repos/acme/widgets/issues?") {
			pages++
		}
	}
	if pages < 4 {
		t.Errorf("%d pages read, want every page (Link rel=next followed): %v", pages, s.Requests)
	}
	if _, err := c.OpenIssues(context.Background(), "", "v9"); err == nil || !strings.Contains(err.Error(), `no milestone "v9"`) {
		t.Errorf("unknown milestone: %v", err)
	}
}

func numbers(is []forge.Issue) string {
	var out []string
	for _, i := range is {
		out = append(out, strconv.Itoa(i.Number))
	}
	return strings.Join(out, " ")
}

func kindOf(t *testing.T, err error) *forge.Error {
	t.Helper()
	var fe *forge.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a forge.Error", err, err)
	}
	if strings.Contains(fe.Error(), "\n") {
		t.Errorf("error is more than one line: %q", fe.Error())
	}
	return fe
}

func TestErrors(t *testing.T) {
	s := forgetest.New("acme", "widgets", "")
	defer s.Close()
	s.AddIssue(forgetest.Issue{Title: "one"})
	ctx := context.Background()

	s.Token = "right"
	c, _ := client(t, s, "wrong")
	fe := kindOf(t, func() error { _, err := c.Issue(ctx, 1); return err }())
	if fe.Kind != forge.Unauthorized || !strings.Contains(fe.Error(), "401") || !strings.Contains(fe.Error(), "GITHUB_TOKEN") {
		t.Errorf("401: %v", fe)
	}
	c, _ = client(t, s, "right")
	if i, err := c.Issue(ctx, 1); err != nil || i.Title != "one" || !i.Open {
		t.Fatalf("with the token: %+v, %v", i, err)
	}

	fe = kindOf(t, func() error { _, err := c.Issue(ctx, 99); return err }())
	if fe.Kind != forge.NotFound || fe.Error() != "read issue #99 of acme/widgets: 404 not found (no such repository acme/widgets or item, or the token cannot see it)" {
		t.Errorf("404: %v", fe)
	}

	s.RateLimited = true
	fe = kindOf(t, func() error { _, err := c.OpenIssues(ctx, "", ""); return err }())
	if fe.Kind != forge.RateLimited || !fe.Reset.Equal(s.RateReset) ||
		fe.Error() != "list the open issues of acme/widgets: rate limit exceeded; it resets at 2030-01-01T00:00:00Z" {
		t.Errorf("403 rate limit: %v (reset %v)", fe, fe.Reset)
	}
	s.RateLimited = false

	// A client that saw the limit spent refuses by itself until the reset:
	// a new one stands for the next command.
	c, _ = client(t, s, "right")
	s.Close()
	fe = kindOf(t, func() error { _, err := c.Issue(ctx, 1); return err }())
	if fe.Kind != forge.Network || !strings.Contains(fe.Error(), "cannot reach 127.0.0.1") {
		t.Errorf("network down: %v", fe)
	}
}

func TestRetriesGetsOnly(t *testing.T) {
	s := forgetest.New("acme", "widgets", "")
	defer s.Close()
	s.AddIssue(forgetest.Issue{Title: "one"})
	c, slept := client(t, s, "")
	ctx := context.Background()

	s.FailGets = 2
	if _, err := c.Issue(ctx, 1); err != nil {
		t.Fatalf("two 502s then an answer: %v", err)
	}
	if len(*slept) != 2 || (*slept)[1] != 2*(*slept)[0] {
		t.Errorf("backoff %v, want two waits, doubling", *slept)
	}

	// Bounded: past the retries the failure is the answer.
	*slept = nil
	s.FailGets = 10
	fe := kindOf(t, func() error { _, err := c.Issue(ctx, 1); return err }())
	if !strings.Contains(fe.Error(), "502") || len(*slept) != forge.DefaultRetries {
		t.Errorf("after %d waits: %v", len(*slept), fe)
	}
	s.FailGets = 0

	// A PATCH is never retried: it may have been applied.
	s.Close()
	*slept = nil
	n := len(s.Requests)
	if err := c.CloseIssue(ctx, 1); err == nil {
		t.Fatal("close with the server down succeeded")
	}
	if len(*slept) != 0 || len(s.Requests) != n {
		t.Errorf("a PATCH was retried: %v", *slept)
	}
}

func TestPullRequests(t *testing.T) {
	s := forgetest.New("acme", "widgets", "")
	defer s.Close()
	c, _ := client(t, s, "")
	ctx := context.Background()
	p, opened, err := c.OpenOrUpdatePR(ctx, "zerg/f/issue-1", "main", "title", "Closes #1")
	if err != nil || !opened || p.Number == 0 || !p.Open {
		t.Fatalf("open: %+v %v %v", p, opened, err)
	}
	p2, opened, err := c.OpenOrUpdatePR(ctx, "zerg/f/issue-1", "main", "title 2", "Closes #1\nCloses #2")
	if err != nil || opened || p2.Number != p.Number {
		t.Fatalf("update: %+v %v %v", p2, opened, err)
	}
	if got := s.PRs[p.Number].Body; got != "Closes #1\nCloses #2" {
		t.Errorf("body after update %q", got)
	}
	got, err := c.PR(ctx, p.Number)
	if err != nil || got.Head != "zerg/f/issue-1" || got.Base != "main" || got.Merged {
		t.Errorf("read back: %+v %v", got, err)
	}
}

func TestToken(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "")
	if forge.Token() != "" {
		t.Error("a token from nowhere")
	}
	t.Setenv("GH_TOKEN", "gh")
	if forge.Token() != "gh" {
		t.Error("GH_TOKEN not read")
	}
	t.Setenv("GITHUB_TOKEN", "github")
	if forge.Token() != "github" {
		t.Error("GITHUB_TOKEN does not come first")
	}
}

// TestOtherRefusals covers the answers the fake forge does not give:
// GitHub's secondary rate limits (403 with Retry-After, or 429), a 403
// that is a missing permission, a 422 with its reasons, and an answer that
// is not GitHub's JSON.
func TestOtherRefusals(t *testing.T) {
	var status int
	var header map[string]string
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	c, err := forge.New(forge.Options{Repo: forge.Repo{Owner: "acme", Name: "widgets"}, API: srv.URL + "/api/v3",
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		header map[string]string
		body   string
		kind   forge.Kind
		msg    string
		reset  bool
	}{
		{403, map[string]string{"Retry-After": "60"}, `{"message":"You have exceeded a secondary rate limit."}`,
			forge.RateLimited, "read issue #1 of acme/widgets: secondary rate limit exceeded; try again after ", true},
		{429, nil, `{"message":"Too many requests"}`, forge.RateLimited, "read issue #1 of acme/widgets: secondary rate limit exceeded", false},
		{403, nil, `{"message":"Resource not accessible by integration"}`,
			forge.Forbidden, "read issue #1 of acme/widgets: 403 forbidden: Resource not accessible by integration", false},
		{422, nil, `{"message":"Validation Failed","errors":[{"message":"A pull request already exists"}]}`,
			forge.Invalid, "read issue #1 of acme/widgets: 422 refused: Validation Failed; A pull request already exists", false},
		{418, nil, `<html>teapot</html>`, forge.Other, "read issue #1 of acme/widgets: 418 I'm a teapot", false},
		{200, nil, `<html>a proxy's page</html>`, forge.Other, "read issue #1 of acme/widgets: 127.0.0.1", false},
	} {
		status, header, body = tc.status, tc.header, tc.body
		fe := kindOf(t, func() error { _, err := c.Issue(ctx, 1); return err }())
		if fe.Kind != tc.kind || !strings.HasPrefix(fe.Error(), tc.msg) || fe.Reset.IsZero() == tc.reset {
			t.Errorf("%d %s: got %v (kind %d, reset %v)", tc.status, tc.body, fe, fe.Kind, fe.Reset)
		}
	}
}

// TestPaginationEnds: a forge that always names a next page, or names a
// page it already sent, makes a listing fail with one line after a bounded
// number of requests.
func TestPaginationEnds(t *testing.T) {
	s := forgetest.New("acme", "widgets", "")
	defer s.Close()
	for i := 0; i < 3; i++ {
		s.AddIssue(forgetest.Issue{Title: "issue"})
	}
	s.Milestones = []string{"v1"}
	c, _ := client(t, s, "")
	ctx := context.Background()
	gets := func() int {
		n := 0
		for _, r := range s.Requests {
			if strings.HasPrefix(r, "GET ") {
				n++
			}
		}
		s.Requests = nil
		return n
	}

	s.EndlessPages = true
	fe := kindOf(t, func() error { _, err := c.OpenIssues(ctx, "", ""); return err }())
	if fe.Kind != forge.BadAnswer || fe.Error() != "list the open issues of acme/widgets: more than 100 pages of 100: git-zerg reads at most 10000 items of a listing" {
		t.Errorf("endless pages: %v", fe)
	}
	if n := gets(); n != forge.MaxPages {
		t.Errorf("endless pages: %d requests, want %d", n, forge.MaxPages)
	}
	fe = kindOf(t, func() error { _, err := c.OpenIssues(ctx, "", "no such"); return err }())
	if fe.Kind != forge.BadAnswer || !strings.HasPrefix(fe.Error(), "list the milestones of acme/widgets: more than 100 pages") || gets() != forge.MaxPages {
		t.Errorf("endless milestone pages: %v", fe)
	}
	s.EndlessPages = false

	s.RepeatPages = true
	fe = kindOf(t, func() error { _, err := c.OpenIssues(ctx, "", ""); return err }())
	if fe.Kind != forge.BadAnswer || !strings.Contains(fe.Error(), "named a page already read as the next one, after 2 pages (a pagination loop)") {
		t.Errorf("repeated page: %v", fe)
	}
	// The first request names no page; the fake's next names page 1, read
	// once more before the repetition shows.
	if n := gets(); n != 2 {
		t.Errorf("repeated page: %d requests, want 2", n)
	}
	s.RepeatPages = false

	// The bounds leave an ordinary listing alone.
	s.PerPage = 1
	s.AddIssue(forgetest.Issue{Title: "closed", State: "closed"})
	if got, err := c.AllIssues(ctx); err != nil || numbers(got) != "1 2 3 4" {
		t.Errorf("four pages of one: %v, %v", numbers(got), err)
	}
}

// TestAnswerBounds: a next page on another host is never asked (it would
// get the token), and an answer without end is cut at MaxAnswerBytes.
func TestAnswerBounds(t *testing.T) {
	var elsewhere int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere++
		io.WriteString(w, "[]")
	}))
	defer other.Close()
	var link string
	var big bool
	var seen func(*http.Request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r)
		}
		if link != "" {
			w.Header().Set("Link", link)
		}
		if big {
			// A JSON array of more than MaxAnswerBytes, written in chunks.
			io.WriteString(w, "[")
			chunk := strings.Repeat(`"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",`, 1<<14)
			for n := 0; n <= forge.MaxAnswerBytes; n += len(chunk) {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
			io.WriteString(w, `""]`)
			return
		}
		io.WriteString(w, `[{"number": 1, "state": "open"}]`)
	}))
	defer srv.Close()
	c, err := forge.New(forge.Options{Repo: forge.Repo{Owner: "acme", Name: "widgets"}, API: srv.URL,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// GitHub names the next page under /repositories/ID/: only its query
	// is taken, on this listing's own URL, and a next page on another
	// host never gets a request (nor the token).
	var pages []string
	seen = func(r *http.Request) { pages = append(pages, r.URL.RequestURI()) }
	link = "<" + other.URL + `/repositories/42/issues?page=2&per_page=100>; rel="next"`
	if _, err := c.OpenIssues(ctx, "", ""); err == nil || !strings.Contains(err.Error(), "a pagination loop") {
		t.Errorf("a next page naming itself for ever: %v", err)
	}
	if elsewhere != 0 || len(pages) != 2 || !strings.HasPrefix(pages[1], "/repos/acme/widgets/issues?") || !strings.Contains(pages[1], "page=2") {
		t.Errorf("next page elsewhere: %d requests there, here %v", elsewhere, pages)
	}
	link, seen = "", nil

	big = true
	fe := kindOf(t, func() error { _, err := c.OpenIssues(ctx, "", ""); return err }())
	if fe.Kind != forge.BadAnswer || fe.Error() != "list the open issues of acme/widgets: "+strings.TrimPrefix(srv.URL, "http://")+" answered more than 32 MiB" {
		t.Errorf("an answer without end: %v", fe)
	}
}
