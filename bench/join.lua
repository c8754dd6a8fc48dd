-- join.lua: wrk script for POST /api/match/join/{invitationToken} {"team":"TEAM_B"} that joins
-- a different OPEN match with every request, as a player who is in none of them, so the case
-- measures successful joins and not ALREADY_IN_MATCH or TEAM_FULL answers.
--
-- Environment (set by bench/run.sh):
--   BENCH_JOIN_MATCHES   file with the invitation token of one OPEN match per line (the data
--                        set's OPEN matches: the organizer alone, TEAM_B empty)
--   BENCH_JOIN_TOKENS    file with one player token (JWT) per line: the joiners, players who
--                        are in no match of the data set
--   BENCH_JOIN_SHIFT     a number run.sh changes with every run (which joiner takes which match)
--   BENCH_JOIN_THREADS   the -t given to wrk
--
-- Request k of a run (k = thread + threads * n) joins match j = k mod matches as joiner
-- (j + pass + shift) mod joiners, pass = floor(k / matches): a run of up to matches requests
-- takes every match once, a longer one takes TEAM_B's second place with another joiner (a
-- third pass would be refused). run.sh undoes the joins after every run, so each run starts
-- from the same OPEN matches.

local function lines(file)
   local t = {}
   for line in io.lines(file) do
      if line ~= "" then t[#t + 1] = line end
   end
   return t
end

local matches = lines(os.getenv("BENCH_JOIN_MATCHES"))
local tokens = lines(os.getenv("BENCH_JOIN_TOKENS"))
local shift = tonumber(os.getenv("BENCH_JOIN_SHIFT") or "0")
local nthreads = tonumber(os.getenv("BENCH_JOIN_THREADS") or "2")
local body = '{"team":"TEAM_B"}'
local next_tid = 0

function setup(thread)
   thread:set("tid", next_tid)
   next_tid = next_tid + 1
end

local n = 0
local headers = {}

function init(args)
   wrk.method = "POST"
end

function request()
   local k = tid + nthreads * n
   n = n + 1
   local j = k % #matches
   local pass = math.floor(k / #matches)
   -- wrk.format takes these headers instead of wrk.headers (it adds Host and Content-Length)
   headers["Content-Type"] = "application/json"
   headers["Authorization"] = "Bearer " .. tokens[(j + pass + shift) % #tokens + 1]
   return wrk.format(nil, "/api/match/join/" .. matches[j + 1], headers, body)
end
