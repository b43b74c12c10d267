// Package config reads .zerg/config.toml, the per-repository settings of
// git zerg: how workers run, how failed tasks are retried, how long locks
// last, where worktrees go, how state is synced and which gates a task's
// result must pass.
package config

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/git-zerg/git-zerg/agent"
)

// Duration is a time.Duration written in the file as a string such as
// "45m", so that the file stays readable and unit mistakes are impossible.
type Duration time.Duration

// UnmarshalText accepts what time.ParseDuration accepts. Whether zero or a
// negative value is acceptable depends on the key, so it is checked there.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return &durationError{string(text)}
	}
	*d = Duration(v)
	return nil
}

// MarshalText lets a Config be written back out with toml.Encode.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d Duration) String() string { return time.Duration(d).String() }

type durationError struct{ text string }

func (e *durationError) Error() string {
	return `"` + e.text + `" is not a duration (write e.g. "45m", "10s" or "2h")`
}

// MaxWorkers bounds workers.count (and the --workers flag). Each worker is
// a process with a worktree, a full checkout of the repository, usually
// running an agent with its own rate limits: a few hundred is past what
// one machine or one account sustains, so a larger count is a typo, and
// one like 99999999999 must not reach the allocations sized by it.
const MaxWorkers = 256

// Workers says how worker processes are started.
type Workers struct {
	Count int `toml:"count"`
	// Agent names a preset (package agent) that can edit and commit
	// headless; "custom" runs Command alone.
	Agent   string   `toml:"agent"`
	Command string   `toml:"command"` // run by sh in the worker's worktree; overrides the agent's preset
	Timeout Duration `toml:"timeout"`
	// StallTimeout stops a worker that has printed nothing and changed
	// nothing in its worktree for that long; zero never does.
	StallTimeout   Duration `toml:"stall_timeout"`
	MaxCheckpoints int      `toml:"max_checkpoints"`
	Image          string   `toml:"image"` // only used by --mode container
	// PassEnv names the forge credentials (forge.CredentialVars) workers,
	// their verifications and the worktrees' setup get all the same.
	PassEnv []string `toml:"pass_env"`
}

// Retry says how failed tasks are retried.
type Retry struct {
	MaxAttempts int      `toml:"max_attempts"`
	Backoff     Duration `toml:"backoff"` // zero retries at once; doubles each attempt
	BackoffCap  Duration `toml:"backoff_cap"`
}

// Locks says how long task locks live.
type Locks struct {
	TTL Duration `toml:"ttl"`
}

// Worktrees says where worker worktrees go and how they are prepared.
type Worktrees struct {
	Root  string `toml:"root"`  // "" puts them outside the main work tree
	Setup string `toml:"setup"` // "" runs nothing
}

// Sync says which remotes the shared state goes through.
type Sync struct {
	Remote  string `toml:"remote"`
	Arbiter string `toml:"arbiter"`
	// TrustedHosts are the hosts whose verifications this clone takes as
	// its own ("*": every host); any other host's verified work is
	// verified again here before it is merged or built on.
	TrustedHosts []string `toml:"trusted_hosts"`
}

// Rush says how a rush shares its work with other machines.
type Rush struct {
	// Remote, when set, makes every rush of this clone one host of a rush
	// spread over the clones of that remote (rush --remote).
	Remote string `toml:"remote"`
	// RemoteWait is how long such a rush waits for a remote that does not
	// answer, trying again with backoff, before it stops.
	RemoteWait Duration `toml:"remote_wait"`
	// Schedule is when a task starts: ScheduleFlow (as soon as its own
	// dependencies are merged) or ScheduleLevels (ZERG's barriers: a level
	// starts when the one before it is merged).
	Schedule string `toml:"schedule"`
	// FollowBase brings the commits of the branch staging follows (the
	// branch the first rush ran from) into staging before a rush builds
	// on it; false pins staging to where it started.
	FollowBase bool `toml:"follow_base"`
}

