#!/usr/bin/env bash
# `npm test`: the static checks and the suite at the same time. The suite's lanes wait on timers, calls
# and servers much of the time and leave about a third of 2 cores idle; the checks (two type checks,
# ESLint with types, Prettier: about two CPU-minutes) run at the lowest priority, so that they take
# only what the suite leaves idle instead of a minute of their own before it. Their output comes
# after the suite's, and either failing fails the command. Arguments go to Vitest.
set -uo pipefail
cd "$(dirname "$0")/.."

checks_log=$(mktemp)
# A process group of its own (setsid): Ctrl-C reaches Vitest, and the trap stops every check with it.
# setsid also makes a session, and where the kernel groups each session's processes for the scheduler
# (autogroup, Linux's default on desktops and this machine), nice weighs only within a session: the
# new session's own nice value is what makes the checks yield to the suite.
setsid bash -c 'echo 19 > /proc/self/autogroup 2>/dev/null; exec nice -n 19 npm run -s static-checks' \
  > "$checks_log" 2>&1 &
checks=$!
trap 'kill -TERM -- "-$checks" 2>/dev/null; rm -f "$checks_log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

npx vitest run "$@"
tests=$?

wait "$checks"
static=$?
echo
if [ "$static" -eq 0 ]; then
  echo "Static checks passed (type checks, ESLint, Prettier):"
else
  echo "Static checks FAILED (exit code $static):"
fi
sed 's/^/  /' "$checks_log"

if [ "$tests" -ne 0 ]; then exit "$tests"; fi
exit "$static"
