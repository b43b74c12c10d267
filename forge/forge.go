// Package forge talks to the forge a repository's work is reviewed on
// (GitHub, or a GitHub Enterprise server): its issues and pull requests.
// It only answers questions and makes the requests asked of it; what a
// transition may do with the answers is for gates, and recording them is
// for engine.
package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
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

// CredentialVars are the environment variables that hold forge
// credentials: those Token reads, and those the GitHub CLI reads for a
// GitHub Enterprise host. Workers and the checks of their work run
// without them.
var CredentialVars = []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// TokenVars are the variables Token reads, first set first.
var TokenVars = []string{"GITHUB_TOKEN", "GH_TOKEN"}

// Token is the token the environment gives: GITHUB_TOKEN, else GH_TOKEN
// (the GitHub CLI's). "" makes unauthenticated requests.
func Token() string {
	for _, v := range TokenVars {
		if t := os.Getenv(v); t != "" {
			return t
		}
	}
	return ""
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

// Client is a forge repository's API: GitHub's REST API, the nine
// requests git-zerg makes, over net/http. (A typed client library for the
// whole API cost every command of git-zerg 0.3 ms of start and 2 MB of
// binary, for these nine.)
type Client struct {
	hc    *http.Client
	base  *url.URL // the API's root, ending in /
	token string
	repo  Repo
	host  string
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
	api := o.API
	if api == "" {
		api = "https://api.github.com/"
	}
	u, err := url.Parse(api)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("forge API URL %q is not an http or https URL", o.API)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return &Client{hc: hc, base: u, token: o.Token, repo: o.Repo, host: u.Host}, nil
}

// apiError is an answer other than 2xx, with what GitHub says of it.
type apiError struct {
	status int
	header http.Header
	// The body GitHub sends with an error.
	Message string `json:"message"`
	Errors  []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s", e.status, orDefault(e.Message, http.StatusText(e.status)))
}

// Bounds on what a forge's answers may cost: a forge that always names a
// next page, names one it already sent, or answers without end makes the
// command fail with one line instead of looping or filling memory.
const (
	// PerPage is the page size asked for, GitHub's largest.
	PerPage = 100
	// MaxPages bounds a listing: 100 pages of 100, 10,000 issues.
	MaxPages = 100
	// MaxAnswerBytes bounds one answer's body; MaxListBytes a listing's.
	MaxAnswerBytes = 32 << 20
	MaxListBytes   = 256 << 20
)

// badAnswer is an answer the client will not take: too large, or a
// pagination that does not end. It is said as the request's failure.
type badAnswer string

func (b badAnswer) Error() string { return string(b) }

// repoURL is the URL of path under repos/OWNER/NAME/ with query.
func (c *Client) repoURL(path string, query url.Values) *url.URL {
	u := c.base.JoinPath("repos", c.repo.Owner, c.repo.Name, path)
	u.RawQuery = query.Encode()
	return u
}

// do makes one request of the repository's API at path (under
// repos/OWNER/NAME/): in is sent as JSON, a 2xx answer's JSON is decoded
// into out.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	_, _, err := c.send(ctx, method, c.repoURL(path, query), in, out)
	return err
}

// send makes one request of u. next is the URL the Link header names as
// the next page, nil when there is none; size is the answer's length.
func (c *Client) send(ctx context.Context, method string, u *url.URL, in, out any) (next *url.URL, size int, err error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "git-zerg")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > MaxAnswerBytes {
		return nil, len(data), badAnswer(fmt.Sprintf("%s answered more than %d MiB", c.host, MaxAnswerBytes>>20))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{status: resp.StatusCode, header: resp.Header}
		_ = json.Unmarshal(data, e) // a body that is not GitHub's leaves the status alone
		return nil, len(data), e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, len(data), fmt.Errorf("%s answered what is not the JSON expected: %v", c.host, err)
		}
	}
	next, err = c.nextPage(u, resp.Header.Get("Link"))
	return next, len(data), err
}

// nextPage is the page the Link header's rel="next" URL names, nil when
// there is none: this listing's URL u with that URL's query (its page
// number or cursor). Only the query is taken: GitHub names the next page
// under /repositories/ID/..., and a forge that named another host would
// get the token.
func (c *Client) nextPage(u *url.URL, link string) (*url.URL, error) {
	for _, part := range strings.Split(link, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || !strings.Contains(params, `rel="next"`) {
			continue
		}
		next, err := url.Parse(strings.Trim(strings.TrimSpace(target), "<>"))
		if err != nil {
			return nil, badAnswer(fmt.Sprintf("%s named a next page that is no URL", c.host))
		}
		out := *u
		out.RawQuery = next.RawQuery
		return &out, nil
	}
	return nil, nil
}

// pageKey names a page by its query, whatever order the forge wrote it in.
func pageKey(u *url.URL) string { return u.Query().Encode() }

