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

local function lines(file)
   local t = {}
   for line in io.lines(file) do
      if line ~= "" then t[#t + 1] = line end
   end
   return t
end

local ids, durs = {}, {}
for _, line in ipairs(lines(os.getenv("BENCH_CREATE_IDS"))) do
   local id, dur = line:match("^(%S+)%s+(%d+)")
   if id then
      ids[#ids + 1] = id
      durs[#durs + 1] = tonumber(dur)
   end
end
local tokens = lines(os.getenv("BENCH_CREATE_TOKENS"))

local date = os.getenv("BENCH_CREATE_DATE")
local lat = os.getenv("BENCH_CREATE_LAT") or "40.45"
local lng = os.getenv("BENCH_CREATE_LNG") or "-3.70"
local nthreads = tonumber(os.getenv("BENCH_CREATE_THREADS") or "2")
local next_tid = 0

function setup(thread)
   thread:set("tid", next_tid)
   next_tid = next_tid + 1
end

local n = 0
local headers = {}

function init(args)
   wrk.method = "POST"
   wrk.path = "/api/match/requests"
end

function request()
   local k = tid + nthreads * n
   n = n + 1
   local i = k % #ids + 1
   local slot = math.floor(k / #ids) % 9
   local mins = 8 * 60 + slot * durs[i]
   local start = string.format("%02d:%02d:00", math.floor(mins / 60), mins % 60)
   local body = string.format(
      '{"resourceId":"%s","bookingDate":"%s","startTime":"%s","slotDurationMinutes":%d,' ..
      '"format":"TWO_VS_TWO","skillLevel":"INTERMEDIATE","searchLat":%s,"searchLng":%s}',
      ids[i], date, start, durs[i], lat, lng)
   -- wrk.format takes these headers instead of wrk.headers (it adds Host and Content-Length)
   headers["Content-Type"] = "application/json"
   headers["Authorization"] = "Bearer " .. tokens[k % #tokens + 1]
   return wrk.format(nil, nil, headers, body)
end
