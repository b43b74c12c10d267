// Package forge talks to the forge a repository's work is reviewed on
// (GitHub, or a GitHub Enterprise server): its issues and pull requests.
// It only answers questions and makes the requests asked of it; what a
// transition may do with the answers is for gates, and recording them is
// for engine.
package forge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"
)

// Repo names a repository on the forge.
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo reads "owner/name".
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("want owner/name, got %q", s)
	}
	return Repo{owner, name}, nil
}

// RepoFromURL takes the repository from a remote's URL, in any form git
// accepts for a forge: https://host/owner/name(.git), ssh://git@host/owner/name.git
// and the scp-like git@host:owner/name.git.
func RepoFromURL(raw string) (Repo, error) {
	raw = strings.TrimSpace(raw)
	path := ""
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return Repo{}, fmt.Errorf("remote URL %q names no forge repository", raw)
		}
		path = u.Path
	case strings.Contains(raw, ":") && !strings.HasPrefix(raw, "/"):
		// scp-like: [user@]host:owner/name.git
		_, path, _ = strings.Cut(raw, ":")
	default:
		return Repo{}, fmt.Errorf("remote URL %q is a local path, not a forge repository", raw)
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return Repo{}, fmt.Errorf("remote URL %q names no owner/name", raw)
	}
	return Repo{parts[len(parts)-2], parts[len(parts)-1]}, nil
}

// Token is the token the environment gives: GITHUB_TOKEN, else GH_TOKEN
// (the GitHub CLI's). "" makes unauthenticated requests.
func Token() string {
	if t := os.Getenv("GITHUB_TOKEN"); t != "" {
		return t
	}
	return os.Getenv("GH_TOKEN")
}

// Options configure a Client.
type Options struct {
	Repo Repo
	// API is the REST API's root URL; "" is github.com's. For GitHub
	// Enterprise it is https://HOST/api/v3/.
	API   string
	Token string
	// Retries is how many times a GET is tried again after a network error
	// or a 5xx answer; Backoff is the first wait, doubled each time.
	Retries int
	Backoff time.Duration
	// Sleep waits between retries; nil is time.Sleep under the context.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is a forge repository's API.
type Client struct {
	gh   *github.Client
	repo Repo
	host string
}

// DefaultRetries and DefaultBackoff bound a GET's retries: four tries
// within about two seconds.
const (
	DefaultRetries = 3
	DefaultBackoff = 250 * time.Millisecond
)

// New makes a client of o.Repo.
func New(o Options) (*Client, error) {
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &retrying{next: http.DefaultTransport, opts: o}}
	gh := github.NewClient(hc)
	if o.Token != "" {
		gh = gh.WithAuthToken(o.Token)
	}
	if o.API != "" {
		u, err := url.Parse(o.API)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("forge API URL %q is not an http or https URL", o.API)
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		gh.BaseURL = u
	}
	return &Client{gh: gh, repo: o.Repo, host: gh.BaseURL.Host}, nil
}

// Repo is the repository the client works on.
func (c *Client) Repo() Repo { return c.repo }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retrying tries a GET again after a network error or a 5xx answer, a
// bounded number of times. Only GETs: a POST or PATCH that timed out may
// have been applied, and a second one would open a second pull request.
type retrying struct {
	next http.RoundTripper
	opts Options
}

func (r *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return r.next.RoundTrip(req)
	}
	wait := r.opts.Backoff
	for try := 0; ; try++ {
		resp, err := r.next.RoundTrip(req)
		retry := err != nil || resp.StatusCode == http.StatusBadGateway ||
			resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout ||
			resp.StatusCode == http.StatusInternalServerError
		if !retry || try >= r.opts.Retries || req.Context().Err() != nil {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		if serr := r.opts.Sleep(req.Context(), wait); serr != nil {
			return nil, serr
		}
		wait *= 2
	}
}

// Kind sorts the failures a user acts on differently.
type Kind int

const (
	Other        Kind = iota
	Unauthorized      // 401: no token, or a bad one
	RateLimited       // 403 or 429 with the rate limit spent
	Forbidden         // 403 otherwise: the token lacks a permission
	NotFound          // 404
	Network           // no answer at all
	Invalid           // 422: the request was refused as it stood
)

