#!/usr/bin/env bash
# Redis server CPU per lock cycle of the backend's Lua scripts, from INFO commandstats.
#
#   backends/redis/bench/script-cpu.sh [cycles] [rounds] [rev ...]
#
# Starts a private redis-server on an unused loopback port (so no other client's commands count;
# at nice -10 when run as root, so a busy machine preempts it less), loads the scripts of each git
# <rev> ("." = the working tree; default: ".") exactly as LockScript composes them, and, in <rounds>
# (default 5) interleaved rounds, pipes <cycles> (default 10000) claims on fresh keys and then one
# complete each, then (where the rev has them) the same through the batch scripts in batches of 64,
# as RESP through redis-cli --pipe.
# After each phase it reads cmdstat_evalsha from INFO commandstats (usec/calls: the time spent
# inside the script calls) and resets the stats. A plain SET NX PX + DEL cycle (what a
# ShedLock-style lock costs) is measured too, as the reference. Also reads the server's main-thread
# CPU time (INFO cpu, user + sys) around each phase: that includes parsing the commands and the
# socket I/O, and is not inflated when the machine preempts the server. Prints the medians.
#
# With INSTRUCTIONS=1 the server runs under valgrind's callgrind and the CPU column is instead the
# instructions the server executed per cycle (counters zeroed before and dumped after each phase):
# slow (use ~2000 cycles) but the same on a busy machine as on an idle one.
set -euo pipefail
cycles="${1:-10000}"
rounds="${2:-5}"
shift $(( $# > 2 ? 2 : $# ))
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(.)
batch=64
res=backends/redis/src/main/resources/dev/pubsubworker/backend/redis
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
work="$(mktemp -d)"
port=$(( 31000 + RANDOM % 2000 ))
while redis-cli -p "$port" ping >/dev/null 2>&1; do port=$(( 31000 + RANDOM % 2000 )); done
cleanup() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

nice_cmd=()
[ "$(id -u)" = 0 ] && nice_cmd=(nice -n -10)
instructions="${INSTRUCTIONS:-}"
if [ -n "$instructions" ]; then
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" redis-server --port "$port" \
    --bind 127.0.0.1 --save '' --appendonly no --dir "$work" > "$work/valgrind.log" 2>&1 &
else
  "${nice_cmd[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --logfile "$work/redis.log" --dir "$work" >/dev/null
fi
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
pid=$(redis-cli -p "$port" info server | tr -d '\r' | awk -F: '/^process_id:/ { print $2 }')

src() { # rev, resource: the text of one script resource ("" if it does not exist there)
  if [ "$1" = . ]; then cat "$root/$res/$2" 2>/dev/null || true
  else git -C "$root" show "$1:$res/$2" 2>/dev/null || true; fi
}
load() { # rev, body, parts...: SCRIPT LOAD of prelude + parts + body, as LockScript composes it
  local rev="$1" body="$2" out="$work/script" part
  shift 2
  src "$rev" prelude.lua > "$out"
  for part in "$@"; do printf '\n' >> "$out"; src "$rev" "$part" >> "$out"; done
  printf '\n' >> "$out"
  src "$rev" "$body" >> "$out"
  redis-cli -p "$port" -x script load < "$out"
}
cpu() { # the server's main-thread CPU seconds so far (user + sys); or, under callgrind, the
  # instructions since the last call (in millions, so that the same "* 1000000" gives the count)
  if [ -n "$instructions" ]; then
    callgrind_control -d "$pid" >/dev/null 2>&1
    callgrind_control -z "$pid" >/dev/null 2>&1
    awk '/^summary:/ { n = $2 } END { printf "%.6f", n / 1000000 }' "$(ls -t "$work"/cg.*.* | head -1)"
    rm -f "$work"/cg.*.*
  else
    redis-cli -p "$port" info cpu | tr -d '\r' |
      awk -F: '/^used_cpu_(user|sys)_main_thread:/ { s += $2 } END { printf "%.6f", s }'
  fi
}
phase() { # command file, command name -> "usec calls cpu-usec"
  local before after
  redis-cli -p "$port" config resetstat >/dev/null
  before=$(cpu)
  redis-cli -p "$port" --pipe < "$1" >/dev/null
  after=$(cpu)
  [ -z "$instructions" ] || before=0
  redis-cli -p "$port" info commandstats | tr -d '\r' | grep "^cmdstat_$2:" |
    sed -E 's/.*calls=([0-9]+),usec=([0-9]+),.*/\2 \1/' | tr -d '\n'
  echo " $(echo "($after - $before) * 1000000" | bc -l)"
}
resp() { # space-separated words per line ("" = an empty word) -> RESP multibulk, as clients send
  awk '{ printf "*%d\r\n", NF; for (i = 1; i <= NF; i++) { w = ($i == "\"\"") ? "" : $i
    printf "$%d\r\n%s\r\n", length(w), w } }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A results
for round in $(seq "$rounds"); do
  for rev in "${revs[@]}"; do
    p="r$round-$(echo "$rev" | tr -c 'a-zA-Z0-9\n' _)"
    shared=""
    [ -n "$(src "$rev" claim_entry.lua)" ] && shared=1
    claim_sha=$(load "$rev" claim.lua ${shared:+claim_entry.lua})
    complete_sha=$(load "$rev" complete.lua ${shared:+complete_entry.lua})
    awk -v n="$cycles" -v s="$claim_sha" -v p="$p" 'BEGIN { for (i = 0; i < n; i++)
      printf "EVALSHA %s 1 %s:k:%d 0 30000 300000 tok-%d \"\" 0\n", s, p, i, i }' | resp > "$work/claims"
    awk -v n="$cycles" -v s="$complete_sha" -v p="$p" 'BEGIN { for (i = 0; i < n; i++)
      printf "EVALSHA %s 1 %s:k:%d 0 1 300000\n", s, p, i }' | resp > "$work/completes"
    read -r u c p1 <<<"$(phase "$work/claims" evalsha)"
    results["$rev claim"]+="$(echo "$u / $c" | bc -l) "
    read -r u2 c2 p2 <<<"$(phase "$work/completes" evalsha)"
    results["$rev complete"]+="$(echo "$u2 / $c2" | bc -l) "
    results["$rev cycle"]+="$(echo "$u / $c + $u2 / $c2" | bc -l) "
    results["$rev cpucycle"]+="$(echo "($p1 + $p2) / $cycles" | bc -l) "
    if [ -n "$(src "$rev" claim_all.lua)" ]; then
      ca_sha=$(load "$rev" claim_all.lua claim_entry.lua)
      oa_sha=$(load "$rev" complete_all.lua complete_entry.lua)
      for kind in claim complete; do
        awk -v n="$cycles" -v b="$batch" -v s="$([ $kind = claim ] && echo "$ca_sha" || echo "$oa_sha")" \
          -v p="$p" -v kind="$kind" 'BEGIN { for (i = 0; i < n; i += b) {
          m = (n - i < b) ? n - i : b; line = "EVALSHA " s " " m
          for (j = 0; j < m; j++) line = line " " p ":b:" (i + j)
          line = line " 0"
          for (j = 0; j < m; j++)
            line = line (kind == "claim" ? " 30000 300000 tok-" (i + j) " \"\" 0" : " 1 300000")
          printf "%s\n", line } }' | resp > "$work/$kind-all"
      done
      read -r u c p1 <<<"$(phase "$work/claim-all" evalsha)"
      read -r u2 c2 p2 <<<"$(phase "$work/complete-all" evalsha)"
      results["$rev cpubatch"]+="$(echo "($p1 + $p2) / $cycles" | bc -l) "
      results["$rev claimAll"]+="$(echo "$u / $cycles" | bc -l) "
      results["$rev completeAll"]+="$(echo "$u2 / $cycles" | bc -l) "
      results["$rev batchcycle"]+="$(echo "($u + $u2) / $cycles" | bc -l) "
    fi
  done
  awk -v n="$cycles" -v r="$round" 'BEGIN { for (i = 0; i < n; i++) printf "SET s%d:%d tok-%d NX PX 30000\n", r, i, i }' | resp > "$work/set"
  awk -v n="$cycles" -v r="$round" 'BEGIN { for (i = 0; i < n; i++) printf "DEL s%d:%d\n", r, i }' | resp > "$work/del"
  read -r u c p1 <<<"$(phase "$work/set" set)"
  read -r u2 c2 p2 <<<"$(phase "$work/del" del)"
  results["ref"]+="$(echo "$u / $c + $u2 / $c2" | bc -l) "
  results["cpuref"]+="$(echo "($p1 + $p2) / $cycles" | bc -l) "
