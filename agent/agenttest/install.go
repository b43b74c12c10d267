package agenttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Lockfiles is where the npm package.json and package-lock.json that pin
// the agent CLIs are, relative to the repository's root.
const Lockfiles = "testdata/agents"

// HookManagers is where the package.json and package-lock.json that pin
// the hook managers git-zerg's hooks are tested beside (husky, lefthook)
// are, relative to the repository's root; Install installs them too.
const HookManagers = "testdata/hookmanagers"

// installTimeout bounds one `npm ci` of the agent CLIs.
const installTimeout = 10 * time.Minute

// installDir is where the agent CLIs pinned by the lockfile in lockDir are
// installed: ${XDG_CACHE_HOME:-$HOME/.cache}/git-zerg/agents/<hash>, the
// hash of the lockfile's content, so that a new pin installs beside the
// old one and nothing in the repository is written.
func installDir(lockDir string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(lockDir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256(lock)
	return filepath.Join(cache, "git-zerg", "agents", hex.EncodeToString(sum[:8])), nil
}

// BinDir is the directory of the installed CLIs' commands (claude, codex,
// gemini) under an installation dir.
func BinDir(dir string) string { return filepath.Join(dir, "node_modules", ".bin") }

// installed is the file whose presence says an installation finished.
const installed = ".installed"

// Install installs the agent CLIs pinned in lockDir with `npm ci` unless
// they already are, and returns their installation directory. The install
// is made in a directory of its own beside the final one and renamed into
// place when complete, so that an interrupted or concurrent install never
// leaves a half one to be used. npm's output is returned in the error.
func Install(ctx context.Context, lockDir string) (string, error) {
	dir, err := installDir(lockDir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, installed)); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("npm is not installed: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(lockDir, f))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v\n%s", tmp, err, bytes.TrimSpace(out.Bytes()))
	}
	if err := os.WriteFile(filepath.Join(tmp, installed), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another install finished first: use that one.
		if _, serr := os.Stat(filepath.Join(dir, installed)); serr == nil {
			return dir, nil
		}
		return "", errors.Join(fmt.Errorf("installing the agent CLIs in %s", dir), err)
	}
	return dir, nil
}