// Error is a failed request, said in one line.
type Error struct {
	Kind Kind
	// What is the request, e.g. "list issues of acme/widgets".
	What string
	Msg  string
	// Reset is when the rate limit resets (RateLimited).
	Reset time.Time
}

func (e *Error) Error() string { return e.What + ": " + e.Msg }

// wrap turns what go-github returned into an Error.
func (c *Client) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{What: what}
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var er *github.ErrorResponse
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &rl):
		e.Kind, e.Reset = RateLimited, rl.Rate.Reset.Time.UTC()
		e.Msg = "rate limit exceeded; it resets at " + e.Reset.Format(time.RFC3339)
	case errors.As(err, &abuse):
		e.Kind = RateLimited
		e.Msg = "secondary rate limit exceeded"
		if abuse.RetryAfter != nil {
			e.Reset = time.Now().Add(*abuse.RetryAfter).UTC().Truncate(time.Second)
			e.Msg += "; try again after " + e.Reset.Format(time.RFC3339)
		}
	case errors.As(err, &er) && er.Response != nil:
		code := er.Response.StatusCode
		msg := strings.TrimSpace(er.Message)
		switch code {
		case http.StatusUnauthorized:
			e.Kind = Unauthorized
			e.Msg = "401 unauthorized: the token was refused; set GITHUB_TOKEN (or GH_TOKEN) to a valid token"
		case http.StatusForbidden:
			if reset := resetOf(er.Response); !reset.IsZero() && er.Response.Header.Get("X-RateLimit-Remaining") == "0" {
				e.Kind, e.Reset = RateLimited, reset
				e.Msg = "rate limit exceeded; it resets at " + reset.Format(time.RFC3339)
			} else {
				e.Kind = Forbidden
				e.Msg = "403 forbidden: " + orDefault(msg, "the token lacks a permission this needs")
			}
		case http.StatusNotFound:
			e.Kind = NotFound
			e.Msg = fmt.Sprintf("404 not found (no such repository %s or item, or the token cannot see it)", c.repo)
		case http.StatusUnprocessableEntity:
			e.Kind = Invalid
			e.Msg = "422 refused: " + orDefault(msg, "validation failed")
			for _, d := range er.Errors {
				if d.Message != "" {
					e.Msg += "; " + d.Message
				}
			}
		default:
			e.Msg = fmt.Sprintf("%d %s", code, orDefault(msg, http.StatusText(code)))
		}
	case errors.As(err, &ne), errors.As(err, &ue):
		e.Kind = Network
		e.Msg = "cannot reach " + c.host + " (network down or host unreachable)"
	default:
		e.Msg = err.Error()
	}
	return e
}

func resetOf(r *http.Response) time.Time {
	n, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Issue is what a task needs of an issue.
type Issue struct {
	Number    int
	Title     string
	Body      string
	Open      bool
	Labels    []string
	Milestone string
}

func issueOf(i *github.Issue) Issue {
	out := Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), Open: i.GetState() == "open"}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	if i.Milestone != nil {
		out.Milestone = i.Milestone.GetTitle()
	}
	return out
}

