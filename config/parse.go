package config

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/git-zerg/git-zerg/agent"
	"github.com/git-zerg/git-zerg/forge"
	"github.com/git-zerg/git-zerg/lazy"

	"github.com/BurntSushi/toml"
)

// The file is decoded in two steps. Tables are held as Primitives so that a
// table of the wrong shape is one reported problem instead of the end of
// decoding, and values are held as any so that every wrong type is reported
// rather than only the first one the decoder meets.
type rawFile struct {
	Workers   toml.Primitive `toml:"workers"`
	Retry     toml.Primitive `toml:"retry"`
	Locks     toml.Primitive `toml:"locks"`
	Worktrees toml.Primitive `toml:"worktrees"`
	Sync      toml.Primitive `toml:"sync"`
	Rush      toml.Primitive `toml:"rush"`
	Budget    toml.Primitive `toml:"budget"`
	Notify    toml.Primitive `toml:"notify"`
	Forge     toml.Primitive `toml:"forge"`
	Gates     toml.Primitive `toml:"gates"`
}

type rawWorkers struct {
	Count          any `toml:"count"`
	Agent          any `toml:"agent"`
	Command        any `toml:"command"`
	Timeout        any `toml:"timeout"`
	StallTimeout   any `toml:"stall_timeout"`
	MaxCheckpoints any `toml:"max_checkpoints"`
	Image          any `toml:"image"`
	PassEnv        any `toml:"pass_env"`
}

type rawRetry struct {
	MaxAttempts any `toml:"max_attempts"`
	Backoff     any `toml:"backoff"`
	BackoffCap  any `toml:"backoff_cap"`
}

type rawLocks struct {
	TTL any `toml:"ttl"`
}

type rawWorktrees struct {
	Root  any `toml:"root"`
	Setup any `toml:"setup"`
}

type rawSync struct {
	Remote       any `toml:"remote"`
	Arbiter      any `toml:"arbiter"`
	TrustedHosts any `toml:"trusted_hosts"`
}

type rawRush struct {
	Remote     any `toml:"remote"`
	RemoteWait any `toml:"remote_wait"`
	Schedule   any `toml:"schedule"`
	FollowBase any `toml:"follow_base"`
}

type rawBudget struct {
	MaxCostUSD any `toml:"max_cost_usd"`
	MaxTokens  any `toml:"max_tokens"`
}

type rawNotify struct {
	Command any `toml:"command"`
}

type rawForge struct {
	Repo         any `toml:"repo"`
	API          any `toml:"api"`
	RequireIssue any `toml:"require_issue"`
	Review       any `toml:"review"`
	Base         any `toml:"base"`
}

type rawGate struct {
	Name     any `toml:"name"`
	Command  any `toml:"command"`
	Required any `toml:"required"`
	Timeout  any `toml:"timeout"`
	PassEnv  any `toml:"pass_env"`
}

// The toml decoder matches keys to fields ignoring case, but TOML keys are
// case-sensitive and "Count" is a typo for "count", so the exact names are
// kept to catch what the decoder would silently accept. They are made on
// first use, by reflection: not at the start of every command.
var (
	tableNames = &lazy.Value[[]string]{Build: func() []string { return tomlNames(rawFile{}) }}
	fieldNames = &lazy.Value[map[string][]string]{Build: func() map[string][]string {
		return map[string][]string{
			"workers":   tomlNames(rawWorkers{}),
			"retry":     tomlNames(rawRetry{}),
			"locks":     tomlNames(rawLocks{}),
			"worktrees": tomlNames(rawWorktrees{}),
			"sync":      tomlNames(rawSync{}),
			"rush":      tomlNames(rawRush{}),
			"budget":    tomlNames(rawBudget{}),
			"notify":    tomlNames(rawNotify{}),
			"forge":     tomlNames(rawForge{}),
			"gates":     tomlNames(rawGate{}),
		}
	}}
)

func tomlNames(v any) []string {
	t := reflect.TypeOf(v)
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Tag.Get("toml")
	}
	return names
}

