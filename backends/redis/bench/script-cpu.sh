#!/usr/bin/env bash
# Redis server time per lock cycle and per duplicate of the backend's commands, from INFO
# commandstats.
#
#   backends/redis/bench/script-cpu.sh [cycles] [rounds] [rev ...]
#
# Starts a private redis-server on an unused loopback port (so no other client's commands count;
# at nice -10 when run as root, so a busy machine preempts it less) and, for each git <rev> ("." =
# the working tree; default: "."), sends what that rev's backend sends, as RESP through
# redis-cli --pipe, in <rounds> (default 5) interleaved rounds:
#   - claims on <cycles> (default 10000) fresh keys: one EVALSHA of the claim script each, or, where
#     the rev has FastClaim.java, the claim transaction MULTI, SET NX PX GET, PEXPIRETIME, TIME, EXEC;
#   - a complete of each (EVALSHA of the complete script);
#   - a claim of each again, now DONE: the duplicate;
#   - where the rev has them, claims and completes through the batch scripts, 64 per call;
#   - as the reference, SET NX PX + DEL (what a ShedLock-style lock costs).
# Per phase it reads INFO commandstats (and resets it): "server us" is the usec of the top-level
# commands (EVALSHA, MULTI, EXEC, SET, DEL; Redis counts a script's or a transaction's inner
# commands inside its usec, so this is the time the server spent on the cycle, counted once);
# "all cmdstats us" adds every line, inner commands again, as a naive sum of INFO commandstats
# does; "commands" counts every call, top-level and inner. "server CPU" is the main thread's CPU
# time (INFO cpu, user + sys) around each phase, which also covers parsing and socket I/O. Prints
# the medians.
#
# With INSTRUCTIONS=1 the server runs under valgrind's callgrind and the CPU column is instead the
# instructions the server executed per cycle (counters zeroed before and dumped after each phase):
# slow (use ~1000 cycles) but the same on a busy machine as on an idle one.
set -euo pipefail
cycles="${1:-10000}"
rounds="${2:-5}"
shift $(( $# > 2 ? 2 : $# ))
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(.)
batch=64
res=backends/redis/src/main/resources/dev/pubsubworker/backend/redis
fast_src=backends/redis/src/main/java/dev/pubsubworker/backend/redis/FastClaim.java
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
has_fast() { # rev: whether that rev claims with the transaction
  if [ "$1" = . ]; then [ -f "$root/$fast_src" ]
  else git -C "$root" cat-file -e "$1:$fast_src" 2>/dev/null; fi
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
phase() { # command file, cycles -> "server-us all-us commands cpu-us", each per cycle
  local before after
  redis-cli -p "$port" config resetstat >/dev/null
  before=$(cpu)
  redis-cli -p "$port" --pipe < "$1" >/dev/null
  after=$(cpu)
  [ -z "$instructions" ] || before=0
  redis-cli -p "$port" info commandstats | tr -d '\r' | grep '^cmdstat_' |
    grep -v '^cmdstat_\(config\|info\|ping\)' |
    sed -E 's/^cmdstat_([a-z|]+):calls=([0-9]+),usec=([0-9]+),.*/\1 \2 \3/' |
    awk -v n="$2" -v cpu="$(echo "($after - $before) * 1000000" | bc -l)" '
      { all += $3; calls += $2 }
      $1 == "evalsha" || $1 == "eval" || $1 == "multi" || $1 == "exec" { server += $3 }
      END { printf "%.4f %.4f %.4f %.4f\n", server / n, all / n, calls / n, cpu / n }'
}
ref_phase() { # as phase, for the reference: its SET and DEL are top-level commands
  local before after
  redis-cli -p "$port" config resetstat >/dev/null
  before=$(cpu)
  redis-cli -p "$port" --pipe < "$1" >/dev/null
  after=$(cpu)
  [ -z "$instructions" ] || before=0
  redis-cli -p "$port" info commandstats | tr -d '\r' | grep '^cmdstat_\(set\|del\):' |
    sed -E 's/^cmdstat_([a-z|]+):calls=([0-9]+),usec=([0-9]+),.*/\1 \2 \3/' |
    awk -v n="$2" -v cpu="$(echo "($after - $before) * 1000000" | bc -l)" '
      { all += $3; calls += $2 }
      END { printf "%.4f %.4f %.4f %.4f\n", all / n, all / n, calls / n, cpu / n }'
}
resp() { # space-separated words per line ("" = an empty word) -> RESP multibulk, as clients send
  awk '{ printf "*%d\r\n", NF; for (i = 1; i <= NF; i++) { w = ($i == "\"\"") ? "" : $i
    printf "$%d\r\n%s\r\n", length(w), w } }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
add() { # name, "server all commands cpu": appends each figure to its list of samples
  local name="$1" s a c p
  read -r s a c p <<<"$2"
  results["$name server"]+="$s "
  results["$name all"]+="$a "
  results["$name commands"]+="$c "
  results["$name cpu"]+="$p "
}
sum() { # two "server all commands cpu" lines -> their sum
  echo "$1 $2" | awk '{ printf "%.4f %.4f %.4f %.4f\n", $1 + $5, $2 + $6, $3 + $7, $4 + $8 }'
}

declare -A results
for round in $(seq "$rounds"); do
  for rev in "${revs[@]}"; do
    p="r$round-$(echo "$rev" | tr -c 'a-zA-Z0-9\n' _)"
    shared=""
    [ -n "$(src "$rev" claim_entry.lua)" ] && shared=1
    claim_sha=$(load "$rev" claim.lua ${shared:+claim_entry.lua})
    complete_sha=$(load "$rev" complete.lua ${shared:+complete_entry.lua})
    if has_fast "$rev"; then
      awk -v n="$cycles" -v p="$p" 'BEGIN { for (i = 0; i < n; i++) {
        print "MULTI"; printf "SET %s:k:%d CLAIMED_1_300000_tok-%d NX PX 330000 GET\n", p, i, i
        printf "PEXPIRETIME %s:k:%d\n", p, i; print "TIME"; print "EXEC" } }' |
        resp | sed 's/CLAIMED_1_300000_/CLAIMED 1 300000 /' > "$work/claims"
      # The value's spaces were underscores for awk; its length did not change.
    else
      awk -v n="$cycles" -v s="$claim_sha" -v p="$p" 'BEGIN { for (i = 0; i < n; i++)
        printf "EVALSHA %s 1 %s:k:%d 0 30000 300000 tok-%d \"\" 0\n", s, p, i, i }' | resp > "$work/claims"
    fi
    awk -v n="$cycles" -v s="$complete_sha" -v p="$p" 'BEGIN { for (i = 0; i < n; i++)
      printf "EVALSHA %s 1 %s:k:%d 0 1 300000\n", s, p, i }' | resp > "$work/completes"
    claim=$(phase "$work/claims" "$cycles")
    complete=$(phase "$work/completes" "$cycles")
    # The same claims again, on the keys now DONE (other claim tokens: other deliveries).
    sed 's/tok-/tak-/' "$work/claims" > "$work/duplicates"
    duplicate=$(phase "$work/duplicates" "$cycles")
    add "$rev claim" "$claim"
    add "$rev complete" "$complete"
    add "$rev cycle" "$(sum "$claim" "$complete")"
    add "$rev duplicate" "$duplicate"
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
      add "$rev batchcycle" "$(sum "$(phase "$work/claim-all" "$cycles")" \
        "$(phase "$work/complete-all" "$cycles")")"
    fi
  done
  awk -v n="$cycles" -v r="$round" 'BEGIN { for (i = 0; i < n; i++) printf "SET s%d:%d tok-%d NX PX 30000\n", r, i, i }' | resp > "$work/set"
  awk -v n="$cycles" -v r="$round" 'BEGIN { for (i = 0; i < n; i++) printf "DEL s%d:%d\n", r, i }' | resp > "$work/del"
  add "ref cycle" "$(sum "$(ref_phase "$work/set" "$cycles")" "$(ref_phase "$work/del" "$cycles")")"
done

cpu_label="server CPU us"
[ -z "$instructions" ] || cpu_label="server instructions"
echo "redis $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/'), $cycles cycles x $rounds rounds, medians per cycle (per entry for batches)"
printf '%-12s %-34s %10s %16s %9s %20s\n' rev what "server us" "all cmdstats us" commands "$cpu_label"
row() { # rev-or-label, name, label
  local m=()
  for f in server all commands cpu; do
    m+=("$(echo "${results["$2 $f"]}" | tr ' ' '\n' | grep . | median)")
  done
  printf '%-12s %-34s %10.2f %16.2f %9.2f %20.2f\n' "$1" "$3" "${m[@]}"
}
for rev in "${revs[@]}"; do
  row "$rev" "$rev claim" "claim, fresh key"
  row "$rev" "$rev complete" "complete"
  row "$rev" "$rev cycle" "lock cycle (claim + complete)"
  row "$rev" "$rev duplicate" "duplicate (claim on DONE)"
  [ -z "${results["$rev batchcycle server"]:-}" ] ||
    row "$rev" "$rev batchcycle" "lock cycle, batched x$batch"
done
row reference "ref cycle" "SET NX PX + DEL"