// OpenIssues lists the open issues (not pull requests) with the label and
// in the milestone given ("" for any), in number order, every page.
func (c *Client) OpenIssues(ctx context.Context, label, milestone string) ([]Issue, error) {
	what := "list the open issues of " + c.repo.String()
	opts := &github.IssueListByRepoOptions{State: "open", Sort: "created", Direction: "asc",
		ListOptions: github.ListOptions{PerPage: 100}}
	if label != "" {
		opts.Labels = []string{label}
	}
	if milestone != "" {
		n, err := c.milestone(ctx, milestone)
		if err != nil {
			return nil, err
		}
		opts.Milestone = strconv.Itoa(n)
	}
	var out []Issue
	for {
		page, resp, err := c.gh.Issues.ListByRepo(ctx, c.repo.Owner, c.repo.Name, opts)
		if err != nil {
			return nil, c.wrap(what, err)
		}
		for _, i := range page {
			if i.IsPullRequest() {
				continue
			}
			out = append(out, issueOf(i))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.ListOptions.Page = resp.NextPage
	}
	sortIssues(out)
	return out, nil
}

func sortIssues(is []Issue) {
	sort.Slice(is, func(i, j int) bool { return is[i].Number < is[j].Number })
}

// milestone finds a milestone's number by its title, or takes a number.
func (c *Client) milestone(ctx context.Context, m string) (int, error) {
	if n, err := strconv.Atoi(m); err == nil && n > 0 {
		return n, nil
	}
	what := "list the milestones of " + c.repo.String()
	opts := &github.MilestoneListOptions{State: "all", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.gh.Issues.ListMilestones(ctx, c.repo.Owner, c.repo.Name, opts)
		if err != nil {
			return 0, c.wrap(what, err)
		}
		for _, ms := range page {
			if ms.GetTitle() == m {
				return ms.GetNumber(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, &Error{Kind: NotFound, What: what, Msg: fmt.Sprintf("no milestone %q", m)}
		}
		opts.Page = resp.NextPage
	}
}

// Issue reads one issue.
func (c *Client) Issue(ctx context.Context, n int) (Issue, error) {
	i, _, err := c.gh.Issues.Get(ctx, c.repo.Owner, c.repo.Name, n)
	if err != nil {
		return Issue{}, c.wrap(fmt.Sprintf("read issue #%d of %s", n, c.repo), err)
	}
	return issueOf(i), nil
}

// CloseIssue closes an issue; one already closed is left as it is.
func (c *Client) CloseIssue(ctx context.Context, n int) error {
	_, _, err := c.gh.Issues.Edit(ctx, c.repo.Owner, c.repo.Name, n, &github.IssueRequest{State: github.Ptr("closed")})
	return c.wrap(fmt.Sprintf("close issue #%d of %s", n, c.repo), err)
}

// PR is what a task needs of a pull request.
type PR struct {
	Number int
	Open   bool
	Merged bool
	// MergeCommit is the commit the merge made on the base branch.
	MergeCommit string
	Head, Base  string
	HeadSHA     string
	URL         string
}

func prOf(p *github.PullRequest) *PR {
	return &PR{Number: p.GetNumber(), Open: p.GetState() == "open", Merged: p.GetMerged(),
		MergeCommit: p.GetMergeCommitSHA(), Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(),
		HeadSHA: p.GetHead().GetSHA(), URL: p.GetHTMLURL()}
}

// PR reads one pull request.
func (c *Client) PR(ctx context.Context, n int) (*PR, error) {
	p, _, err := c.gh.PullRequests.Get(ctx, c.repo.Owner, c.repo.Name, n)
	if err != nil {
		return nil, c.wrap(fmt.Sprintf("read pull request #%d of %s", n, c.repo), err)
	}
	return prOf(p), nil
}

// OpenPR finds the open pull request from head into base, nil if none.
func (c *Client) OpenPR(ctx context.Context, head, base string) (*PR, error) {
	opts := &github.PullRequestListOptions{State: "open", Head: c.repo.Owner + ":" + head, Base: base}
	ps, _, err := c.gh.PullRequests.List(ctx, c.repo.Owner, c.repo.Name, opts)
	if err != nil {
		return nil, c.wrap(fmt.Sprintf("list the pull requests of %s", c.repo), err)
	}
	for _, p := range ps {
		if p.GetHead().GetRef() == head {
			return prOf(p), nil
		}
	}
	return nil, nil
}

// OpenOrUpdatePR opens a pull request from head into base, or updates the
// title and body of the one already open.
func (c *Client) OpenOrUpdatePR(ctx context.Context, head, base, title, body string) (pr *PR, opened bool, err error) {
	old, err := c.OpenPR(ctx, head, base)
	if err != nil {
		return nil, false, err
	}
	if old != nil {
		p, _, err := c.gh.PullRequests.Edit(ctx, c.repo.Owner, c.repo.Name, old.Number,
			&github.PullRequest{Title: github.Ptr(title), Body: github.Ptr(body)})
		if err != nil {
			return nil, false, c.wrap(fmt.Sprintf("update pull request #%d of %s", old.Number, c.repo), err)
		}
		return prOf(p), false, nil
	}
	p, _, err := c.gh.PullRequests.Create(ctx, c.repo.Owner, c.repo.Name,
		&github.NewPullRequest{Title: github.Ptr(title), Head: github.Ptr(head), Base: github.Ptr(base), Body: github.Ptr(body)})
	if err != nil {
		return nil, false, c.wrap(fmt.Sprintf("open a pull request from %s into %s of %s", head, base, c.repo), err)
	}
	return prOf(p), true, nil
}
