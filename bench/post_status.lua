-- wrk script for the POST scenarios of bench/run.
--
-- Statuses may only be created on pushed commits; bench/seed.toml pushes 50 (sha = the
-- number 1..50 in 40 decimal digits). Requests cycle over those shas and 20 contexts:
-- 1,000 (sha, context) pairs, each capped at 1,000 statuses, so a million requests fit.
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
  local n    = counter + 1000 * (tid or 0) + 7919 * salt
  local sha  = string.format("%040d", n % 50 + 1)
  local path = fixed_path or ("/repos/" .. repo .. "/statuses/" .. sha)
  local body = string.format(
    '{"state":"success","context":"bench/%d","description":"ok","target_url":"https://ci.example/%d"}',
    math.floor(n / 50) % 20, counter)
  return wrk.format("POST", path, headers, body)
end
