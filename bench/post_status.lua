-- wrk script for the POST scenarios of bench/run.
--
-- Every request creates one commit status on a NEW sha, so the server's cap of
-- 1000 statuses per sha+context is never reached however long the run is:
--   sha  = <salt:2 hex><thread:2 hex><counter:36 decimal digits>  (40 hex chars)
--   path = /repos/<BENCH_REPO>/statuses/<sha>
-- The baseline run sets BENCH_POST_PATH=/combined: same per-request Lua work and
-- body, fixed path, so the load generator costs the same on both sides.
--
-- env: BENCH_TOKEN (bearer token), BENCH_REPO (default bench/hot),
--      BENCH_SALT (0-255, distinguishes warm-up from measured runs),
--      BENCH_POST_PATH (fixed path override).

local token      = os.getenv("BENCH_TOKEN") or "none"
local repo       = os.getenv("BENCH_REPO") or "bench/hot"
local salt       = tonumber(os.getenv("BENCH_SALT") or "0") % 256
local fixed_path = os.getenv("BENCH_POST_PATH")

local headers = {
  ["Authorization"] = "Bearer " .. token,
  ["User-Agent"]    = "platformd-bench",
  ["Accept"]        = "application/json",
  ["Content-Type"]  = "application/json",
}

-- setup() runs in the main Lua state once per wrk thread; give each an id.
local next_tid = 0
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end

local counter = 0
function request()
  counter = counter + 1
  local sha  = string.format("%02x%02x%036d", salt, (tid or 0) % 256, counter)
  local path = fixed_path or ("/repos/" .. repo .. "/statuses/" .. sha)
  local body = string.format(
    '{"state":"success","context":"bench/%d","description":"ok","target_url":"https://ci.example/%d"}',
    counter % 10, counter)
  return wrk.format("POST", path, headers, body)
end
