-- slots.lua: wrk script for GET /api/resources/{id}/slots that asks for a different court with
-- every request, so that no worker has the answer kept (common/cache.h) and every request
-- computes the day's slots: the case measures the answer's cost, where the plain slots case
-- (one court, asked again and again) measures the reused answer.
--
-- Environment (set by bench/run.sh):
--   BENCH_SLOTS_IDS      file with one "resource-uuid slot-minutes" line per court
--   BENCH_SLOTS_DATE     the date asked (YYYY-MM-DD)
--   BENCH_SLOTS_THREADS  the -t given to wrk
--   BENCH_SLOTS_SHIFT    where in the list of courts this run starts
--
-- Request k of a run (k = thread + threads * n) asks for court (k + shift) mod courts: with
-- 40,000 courts, a run of the fast modes comes back to a court only after the 256 answers a
-- worker keeps have long been replaced.

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") ..
   "wrk-common.lua")
local ids = {}
for _, line in ipairs(common.lines(os.getenv("BENCH_SLOTS_IDS"))) do
   local id = line:match("^(%S+)")
   if id then ids[#ids + 1] = id end
end
local date = os.getenv("BENCH_SLOTS_DATE")
local shift = tonumber(os.getenv("BENCH_SLOTS_SHIFT") or "0")
local nthreads = tonumber(os.getenv("BENCH_SLOTS_THREADS") or "2")

function request()
   local k = common.next_k(nthreads)
   local id = ids[(k + shift) % #ids + 1]
   return wrk.format("GET", "/api/resources/" .. id .. "/slots?date=" .. date)
end