// parseConfig is Load from bytes; name is the file name used in messages and
// recorded as Path.
func parseConfig(name string, data []byte) (*Config, error) {
	src := string(data)
	var raw rawFile
	md, err := toml.Decode(src, &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Errors{syntaxError(name, src, pe)}
		}
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	p := &parser{file: name, md: md, keys: indexKeys(src), reported: map[string]bool{}}
	c := Default()
	c.Path = name
	p.workers(raw.Workers, &c.Workers)
	p.retry(raw.Retry, &c.Retry)
	p.locks(raw.Locks, &c.Locks)
	p.worktrees(raw.Worktrees, &c.Worktrees)
	p.sync(raw.Sync, &c.Sync)
	p.rush(raw.Rush, &c.Rush)
	p.budget(raw.Budget, &c.Budget)
	p.notify(raw.Notify, &c.Notify)
	p.forge(raw.Forge, &c.Forge)
	c.Gates = p.gates(raw.Gates)
	p.unknownKeys()
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, p.errs
	}
	return c, nil
}

// syntaxError places a toml.ParseError. Its line is counted from the byte
// offset because Position.Line is one too far when the offending byte is a
// newline (an unclosed "[retry" header). LastKey is only the last key the
// parser finished, which is not always where the error is, so it is named
// only when it is on the error's line.
func syntaxError(name, src string, pe toml.ParseError) *Error {
	line := pe.Position.Line
	if s := pe.Position.Start; s >= 0 && s < len(src) {
		line = 1 + strings.Count(src[:s], "\n")
	}
	key := pe.LastKey
	if lines := strings.Split(src, "\n"); key != "" && line >= 1 && line <= len(lines) {
		last := strings.Trim(key[strings.LastIndexByte(key, '.')+1:], `"'`)
		if !strings.Contains(lines[line-1], last) {
			key = ""
		}
	}
	return &Error{File: name, Line: line, Key: key, Msg: pe.Message}
}

type parser struct {
	file string
	md   toml.MetaData
	keys *keyIndex
	errs Errors
	// reported holds the keys already reported, so that what lies below a
	// bad key is not reported again as unknown.
	reported map[string]bool
}

func (p *parser) report(key string, line int, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
	p.reported[key] = true
}

func (p *parser) errorf(key, format string, args ...any) {
	p.report(key, p.keys.lineOf(key), format, args...)
}

// table decodes the table named key into dst and says whether it was
// there and was a table.
func (p *parser) table(key string, prim toml.Primitive, dst any) bool {
	if !p.md.IsDefined(key) {
		return false
	}
	var v any
	_ = p.md.PrimitiveDecode(prim, &v) // decoding into any cannot fail
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(key, "must be a table ([%s]), got %s", key, describe(v))
		return false
	}
	if err := p.md.PrimitiveDecode(prim, dst); err != nil {
		p.errorf(key, "%v", err)
		return false
	}
	exact(dst, m)
	return true
}

// exact refills dst from m by exact key. The decoder is still needed, to
// mark keys decoded for MetaData.Undecoded, but its case-insensitive match
// would let "Count" stand in for "count", or pick either at random when
// both are written.
func exact(dst any, m map[string]any) {
	rv := reflect.ValueOf(dst).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		if x, ok := m[rv.Type().Field(i).Tag.Get("toml")]; ok {
			f.Set(reflect.ValueOf(x))
		} else {
			f.SetZero()
		}
	}
}

func (p *parser) workers(prim toml.Primitive, w *Workers) {
	var r rawWorkers
	if !p.table("workers", prim, &r) {
		return
	}
	if p.integer("workers.count", r.Count, &w.Count) {
		switch {
		case w.Count < 1:
			p.errorf("workers.count", "must be at least 1, got %d", w.Count)
		case w.Count > MaxWorkers:
			p.errorf("workers.count", "must be at most %d, got %d", MaxWorkers, w.Count)
		}
	}
	if p.str("workers.agent", r.Agent, &w.Agent) && !slices.Contains(agent.Names(), w.Agent) {
		p.errorf("workers.agent", "unknown agent %q (%s)", w.Agent, strings.Join(agent.Names(), ", "))
	}
	if p.str("workers.command", r.Command, &w.Command) && w.Command != "" && strings.TrimSpace(w.Command) == "" {
		p.errorf("workers.command", "must not be blank (leave it out to run the agent's preset)")
	}
	if w.Agent == agent.Custom && strings.TrimSpace(w.Command) == "" {
		p.errorf("workers.agent", "%q needs workers.command", agent.Custom)
	}
	p.duration("workers.timeout", r.Timeout, &w.Timeout, false)
	p.duration("workers.stall_timeout", r.StallTimeout, &w.StallTimeout, true)
	if p.integer("workers.max_checkpoints", r.MaxCheckpoints, &w.MaxCheckpoints) && w.MaxCheckpoints < 0 {
		p.errorf("workers.max_checkpoints", "must not be negative, got %d", w.MaxCheckpoints)
	}
	p.str("workers.image", r.Image, &w.Image)
	p.credentials("workers.pass_env", r.PassEnv, &w.PassEnv)
}

