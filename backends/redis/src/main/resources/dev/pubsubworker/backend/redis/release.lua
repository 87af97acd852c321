-- release: KEYS[1] = record; ARGV = offset, fence. Returns 1 if released, 0 if a no-op, 2 for an
-- unreadable record (nothing written).
-- Never deletes (that would reset the fence): expires the lease, raises the fence (one more, or 1
-- after MAX), clears the token; expiresAt (the key's Redis expiry) stays as it was.
local key = KEYS[1]
local state, fence, _, expiresAt, _, rest, hash = read_from(key, redis.pcall('GET', key))
if state == false then
  return 2
end
if state ~= 'CLAIMED' or fence ~= ARGV[2] then
  return 0
end
local now = now_ms()
local next = tonumber(fence) + 1
if next > MAX then
  next = 1
end
local value = 'CLAIMED ' .. int(next) .. ' ' .. int(expiresAt - now) .. ' ' .. rest
if hash then
  -- A hash of an earlier version, whose Redis expiry may be later than its expiresAt: the string
  -- takes expiresAt as its expiry, or the next millisecond if that has passed (an expiry in the
  -- past would delete the key, and release never deletes).
  redis.call('SET', key, value, 'PXAT', int(math.max(expiresAt, now + 1)))
else
  redis.call('SET', key, value, 'KEEPTTL')
end
return 1
