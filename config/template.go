package config

// Template is the config.toml that `git zerg init` writes: every key with
// its default, so that the file documents itself, and the gates example
// commented out because no gate suits every repository. It parses to
// Default(); a test holds it to that.
const Template = `# git zerg configuration. Every key is optional; the values shown are the defaults.

[workers]
# How many workers run at once, 1 to 256.
count = 4
# The coding agent each worker runs headless: claude, codex, gemini, aider, or
# custom (then command is required). Each preset can edit files unattended.
agent = "claude"
# What each worker runs instead of the agent's preset, by sh in its worktree;
# $ZERG_PROMPT_FILE holds the task prompt.
command = ""
# How long a worker may spend on one task before it is stopped.
timeout = "45m"
# How long a worker may go without output and without a change in its
# worktree before it is stopped and its attempt failed; "0s" never.
stall_timeout = "10m"
# How many checkpoints a worker may make on one task.
max_checkpoints = 3
# Container image the workers run in with --mode container.
image = ""
# Forge credentials (GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN,
# GITHUB_ENTERPRISE_TOKEN) that workers, their verifications and the
# worktrees' setup get all the same; by default they get none of them.
pass_env = []

[retry]
# How many times a task is tried before it is blocked.
max_attempts = 3
# Wait before the first retry; it doubles with each attempt.
backoff = "10s"
# The longest the wait between retries grows to.
backoff_cap = "5m"

[locks]
# How long a lock lasts unless its holder renews it.
ttl = "2h"

[worktrees]
# Directory for the workers' worktrees; empty puts them outside the main work tree.
root = ""
# Command run by sh in each new worktree, e.g. "npm ci"; empty runs nothing.
setup = ""

[sync]
# Remote the shared state is pushed to and fetched from.
remote = "origin"
# Remote that settles competing updates, e.g. "origin"; empty for none.
arbiter = ""
# Hosts whose verifications are taken as this clone's own ("*": all); the
# verified work of any other host is verified again here before it is merged.
trusted_hosts = []

[rush]
# Remote a rush is shared through, e.g. "origin": each clone that runs the rush
# is a host claiming through it; empty runs the rush on this machine alone.
remote = ""
# How long such a rush waits for a remote that does not answer (trying again
# with backoff) before it stops.
remote_wait = "10m"
# When a task starts: "flow" as soon as the tasks it depends on are merged
# into staging and passed the gates; "levels" when its whole level may start
# (every task of the levels before it merged).
schedule = "flow"
# Bring the new commits of the branch staging follows (the one the first rush
# ran from) into staging, merged and gated, before a rush builds on it.
follow_base = true

[budget]
# Stop claiming once the agents' reported cost reaches this many dollars; 0 is no limit.
max_cost_usd = 0.0
# Stop claiming once the agents' reported tokens reach this many; 0 is no limit.
max_tokens = 0

[notify]
# Command run on rush events (task blocked, escalation, level merged, budget
# reached, rush ended), the event as JSON on its stdin; empty runs nothing.
command = ""

[forge]
# The GitHub repository as "owner/name"; empty takes it from sync.remote's URL.
repo = ""
# The REST API's base URL, for GitHub Enterprise; empty is github.com's.
api = ""
# Refuse to plan tasks that carry no issue number.
require_issue = false
# Review before done: "feature" (one pull request of staging), "task" (one per
# task), or empty (none: the level merge makes tasks done).
review = ""
# The branch pull requests are opened against.
base = "main"

# Gates are commands a task's result must pass. Repeat the block for each gate.
# [[gates]]
# name = "test"              # unique name of the gate
# command = "go test ./..."  # run by sh in the worktree
# required = true            # false: a failure is reported but does not fail the task
# timeout = "10m"            # how long the gate may run
# pass_env = []              # forge credentials the gate gets (by default none)
`