func (p *parser) retry(prim toml.Primitive, rt *Retry) {
	var r rawRetry
	if !p.table("retry", prim, &r) {
		return
	}
	if p.integer("retry.max_attempts", r.MaxAttempts, &rt.MaxAttempts) && rt.MaxAttempts < 1 {
		p.errorf("retry.max_attempts", "must be at least 1, got %d", rt.MaxAttempts)
	}
	p.duration("retry.backoff", r.Backoff, &rt.Backoff, true)
	p.duration("retry.backoff_cap", r.BackoffCap, &rt.BackoffCap, false)
}

func (p *parser) locks(prim toml.Primitive, l *Locks) {
	var r rawLocks
	if !p.table("locks", prim, &r) {
		return
	}
	p.duration("locks.ttl", r.TTL, &l.TTL, false)
}

func (p *parser) worktrees(prim toml.Primitive, w *Worktrees) {
	var r rawWorktrees
	if !p.table("worktrees", prim, &r) {
		return
	}
	p.str("worktrees.root", r.Root, &w.Root)
	p.str("worktrees.setup", r.Setup, &w.Setup)
}

func (p *parser) sync(prim toml.Primitive, s *Sync) {
	var r rawSync
	if !p.table("sync", prim, &r) {
		return
	}
	p.str("sync.remote", r.Remote, &s.Remote)
	p.str("sync.arbiter", r.Arbiter, &s.Arbiter)
	p.strs("sync.trusted_hosts", r.TrustedHosts, &s.TrustedHosts)
}

func (p *parser) rush(prim toml.Primitive, r *Rush) {
	var raw rawRush
	if !p.table("rush", prim, &raw) {
		return
	}
	if p.str("rush.remote", raw.Remote, &r.Remote) && strings.HasPrefix(r.Remote, "-") {
		p.errorf("rush.remote", "not a remote name or URL: %q", r.Remote)
	}
	p.duration("rush.remote_wait", raw.RemoteWait, &r.RemoteWait, false)
	if p.str("rush.schedule", raw.Schedule, &r.Schedule) && r.Schedule != ScheduleFlow && r.Schedule != ScheduleLevels {
		p.errorf("rush.schedule", "must be %q or %q, got %q", ScheduleFlow, ScheduleLevels, r.Schedule)
	}
	p.boolean("rush.follow_base", raw.FollowBase, &r.FollowBase)
}

func (p *parser) budget(prim toml.Primitive, b *Budget) {
	var r rawBudget
	if !p.table("budget", prim, &r) {
		return
	}
	if p.float("budget.max_cost_usd", r.MaxCostUSD, &b.MaxCostUSD) && b.MaxCostUSD < 0 {
		p.errorf("budget.max_cost_usd", "must not be negative, got %g", b.MaxCostUSD)
	}
	var n int
	if p.integer("budget.max_tokens", r.MaxTokens, &n) {
		if n < 0 {
			p.errorf("budget.max_tokens", "must not be negative, got %d", n)
		}
		b.MaxTokens = int64(n)
	}
}

func (p *parser) notify(prim toml.Primitive, n *Notify) {
	var r rawNotify
	if !p.table("notify", prim, &r) {
		return
	}
	p.str("notify.command", r.Command, &n.Command)
}

