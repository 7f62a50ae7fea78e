#!/usr/bin/env bash
# `npm test`: the static checks and the suite at the same time. The suite's lanes wait on timers, calls
# and servers much of the time and leave part of 2 cores idle; the checks (two type checks, ESLint
# with types, Prettier: about two CPU-minutes) run at the lowest priority, so that they take only what
# the suite leaves idle instead of a minute of their own before it. Their output comes after the
# suite's, and either failing fails the command. Arguments go to Vitest.
set -uo pipefail
cd "$(dirname "$0")/.."

checks_log=$(mktemp)
# Where the kernel groups each session's processes for the scheduler (autogroup: Linux's default on
# desktops, and on this project's CI machine), nice weighs only within a session, so the checks get a
# session of their own (setsid) whose own nice value makes them yield to the suite. setsid also makes
# them a process group, which the EXIT trap stops as a whole. Without setsid (macOS), plain nice.
if command -v setsid > /dev/null; then
  setsid bash -c 'echo 19 > /proc/self/autogroup 2> /dev/null || echo "(run without a session priority)"
    exec nice -n 19 npm run -s static-checks' > "$checks_log" 2>&1 &
  checks=$!
  stop_checks() { kill -TERM -- "-$checks" 2> /dev/null; }
else
  nice -n 19 npm run -s static-checks > "$checks_log" 2>&1 &
  checks=$!
  stop_checks() { kill -TERM "$checks" 2> /dev/null; }
fi
trap 'stop_checks; rm -f "$checks_log"' EXIT

# Vitest in the background, so that a signal sent to this script alone (kill, or npm passing one on)
# is handled at once and handed to Vitest; a terminal's Ctrl-C reaches both.
./node_modules/.bin/vitest run "$@" &
vitest=$!
interrupted=0
trap 'interrupted=130; kill -INT "$vitest" 2> /dev/null' INT
trap 'interrupted=143; kill -TERM "$vitest" 2> /dev/null' TERM
wait "$vitest"
tests=$?
# A trapped signal ends the wait early: wait for Vitest itself to end.
while kill -0 "$vitest" 2> /dev/null; do
  wait "$vitest"
  tests=$?
done
if [ "$interrupted" -ne 0 ]; then exit "$interrupted"; fi

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
