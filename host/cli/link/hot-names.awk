# Maps symbol names to the hash-free names hot-functions.txt lists.
#
# With `-v list=FILE` it reads `nm` output and prints, in the list's order,
# the symbols of this build whose hash-free name is listed (order-cc.sh's order
# file). Without it, it reads symbol names, one per line, and prints each
# one's hash-free name (profile.sh writes the list with it).

# A symbol's name without what changes between builds: the hash of a legacy
# (`_ZN…17h<hash>E`) name, the crate disambiguators of a v0 (`_R…Cs<id>_…`)
# name, and the suffix LTO gives a function it made local (`.llvm.<n>`).
function key(name) {
  sub(/\.llvm\.[0-9]+$/, "", name)
  sub(/17h[0-9a-f]+E$/, "E", name)
  if (name ~ /^_R/) gsub(/Cs[0-9A-Za-z]+_/, "C", name)
  return name
}

BEGIN {
  if (list != "") {
    while ((getline line < list) > 0) {
      if (line == "" || line ~ /^#/ || line in rank) continue
      rank[line] = ++n
      order[n] = line
    }
    close(list)
  }
}

list == "" { print key($0); next }

# nm: address, type, name; only code (t, T, and weak w, W).
NF == 3 && $2 ~ /^[tTwW]$/ {
  k = key($3)
  if (k in rank && !($3 in seen)) {
    seen[$3] = 1
    syms[k] = syms[k] $3 "\n"
  }
}

END {
  for (i = 1; i <= n; i++) if (order[i] in syms) printf "%s", syms[order[i]]
}
