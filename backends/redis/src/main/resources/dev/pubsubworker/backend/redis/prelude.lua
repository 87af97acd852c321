-- Shared by every script of the pubsub-worker Redis lock backend (prepended when loaded).
-- A record is one hash: state (CLAIMED | DONE), fence, leaseExpiry, expiresAt, claimToken,
-- fingerprint. Times are integer milliseconds since the epoch on the Redis server's clock.
-- ARGV[1] is a test-only clock offset in milliseconds, "0" in production.

local function now_ms()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if ARGV[1] ~= '0' then
    now = now + tonumber(ARGV[1])
  end
  return now
end

-- Integers as plain decimal strings (tostring would switch to exponent notation). '%d' formats
-- through a 64-bit integer, several times cheaper than a float format such as '%.0f'.
local function int(n)
  return string.format('%d', n)
end

-- The error code of a failed command caught with pcall (WRONGTYPE, OOM, READONLY, ...), never the
-- rest of its message; ERR for an error of the script itself.
local function error_code(e)
  local message = type(e) == 'table' and e.err or tostring(e)
  return string.match(message or '', '^%-?([A-Z][A-Z_]*) ') or 'ERR'
end
