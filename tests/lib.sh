# lib.sh — sourced by every tests/*.test.sh: counting checks, skipping, and
# the closing line tests/run.sh reads.
#
#   t_init NAME            the suite's name (for the closing line); PASS=0 FAIL=0
#   ok [WHAT]              one check passed ("ok: WHAT" when WHAT is given)
#   bad WHAT               one check failed ("FAIL: WHAT")
#   expect WHAT GOT WANT   ok when GOT equals WANT, else FAIL with both
#   check CMD...           ok when CMD succeeds, else one failure (CMD prints why)
#   skip REASON            the whole suite cannot run: "SKIP: REASON", the
#                          closing line, exit 0
#   skip_part REASON       a part of the suite cannot run: "SKIP: REASON", and
#                          the suite goes on
#   finish                 "NAME: P passed, F failed"; exits 0 when nothing failed
#
# Every missing fixture, tool or package that leaves a check out says so with a
# SKIP line: a suite never passes by running nothing without telling.
set -u
T_NAME=${T_NAME:-$(basename "$0" .test.sh)}
PASS=0; FAIL=0

t_init() { T_NAME=$1; PASS=0; FAIL=0; }
ok() { [ $# -gt 0 ] && echo "ok: $*"; PASS=$((PASS+1)); return 0; }
bad() { echo "FAIL: $*"; FAIL=$((FAIL+1)); return 0; }
expect() { # what, got, want
  if [ "$2" = "$3" ]; then PASS=$((PASS+1))
  else FAIL=$((FAIL+1)); printf 'FAIL: %s\n  got:  %s\n  want: %s\n' "$1" "$2" "$3"; fi
}
check() { if "$@"; then PASS=$((PASS+1)); else FAIL=$((FAIL+1)); fi; }
skip() { echo "SKIP: $*"; echo "$T_NAME: 0 passed, 0 failed"; exit 0; }
skip_part() { echo "SKIP: $*"; }
finish() { echo "$T_NAME: $PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; exit $?; }
