-- A distinct (ignored) query parameter per request: every request misses the response cache,
-- so the scenario measures the query itself. The URL must already carry a query string.
-- The salt's prefix differs between runs (BENCH_SALT: warm-up or measured run, and the time), so
-- a measured run never asks for a URL its warm-up cached.
local prefix = (os.getenv("BENCH_SALT") or "0") .. "-" .. os.time() .. "-"
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", wrk.path .. "&salt=" .. prefix .. n)
end
