-- bench.lua: the wrk request generator of tests/bench/run. One script,
-- the scenario chosen by environment variables (wrk passes none of its own
-- arguments to Lua in a portable way):
--
--   BENCH_MODE   hb | reg | get  (the fleet profile is fleet.lua);
--                nhb | nreg: the same heartbeat and registration in
--                Nacos's open API (r-nacos in `run vs-java`)
--   BENCH_N      instances pre-registered (hb)
--   BENCH_PER    instances per application (the preloader's layout)
--   BENCH_TOKEN  a per-round string, so registrations are unique per run
--   BENCH_PATH, BENCH_ACCEPT, BENCH_GZIP   for get
--   BENCH_INTERVAL_MS  when set, each connection sends one request per
--                that many ms (fractional allowed): an offered rate of
--                connections x 1000 / interval requests/s instead of
--                as fast as the server answers (wrk's delay() hook)
--
-- Instance i of the preloaded layout is app BENCH-<i // PER>, id
-- bench-<i>; heartbeats walk the instances in order (each thread from its
-- own offset), as a fleet does, rather than hitting a random one twice.
-- done() prints one "BENCH {json}" line the driver parses.

local mode = os.getenv("BENCH_MODE") or "hb"
local n = tonumber(os.getenv("BENCH_N") or "1000")
local per = tonumber(os.getenv("BENCH_PER") or "100")
local token = os.getenv("BENCH_TOKEN") or "t"
local gpath = os.getenv("BENCH_PATH") or "/eureka/apps"
local gaccept = os.getenv("BENCH_ACCEPT") or "application/json"
local ggzip = os.getenv("BENCH_GZIP") == "1"

local threads = {}
local tid = 0

-- Give each thread an index and remember it for done().
function setup(thread)
   thread:set("tid", tid)
   tid = tid + 1
   table.insert(threads, thread)
end

local counter = 0
local hbheaders = { ["Accept"] = "application/json" }
local regheaders = { ["Content-Type"] = "application/json",
		     ["Accept"] = "application/json",
		     ["Accept-Encoding"] = "gzip" }
local getheaders = { ["Accept"] = gaccept }
if ggzip then getheaders["Accept-Encoding"] = "gzip" end

-- The body a Netflix Java client (DiscoveryClient) sends on register.
local regfmt = '{"instance":{"instanceId":"%s","hostName":"%s",' ..
   '"app":"%s","ipAddr":"10.%d.%d.%d","status":"UP",' ..
   '"overriddenStatus":"UNKNOWN","port":{"$":8080,"@enabled":"true"},' ..
   '"securePort":{"$":443,"@enabled":"false"},"countryId":1,' ..
   '"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$' ..
   'DefaultDataCenterInfo","name":"MyOwn"},"leaseInfo":{' ..
   '"renewalIntervalInSecs":30,"durationInSecs":90,' ..
   '"registrationTimestamp":0,"lastRenewalTimestamp":0,' ..
   '"evictionTimestamp":0,"serviceUpTimestamp":0},"metadata":{' ..
   '"management.port":"8080"},"homePageUrl":"http://%s:8080/",' ..
   '"statusPageUrl":"http://%s:8080/actuator/info",' ..
   '"healthCheckUrl":"http://%s:8080/actuator/health",' ..
   '"vipAddress":"%s","secureVipAddress":"%s",' ..
   '"isCoordinatingDiscoveryServer":"false",' ..
   '"lastUpdatedTimestamp":"1699999995000",' ..
   '"lastDirtyTimestamp":"1699999995000"}}'

-- Per-thread start: spread the threads over the instance range.
function init(args)
   local t = tid or 0
   counter = math.floor(n * t / 4)
end

-- The path of instance i's heartbeat.
local function hbpath(i)
   return string.format("/eureka/apps/BENCH-%05d/bench-%07d",
			math.floor(i / per), i)
end

-- Instance i's address as the preloader gave it (10.a.b.c:8080).
local function ipof(i)
   return string.format("10.%d.%d.%d", i % 250, math.floor(i / 250) % 250,
			math.floor(i / 62500) % 250)
end

-- Nacos: instance i's light beat (what the Nacos Java client sends once
-- the server has answered lightBeatEnabled), and a registration as the
-- client's form (NamingHttpClientProxy.registerService).
local nformheaders = { ["Content-Type"] =
			  "application/x-www-form-urlencoded" }
local function nacos_hb(i)
   return wrk.format("PUT", string.format(
			"/nacos/v1/ns/instance/beat?serviceName=" ..
			   "DEFAULT_GROUP%%40%%40BENCH-%05d&ip=%s&port=8080",
			math.floor(i / per), ipof(i)), hbheaders)
end

local function nacos_register()
   local app = string.format("REG-%03d", counter % 500)
   local body = string.format(
      "groupName=DEFAULT_GROUP&serviceName=DEFAULT_GROUP%%40%%40%s&" ..
	 "ip=10.%d.%d.%d&port=%d&weight=1.0&enable=true&healthy=true&" ..
	 "ephemeral=true&clusterName=DEFAULT&metadata=" ..
	 "%%7B%%22management.port%%22%%3A%%228080%%22%%7D",
      app, counter % 250, math.floor(counter / 250) % 250,
      (tid or 0) % 250, 1024 + counter % 60000)
   return wrk.format("POST", "/nacos/v1/ns/instance", nformheaders, body)
end

-- A new registration with a unique id.
local function register()
   local app = string.format("REG-%03d", counter % 500)
   local id = string.format("reg-%s-%d-%d", token, tid or 0, counter)
   local host = id .. ".example.com"
   local vip = string.lower(app)
   local body = string.format(regfmt, id, host, app,
			      counter % 250, math.floor(counter / 250) % 250,
			      (tid or 0) % 250, host, host, host, vip, vip)
   return wrk.format("POST", "/eureka/apps/" .. app, regheaders, body)
end

-- Paced mode: wrk waits delay() ms after each response before the next
-- request on that connection. delay() returns whole ms, so the fraction
-- is carried over to keep the mean interval exact. The response time is
-- not subtracted (wrk's Lua has no clock), so the achieved rate is a
-- little below the offered one; the driver reports both.
local interval = tonumber(os.getenv("BENCH_INTERVAL_MS") or "")
if interval then
   local carry = 0
   function delay()
      carry = carry + interval
      local d = math.floor(carry)
      carry = carry - d
      return d
   end
end

function request()
   counter = counter + 1
   if mode == "hb" then
      return wrk.format("PUT", hbpath(counter % n), hbheaders)
   elseif mode == "reg" then
      return register()
   elseif mode == "nhb" then
      return nacos_hb(counter % n)
   elseif mode == "nreg" then
      return nacos_register()
   end
   return wrk.format("GET", gpath, getheaders)
end

function done(summary, latency, requests)
   local e = summary.errors
   local secs = summary.duration / 1e6
   io.write(string.format('BENCH {"requests":%d,"secs":%.6f,' ..
			  '"rps":%.1f,"p50_us":%d,"p99_us":%d,' ..
			  '"bytes":%d,"err_connect":%d,"err_read":%d,' ..
			  '"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
			  summary.requests, secs, summary.requests / secs,
			  latency:percentile(50), latency:percentile(99),
			  summary.bytes, e.connect, e.read, e.write,
			  e.status, e.timeout))
end
