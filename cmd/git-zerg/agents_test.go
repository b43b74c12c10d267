package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-zerg/git-zerg/agent/agenttest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestAgents runs the scripts in testdata/agents/*.txtar with the real
// agent CLIs the presets start (Claude Code, Codex CLI, Gemini CLI, at the
// versions testdata/agents/package-lock.json pins), each pointed at a
// scripted model server of agenttest on 127.0.0.1: no account, and no
// request leaves the machine (every proxy variable names a local port
// that refuses and records, telemetry and update checks are off). The CLIs are installed with npm
// into a cache outside the repository when missing; the test skips,
// saying why, only when npm cannot install them.
func TestAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("the agent CLIs start slowly: not in -short")
	}
	lockDir := filepath.Join("..", "..", agenttest.Lockfiles)
	dir, err := agenttest.Install(context.Background(), lockDir)
	if err != nil {
		t.Skipf("agent CLIs not installed, and npm could not install them: %v", err)
	}
	bin := agenttest.BinDir(dir)
	files, err := filepath.Glob(filepath.Join(lockDir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, f := range files {
		p := scriptParams(t, "")
		p.Files = []string{f}
		p.WorkdirRoot = t.TempDir()
		setup := p.Setup
		p.Setup = func(env *testscript.Env) error {
			if err := setup(env); err != nil {
				return err
			}
			return agentEnv(env, bin)
		}
		p.Cmds["modelserver"] = cmdModelserver
		p.Cmds["modelsummary"] = cmdModelsummary
		p.Cmds["contains"] = cmdContains
		p.Cmds["egress"] = cmdEgress
		testscript.Run(t, p)
	}
}

// agentEnv gives a script the agent CLIs on PATH, keys that no provider
// knows, and every way out of the machine closed: each proxy variable
// names a local listener that refuses whatever it is asked and keeps the
// request's first line for egress.
func agentEnv(env *testscript.Env, bin string) error {
	env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
	p, err := startProxy()
	if err != nil {
		return err
	}
	env.Values["egress"] = p
	env.Defer(p.close)
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env.Setenv(v, "http://"+p.ln.Addr().String())
	}
	env.Setenv("NO_PROXY", "127.0.0.1,localhost")
	env.Setenv("no_proxy", "127.0.0.1,localhost")
	h := &modelHolder{}
	env.Values["modelserver"] = h
	env.Defer(func() {
		if h.s != nil {
			h.s.Close()
		}
	})
	home := env.Getenv("HOME")
	// Claude Code: no update, telemetry, error reports or other traffic.
	env.Setenv("ANTHROPIC_API_KEY", "sk-ant-zerg-test-key")
	env.Setenv("DISABLE_AUTOUPDATER", "1")
	env.Setenv("DISABLE_TELEMETRY", "1")
	env.Setenv("DISABLE_ERROR_REPORTING", "1")
	env.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	// Codex: its configuration (the provider is written by modelserver).
	env.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	env.Setenv("ZERG_TEST_OPENAI_KEY", "sk-zerg-test-key")
	// Gemini CLI: an API key, no telemetry, statistics or update check.
	env.Setenv("GEMINI_API_KEY", "gemini-zerg-test-key")
	gemini := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(gemini, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(gemini, "settings.json"), []byte(`{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "telemetry": {"enabled": false},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}
`), 0o644)
}

// modelserver API SCRIPT: serve API (anthropic, openai, gemini) on
// 127.0.0.1 with the steps of SCRIPT (agenttest.ParseScript), its log
// under $WORK/server, and point the API's CLI at it; a server the script
// started before is stopped first, and the last when the script ends.
func cmdModelserver(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: modelserver API SCRIPT")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	script, err := agenttest.ParseScript(b)
	ts.Check(err)
	h := modelServers(ts)
	if h.s != nil {
		ts.Check(h.s.Close())
		h.s = nil
	}
	dir := ts.MkAbs("server")
	ts.Check(os.RemoveAll(dir))
	s, err := agenttest.Start(args[0], script, dir)
	ts.Check(err)
	h.s = s
	switch args[0] {
	case agenttest.Anthropic:
		ts.Setenv("ANTHROPIC_BASE_URL", s.URL())
	case agenttest.OpenAI:
		home := ts.Getenv("CODEX_HOME")
		ts.Check(os.MkdirAll(home, 0o755))
		ts.Check(os.WriteFile(filepath.Join(home, "config.toml"), []byte(fmt.Sprintf(`model_provider = "zerg"
check_for_update_on_startup = false

[analytics]
enabled = false

# Plugins would fetch ChatGPT's catalog and sync curated plugins from
# GitHub at every start.
[features]
plugins = false

[model_providers.zerg]
name = "zerg"
base_url = "%s/v1"
env_key = "ZERG_TEST_OPENAI_KEY"
wire_api = "responses"
`, s.URL())), 0o644))
	case agenttest.Gemini:
		ts.Setenv("GOOGLE_GEMINI_BASE_URL", s.URL())
	}
}

// modelsummary FILE: write the server's summary of what the CLI sent
// (agenttest's Summary) to FILE, for cmp against a golden one, and set
// MODEL_INPUT_TOKENS and MODEL_OUTPUT_TOKENS to the tokens its answers
// reported and MODEL_AGENT_REQUESTS to the number of the agent's own
// requests (its turns; side requests such as a model router's are not).
func cmdModelsummary(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: modelsummary FILE")
	}
	h := modelServers(ts)
	if h.s == nil {
		ts.Fatalf("modelsummary: no modelserver")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(h.s.Summary()), 0o644))
	in, out := h.s.Usage()
	ts.Setenv("MODEL_INPUT_TOKENS", fmt.Sprint(in))
	ts.Setenv("MODEL_OUTPUT_TOKENS", fmt.Sprint(out))
	ts.Setenv("MODEL_AGENT_REQUESTS", fmt.Sprint(h.s.AgentRequests()))
}

// contains FILE PART: FILE holds the bytes of file PART, whole, somewhere
// (a prompt that reached the model intact, among what the CLI adds).
func cmdContains(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: contains FILE PART")
	}
	whole, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	part, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	if len(part) == 0 {
		ts.Fatalf("contains: %s is empty", args[1])
	}
	if got := strings.Contains(string(whole), string(part)); got == neg {
		if neg {
			ts.Fatalf("%s holds %s", args[0], args[1])
		}
		ts.Fatalf("%s (%d bytes) does not hold %s (%d bytes) whole", args[0], len(whole), args[1], len(part))
	}
}

type modelHolder struct{ s *agenttest.Server }

func modelServers(ts *testscript.TestScript) *modelHolder {
	h, _ := ts.Value("modelserver").(*modelHolder)
	if h == nil {
		ts.Fatalf("modelserver: not set up")
	}
	return h
}

// refusingProxy is where the proxy variables point: every request an agent
// sends it would have left 127.0.0.1. It answers 403 and notes the
// request's first line (CONNECT host:port, or the URL asked for).
type refusingProxy struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []string
}

func startProxy() (*refusingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &refusingProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				p.mu.Lock()
				p.seen = append(p.seen, strings.TrimSpace(line))
				p.mu.Unlock()
				io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}()
		}
	}()
	return p, nil
}

func (p *refusingProxy) close() {
	p.ln.Close()
	p.wg.Wait()
}

// egress: fail, naming them, if the agents sent the proxy any request:
// what would have left 127.0.0.1.
func cmdEgress(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: egress")
	}
	p, _ := ts.Value("egress").(*refusingProxy)
	if p == nil {
		ts.Fatalf("egress: no proxy")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) > 0 {
		ts.Fatalf("requests that would have left 127.0.0.1 (the proxy refused them):\n%s", strings.Join(p.seen, "\n"))
	}
}
