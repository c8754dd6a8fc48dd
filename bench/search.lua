-- search.lua: wrk script for GET /api/match/search that searches around another centre with
-- every request, so that no process is asked a search twice (cgi-bin/search.c keeps one from
-- the second time) and every request works its search out: the case measures what a search
-- costs, where the plain search cases (one centre, asked again and again) measure the answer
-- kept.
--
-- Environment (set by bench/run.sh):
--   BENCH_SEARCH_LAT, BENCH_SEARCH_LNG  the centre of the area the centres are spread over
--   BENCH_SEARCH_QUERY    the rest of the query (date, time window)
--   BENCH_SEARCH_THREADS  the -t given to wrk
--   BENCH_SEARCH_SHIFT    where in the walk of centres this run starts
--
-- Request k of a run (k = thread + threads * n) searches around a point of a grid of 1,000 by
-- 1,000 points, a ten-thousandth of a degree apart, around the centre (about 11 by 8.5 km in
-- Madrid), walked in a scattered order: a run comes back to a point only after a million
-- requests.

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") ..
   "wrk-common.lua")
local lat = tonumber(os.getenv("BENCH_SEARCH_LAT"))
local lng = tonumber(os.getenv("BENCH_SEARCH_LNG"))
local query = os.getenv("BENCH_SEARCH_QUERY")
local shift = tonumber(os.getenv("BENCH_SEARCH_SHIFT") or "0")
local nthreads = tonumber(os.getenv("BENCH_SEARCH_THREADS") or "2")

function request()
   -- 999,983 is prime: k * 7,919 walks every point of the grid before it comes back
   local p = ((common.next_k(nthreads) + shift) * 7919) % 999983
   local dlat = (p % 1000 - 500) / 10000
   local dlng = (math.floor(p / 1000) - 500) / 10000
   return wrk.format("GET", string.format("/api/match/search?lat=%.4f&lng=%.4f&%s",
      lat + dlat, lng + dlng, query))
end