func (p *parser) forge(prim toml.Primitive, f *Forge) {
	var r rawForge
	if !p.table("forge", prim, &r) {
		return
	}
	if p.str("forge.repo", r.Repo, &f.Repo) && f.Repo != "" {
		if owner, name, ok := strings.Cut(f.Repo, "/"); !ok || owner == "" || name == "" || strings.Contains(name, "/") ||
			strings.ContainsAny(f.Repo, " \t\n") {
			p.errorf("forge.repo", "want \"owner/name\", got %q", f.Repo)
		}
	}
	if p.str("forge.api", r.API, &f.API) && f.API != "" {
		if u, err := url.Parse(f.API); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.errorf("forge.api", "want an http or https URL such as \"https://github.example.com/api/v3/\", got %q", f.API)
		}
	}
	p.boolean("forge.require_issue", r.RequireIssue, &f.RequireIssue)
	if p.str("forge.review", r.Review, &f.Review) && f.Review != "" && f.Review != ReviewFeature && f.Review != ReviewTask {
		p.errorf("forge.review", "want \"feature\", \"task\" or \"\" (no review), got %q", f.Review)
	}
	if p.str("forge.base", r.Base, &f.Base) && strings.TrimSpace(f.Base) == "" {
		p.errorf("forge.base", "must name a branch")
	}
}

func (p *parser) gates(prim toml.Primitive) []Gate {
	if !p.md.IsDefined("gates") {
		return nil
	}
	var v any
	_ = p.md.PrimitiveDecode(prim, &v)
	elems, ok := tableArray(v)
	if !ok {
		p.errorf("gates", "must be an array of tables ([[gates]]), got %s", describe(v))
		return nil
	}
	var raw []rawGate
	if err := p.md.PrimitiveDecode(prim, &raw); err != nil {
		p.errorf("gates", "%v", err)
		return nil
	}
	for i := range raw {
		exact(&raw[i], elems[i])
	}
	gates := make([]Gate, 0, len(raw))
	firstUse := map[string]string{}
	for i, r := range raw {
		at := fmt.Sprintf("gates[%d]", i)
		g := Gate{Required: true}
		switch {
		case r.Name == nil:
			p.errorf(at+".name", "must be set")
		case !p.str(at+".name", r.Name, &g.Name):
		case strings.TrimSpace(g.Name) == "":
			p.errorf(at+".name", "must not be empty")
		case firstUse[g.Name] != "":
			p.errorf(at+".name", "duplicate gate name %q (first used by %s)", g.Name, firstUse[g.Name])
		default:
			firstUse[g.Name] = at
		}
		switch {
		case r.Command == nil:
			p.errorf(at+".command", "must be set")
		case p.str(at+".command", r.Command, &g.Command) && strings.TrimSpace(g.Command) == "":
			p.errorf(at+".command", "must not be empty")
		}
		p.boolean(at+".required", r.Required, &g.Required)
		p.duration(at+".timeout", r.Timeout, &g.Timeout, false)
		p.credentials(at+".pass_env", r.PassEnv, &g.PassEnv)
		gates = append(gates, g)
	}
	return gates
}

// tableArray accepts both [[gates]] and an inline array of inline tables.
func tableArray(v any) ([]map[string]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		out := make([]map[string]any, len(v))
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// The value helpers leave dst alone and say false when the key is absent
// (v is nil: TOML has no null) or has the wrong type.

func (p *parser) integer(key string, v any, dst *int) bool {
	if v == nil {
		return false
	}
	n, ok := v.(int64)
	if !ok {
		p.errorf(key, "must be an integer, got %s", describe(v))
		return false
	}
	if int64(int(n)) != n {
		p.errorf(key, "%d is out of range", n)
		return false
	}
	*dst = int(n)
	return true
}

func (p *parser) float(key string, v any, dst *float64) bool {
	switch f := v.(type) {
	case nil:
		return false
	case float64:
		*dst = f
	case int64:
		*dst = float64(f)
	default:
		p.errorf(key, "must be a number, got %s", describe(v))
		return false
	}
	return true
}

func (p *parser) str(key string, v any, dst *string) bool {
	if v == nil {
		return false
	}
	s, ok := v.(string)
	if !ok {
		p.errorf(key, "must be a string, got %s", describe(v))
		return false
	}
	*dst = s
	return true
}

func (p *parser) strs(key string, v any, dst *[]string) bool {
	if v == nil {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		p.errorf(key, "must be an array of strings, got %s", describe(v))
		return false
	}
	var out []string // nil for an empty list, as when the key is absent
	for i, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			p.errorf(key, "element %d must be a non-empty string, got %s", i, describe(e))
			return false
		}
		out = append(out, s)
	}
	*dst = out
	return true
}

