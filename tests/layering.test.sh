#!/usr/bin/env bash
# layering.test.sh — the include graph of src/ follows the layers:
#
#   core (and include/wick.h)  <  kernels, format  <  kv, text, template, grammar
#     <  model  <  engine, tools  <  serve, cli
#
# A file may include headers of its own layer and of the layers below it,
# never of a layer above. Two more rules: no include cycle (file by file)
# whose files lie in different folders, and no two folders that include each
# other (through any chain). Every folder of src/ must have a layer here.
#
# With the objects of a build ($WICK_BUILD/obj/src, or build/obj/src) it also
# checks the calls: no object of a layer uses a symbol defined only in an
# object of a layer above it (calls through include/wick.h included, which
# the include graph cannot see).
#
# The checker is tested on a temporary copy of the tree with a planted upward
# include, a planted cycle and a planted upward call: each must be caught.
#
# Usage: tests/layering.test.sh [ROOT]   (ROOT holds src/ and include/; default .)
#   tests/layering.test.sh --check ROOT  prints the violations only; status 1 if any
set -u
. "$(dirname "$0")/lib.sh"

LAYERS="core:0 kernels:1 format:1 kv:2 text:2 template:2 grammar:2 model:3 engine:4 tools:4 serve:5 cli:5"

# include_violations ROOT: one line per violation of the include rules
include_violations() {
  local root=$1
  (
    cd "$root" || exit 2
    {
      find src include -type f \( -name '*.c' -o -name '*.h' \) | sed 's/^/F /'
      find src include -type f \( -name '*.c' -o -name '*.h' \) -print0 |
        xargs -0 grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' | sed 's/^/I /'
    } | awk -v layers="$LAYERS" '
      function folder(f,   p) {
        if (f ~ /^include\//) return "include"
        split(f, p, "/"); return p[2]
      }
      function layer(d) { return d == "include" ? 0 : (d in L ? L[d] : -1) }
      BEGIN {
        n = split(layers, a, " ")
        for (i = 1; i <= n; i++) { split(a[i], kv, ":"); L[kv[1]] = kv[2] + 0 }
      }
      $1 == "F" { exists[$2] = 1; nf++; next }
      $1 == "I" {
        rest = substr($0, 3)
        i = index(rest, ":"); file = substr(rest, 1, i - 1); rest = substr(rest, i + 1)
        i = index(rest, ":"); ln = substr(rest, 1, i - 1); rest = substr(rest, i + 1)
        if (!match(rest, /"[^"]+"/)) next
        h = substr(rest, RSTART + 1, RLENGTH - 2)
        dir = file; sub(/\/[^\/]*$/, "", dir)
        if ((dir "/" h) in exists) t = dir "/" h
        else if (("include/" h) in exists) t = "include/" h
        else if (("src/" h) in exists) t = "src/" h
        else { printf "%s:%s: includes \"%s\", which is no file of src/ or include/\n", file, ln, h; next }
        nin++
        if (!((file, t) in edge)) { edge[file, t] = file ":" ln; succ[file] = succ[file] " " t }
        df = folder(file); dt = folder(t)
        if (df != dt && !((df, dt) in fedge)) { fedge[df, dt] = file ":" ln " includes " t; fsucc[df] = fsucc[df] " " dt; folders[df]; folders[dt] }
        if (layer(df) < 0 || layer(dt) < 0) next
        if (layer(dt) > layer(df))
          printf "%s:%s: %s (layer %d) includes %s of %s (layer %d): upward\n", file, ln, df, layer(df), t, dt, layer(dt)
      }
      # reach[u, v]: v reachable from u through succ (of edges: files; fedges: folders)
      function reach_from(u, adj, R,   stack, top, x, k, nx, s) {
        top = 1; stack[1] = u
        while (top > 0) {
          x = stack[top--]
          nx = split(adj[x], s, " ")
          for (k = 1; k <= nx; k++)
            if (!((u, s[k]) in R)) { R[u, s[k]] = 1; stack[++top] = s[k] }
        }
      }
      END {
        for (f in exists) { d = folder(f); if (d != "include" && !(d in L) && !(d in told)) { told[d]; printf "src/%s/: a folder with no layer (add it to LAYERS in tests/layering.test.sh)\n", d } }
        # files: a cycle whose files lie in different folders
        for (u in succ) reach_from(u, succ, R)
        for (key in edge) {
          split(key, p, SUBSEP); u = p[1]; v = p[2]
          if (folder(u) != folder(v) && ((v, u) in R))
            printf "%s: include cycle across folders: %s includes %s, which leads back to it\n", edge[key], u, v
        }
        # folders: two folders that include each other
        for (d in folders) reach_from(d, fsucc, FR)
        for (key in fedge) {
          split(key, p, SUBSEP); fa = p[1]; fb = p[2]
          if (fa < fb && ((fb, fa) in FR)) printf "folders %s and %s include each other: %s; back: %s\n", fa, fb, fedge[key], ((fb, fa) in fedge) ? fedge[fb, fa] : "through other folders"
          else if (fa > fb && ((fb, fa) in FR) && !((fb, fa) in fedge)) printf "folders %s and %s include each other: %s; back: through other folders\n", fb, fa, fedge[key]
        }
        printf "#files %d includes %d\n", nf, nin + 0 > "/dev/stderr"
      }'
  )
}

# symbol_violations OBJDIR [ROOT]: one line per object that uses a symbol
# defined only above its layer (with ROOT: objects of sources ROOT/src has)
symbol_violations() {
  local obj=$1 srcroot=${2:-} o d rel
  for o in "$obj"/*/*.o; do
    rel=${o#"$obj"/}
    # an object whose source is gone (a file moved since the build) is left out
    [ -n "$srcroot" ] && [ ! -f "$srcroot/src/${rel%.o}.c" ] && continue
    d=$(basename "$(dirname "$o")")
    nm -P --defined-only "$o" 2>/dev/null | awk -v d="$d" -v o="${o#"$obj"/}" '$2 ~ /^[TDBRVW]$/ {print "D", $1, d, o}'
    nm -P --undefined-only "$o" 2>/dev/null | awk -v d="$d" -v o="${o#"$obj"/}" '{print "U", $1, d, o}'
  done | awk -v layers="$LAYERS" '
    BEGIN { n = split(layers, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, ":"); L[kv[1]] = kv[2] + 0 } }
    $1 == "D" { lo = ($2 in low) ? low[$2] : 99; if (!($3 in L)) next
                if (L[$3] < lo) { low[$2] = L[$3]; where[$2] = $4 } next }
    $1 == "U" { use[++nu] = $2 SUBSEP $3 SUBSEP $4 }
    END {
      for (i = 1; i <= nu; i++) {
        split(use[i], u, SUBSEP); s = u[1]; d = u[2]
        if (!(s in low) || !(d in L)) continue
        if (low[s] > L[d] && !((u[3], s) in seen)) {
          seen[u[3], s]
          printf "src/%s uses %s, defined in src/%s (%s is layer %d, that %d): upward\n", substr(u[3], 1, length(u[3]) - 2) ".c", s, substr(where[s], 1, length(where[s]) - 2) ".c", d, L[d], low[s]
        }
      }
    }' | sort
}

if [ "${1:-}" = "--check" ]; then
  v=$(include_violations "${2:-.}" 2>/dev/null); [ -n "$v" ] && echo "$v"
  [ -z "$v" ]; exit $?
fi

root=${1:-.}
t_init layering
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# the tree itself
v=$(include_violations "$root" 2>"$tmp/count"); v_tree=$v
read -r _ nf _ ni <"$tmp/count" 2>/dev/null || { nf=?; ni=?; }
if [ -z "$v" ]; then ok "src/ and include/ ($nf files, $ni includes): no upward include, no include cycle across folders"
else bad "include rules broken:"; echo "$v" | sed 's/^/  /'; fi

# the symbols of a build
objdir="${WICK_BUILD:-$root/build}/obj/src"
if ! command -v nm >/dev/null; then skip_part "calls between layers: nm not installed (Debian binutils)"
elif ! ls "$objdir"/*/*.o >/dev/null 2>&1; then skip_part "calls between layers: no objects in $objdir (run make first)"
else
  v=$(symbol_violations "$objdir" "$root")
  if [ -z "$v" ]; then ok "objects of $objdir: no call to a layer above"
  else bad "calls to a layer above:"; echo "$v" | sed 's/^/  /'; fi
fi

# the checker catches what it must, on a copy of the tree
mkdir -p "$tmp/tree"; cp -r "$root/src" "$root/include" "$tmp/tree/"
echo '#include "serve/server.h"' >>"$tmp/tree/src/core/error.c"
v=$(include_violations "$tmp/tree" 2>/dev/null)
case "$v" in *"src/core/error.c:"*"core (layer 0) includes src/serve/server.h"*"upward"*) ok "a planted upward include (core/error.c -> serve/server.h) is caught";;
  *) bad "a planted upward include was not caught; the checker said: ${v:-nothing}";; esac
cp "$root/src/core/error.c" "$tmp/tree/src/core/error.c"
printf '#include "text/planted_b.h"\n' >"$tmp/tree/src/kv/planted_a.h"
printf '#include "kv/planted_a.h"\n' >"$tmp/tree/src/text/planted_b.h"
v=$(include_violations "$tmp/tree" 2>/dev/null)
case "$v" in *"include cycle across folders"*"planted"*) ok "a planted include cycle (kv/planted_a.h <-> text/planted_b.h) is caught";;
  *) bad "a planted include cycle was not caught; the checker said: ${v:-nothing}";; esac
