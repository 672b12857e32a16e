# Sourced by tests/benches/installed_start.sh, tests/benches/installed_rss.sh
# (the benches of an installed binary).
#
# noop_packages DIR N: N copies of plugins/bench-noop under distinct ids in
# DIR/plugins (as the `plugins` bench makes them), and DIR/script.json, a
# scripted model that calls each copy's tool once and then answers `done`.
# Sets `entries`: their plugins.entries members, as JSON.
noop_packages() {
  local dir=$1 n=$2 noop i calls=()
  noop=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target/plugins/bench-noop
  [ -f "$noop/plugin.wasm" ] || { echo "build the plugins first: bash plugins/build.sh" >&2; return 1; }
  entries=()
  for i in $(seq 0 $((n - 1))); do
    mkdir -p "$dir/plugins/noop-$i"
    cp "$noop/plugin.wasm" "$dir/plugins/noop-$i/"
    sed "s/\"id\": \"noop\"/\"id\": \"noop-$i\"/" "$noop/openclaw.plugin.json" \
      >"$dir/plugins/noop-$i/openclaw.plugin.json"
    entries+=("\"noop-$i\": {\"config\": {\"id\": \"noop-$i\"}}")
    calls+=("{\"name\": \"noop_${i}_measure\", \"arguments\": {\"data\": \"{{user}}\"}}")
  done
  mkdir -p "$dir/plugins"
  if [ "$n" -gt 0 ]; then
    echo "[{\"toolCalls\": [$(join "${calls[@]}")]}, {\"answer\": \"done\"}]"
  else
    echo '[{"answer": "done"}]'
  fi >"$dir/script.json"
}

# noop_config DIR AGENT_DEFAULTS SESSIONS: DIR/clawhost.json, with the
# scripted model of DIR/script.json as the default model and the packages
# `noop_packages DIR …` made (its `entries`) loaded, the compiled cache in
# DIR/cache and sessions in DIR/sessions. AGENT_DEFAULTS and SESSIONS: more
# members of agents.defaults and of sessions (JSON, each with a leading
# comma; empty for none).
noop_config() {
  local dir=$1 agent_defaults=$2 sessions=$3
  cat >"$dir/clawhost.json" <<JSON
{
  "models": {"providers": {"s": {"api": "scripted", "script": "$dir/script.json", "models": [{"id": "m"}]}}},
  "agents": {"defaults": {"model": "s/m"$agent_defaults}},
  "plugins": {"paths": ["$dir/plugins"], "entries": {$(join "${entries[@]}")},
              "cacheDir": "$dir/cache"},
  "sessions": {"dir": "$dir/sessions"$sessions}
}
JSON
}

# join ITEM…: the items separated by commas.
join() { local IFS=,; echo "$*"; }