// list reads every page of the listing at path, handing each to each until
// it returns false. It fails, rather than loops, when the forge names a
// page it already sent as the next one, or the listing passes MaxPages
// pages or MaxListBytes bytes.
func list[T any](ctx context.Context, c *Client, what, path string, q url.Values, each func([]T) bool) error {
	u := c.repoURL(path, q)
	seen := map[string]bool{pageKey(u): true}
	total := 0
	for pages := 1; ; pages++ {
		var page []T
		next, size, err := c.send(ctx, http.MethodGet, u, nil, &page)
		if err != nil {
			return c.wrap(what, err)
		}
		total += size
		if !each(page) || next == nil {
			return nil
		}
		switch {
		case seen[pageKey(next)]:
			return c.wrap(what, badAnswer(fmt.Sprintf("%s named a page already read as the next one, after %d pages (a pagination loop)", c.host, pages)))
		case pages >= MaxPages:
			return c.wrap(what, badAnswer(fmt.Sprintf("more than %d pages of %d: git-zerg reads at most %d items of a listing", MaxPages, PerPage, MaxPages*PerPage)))
		case total > MaxListBytes:
			return c.wrap(what, badAnswer(fmt.Sprintf("%s answered more than %d MiB in %d pages", c.host, MaxListBytes>>20, pages)))
		}
		seen[pageKey(next)] = true
		u = next
	}
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
	BadAnswer         // an answer past the client's bounds: too large, or pages without end
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

// wrap turns a failed request into an Error.
func (c *Client) wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{What: what}
	var ae *apiError
	var bad badAnswer
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &bad):
		e.Kind, e.Msg = BadAnswer, bad.Error()
	case errors.As(err, &ae):
		code := ae.status
		msg := strings.TrimSpace(ae.Message)
		limited := code == http.StatusForbidden || code == http.StatusTooManyRequests
		switch {
		case limited && ae.header.Get("X-RateLimit-Remaining") == "0" && !resetOf(ae.header).IsZero():
			e.Kind, e.Reset = RateLimited, resetOf(ae.header)
			e.Msg = "rate limit exceeded; it resets at " + e.Reset.Format(time.RFC3339)
		case limited && (ae.header.Get("Retry-After") != "" || code == http.StatusTooManyRequests ||
			strings.Contains(strings.ToLower(msg), "secondary rate limit")):
			// GitHub's secondary limits: too many requests at once, or
			// content created too fast.
			e.Kind = RateLimited
			e.Msg = "secondary rate limit exceeded"
			if secs, err := strconv.Atoi(ae.header.Get("Retry-After")); err == nil && secs >= 0 {
				e.Reset = time.Now().Add(time.Duration(secs) * time.Second).UTC().Truncate(time.Second)
				e.Msg += "; try again after " + e.Reset.Format(time.RFC3339)
			}
		case code == http.StatusUnauthorized:
			e.Kind = Unauthorized
			e.Msg = "401 unauthorized: the token was refused; set GITHUB_TOKEN (or GH_TOKEN) to a valid token"
		case code == http.StatusForbidden:
			e.Kind = Forbidden
			e.Msg = "403 forbidden: " + orDefault(msg, "the token lacks a permission this needs")
		case code == http.StatusNotFound:
			e.Kind = NotFound
			e.Msg = fmt.Sprintf("404 not found (no such repository %s or item, or the token cannot see it)", c.repo)
		case code == http.StatusUnprocessableEntity:
			e.Kind = Invalid
			e.Msg = "422 refused: " + orDefault(msg, "validation failed")
			for _, d := range ae.Errors {
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

func resetOf(h http.Header) time.Time {
	n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
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
	// PullRequest: the number is a pull request's, which GitHub's issues
	// API serves alike.
	PullRequest bool
}

// The API's JSON, as much of it as is read.
type (
	apiIssue struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
		State  string `json:"state"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		Milestone *struct {
			Title string `json:"title"`
		} `json:"milestone"`
		// PullRequest is set on the pull requests the issues list
		// includes.
		PullRequest *struct{} `json:"pull_request"`
	}
	apiMilestone struct {
		Number int    `json:"number"`
		Title  string `json:"title"`
	}
	apiBranch struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	apiPR struct {
		Number         int       `json:"number"`
		State          string    `json:"state"`
		Merged         bool      `json:"merged"`
		MergeCommitSHA string    `json:"merge_commit_sha"`
		Head           apiBranch `json:"head"`
		Base           apiBranch `json:"base"`
		HTMLURL        string    `json:"html_url"`
	}
)

func issueOf(i *apiIssue) Issue {
	out := Issue{Number: i.Number, Title: i.Title, Body: i.Body, Open: i.State == "open", PullRequest: i.PullRequest != nil}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	if i.Milestone != nil {
		out.Milestone = i.Milestone.Title
	}
	return out
}

// OpenIssues lists the open issues (not pull requests) with the label and
// in the milestone given ("" for any), in number order, every page.
func (c *Client) OpenIssues(ctx context.Context, label, milestone string) ([]Issue, error) {
	what := "list the open issues of " + c.repo.String()
	q := url.Values{"state": {"open"}, "sort": {"created"}, "direction": {"asc"}, "per_page": {strconv.Itoa(PerPage)}}
	if label != "" {
		q.Set("labels", label)
	}
	if milestone != "" {
		n, err := c.milestone(ctx, milestone)
		if err != nil {
			return nil, err
		}
		q.Set("milestone", strconv.Itoa(n))
	}
	out, err := c.issues(ctx, what, q)
	if err != nil {
		return nil, err
	}
	var open []Issue
	for _, i := range out {
		if !i.PullRequest {
			open = append(open, i)
		}
	}
	return open, nil
}

// AllIssues lists every issue, open or closed, pull requests among them
// (GitHub numbers both alike), in number order: one listing that answers
// for many issue numbers at once.
func (c *Client) AllIssues(ctx context.Context) ([]Issue, error) {
	q := url.Values{"state": {"all"}, "sort": {"created"}, "direction": {"asc"}, "per_page": {strconv.Itoa(PerPage)}}
	return c.issues(ctx, "list the issues of "+c.repo.String(), q)
}

func (c *Client) issues(ctx context.Context, what string, q url.Values) ([]Issue, error) {
	var out []Issue
	err := list(ctx, c, what, "issues", q, func(page []apiIssue) bool {
		for i := range page {
			out = append(out, issueOf(&page[i]))
		}
		return true
	})
	if err != nil {
		return nil, err
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
	q := url.Values{"state": {"all"}, "per_page": {strconv.Itoa(PerPage)}}
	found := 0
	err := list(ctx, c, what, "milestones", q, func(page []apiMilestone) bool {
		for _, ms := range page {
			if ms.Title == m {
				found = ms.Number
				return false
			}
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case found == 0:
		return 0, &Error{Kind: NotFound, What: what, Msg: fmt.Sprintf("no milestone %q", m)}
	}
	return found, nil
}

// Issue reads one issue.
func (c *Client) Issue(ctx context.Context, n int) (Issue, error) {
	var i apiIssue
	if err := c.do(ctx, http.MethodGet, "issues/"+strconv.Itoa(n), nil, nil, &i); err != nil {
		return Issue{}, c.wrap(fmt.Sprintf("read issue #%d of %s", n, c.repo), err)
	}
	return issueOf(&i), nil
}

// CloseIssue closes an issue; one already closed is left as it is.
func (c *Client) CloseIssue(ctx context.Context, n int) error {
	err := c.do(ctx, http.MethodPatch, "issues/"+strconv.Itoa(n), nil, map[string]string{"state": "closed"}, nil)
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

func prOf(p *apiPR) *PR {
	return &PR{Number: p.Number, Open: p.State == "open", Merged: p.Merged,
		MergeCommit: p.MergeCommitSHA, Head: p.Head.Ref, Base: p.Base.Ref,
		HeadSHA: p.Head.SHA, URL: p.HTMLURL}
}

// PR reads one pull request.
func (c *Client) PR(ctx context.Context, n int) (*PR, error) {
	var p apiPR
	if err := c.do(ctx, http.MethodGet, "pulls/"+strconv.Itoa(n), nil, nil, &p); err != nil {
		return nil, c.wrap(fmt.Sprintf("read pull request #%d of %s", n, c.repo), err)
	}
	return prOf(&p), nil
}

// OpenPR finds the open pull request from head into base, nil if none.
func (c *Client) OpenPR(ctx context.Context, head, base string) (*PR, error) {
	q := url.Values{"state": {"open"}, "head": {c.repo.Owner + ":" + head}, "base": {base}}
	var ps []apiPR
	if err := c.do(ctx, http.MethodGet, "pulls", q, nil, &ps); err != nil {
		return nil, c.wrap(fmt.Sprintf("list the pull requests of %s", c.repo), err)
	}
	for i := range ps {
		if ps[i].Head.Ref == head {
			return prOf(&ps[i]), nil
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
	var p apiPR
	if old != nil {
		in := map[string]string{"title": title, "body": body}
		if err := c.do(ctx, http.MethodPatch, "pulls/"+strconv.Itoa(old.Number), nil, in, &p); err != nil {
			return nil, false, c.wrap(fmt.Sprintf("update pull request #%d of %s", old.Number, c.repo), err)
		}
		return prOf(&p), false, nil
	}
	in := map[string]string{"title": title, "head": head, "base": base, "body": body}
	if err := c.do(ctx, http.MethodPost, "pulls", nil, in, &p); err != nil {
		return nil, false, c.wrap(fmt.Sprintf("open a pull request from %s into %s of %s", head, base, c.repo), err)
	}
	return prOf(&p), true, nil
}