rm -f "$tmp/tree/src/kv/planted_a.h" "$tmp/tree/src/text/planted_b.h"
mkdir -p "$tmp/tree/src/newfolder"; echo 'int planted;' >"$tmp/tree/src/newfolder/x.c"
v=$(include_violations "$tmp/tree" 2>/dev/null)
case "$v" in *"src/newfolder/: a folder with no layer"*) ok "a folder with no layer is reported";;
  *) bad "a folder with no layer was not reported; the checker said: ${v:-nothing}";; esac
rm -rf "$tmp/tree/src/newfolder"
v=$(include_violations "$tmp/tree" 2>/dev/null)
[ "$v" = "$v_tree" ] && ok "the copy, restored, gives the tree's result again" || bad "the restored copy differs from the tree: $v"
if command -v nm >/dev/null && command -v "${CC:-cc}" >/dev/null; then
  mkdir -p "$tmp/obj/core" "$tmp/obj/serve"
  echo 'int planted_serve_fn(void) { return 1; }' >"$tmp/serve.c"
  echo 'int planted_serve_fn(void); int planted_core_fn(void) { return planted_serve_fn(); }' >"$tmp/core.c"
  if "${CC:-cc}" -c "$tmp/serve.c" -o "$tmp/obj/serve/planted.o" && "${CC:-cc}" -c "$tmp/core.c" -o "$tmp/obj/core/planted.o"; then
    v=$(symbol_violations "$tmp/obj")
    case "$v" in *"src/core/planted.c uses planted_serve_fn, defined in src/serve/planted.c"*) ok "a planted upward call (core -> serve) is caught";;
      *) bad "a planted upward call was not caught; the checker said: ${v:-nothing}";; esac
  else bad "could not compile the planted objects"; fi
else
  skip_part "the planted upward call: nm or ${CC:-cc} not installed"
fi
finish
