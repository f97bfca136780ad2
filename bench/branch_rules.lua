-- GET rules for a branch, a different branch name on (almost) every request, so the answer is
-- computed (patterns matched) rather than served from the response cache.
math.randomseed(os.time() + (tonumber(os.getenv("BENCH_SALT")) or 0))
request = function()
  return wrk.format("GET", "/repos/bench/hot/rules/branches/feature/" .. math.random(1, 1000000))
end