done

echo "redis $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/'), $cycles cycles x $rounds rounds, median us of Redis time inside the calls (INFO commandstats)"
for rev in "${revs[@]}"; do
  for what in claim complete cycle cpucycle claimAll completeAll batchcycle cpubatch; do
    [ -n "${results["$rev $what"]:-}" ] || continue
    label="$what"
    case $what in
      claim) label="claim (1 EVALSHA)";; complete) label="complete (1 EVALSHA)";;
      cycle) label="lock cycle, single verbs";; claimAll) label="claimAll x$batch, per entry";;
      completeAll) label="completeAll x$batch, per entry";; batchcycle) label="lock cycle, batched x$batch";;
      cpucycle) label="  server CPU per single cycle";; cpubatch) label="  server CPU per batched cycle";;
    esac
    unit=us
    case $what in
      cpucycle|cpubatch) if [ -n "$instructions" ]; then unit=instr; label="${label/CPU/instructions}"; fi;;
    esac
    printf '%-12s %-32s %10.2f %s\n' "$rev" "$label" \
      "$(echo "${results["$rev $what"]}" | tr ' ' '\n' | grep . | median)" "$unit"
  done
done
printf '%-12s %-32s %10.2f us\n' reference "SET NX PX + DEL cycle" \
  "$(echo "${results[ref]}" | tr ' ' '\n' | grep . | median)"
what="CPU" unit=us
[ -z "$instructions" ] || { what=instructions; unit=instr; }
printf '%-12s %-32s %10.2f %s\n' reference "  server $what per SET+DEL cycle" \
  "$(echo "${results[cpuref]}" | tr ' ' '\n' | grep . | median)" "$unit"
