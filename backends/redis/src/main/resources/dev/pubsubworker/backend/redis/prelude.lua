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
-- Every function here is created anew on each call of a script (a script call costs more with each
-- one), so the prelude holds only what most scripts run, and the rare paths are written inline.

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

-- The highest fence and the latest time a record may hold: 2^53 - 1, the largest integer a Lua
-- number (a double) holds exactly; LockBackend.MAX_FENCE and LockBackend.MAX_EPOCH_MILLIS.
local MAX = 9007199254740991

-- The record at key, in whatever format it is, from got, the reply of a GET (or of a SET ... GET
-- that wrote nothing) caught with pcall. Returns, for a record: state ('CLAIMED' or 'DONE'), fence
-- (text), leaseExpiry, expiresAt, claimToken ('' when absent), the rest of a string's value after
-- the token (' ' .. fingerprint, or '' without one) and, for a hash of an earlier version, true.
-- Returns nil when there is no record, false when it is not one this backend writes (state CLAIMED
-- or DONE, fence 1..MAX and retention in plain decimal digits, retention signed, leaseExpiry and
-- expiresAt 0..MAX, the token empty or 1 to 128 printable ASCII characters, then nothing or a
-- space and the fingerprint; a string without a Redis expiry has no expiresAt and is not a record).
-- A key that holds neither a string nor a hash raises WRONGTYPE (the verb reports it as
-- unreadable); another failure is raised as it came.
local function read_from(key, got)
  if got == false then
    return nil
  end
  if type(got) == 'string' then
    local state, fence, retention, token, rest =
      string.match(got, '^(%u+) ([1-9]%d*) (%-?[1-9]%d*) ([!-~]*)(.*)$')
    if not state then
      -- Retention 0 (a release at the last millisecond of the window) is the one the pattern
      -- leaves out.
      state, fence, retention, token, rest =
        string.match(got, '^(%u+) ([1-9]%d*) (0) ([!-~]*)(.*)$')
    end
    if not (state == 'CLAIMED' or state == 'DONE') or #token > 128 or #retention > 17
        or #fence > 16 or (#fence == 16 and tonumber(fence) > MAX)
        or (rest ~= '' and string.byte(rest, 1) ~= 32) then
      return false
    end
    local expiresAt = redis.call('PEXPIRETIME', key)
    local lease = expiresAt - tonumber(retention)
    if expiresAt < 0 or expiresAt > MAX or lease < 0 or lease > MAX then
      return false
    end
    return state, fence, lease, expiresAt, token, rest
  end
  if not (got.err and string.find(got.err, '^WRONGTYPE')) then
    error(got)
  end
  -- A hash written by an earlier version (HMGET of its six fields), read by the same rules as
  -- LockRecord.parse; a hash without any of the fields is no record.
  local r = redis.call('HMGET', key, 'state', 'fence', 'leaseExpiry', 'expiresAt', 'claimToken',
    'fingerprint')
  if not (r[1] or r[2] or r[3] or r[4] or r[5] or r[6]) then
    return nil
  end
  local function integer_in(text, low)
    if text == '0' then
      return low == 0
    end
    return type(text) == 'string' and #text <= 16 and string.find(text, '^[1-9]%d*$') ~= nil
      and tonumber(text) <= MAX
  end
  local token = r[5]
  if (r[1] == 'CLAIMED' or r[1] == 'DONE') and integer_in(r[2], 1) and integer_in(r[3], 0)
      and integer_in(r[4], 0)
      and (not token or (#token >= 1 and #token <= 128 and not string.find(token, '[^!-~]'))) then
    return r[1], r[2], tonumber(r[3]), tonumber(r[4]), token or '', r[6] and ' ' .. r[6] or '',
      true
  end
  return false
end
