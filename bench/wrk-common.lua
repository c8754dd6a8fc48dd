-- wrk-common.lua: what create.lua and join.lua share, loaded by each with dofile: the lines
-- of a file, the numbering of the threads and of their requests, and a POST of a JSON body
-- as one player.

local M = {}

-- The non-empty lines of file, in order.
function M.lines(file)
   local t = {}
   for line in io.lines(file) do
      if line ~= "" then t[#t + 1] = line end
   end
   return t
end

-- wrk calls setup once per thread, in the main state: each thread gets its number as `tid`
local next_tid = 0

function setup(thread)
   thread:set("tid", next_tid)
   next_tid = next_tid + 1
end

-- Number k of this thread's next request, unique within the run: tid + nthreads * n.
local n = 0

function M.next_k(nthreads)
   local k = tid + nthreads * n
   n = n + 1
   return k
end

-- A POST of body to path with the player's token (wrk.format adds Host and Content-Length).
local headers = {}

function M.post(path, token, body)
   headers["Content-Type"] = "application/json"
   headers["Authorization"] = "Bearer " .. token
   return wrk.format("POST", path, headers, body)
end

return M
