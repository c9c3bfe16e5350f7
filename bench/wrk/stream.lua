-- wrk script: cycle over a request stream (one URL path per line) so that a
-- closed-loop run hits the same popularity mix as the open-loop driver.
--   BENCH_PATHS=bench/data/.../zipf.paths wrk -s bench/wrk/stream.lua URL -- PREFIX SUFFIX [ACCEPT]
-- PREFIX (e.g. /api/handles) and SUFFIX (e.g. ?noredirect) are added to every path;
-- ACCEPT, if given, is every request's Accept header (content negotiation).
-- Each wrk thread pre-formats every request once in init and starts at its own
-- offset, so request() does no string work.
local reqs, n, i = {}, 0, 0

function init(args)
  local pre, suf, accept = args[1] or "", args[2] or "", args[3] or ""
  local headers = nil
  if #accept > 0 then headers = { Accept = accept } end
  local file = os.getenv("BENCH_PATHS")
  for line in io.lines(file) do
    if #line > 0 then
      n = n + 1
      reqs[n] = wrk.format("GET", pre .. line .. suf, headers)
    end
  end
  if n == 0 then error("no paths in " .. tostring(file)) end
  i = (tonumber(tostring({}):match("0x(%x+)"), 16) or 0) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
