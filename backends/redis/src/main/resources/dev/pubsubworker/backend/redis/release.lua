-- release: KEYS[1] = record; ARGV = offset, fence. Returns 1 if released, 0 if a no-op, 2 for an
-- unreadable record (nothing written).
-- Never deletes (that would reset the fence): expires the lease, raises the fence (from MAX to 1),
-- clears the token; expiresAt (the key's Redis expiry) stays as it was.
local key = KEYS[1]
local r = read_record(key)
if r == false then
  return 2
end
if not r or r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
local now = now_ms()
local value = encode('CLAIMED', int(next_fence(r[2])), r[4] - now, false, r[6])
if r[7] then
  -- A hash of an earlier version, whose Redis expiry may be later than its expiresAt: the string
  -- takes expiresAt as its expiry, or the next millisecond if that has passed (an expiry in the
  -- past would delete the key, and release never deletes).
  redis.call('SET', key, value, 'PXAT', int(math.max(r[4], now + 1)))
else
  redis.call('SET', key, value, 'KEEPTTL')
end
return 1
