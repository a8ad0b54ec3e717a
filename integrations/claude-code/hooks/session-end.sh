#!/bin/sh
# SessionEnd hook of the skillopt plugin: append one line saying that a Claude Code session
# ended (time, then the hook's JSON on one line: session id, transcript path, cwd, reason)
# to the Sleep state directory. It only records: it never starts a night or any paid call.
dir="${XDG_STATE_HOME:-$HOME/.local/state}/skillopt/sleep"
mkdir -p "$dir" || exit 0
payload=$(head -c 8192 | tr -d '\r\n')
printf '%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$payload" >> "$dir/sessions-ended.log"
exit 0
