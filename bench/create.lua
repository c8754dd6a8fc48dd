-- create.lua: wrk script for POST /api/match/requests that books a new slot with every
-- request, so the case measures successful creations and not SLOT_TAKEN answers.
--
-- Environment (set by bench/run.sh):
--   BENCH_CREATE_IDS      file with one "resource-uuid slot-minutes" line per court
--   BENCH_CREATE_DATE     bookingDate of this wrk run (YYYY-MM-DD); run.sh gives every run
--                         its own date, on which the data sets hold no request
--   BENCH_CREATE_TOKENS   file with one player token (JWT) per line: the organizers
--   BENCH_CREATE_THREADS  the -t given to wrk
--   BENCH_CREATE_LAT/LNG  search centre of the requests
--
-- Request k of a run (k = thread + threads * n) takes court k mod courts and that court's slot
-- number floor(k / courts) mod 9 of the day (08:00 + slot * duration): consecutive requests
-- go to different courts, and no (court, date, start time) is asked for twice in a run. Its
-- organizer is token k mod tokens, so that no player holds more than a few of the run's
-- requests (the unpaid-hold limit and the booking rules count per player).

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") ..
   "wrk-common.lua")
local ids, durs = {}, {}
for _, line in ipairs(common.lines(os.getenv("BENCH_CREATE_IDS"))) do
   local id, dur = line:match("^(%S+)%s+(%d+)")
   if id then
      ids[#ids + 1] = id
      durs[#durs + 1] = tonumber(dur)
   end
end
local tokens = common.lines(os.getenv("BENCH_CREATE_TOKENS"))

local date = os.getenv("BENCH_CREATE_DATE")
local lat = os.getenv("BENCH_CREATE_LAT") or "40.45"
local lng = os.getenv("BENCH_CREATE_LNG") or "-3.70"
local nthreads = tonumber(os.getenv("BENCH_CREATE_THREADS") or "2")

function request()
   local k = common.next_k(nthreads)
   local i = k % #ids + 1
   local slot = math.floor(k / #ids) % 9
   local mins = 8 * 60 + slot * durs[i]
   local start = string.format("%02d:%02d:00", math.floor(mins / 60), mins % 60)
   local body = string.format(
      '{"resourceId":"%s","bookingDate":"%s","startTime":"%s","slotDurationMinutes":%d,' ..
      '"format":"TWO_VS_TWO","skillLevel":"INTERMEDIATE","searchLat":%s,"searchLng":%s}',
      ids[i], date, start, durs[i], lat, lng)
   return common.post("/api/match/requests", tokens[k % #tokens + 1], body)
end
