-- wrk script for the Evidence Gateway bench: one request shape per run, set from the environment.
--   BENCH_KEY     API key sent as "Authorization: Bearer <key>" (required)
--   BENCH_METHOD  GET (default) or POST
--   BENCH_BODY    request body (JSON); sets Content-Type: application/json
-- At the end it prints one line "BENCH_JSON {...}" that bench/run.py parses.
wrk.method = os.getenv("BENCH_METHOD") or "GET"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_KEY") or "")
local body = os.getenv("BENCH_BODY")
if body and #body > 0 then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"mean_us":%.1f,"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