func (p *parser) boolean(key string, v any, dst *bool) bool {
	if v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		p.errorf(key, "must be true or false, got %s", describe(v))
		return false
	}
	*dst = b
	return true
}

// credentials reads a list of forge credentials passed through to
// untrusted commands. Only the withheld ones can be named: any other
// variable passes anyway, and a misspelt name would pass nothing.
func (p *parser) credentials(key string, v any, dst *[]string) bool {
	if v == nil {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		p.errorf(key, `must be an array of names such as ["GITHUB_TOKEN"], got %s`, describe(v))
		return false
	}
	var names []string
	for _, e := range list {
		name, ok := e.(string)
		switch {
		case !ok:
			p.errorf(key, "must hold names (strings), got %s", describe(e))
			return false
		case !slices.Contains(forge.CredentialVars, name):
			p.errorf(key, "%q is not a withheld credential (%s; any other variable is passed anyway)",
				name, strings.Join(forge.CredentialVars, ", "))
			return false
		case !slices.Contains(names, name):
			names = append(names, name)
		}
	}
	*dst = names
	return true
}

// duration takes zeroOK for the one duration where zero means something
// (retry at once); a zero timeout or lifetime would only ever fail.
func (p *parser) duration(key string, v any, dst *Duration, zeroOK bool) bool {
	if v == nil {
		return false
	}
	s, ok := v.(string)
	if !ok {
		p.errorf(key, `must be a duration string such as "45m", got %s`, describe(v))
		return false
	}
	var d Duration
	if err := d.UnmarshalText([]byte(s)); err != nil {
		p.errorf(key, "%v", err)
		return false
	}
	switch {
	case d < 0 && zeroOK:
		p.errorf(key, "must not be negative, got %q", s)
		return false
	case d <= 0 && !zeroOK:
		p.errorf(key, "must be positive, got %q", s)
		return false
	}
	*dst = d
	return true
}

// describe names a decoded TOML value for a message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return fmt.Sprintf("float %v", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case time.Time:
		return "datetime " + v.Format(time.RFC3339)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// unknownKeys reports, in document order, each key the decoder left alone
// or matched only by ignoring case. Keys below one already reported are
// skipped: one misspelled table is one problem, not one per key in it.
func (p *parser) unknownKeys() {
	undecoded := map[string]bool{}
	for _, k := range p.md.Undecoded() {
		undecoded[k.String()] = true
	}
	seen := map[string]int{}
	for _, k := range p.md.Keys() {
		plain := k.String()
		loc := p.keys.loc(k, seen[plain])
		seen[plain]++
		want, exact := p.known(k)
		if exact && !undecoded[plain] || p.below(loc.path) {
			continue
		}
		what := "key"
		if t := p.md.Type(k...); t == "Hash" || t == "ArrayHash" {
			what = "table"
		}
		if want != "" {
			p.report(loc.path, loc.line, "unknown %s (did you mean %q?)", what, want)
		} else {
			p.report(loc.path, loc.line, "unknown %s", what)
		}
	}
}

// known says whether each component of k is spelled exactly as a key
// there, and if not, the name that was probably meant.
func (p *parser) known(k toml.Key) (suggest string, exact bool) {
	levels := [][]string{tableNames.Get(), fieldNames.Get()[k[0]]}
	for i := 0; i < len(k) && i < len(levels); i++ {
		if slices.Contains(levels[i], k[i]) {
			continue
		}
		return closest(k[i], levels[i]), false
	}
	return "", true
}

func (p *parser) below(path string) bool {
	for r := range p.reported {
		if strings.HasPrefix(path, r+".") || strings.HasPrefix(path, r+"[") {
			return true
		}
	}
	return false
}

// closest is the name a typo most likely meant: same letters in another
// case, or an edit or two away; short words get one edit, or "hooks" would
// suggest "locks". "" when nothing is that close.
func closest(s string, names []string) string {
	maxDist := 1
	if len(s) > 5 {
		maxDist = 2 // "wrokers" is two edits from "workers"
	}
	best, bestDist := "", maxDist+1
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n
		}
		if d := editDistance(s, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