// Schedules a rush runs by.
const (
	ScheduleFlow   = "flow"
	ScheduleLevels = "levels"
)

// Budget stops a rush once the agents' reported spending reaches a limit;
// zero is no limit.
type Budget struct {
	MaxCostUSD float64 `toml:"max_cost_usd"`
	MaxTokens  int64   `toml:"max_tokens"`
}

// Notify runs a command on rush events, the event as JSON on its stdin.
type Notify struct {
	Command string `toml:"command"`
}

// Forge says which GitHub repository a feature's tasks are issues and pull
// requests of, and how work goes to review.
type Forge struct {
	// Repo is "owner/name"; "" takes it from the URL of sync.remote.
	Repo string `toml:"repo"`
	// API is the REST API's base URL, for GitHub Enterprise; "" is github.com's.
	API string `toml:"api"`
	// RequireIssue makes plan refuse tasks that carry no issue.
	RequireIssue bool `toml:"require_issue"`
	// Review is "" (no review: the rush's level merge makes tasks done),
	// "feature" (one pull request of staging) or "task" (one per task).
	Review string `toml:"review"`
	// Base is the branch pull requests are opened against.
	Base string `toml:"base"`
}

// Review modes of forge.review.
const (
	ReviewFeature = "feature"
	ReviewTask    = "task"
)

// Gate is a command a task's result must pass.
type Gate struct {
	Name     string   `toml:"name"`
	Command  string   `toml:"command"`
	Required bool     `toml:"required"`         // true when the file does not say
	Timeout  Duration `toml:"timeout,omitzero"` // zero when the file does not say: the caller's limit applies; omitted when written, since "0s" reads as an error
	// PassEnv names the forge credentials the gate gets: it runs the code
	// on staging, which workers wrote, so it gets none unless it says.
	PassEnv []string `toml:"pass_env,omitempty"`
}

// Config is the whole configuration file.
type Config struct {
	Workers   Workers   `toml:"workers"`
	Retry     Retry     `toml:"retry"`
	Locks     Locks     `toml:"locks"`
	Worktrees Worktrees `toml:"worktrees"`
	Sync      Sync      `toml:"sync"`
	Rush      Rush      `toml:"rush"`
	Budget    Budget    `toml:"budget"`
	Notify    Notify    `toml:"notify"`
	Forge     Forge     `toml:"forge"`
	Gates     []Gate    `toml:"gates"`
	Path      string    `toml:"-"` // file it came from; "" for defaults
}

// defaultAgent is the agent a configuration without one runs.
const defaultAgent = "claude"

// WorkerCommand is what each worker runs: workers.command when given, else
// the agent's preset.
func (c *Config) WorkerCommand() string {
	if c.Workers.Command != "" {
		return c.Workers.Command
	}
	if p, ok := agent.Lookup(c.Workers.Agent); ok {
		return p.Command
	}
	return ""
}

// Default is the configuration used when there is no file, and the base
// every file is read over.
func Default() *Config {
	return &Config{
		Workers: Workers{
			Count:          4,
			Agent:          defaultAgent,
			Timeout:        Duration(45 * time.Minute),
			StallTimeout:   Duration(10 * time.Minute),
			MaxCheckpoints: 3,
		},
		Retry: Retry{
			MaxAttempts: 3,
			Backoff:     Duration(10 * time.Second),
			BackoffCap:  Duration(5 * time.Minute),
		},
		Locks: Locks{TTL: Duration(2 * time.Hour)},
		Sync:  Sync{Remote: "origin"},
		Rush:  Rush{RemoteWait: Duration(10 * time.Minute), Schedule: ScheduleFlow, FollowBase: true},
		Forge: Forge{Base: "main"},
	}
}

// Load reads the file at path over the defaults. A missing file is not an
// error: a repository needs no configuration, so the defaults come back
// with Path "". Problems in the file come back together as Errors; a file
// that exists but cannot be read is returned as the os error.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, err
	}
	return parseConfig(path, data)
}
