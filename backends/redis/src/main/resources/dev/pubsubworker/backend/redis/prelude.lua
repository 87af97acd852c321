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

-- The highest fence and the latest time a record may hold: 2^53 - 1, the largest integer a Lua
-- number (a double) holds exactly; LockBackend.MAX_FENCE and LockBackend.MAX_EPOCH_MILLIS.
local MAX = 9007199254740991

-- A record's six fields, in this order; false where a field is absent.
local function read_record(key)
  return redis.call('HMGET', key, 'state', 'fence', 'leaseExpiry', 'expiresAt', 'claimToken',
    'fingerprint')
end

-- Whether text is an integer from low (0 or 1) to MAX in plain decimal digits, as written here.
local function integer_in(text, low)
  if text == '0' then
    return low == 0
  end
  return type(text) == 'string' and #text <= 16 and string.find(text, '^[1-9]%d*$') ~= nil
    and tonumber(text) <= MAX
end

-- What read_record found: 'absent' (none of the fields), 'ok', or 'unreadable': a record this
-- backend did not write (the rules of LockRecord.parse: state exactly CLAIMED or DONE, fence
-- 1..MAX, both times 0..MAX, claim token absent or 1 to 128 printable ASCII characters). No verb
-- answers for, or writes over, an unreadable record.
local function record_status(r)
  if not (r[1] or r[2] or r[3] or r[4] or r[5] or r[6]) then
    return 'absent'
  end
  local token = r[5]
  if (r[1] == 'CLAIMED' or r[1] == 'DONE') and integer_in(r[2], 1) and integer_in(r[3], 0)
      and integer_in(r[4], 0)
      and (not token or (#token >= 1 and #token <= 128 and not string.find(token, '[^!-~]'))) then
    return 'ok'
  end
  return 'unreadable'
end

-- The fence after a reclaim or release: one more, or 1 after MAX (it never overflows).
local function next_fence(text)
  local fence = tonumber(text) + 1
  if fence > MAX then
    return 1
  end
  return fence
end
