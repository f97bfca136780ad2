-- A distinct (ignored) query parameter per request: every request misses the response cache,
-- so the scenario measures the query itself. The URL must already carry a query string.
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", wrk.path .. "&salt=" .. n)
end
