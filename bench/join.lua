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

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") ..
   "wrk-common.lua")
local matches = common.lines(os.getenv("BENCH_JOIN_MATCHES"))
local tokens = common.lines(os.getenv("BENCH_JOIN_TOKENS"))
local shift = tonumber(os.getenv("BENCH_JOIN_SHIFT") or "0")
local nthreads = tonumber(os.getenv("BENCH_JOIN_THREADS") or "2")
local body = '{"team":"TEAM_B"}'

function request()
   local k = common.next_k(nthreads)
   local j = k % #matches
   local pass = math.floor(k / #matches)
   return common.post("/api/match/join/" .. matches[j + 1],
      tokens[(j + pass + shift) % #tokens + 1], body)
end
