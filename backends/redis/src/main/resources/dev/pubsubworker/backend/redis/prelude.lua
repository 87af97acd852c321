-- Shared by every script of the pubsub-worker Redis lock backend (prepended when loaded).
-- A record is one string key (the format this version writes):
--   value  = state .. ' ' .. fence .. ' ' .. retention .. ' ' .. claimToken [.. ' ' .. fingerprint]
--   expiry = the key's own Redis expiry (PEXPIRETIME), which is the record's expiresAt
-- state is CLAIMED or DONE; leaseExpiry = expiresAt - retention; claimToken is empty when absent
-- (tokens are 1 to 128 printable ASCII characters, never a space); the fingerprint, when present,
-- is the rest of the value. Records written by earlier versions are hashes with the fields state,
-- fence, leaseExpiry, expiresAt, claimToken, fingerprint (and a Redis expiry at or after
-- expiresAt): every verb reads them too, and its next write turns them into the string format.
-- Times are integer milliseconds since the epoch on the Redis server's clock.
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

-- Whether text is an integer from low (0 or 1) to MAX in plain decimal digits, as written here.
local function integer_in(text, low)
  if text == '0' then
    return low == 0
  end
  return type(text) == 'string' and #text <= 16 and string.find(text, '^[1-9]%d*$') ~= nil
    and tonumber(text) <= MAX
end

-- A string record's value, as this version writes it.
local function encode(state, fence_text, retention, token, fingerprint)
  if fingerprint then
    return state .. ' ' .. fence_text .. ' ' .. int(retention) .. ' ' .. (token or '') .. ' '
      .. fingerprint
  end
  return state .. ' ' .. fence_text .. ' ' .. int(retention) .. ' ' .. (token or '')
end

-- A string record read back: {state, fence text, leaseExpiry, expiresAt, claimToken or false,
-- fingerprint or false}, or false if the value or its expiry is not one this backend writes
-- (expiry = PEXPIRETIME's reply: -1 for none).
local function decode(value, expiry)
  local state, fence, retention, rest = string.match(value, '^(%u+) (%d+) (%-?%d+) (.*)$')
  if not (state == 'CLAIMED' or state == 'DONE') or not integer_in(fence, 1) or #retention > 17
      or expiry < 0 or expiry > MAX then
    return false
  end
  local lease = expiry - tonumber(retention)
  if lease < 0 or lease > MAX or string.find(retention, '^%-?0%d') or retention == '-0' then
    return false
  end
  local space = string.find(rest, ' ', 1, true)
  local token = rest
  local fingerprint = false
  if space then
    token = string.sub(rest, 1, space - 1)
    fingerprint = string.sub(rest, space + 1)
  end
  if token == '' then
    token = false
  elseif #token > 128 or string.find(token, '[^!-~]') then
    return false
  end
  return {state, fence, lease, expiry, token, fingerprint}
end

-- A hash record written by an earlier version (HMGET of its six fields), by the same rules as
-- LockRecord.parse: {state, fence text, leaseExpiry, expiresAt, claimToken or false, fingerprint
-- or false, true (a hash)}, nil for a hash without any of the fields (no record), false if
-- unreadable.
local function decode_hash(r)
  if not (r[1] or r[2] or r[3] or r[4] or r[5] or r[6]) then
    return nil
  end
  local token = r[5]
  if (r[1] == 'CLAIMED' or r[1] == 'DONE') and integer_in(r[2], 1) and integer_in(r[3], 0)
      and integer_in(r[4], 0)
      and (not token or (#token >= 1 and #token <= 128 and not string.find(token, '[^!-~]'))) then
    return {r[1], r[2], tonumber(r[3]), tonumber(r[4]), token, r[6], true}
  end
  return false
end

-- The record at key, whatever format it is in, when the key's value is already known: got is the
-- reply of a GET (or of a SET ... GET, which wrote nothing) caught with pcall. Returns nil (no
-- record), false (unreadable) or the decoded record. A key that holds neither a string nor a hash
-- raises WRONGTYPE (the verb reports it as unreadable); another failure is raised as it came.
local function read_from(key, got)
  if got == false then
    return nil
  end
  if type(got) == 'table' then
    if not (got.err and string.find(got.err, '^WRONGTYPE')) then
      error(got)
    end
    return decode_hash(redis.call('HMGET', key, 'state', 'fence', 'leaseExpiry', 'expiresAt',
      'claimToken', 'fingerprint'))
  end
  return decode(got, redis.call('PEXPIRETIME', key))
end

-- The record at key: read_from of a GET.
local function read_record(key)
  return read_from(key, redis.pcall('GET', key))
end

-- The fence after a reclaim or release: one more, or 1 after MAX (it never overflows).
local function next_fence(text)
  local fence = tonumber(text) + 1
  if fence > MAX then
    return 1
  end
  return fence
end
