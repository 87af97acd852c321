#!/usr/bin/env bash
# Client CPU (and the PostgreSQL backend's) per store call of the SQL backend as built from each
# given git <rev> ("." = the working tree; default: main .), side by side in one JVM.
#
#   backends/sql/bench/statement-timeout-cpu.sh [duplicates] [cycles] [rounds] [rev ...]
#
# Compiles backends/sql's main sources of each rev against worker-core's classes of the working
# tree (build them first: ./mvnw -B -q -o verify -pl backends/sql -am -DskipTests) and runs
# StatementTimeoutCpu.java, which loads each build in a class loader of its own over one HikariCP
# pool of a single connection (one server backend for all; synchronous_commit off, so the loop is
# CPU-bound) and, in <rounds> (default 5) interleaved rounds after a warm-up round, times
# <duplicates> (default 20000) claims on a DONE key (one read-only statement each) and <cycles>
# (default 5000) claim + complete cycles on fresh keys. Per call: the JVM's process CPU (every
# thread: the caller, pgjdbc's timer, GC, JIT), the calling thread's CPU, the server backend's CPU
# (/proc/PID/stat, 10 ms ticks) and wall time; then the medians and their ratios to the first rev.
# PostgreSQL from POSTGRES_URL / POSTGRES_USER (default jdbc:postgresql://127.0.0.1:5432/test,
# postgres); the tables are dropped at the end.
set -euo pipefail
duplicates="${1:-20000}"
cycles="${2:-5000}"
rounds="${3:-5}"
shift $(( $# > 3 ? 3 : $# ))
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(main .)
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
m2="${MAVEN_REPO:-$HOME/.m2/repository}"
version() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$root/pom.xml" | head -1; }
deps="$root/worker-core/target/classes"
deps+=":$m2/org/slf4j/slf4j-api/$(version slf4j.version)/slf4j-api-$(version slf4j.version).jar"
deps+=":$m2/org/jspecify/jspecify/$(version jspecify.version)/jspecify-$(version jspecify.version).jar"
deps+=":$m2/com/zaxxer/HikariCP/$(version hikaricp.version)/HikariCP-$(version hikaricp.version).jar"
deps+=":$m2/org/postgresql/postgresql/$(version postgresql.version)/postgresql-$(version postgresql.version).jar"
[ -d "$root/worker-core/target/classes" ] || { echo "build worker-core first" >&2; exit 1; }
variants=()
for rev in "${revs[@]}"; do
  label="$rev"
  src="$work/src-$(echo "$rev" | tr -c 'a-zA-Z0-9\n' _)"
  mkdir -p "$src"
  if [ "$rev" = . ]; then
    label=tree
    cp -r "$root/backends/sql/src/main" "$src/"
  else
    git -C "$root" archive "$rev" backends/sql/src/main | tar -x -C "$src" --strip-components=3
  fi
  out="$src/classes"
  mkdir -p "$out"
  javac -nowarn -d "$out" -cp "$deps" $(find "$src/main/java" -name '*.java')
  cp -r "$src/main/resources/." "$out/"
  variants+=("$label=$out")
done
javac -d "$work/harness" -cp "$deps" "$root/backends/sql/bench/StatementTimeoutCpu.java"
java -Xms256m -Xmx256m -cp "$work/harness:$deps" StatementTimeoutCpu \
  "${POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test}" "${POSTGRES_USER:-postgres}" \
  "$duplicates" "$cycles" "$rounds" "${variants[@]}"
