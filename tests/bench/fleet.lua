-- fleet.lua: the fleet profile of tests/bench/run at a fixed offered rate.
-- A fleet of BENCH_N instances, each renewing its lease and fetching a
-- gzip JSON delta once per 30 s, offers BENCH_RATE requests/s in all
-- (N/30 heartbeats + N/30 delta fetches); the driver sets the rate.
--
--   BENCH_N      instances pre-registered (the preloader's layout:
--                app BENCH-<i // PER>, id bench-<i>)
--   BENCH_PER    instances per application
--   BENCH_RATE   requests/s offered, heartbeats and deltas alternating
--
-- Pacing is open-loop: one schedule per wrk thread, a slot every
-- 1000 / BENCH_RATE ms from the first request on; each connection, when
-- free, takes the next slot and waits for it (wrk's delay() hook, whole
-- ms; LuaJIT's ffi gives the clock). A server that answers late makes the
-- schedule fall behind: free connections then send at once, and what the
-- server completes (requests / duration) falls below the offered rate.
-- wrk's latency is from a request's write to its response, so it does not
-- count time a request waited for a free connection; the driver reports
-- how far behind schedule the generator was (behind_ms) for that.
-- done() prints one "BENCH {json}" line the driver parses.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } fleet_timespec;
int clock_gettime(int, fleet_timespec *);
]]
local ts = ffi.new("fleet_timespec")

-- Monotonic milliseconds.
local function now_ms()
   ffi.C.clock_gettime(1, ts)
   return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local n = tonumber(os.getenv("BENCH_N") or "1000")
local per = tonumber(os.getenv("BENCH_PER") or "100")
local rate = tonumber(os.getenv("BENCH_RATE") or "100")
local slot = 1000 / rate

local threads = {}
local tid = 0

-- Give each thread an index and remember it for done().
function setup(thread)
   thread:set("tid", tid)
   tid = tid + 1
   table.insert(threads, thread)
end

local counter = 0
local nextslot = nil
behind = 0		-- ms the schedule was behind at the last slot taken
maxbehind = 0		-- the most it was, over the run
slots = 0

local hbheaders = { ["Accept"] = "application/json" }
local deltaheaders = { ["Accept"] = "application/json",
		       ["Accept-Encoding"] = "gzip" }

-- Per-thread start: threads walk the instances from their own offset.
function init(args)
   counter = math.floor(n * (tid or 0) / 4)
end

-- The next slot of the schedule: how long to wait for it.
function delay()
   local t = now_ms()
   if nextslot == nil then
      nextslot = t
   end
   nextslot = nextslot + slot
   slots = slots + 1
   local d = nextslot - t
   if d < 0 then
      behind = -d
      if behind > maxbehind then
	 maxbehind = behind
      end
      return 0
   end
   behind = 0
   return math.floor(d)
end

function request()
   counter = counter + 1
   if counter % 2 == 0 then
      local i = math.floor(counter / 2) % n
      return wrk.format("PUT", string.format(
			   "/eureka/apps/BENCH-%05d/bench-%07d",
			   math.floor(i / per), i), hbheaders)
   end
   return wrk.format("GET", "/eureka/apps/delta", deltaheaders)
end

function done(summary, latency, requests)
   local e = summary.errors
   local secs = summary.duration / 1e6
   local mb, lb, sl = 0, 0, 0
   for _, t in ipairs(threads) do
      mb = math.max(mb, t:get("maxbehind") or 0)
      lb = math.max(lb, t:get("behind") or 0)
      sl = sl + (t:get("slots") or 0)
   end
   io.write(string.format('BENCH {"requests":%d,"secs":%.6f,' ..
			  '"rps":%.1f,"p50_us":%d,"p99_us":%d,' ..
			  '"max_us":%d,"bytes":%d,"err_connect":%d,' ..
			  '"err_read":%d,"err_write":%d,"err_status":%d,' ..
			  '"err_timeout":%d,"offered":%.1f,"slots":%d,' ..
			  '"behind_ms":%.1f,"max_behind_ms":%.1f}\n',
			  summary.requests, secs, summary.requests / secs,
			  latency:percentile(50), latency:percentile(99),
			  latency.max, summary.bytes, e.connect, e.read,
			  e.write, e.status, e.timeout, rate, sl, lb, mb))
end
