#!/bin/sh
# The git work a rush does, as a plain script: the yardstick of
# BenchmarkRush. For each level, WORKERS worktrees each take tasks in turn:
# reset to staging, write the task's file, commit, run the verification;
# then every commit is merged into staging with merge-tree + commit-tree
# and staging moves with one update-ref. No state, no gates, no checks.
# usage: plain_rush.sh REPO TASKS LEVELS WORKERS
set -eu
repo=$1 tasks=$2 levels=$3 workers=$4
per=$((tasks / levels))
cd "$repo"
git update-ref refs/heads/plain/staging HEAD
for w in $(seq 1 "$workers"); do
  git worktree add -q -B "plain/worker-$w" "../plain-wt-$w" plain/staging
done
for l in $(seq 1 "$levels"); do
  tip=$(git rev-parse plain/staging)
  for w in $(seq 1 "$workers"); do
    (
      cd "../plain-wt-$w"
      i=$w
      while [ "$i" -le "$per" ]; do
        id="L${l}T$i"
        git reset -q --hard "$tip"
        echo "$id" > "$id.txt"
        git add "$id.txt"
        git commit -q -m "$id"
        test -f "$id.txt"
        git rev-parse HEAD >> "../plain-commits-$l"
        i=$((i + workers))
      done
    ) &
  done
  wait
  cur=$tip
  for c in $(cat "../plain-commits-$l"); do
    tree=$(git merge-tree --write-tree "$cur" "$c")
    cur=$(git commit-tree "$tree" -p "$cur" -p "$c" -m merge)
  done
  git update-ref refs/heads/plain/staging "$cur" "$tip"
done
